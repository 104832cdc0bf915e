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
in the description, and launch runs it in order, so what they need that is
missing stops the launch before calisym_ros2 starts instead of leaving it
running alone: foxglove_bridge not installed (launch cannot find the
package), and for bag a check before anything starts (check_bag): ros2 not
on PATH, ros2bag not installed, or no such bag. A bag player that exits with
an error once running (a message type it cannot load) stops the launch,
node included (stop_on_failure); one that ends normally leaves the node
serving. The bag starts playing before the node subscribes; its first
messages may pass before the node listens.
"""

import importlib.util
import os
import shutil

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, EmitEvent, ExecuteProcess, LogInfo, OpaqueFunction, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node


def check_bag(context):
    """Stops the launch, before any process starts, when bag:= names a log
    that ros2 bag play cannot play here."""
    bag = context.launch_configurations.get("bag", "")
    if not bag:
        return []
    if shutil.which("ros2") is None:
        raise RuntimeError("bag:=%s: the ros2 command is not on PATH (source the ROS 2 setup)" % bag)
    if importlib.util.find_spec("ros2bag") is None:
        raise RuntimeError("bag:=%s: ros2bag is not installed (apt install ros-$ROS_DISTRO-ros2bag "
                           "ros-$ROS_DISTRO-rosbag2-storage-mcap), so ros2 bag play cannot play it" % bag)
    if not os.path.exists(bag):
        raise RuntimeError("bag:=%s: no such file or directory" % bag)
    return []


def stop_on_failure(what):
    """An OnProcessExit handler that shuts the launch down when the process
    exits with an error (and lets it run on when it ends normally)."""
    def on_exit(event, context):
        if event.returncode == 0:
            return []
        reason = "%s exited with code %d" % (what, event.returncode)
        return [LogInfo(msg="calisym: " + reason + ": stopping the launch"), EmitEvent(event=Shutdown(reason=reason))]
    return on_exit


def generate_launch_description():
    bag = ExecuteProcess(
        cmd=["ros2", "bag", "play", LaunchConfiguration("bag")],
        output="screen",
        condition=IfCondition(PythonExpression(["'", LaunchConfiguration("bag"), "' != ''"])),
    )
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("data", default_value="", description="directory of the params' parameter files and URDFs"),
        DeclareLaunchArgument("foxglove", default_value="false", description="also start foxglove_bridge"),
        DeclareLaunchArgument("foxglove_address", default_value="127.0.0.1", description="foxglove_bridge address"),
        DeclareLaunchArgument("foxglove_port", default_value="8765", description="foxglove_bridge port"),
        DeclareLaunchArgument("bag", default_value="", description="log to play as the robot (ros2 bag play)"),
        OpaqueFunction(function=check_bag),
        Node(
            package="foxglove_bridge",
            executable="foxglove_bridge",
            name="foxglove_bridge",
            parameters=[{"address": LaunchConfiguration("foxglove_address"), "port": LaunchConfiguration("foxglove_port")}],
            condition=IfCondition(LaunchConfiguration("foxglove")),
        ),
        bag,
        RegisterEventHandler(OnProcessExit(target_action=bag, on_exit=stop_on_failure("ros2 bag play"))),
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
