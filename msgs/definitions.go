package msgs

import (
	_ "embed" // the package's own interface files
	"fmt"

	"github.com/calisym/calisym/msgs/rosmsg"
)

// predictedTrajectoryMsg is msg/PredictedTrajectory.msg, the interface file
// installed with the ROS 2 package.
//
//go:embed msg/PredictedTrajectory.msg
var predictedTrajectoryMsg string

// ownDefinition returns the .msg text of a type this package has a Go type
// for (name in "pkg/Type" form). The field lines are those of the ROS 2
// interface files (common_interfaces, rcl_interfaces); their comments are
// not reproduced, which no parser or player depends on.
func ownDefinition(name string) (string, bool) {
	switch name {
	case "builtin_interfaces/Time", "builtin_interfaces/Duration":
		return "int32 sec\nuint32 nanosec\n", true
	case "std_msgs/Header":
		return "builtin_interfaces/Time stamp\nstring frame_id\n", true
	case "std_msgs/MultiArrayDimension":
		return "string label\nuint32 size\nuint32 stride\n", true
	case "std_msgs/MultiArrayLayout":
		return "MultiArrayDimension[] dim\nuint32 data_offset\n", true
	case "std_msgs/Float64MultiArray":
		return "MultiArrayLayout  layout\nfloat64[]         data\n", true
	case "sensor_msgs/JointState":
		return "std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n", true
	case "geometry_msgs/Point", "geometry_msgs/Vector3":
		return "float64 x\nfloat64 y\nfloat64 z\n", true
	case "geometry_msgs/Quaternion":
		return "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n", true
	case "geometry_msgs/Pose":
		return "Point position\nQuaternion orientation\n", true
	case "geometry_msgs/PoseStamped":
		return "std_msgs/Header header\nPose pose\n", true
	case "geometry_msgs/Twist":
		return "Vector3  linear\nVector3  angular\n", true
	case "geometry_msgs/Wrench":
		return "Vector3  force\nVector3  torque\n", true
	case "geometry_msgs/WrenchStamped":
		return "std_msgs/Header header\nWrench wrench\n", true
	case "geometry_msgs/PoseWithCovariance":
		return "Pose pose\n\nfloat64[36] covariance\n", true
	case "geometry_msgs/TwistWithCovariance":
		return "Twist twist\n\nfloat64[36] covariance\n", true
	case "std_msgs/String":
		return "string data\n", true
	case "geometry_msgs/Transform":
		return "Vector3 translation\nQuaternion rotation\n", true
	case "geometry_msgs/TransformStamped":
		return "std_msgs/Header header\nstring child_frame_id\nTransform transform\n", true
	case "tf2_msgs/TFMessage":
		return "geometry_msgs/TransformStamped[] transforms\n", true
	case "nav_msgs/Odometry":
		return "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/PoseWithCovariance pose\ngeometry_msgs/TwistWithCovariance twist\n", true
	case "nav_msgs/Path":
		return "std_msgs/Header header\ngeometry_msgs/PoseStamped[] poses\n", true
	case "diagnostic_msgs/KeyValue":
		return "string key\nstring value\n", true
	case "diagnostic_msgs/DiagnosticStatus":
		return "byte OK=0\nbyte WARN=1\nbyte ERROR=2\nbyte STALE=3\n\nbyte level\nstring name\nstring message\nstring hardware_id\nKeyValue[] values\n", true
	case "diagnostic_msgs/DiagnosticArray":
		return "std_msgs/Header header\nDiagnosticStatus[] status\n", true
	case "calisym/PredictedTrajectory":
		return predictedTrajectoryMsg, true
	}
	return "", false
}

// Definition returns the complete ros2msg definition of a type this package
// has a Go type for ("sensor_msgs/msg/JointState" or
// "sensor_msgs/JointState"), concatenated the way rosbag2 stores it in an
// MCAP schema (see [rosmsg.CompleteDefinition]). Errors for other types
// wrap [rosmsg.ErrUnknownType].
func Definition(rosType string) (string, error) {
	if _, ok := ownDefinition(rosmsg.NormalizeType(rosType)); !ok {
		return "", fmt.Errorf("msgs: no definition of %s: %w", rosType, rosmsg.ErrUnknownType)
	}
	return rosmsg.CompleteDefinition(rosType, func(name string) (string, error) {
		text, ok := OwnDefinition(name)
		if !ok {
			return "", fmt.Errorf("msgs: no definition of %s: %w", name, rosmsg.ErrUnknownType)
		}
		return text, nil
	})
}

// OwnDefinition returns the .msg text of a type this package has a Go type
// for ("pkg/msg/Type" or "pkg/Type"), without its dependencies.
func OwnDefinition(rosType string) (string, bool) {
	return ownDefinition(rosmsg.NormalizeType(rosType))
}

// definitionOf returns Definition of a type of this package (every typed
// message has an own definition, which the tests check).
func definitionOf(rosType string) string {
	d, _ := Definition(rosType)
	return d
}
