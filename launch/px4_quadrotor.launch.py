"""Launch calisym's predictor node for a PX4 quadrotor (params/px4_quadrotor.yaml:
/fmu/out/vehicle_odometry and /fmu/out/actuator_motors from the uXRCE-DDS
bridge; add actuator_motors to PX4's dds_topics.yaml publications).

    ros2 launch calisym px4_quadrotor.launch.py model:=x500.safetensors xrce_agent:=true foxglove:=true

xrce_agent starts MicroXRCEAgent on UDP port 8888 (PX4 SITL's default); PX4
publishes with best-effort QoS, which the node's subscriptions accept.
A MicroXRCEAgent that is not on PATH stops the launch before anything
starts (check_agent; launch itself would only log the FileNotFoundError and
start the node alone), and an agent that exits with an error stops the
launch, node included.

The node, foxglove_bridge and bag playback come from predictor.launch.py,
which this file includes with model (required) and params (this robot's
params file unless given); predictor.launch.py's other arguments (data,
foxglove, foxglove_address, foxglove_port, bag) are accepted here too.
"""

import shutil

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, IncludeLaunchDescription, OpaqueFunction, RegisterEventHandler
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def check_agent(context):
    """Stops the launch, before any process starts, when xrce_agent:=true
    and MicroXRCEAgent is not on PATH."""
    if context.launch_configurations.get("xrce_agent", "false").strip().lower() not in ("true", "1"):
        return []
    if shutil.which("MicroXRCEAgent") is None:
        raise RuntimeError("xrce_agent:=true: MicroXRCEAgent is not on PATH (build Micro-XRCE-DDS-Agent, "
                           "or start the agent yourself and leave xrce_agent false)")
    return []


def stop_on_failure(what):
    """An OnProcessExit handler: a process that exits with an error (not
    while the launch shuts down) raises, which makes launch stop everything
    and ros2 launch exit with code 1."""
    def on_exit(event, context):
        if context is not None and context.is_shutdown:
            return []
        if event.returncode == 0:
            return []
        raise RuntimeError("calisym: %s exited with code %d: stopping the launch" % (what, event.returncode))
    return on_exit


def generate_launch_description():
    share = FindPackageShare("calisym")
    agent = ExecuteProcess(
        cmd=["MicroXRCEAgent", "udp4", "-p", "8888"],
        output="screen",
        condition=IfCondition(LaunchConfiguration("xrce_agent")),
    )
    return LaunchDescription([
        DeclareLaunchArgument("model", description="CaLiSym model file (.safetensors) trained for this robot"),
        DeclareLaunchArgument("params", default_value=PathJoinSubstitution([share, "params", "px4_quadrotor.yaml"]),
                              description="params YAML (convert: and node: sections)"),
        DeclareLaunchArgument("xrce_agent", default_value="false", description="start MicroXRCEAgent udp4 -p 8888"),
        OpaqueFunction(function=check_agent),
        agent,
        RegisterEventHandler(OnProcessExit(target_action=agent, on_exit=stop_on_failure("MicroXRCEAgent"))),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "predictor.launch.py"])),
            launch_arguments={"model": LaunchConfiguration("model"), "params": LaunchConfiguration("params")}.items(),
        ),
    ])
