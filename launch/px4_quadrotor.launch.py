"""Launch calisym's predictor node for a PX4 quadrotor (params/px4_quadrotor.yaml:
/fmu/out/vehicle_odometry and /fmu/out/actuator_motors from the uXRCE-DDS
bridge; add actuator_motors to PX4's dds_topics.yaml publications).

    ros2 launch calisym px4_quadrotor.launch.py model:=x500.safetensors xrce_agent:=true foxglove:=true

xrce_agent starts MicroXRCEAgent on UDP port 8888 (PX4 SITL's default); PX4
publishes with best-effort QoS, which the node's subscriptions accept.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    params = PathJoinSubstitution([FindPackageShare("calisym"), "params", "px4_quadrotor.yaml"])
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=params, description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("data", default_value="", description="directory of the params' parameter files and URDFs"),
        DeclareLaunchArgument("foxglove", default_value="false", description="also start foxglove_bridge"),
        DeclareLaunchArgument("foxglove_address", default_value="127.0.0.1", description="foxglove_bridge address"),
        DeclareLaunchArgument("foxglove_port", default_value="8765", description="foxglove_bridge port"),
        DeclareLaunchArgument("xrce_agent", default_value="false", description="start MicroXRCEAgent udp4 -p 8888"),
        Node(
            package="calisym",
            executable="calisym_ros2",
            name="calisym_predictor",
            output="screen",
            arguments=[
                "--params", LaunchConfiguration("params"),
                "--model", LaunchConfiguration("model"),
                "--data", LaunchConfiguration("data"),
            ],
        ),
        Node(
            package="foxglove_bridge",
            executable="foxglove_bridge",
            name="foxglove_bridge",
            parameters=[{"address": LaunchConfiguration("foxglove_address"), "port": LaunchConfiguration("foxglove_port")}],
            condition=IfCondition(LaunchConfiguration("foxglove")),
        ),
        ExecuteProcess(
            cmd=["MicroXRCEAgent", "udp4", "-p", "8888"],
            output="screen",
            condition=IfCondition(LaunchConfiguration("xrce_agent")),
        ),
    ])
