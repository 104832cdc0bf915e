"""Launch calisym's predictor node for ANYmal D (params/anymal.yaml:
/state_estimator/anymal_state anymal_msgs/AnymalState, as the robot and the
GrandTour dataset publish it).

    ros2 launch calisym anymal.launch.py model:=anymal.safetensors data:=/path/with/anymal_d_simple_description \
        bag:=grand_tour/mission.mcap foxglove:=true

data is the directory the URDF path of the params is relative to; bag plays
a recorded mission (the anymal_msgs interfaces must be installed to play it).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    params = PathJoinSubstitution([FindPackageShare("calisym"), "params", "anymal.yaml"])
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=params, description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("data", default_value="", description="directory of the params' parameter files and URDFs"),
        DeclareLaunchArgument("foxglove", default_value="false", description="also start foxglove_bridge"),
        DeclareLaunchArgument("foxglove_address", default_value="127.0.0.1", description="foxglove_bridge address"),
        DeclareLaunchArgument("foxglove_port", default_value="8765", description="foxglove_bridge port"),
        DeclareLaunchArgument("bag", default_value="", description="log to play as the robot (ros2 bag play)"),
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
            cmd=["ros2", "bag", "play", LaunchConfiguration("bag")],
            output="screen",
            condition=IfCondition(PythonExpression(["'", LaunchConfiguration("bag"), "' != ''"])),
        ),
    ])
