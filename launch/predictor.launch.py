"""The calisym predictor node, optionally with foxglove_bridge and a log played
as the robot: the launch file every robot's launch file includes with its own
params file.

    ros2 launch calisym predictor.launch.py params:=/path/to/robot.yaml model:=robot.safetensors \
        bag:=recorded.mcap foxglove:=true

params is a calisym params YAML (convert: and node: sections); data is the
directory its relative paths (parameter files, URDFs) are resolved against;
bag plays a recorded log with ros2 bag play; foxglove starts foxglove_bridge
(bound to 127.0.0.1 unless foxglove_address says otherwise); reliable_inputs
subscribes to the inputs reliably (for reliable publishers whose messages the
diagnostics count as lost); launch_prefix runs the node under a command, such
as real-time scheduling on a busy computer:

    ros2 launch calisym anymal.launch.py model:=anymal.safetensors data:=/path/with/urdf launch_prefix:='chrt -f 50'

(SCHED_FIFO priority 50 for every thread of the node: it then runs before
any normal process on its core; it needs CAP_SYS_NICE or an rtprio limit of
50 or more for the user, see docs/performance.md).

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

What the node needs is checked before anything starts too (check_params):
the model file, the params file, and the files the params name relative to
data (the URDF of convert.model or node.tf, a pendulum's params_file), so
that a launch without data:= (or with the wrong one) stops with a message
that names the file and the argument instead of starting a node that dies.
A node that exits with an error once running (a model that does not fit
the params) stops the launch, and ros2 launch exits non-zero
(stop_on_failure); the real-time option is in docs/performance.md.
"""

import importlib.util
import os
import shutil

import yaml

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


def data_files(params):
    """The files a params dict names relative to the data root: the URDF of
    convert.model (kind urdf) and of node.tf (unless its topic is "-"), and
    a pendulum's params_file, each with the key that names it."""
    convert, node = params.get("convert") or {}, params.get("node") or {}
    model, tf = convert.get("model") or {}, node.get("tf") or {}
    files = []
    if model.get("kind") == "urdf" and model.get("urdf"):
        files.append(("convert.model.urdf", model["urdf"]))
    pendulum = model.get("pendulum") or {}
    if pendulum.get("params_file"):
        files.append(("convert.model.pendulum.params_file", pendulum["params_file"]))
    if tf.get("urdf") and tf.get("topic") != "-":
        files.append(("node.tf.urdf", tf["urdf"]))
    return files


def check_params(context):
    """Stops the launch, before any process starts, when the node could not
    start: no such model or params file, or a file the params name that is
    not under data (the params file's directory when data is empty)."""
    cfg = context.launch_configurations
    model, path, data = cfg.get("model", ""), cfg.get("params", ""), cfg.get("data", "")
    if not os.path.isfile(model):
        raise RuntimeError("model:=%s: no such file" % model)
    if not os.path.isfile(path):
        raise RuntimeError("params:=%s: no such file" % path)
    try:
        with open(path) as f:
            params = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise RuntimeError("params:=%s: %s" % (path, e))
    root = data or os.path.dirname(os.path.abspath(path))
    for key, name in data_files(params):
        full = name if os.path.isabs(name) else os.path.join(root, name)
        if os.path.exists(full):
            continue
        where = "data:=%s" % data if data else "the params file's directory (no data:= given)"
        raise RuntimeError("%s names %s (%s), which is not in %s: %s does not exist; give data:=DIR, "
                           "the directory that holds %s" % (path, name, key, where, full, name))
    return []


def stop_on_failure(what, node=False):
    """An OnProcessExit handler: a process that exits with an error (not
    while the launch shuts down, when a signal ends it) raises, which makes
    launch stop everything and ros2 launch exit with code 1 (a Shutdown
    event alone would exit 0); one that ends normally lets the others run
    on, except the node (node=True), whose end ends the launch."""
    def on_exit(event, context):
        if context is not None and context.is_shutdown:
            return []
        if event.returncode == 0:
            if not node:
                return []
            reason = "%s exited" % what
            return [LogInfo(msg="calisym: " + reason + ": stopping the launch"), EmitEvent(event=Shutdown(reason=reason))]
        raise RuntimeError("calisym: %s exited with code %d: stopping the launch" % (what, event.returncode))
    return on_exit


def generate_launch_description():
    bag = ExecuteProcess(
        cmd=["ros2", "bag", "play", LaunchConfiguration("bag")],
        output="screen",
        condition=IfCondition(PythonExpression(["'", LaunchConfiguration("bag"), "' != ''"])),
    )
    node = Node(
        package="calisym",
        executable="calisym_ros2",
        name="calisym_predictor",
        output="screen",
        prefix=LaunchConfiguration("launch_prefix"),
        arguments=[
            "--params", LaunchConfiguration("params"),
            "--model", LaunchConfiguration("model"),
            "--data", LaunchConfiguration("data"),
            ["--reliable-inputs=", LaunchConfiguration("reliable_inputs")],
        ],
    )
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("data", default_value="", description="directory of the params' parameter files and URDFs"),
        DeclareLaunchArgument("foxglove", default_value="false", description="also start foxglove_bridge"),
        DeclareLaunchArgument("foxglove_address", default_value="127.0.0.1", description="foxglove_bridge address"),
        DeclareLaunchArgument("foxglove_port", default_value="8765", description="foxglove_bridge port"),
        DeclareLaunchArgument("bag", default_value="", description="log to play as the robot (ros2 bag play)"),
        DeclareLaunchArgument("launch_prefix", default_value="",
                              description="a command the node runs under, e.g. 'chrt -f 50' for real-time priority "
                                          "(needs CAP_SYS_NICE or an rtprio limit: docs/performance.md)"),
        DeclareLaunchArgument("reliable_inputs", default_value="false",
                              description="subscribe to the inputs reliably (default best effort, REP 2003's sensor-data "
                                          "QoS, which every publisher matches; see docs/live-prediction.md)"),
        OpaqueFunction(function=check_params),
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
        node,
        RegisterEventHandler(OnProcessExit(target_action=node, on_exit=stop_on_failure("calisym_ros2", node=True))),
    ])
