"""Launch calisym's predictor node for a Crazyflie 2.1 Brushless on Crazyswarm2
(params/crazyflie.yaml: /cf231/odom nav_msgs/Odometry and the custom log
topic /cf231/motors with motor.m1..m4, crazyflie_interfaces/LogDataGeneric).

    ros2 launch calisym crazyflie.launch.py model:=crazyflie.safetensors crazyflie_server:=true foxglove:=true

crazyflie_server includes Crazyswarm2's crazyflie launch.py (its
crazyflies.yaml must declare the odom default topic and the motors custom
topic).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    params = PathJoinSubstitution([FindPackageShare("calisym"), "params", "crazyflie.yaml"])
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=params, description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("data", default_value="", description="directory of the params' parameter files and URDFs"),
        DeclareLaunchArgument("foxglove", default_value="false", description="also start foxglove_bridge"),
        DeclareLaunchArgument("foxglove_address", default_value="127.0.0.1", description="foxglove_bridge address"),
        DeclareLaunchArgument("foxglove_port", default_value="8765", description="foxglove_bridge port"),
        DeclareLaunchArgument("crazyflie_server", default_value="false", description="include Crazyswarm2's crazyflie launch.py"),
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
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([FindPackageShare("crazyflie"), "launch", "launch.py"])),
            condition=IfCondition(LaunchConfiguration("crazyflie_server")),
        ),
    ])
