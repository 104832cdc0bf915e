"""Launch calisym's predictor node for the simulated double pendulum
(params/pendulum_sim.yaml: /joint_states sensor_msgs/JointState and
/torque_command std_msgs/Float64MultiArray).

    ros2 launch calisym pendulum_sim.launch.py model:=out/demo/calisym-grb.safetensors \
        bag:=out/pendulum-data/ood.mcap foxglove:=true

bag plays a recorded log (calisym sim --mcap) as the robot; foxglove starts
foxglove_bridge so that Foxglove shows inputs and predictions.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    params = PathJoinSubstitution([FindPackageShare("calisym"), "params", "pendulum_sim.yaml"])
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
