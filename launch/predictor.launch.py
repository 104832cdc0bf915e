"""The calisym predictor node, optionally with foxglove_bridge and a log played
as the robot: the launch file every robot's launch file includes with its own
params file.

    ros2 launch calisym predictor.launch.py params:=/path/to/robot.yaml model:=robot.safetensors \
        bag:=recorded.mcap foxglove:=true

params is a calisym params YAML (convert: and node: sections); data is the
directory its relative paths (parameter files, URDFs) are resolved against;
bag plays a recorded log with ros2 bag play; foxglove starts foxglove_bridge
(bound to 127.0.0.1 unless foxglove_address says otherwise).

The optional actions (foxglove_bridge, ros2 bag play) come before the node
in the description: launch runs it in order, so a package that is missing
(foxglove_bridge not installed) stops the launch before calisym_ros2 starts
instead of leaving it running alone. The bag starts playing before the node
subscribes; its first messages may pass before the node listens.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("data", default_value="", description="directory of the params' parameter files and URDFs"),
        DeclareLaunchArgument("foxglove", default_value="false", description="also start foxglove_bridge"),
        DeclareLaunchArgument("foxglove_address", default_value="127.0.0.1", description="foxglove_bridge address"),
        DeclareLaunchArgument("foxglove_port", default_value="8765", description="foxglove_bridge port"),
        DeclareLaunchArgument("bag", default_value="", description="log to play as the robot (ros2 bag play)"),
        Node(
            package="foxglove_bridge",
            executable="foxglove_bridge",
            name="foxglove_bridge",
            parameters=[{"address": LaunchConfiguration("foxglove_address"), "port": LaunchConfiguration("foxglove_port")}],
            condition=IfCondition(LaunchConfiguration("foxglove")),
        ),
        ExecuteProcess(
            cmd=["ros2", "bag", "play", LaunchConfiguration("bag")],
            output="screen",
            condition=IfCondition(PythonExpression(["'", LaunchConfiguration("bag"), "' != ''"])),
        ),
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
    ])
