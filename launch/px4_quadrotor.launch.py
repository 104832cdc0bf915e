"""Launch calisym's predictor node for a PX4 quadrotor (params/px4_quadrotor.yaml:
/fmu/out/vehicle_odometry and /fmu/out/actuator_motors from the uXRCE-DDS
bridge; add actuator_motors to PX4's dds_topics.yaml publications).

    ros2 launch calisym px4_quadrotor.launch.py model:=x500.safetensors xrce_agent:=true foxglove:=true

xrce_agent starts MicroXRCEAgent on UDP port 8888 (PX4 SITL's default); PX4
publishes with best-effort QoS, which the node's subscriptions accept.
The agent starts before the predictor, so that a missing MicroXRCEAgent
stops the launch before the node starts.

The node, foxglove_bridge and bag playback come from predictor.launch.py,
which this file includes with model (required) and params (this robot's
params file unless given); predictor.launch.py's other arguments (data,
foxglove, foxglove_address, foxglove_port, bag) are accepted here too.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("calisym")
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=PathJoinSubstitution([share, "params", "px4_quadrotor.yaml"]),
                              description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("xrce_agent", default_value="false", description="start MicroXRCEAgent udp4 -p 8888"),
        ExecuteProcess(
            cmd=["MicroXRCEAgent", "udp4", "-p", "8888"],
            output="screen",
            condition=IfCondition(LaunchConfiguration("xrce_agent")),
        ),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "predictor.launch.py"])),
            launch_arguments={"model": LaunchConfiguration("model"), "params": LaunchConfiguration("params")}.items(),
        ),
    ])
