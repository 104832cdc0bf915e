"""Launch calisym's predictor node for a Crazyflie 2.1 Brushless on Crazyswarm2
(params/crazyflie.yaml: /cf231/odom nav_msgs/Odometry and the custom log
topic /cf231/motors with motor.m1..m4, crazyflie_interfaces/LogDataGeneric).

    ros2 launch calisym crazyflie.launch.py model:=crazyflie.safetensors crazyflie_server:=true foxglove:=true

crazyflie_server includes Crazyswarm2's crazyflie launch.py (its
crazyflies.yaml must declare the odom default topic and the motors custom
topic) before the predictor, so that a missing crazyflie package stops the
launch before the node starts.

The node, foxglove_bridge and bag playback come from predictor.launch.py,
which this file includes with model (required) and params (this robot's
params file unless given); predictor.launch.py's other arguments (data,
foxglove, foxglove_address, foxglove_port, bag) are accepted here too.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare("calisym")
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=PathJoinSubstitution([share, "params", "crazyflie.yaml"]),
                              description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("crazyflie_server", default_value="false", description="include Crazyswarm2's crazyflie launch.py"),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare("crazyflie"), "launch", "launch.py"])),
            condition=IfCondition(LaunchConfiguration("crazyflie_server")),
        ),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "predictor.launch.py"])),
            launch_arguments={"model": LaunchConfiguration("model"), "params": LaunchConfiguration("params")}.items(),
        ),
    ])
