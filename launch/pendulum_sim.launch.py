"""Launch calisym's predictor node for the simulated double pendulum
(params/pendulum_sim.yaml: /joint_states sensor_msgs/JointState and
/torque_command std_msgs/Float64MultiArray).

    ros2 launch calisym pendulum_sim.launch.py model:=out/demo/calisym-grb.safetensors \
        bag:=out/pendulum-data/ood.mcap foxglove:=true

bag plays a recorded log (calisym sim --mcap) as the robot; foxglove starts
foxglove_bridge so that Foxglove shows inputs and predictions.

The node, foxglove_bridge and bag playback come from predictor.launch.py,
which this file includes with model (required) and params (this robot's
params file unless given); predictor.launch.py's other arguments (data,
foxglove, foxglove_address, foxglove_port, bag) are accepted here too.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("calisym")
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=PathJoinSubstitution([share, "params", "pendulum_sim.yaml"]),
                              description="params YAML (convert: and node: sections)"),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "predictor.launch.py"])),
            launch_arguments={"model": LaunchConfiguration("model"), "params": LaunchConfiguration("params")}.items(),
        ),
    ])
