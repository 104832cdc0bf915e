"""Launch calisym's predictor node for ANYmal D (params/anymal.yaml:
/state_estimator/anymal_state anymal_msgs/AnymalState, as the robot and the
GrandTour dataset publish it).

    ros2 launch calisym anymal.launch.py model:=anymal.safetensors data:=/path/with/anymal_d_simple_description \
        bag:=grand_tour/mission.mcap foxglove:=true

data is the directory the URDF path of the params is relative to (the one
that holds anymal_d_simple_description/): the URDF is not installed with the
package, so a launch without data:= stops before the node starts, naming the
URDF and data:= (predictor.launch.py's check_params); bag plays a recorded
mission (the anymal_msgs interfaces must be installed to play it).

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
        DeclareLaunchArgument("params", default_value=PathJoinSubstitution([share, "params", "anymal.yaml"]),
                              description="params YAML (convert: and node: sections)"),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "predictor.launch.py"])),
            launch_arguments={"model": LaunchConfiguration("model"), "params": LaunchConfiguration("params")}.items(),
        ),
    ])
