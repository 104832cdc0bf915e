package msgs

import "github.com/calisym/calisym/msgs/rosmsg"

// Point is geometry_msgs/msg/Point: a position in free space.
type Point struct {
	// X, Y and Z are the coordinates.
	X, Y, Z float64
}

// ROSType returns "geometry_msgs/msg/Point".
func (p *Point) ROSType() string { return "geometry_msgs/msg/Point" }

// ROSDefinition returns the complete ros2msg definition.
func (p *Point) ROSDefinition() string { return definitionOf("geometry_msgs/Point") }

// EncodeCDR appends the fields.
func (p *Point) EncodeCDR(w *rosmsg.CDRWriter) {
	w.Float64(p.X)
	w.Float64(p.Y)
	w.Float64(p.Z)
}

// DecodeCDR reads the fields.
func (p *Point) DecodeCDR(r *rosmsg.CDRReader) {
	p.X = r.Float64()
	p.Y = r.Float64()
	p.Z = r.Float64()
}

// Vector3 is geometry_msgs/msg/Vector3: a vector in free space.
type Vector3 struct {
	// X, Y and Z are the components.
	X, Y, Z float64
}

// ROSType returns "geometry_msgs/msg/Vector3".
func (v *Vector3) ROSType() string { return "geometry_msgs/msg/Vector3" }

// ROSDefinition returns the complete ros2msg definition.
func (v *Vector3) ROSDefinition() string { return definitionOf("geometry_msgs/Vector3") }

// EncodeCDR appends the fields.
func (v *Vector3) EncodeCDR(w *rosmsg.CDRWriter) {
	w.Float64(v.X)
	w.Float64(v.Y)
	w.Float64(v.Z)
}

// DecodeCDR reads the fields.
func (v *Vector3) DecodeCDR(r *rosmsg.CDRReader) {
	v.X = r.Float64()
	v.Y = r.Float64()
	v.Z = r.Float64()
}

// Quaternion is geometry_msgs/msg/Quaternion: an orientation. ROS's default
// value is the identity (W = 1); the Go zero value has W = 0, so set W
// explicitly (see IdentityQuaternion).
type Quaternion struct {
	// X, Y, Z are the vector part, W the scalar part.
	X, Y, Z, W float64
}

// IdentityQuaternion returns the quaternion of no rotation.
func IdentityQuaternion() Quaternion { return Quaternion{W: 1} }

// ROSType returns "geometry_msgs/msg/Quaternion".
func (q *Quaternion) ROSType() string { return "geometry_msgs/msg/Quaternion" }

// ROSDefinition returns the complete ros2msg definition.
func (q *Quaternion) ROSDefinition() string { return definitionOf("geometry_msgs/Quaternion") }

// EncodeCDR appends the fields.
func (q *Quaternion) EncodeCDR(w *rosmsg.CDRWriter) {
	w.Float64(q.X)
	w.Float64(q.Y)
	w.Float64(q.Z)
	w.Float64(q.W)
}

// DecodeCDR reads the fields.
func (q *Quaternion) DecodeCDR(r *rosmsg.CDRReader) {
	q.X = r.Float64()
	q.Y = r.Float64()
	q.Z = r.Float64()
	q.W = r.Float64()
}

// Pose is geometry_msgs/msg/Pose: a position and an orientation.
type Pose struct {
	// Position is the position.
	Position Point
	// Orientation is the orientation.
	Orientation Quaternion
}

// ROSType returns "geometry_msgs/msg/Pose".
func (p *Pose) ROSType() string { return "geometry_msgs/msg/Pose" }

// ROSDefinition returns the complete ros2msg definition.
func (p *Pose) ROSDefinition() string { return definitionOf("geometry_msgs/Pose") }

// EncodeCDR appends the fields.
func (p *Pose) EncodeCDR(w *rosmsg.CDRWriter) {
	p.Position.EncodeCDR(w)
	p.Orientation.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (p *Pose) DecodeCDR(r *rosmsg.CDRReader) {
	p.Position.DecodeCDR(r)
	p.Orientation.DecodeCDR(r)
}

// PoseStamped is geometry_msgs/msg/PoseStamped: a pose with a header.
type PoseStamped struct {
	// Header stamps the pose and names its frame.
	Header Header
	// Pose is the pose.
	Pose Pose
}

// ROSType returns "geometry_msgs/msg/PoseStamped".
func (p *PoseStamped) ROSType() string { return "geometry_msgs/msg/PoseStamped" }

// ROSDefinition returns the complete ros2msg definition.
func (p *PoseStamped) ROSDefinition() string { return definitionOf("geometry_msgs/PoseStamped") }

// EncodeCDR appends the fields.
func (p *PoseStamped) EncodeCDR(w *rosmsg.CDRWriter) {
	p.Header.EncodeCDR(w)
	p.Pose.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (p *PoseStamped) DecodeCDR(r *rosmsg.CDRReader) {
	p.Header.DecodeCDR(r)
	p.Pose.DecodeCDR(r)
}

// Twist is geometry_msgs/msg/Twist: linear and angular velocity.
type Twist struct {
	// Linear is the linear velocity (m/s).
	Linear Vector3
	// Angular is the angular velocity (rad/s).
	Angular Vector3
}

// ROSType returns "geometry_msgs/msg/Twist".
func (t *Twist) ROSType() string { return "geometry_msgs/msg/Twist" }

// ROSDefinition returns the complete ros2msg definition.
func (t *Twist) ROSDefinition() string { return definitionOf("geometry_msgs/Twist") }

// EncodeCDR appends the fields.
func (t *Twist) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Linear.EncodeCDR(w)
	t.Angular.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (t *Twist) DecodeCDR(r *rosmsg.CDRReader) {
	t.Linear.DecodeCDR(r)
	t.Angular.DecodeCDR(r)
}

// Wrench is geometry_msgs/msg/Wrench: force and torque.
type Wrench struct {
	// Force is the force (N).
	Force Vector3
	// Torque is the torque (N·m).
	Torque Vector3
}

// ROSType returns "geometry_msgs/msg/Wrench".
func (t *Wrench) ROSType() string { return "geometry_msgs/msg/Wrench" }

// ROSDefinition returns the complete ros2msg definition.
func (t *Wrench) ROSDefinition() string { return definitionOf("geometry_msgs/Wrench") }

// EncodeCDR appends the fields.
func (t *Wrench) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Force.EncodeCDR(w)
	t.Torque.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (t *Wrench) DecodeCDR(r *rosmsg.CDRReader) {
	t.Force.DecodeCDR(r)
	t.Torque.DecodeCDR(r)
}

// WrenchStamped is geometry_msgs/msg/WrenchStamped: a wrench with a header.
type WrenchStamped struct {
	// Header stamps the wrench and names its frame.
	Header Header
	// Wrench is the wrench.
	Wrench Wrench
}

// ROSType returns "geometry_msgs/msg/WrenchStamped".
func (t *WrenchStamped) ROSType() string { return "geometry_msgs/msg/WrenchStamped" }

// ROSDefinition returns the complete ros2msg definition.
func (t *WrenchStamped) ROSDefinition() string { return definitionOf("geometry_msgs/WrenchStamped") }

// EncodeCDR appends the fields.
func (t *WrenchStamped) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Header.EncodeCDR(w)
	t.Wrench.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (t *WrenchStamped) DecodeCDR(r *rosmsg.CDRReader) {
	t.Header.DecodeCDR(r)
	t.Wrench.DecodeCDR(r)
}

// PoseWithCovariance is geometry_msgs/msg/PoseWithCovariance: a pose and
// the row-major 6×6 covariance of (x, y, z, rotation about x, y, z).
type PoseWithCovariance struct {
	// Pose is the pose.
	Pose Pose
	// Covariance is row-major 6×6.
	Covariance [36]float64
}

// ROSType returns "geometry_msgs/msg/PoseWithCovariance".
func (p *PoseWithCovariance) ROSType() string { return "geometry_msgs/msg/PoseWithCovariance" }

// ROSDefinition returns the complete ros2msg definition.
func (p *PoseWithCovariance) ROSDefinition() string {
	return definitionOf("geometry_msgs/PoseWithCovariance")
}

// EncodeCDR appends the fields.
func (p *PoseWithCovariance) EncodeCDR(w *rosmsg.CDRWriter) {
	p.Pose.EncodeCDR(w)
	w.Float64Array(p.Covariance[:])
}

// DecodeCDR reads the fields.
func (p *PoseWithCovariance) DecodeCDR(r *rosmsg.CDRReader) {
	p.Pose.DecodeCDR(r)
	r.Float64Array(p.Covariance[:])
}

// TwistWithCovariance is geometry_msgs/msg/TwistWithCovariance: a twist and
// the row-major 6×6 covariance of (vx, vy, vz, wx, wy, wz).
type TwistWithCovariance struct {
	// Twist is the twist.
	Twist Twist
	// Covariance is row-major 6×6.
	Covariance [36]float64
}

// ROSType returns "geometry_msgs/msg/TwistWithCovariance".
func (t *TwistWithCovariance) ROSType() string { return "geometry_msgs/msg/TwistWithCovariance" }

// ROSDefinition returns the complete ros2msg definition.
func (t *TwistWithCovariance) ROSDefinition() string {
	return definitionOf("geometry_msgs/TwistWithCovariance")
}

// EncodeCDR appends the fields.
func (t *TwistWithCovariance) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Twist.EncodeCDR(w)
	w.Float64Array(t.Covariance[:])
}

// DecodeCDR reads the fields.
func (t *TwistWithCovariance) DecodeCDR(r *rosmsg.CDRReader) {
	t.Twist.DecodeCDR(r)
	r.Float64Array(t.Covariance[:])
}
