package msgs

import "github.com/calisym/calisym/msgs/rosmsg"

// Odometry is nav_msgs/msg/Odometry: an estimate of pose (in header's
// frame) and twist (in ChildFrameID's frame).
type Odometry struct {
	// Header stamps the estimate and names the pose's frame.
	Header Header
	// ChildFrameID names the frame of the twist.
	ChildFrameID string
	// Pose is the estimated pose.
	Pose PoseWithCovariance
	// Twist is the estimated velocity.
	Twist TwistWithCovariance
}

// ROSType returns "nav_msgs/msg/Odometry".
func (o *Odometry) ROSType() string { return "nav_msgs/msg/Odometry" }

// ROSDefinition returns the complete ros2msg definition.
func (o *Odometry) ROSDefinition() string { return definitionOf("nav_msgs/Odometry") }

// EncodeCDR appends the fields.
func (o *Odometry) EncodeCDR(w *rosmsg.CDRWriter) {
	o.Header.EncodeCDR(w)
	w.String(o.ChildFrameID)
	o.Pose.EncodeCDR(w)
	o.Twist.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (o *Odometry) DecodeCDR(r *rosmsg.CDRReader) {
	o.Header.DecodeCDR(r)
	o.ChildFrameID = r.String()
	o.Pose.DecodeCDR(r)
	o.Twist.DecodeCDR(r)
}

// Path is nav_msgs/msg/Path: a sequence of poses.
type Path struct {
	// Header stamps the path and names its frame.
	Header Header
	// Poses are the poses along the path.
	Poses []PoseStamped
}

// ROSType returns "nav_msgs/msg/Path".
func (p *Path) ROSType() string { return "nav_msgs/msg/Path" }

// ROSDefinition returns the complete ros2msg definition.
func (p *Path) ROSDefinition() string { return definitionOf("nav_msgs/Path") }

// EncodeCDR appends the fields.
func (p *Path) EncodeCDR(w *rosmsg.CDRWriter) {
	p.Header.EncodeCDR(w)
	w.SequenceLength(len(p.Poses))
	for i := range p.Poses {
		p.Poses[i].EncodeCDR(w)
	}
}

// DecodeCDR reads the fields.
func (p *Path) DecodeCDR(r *rosmsg.CDRReader) {
	p.Header.DecodeCDR(r)
	p.Poses = nil
	if n := r.SequenceLength(minHeaderSize + 7*8); n > 0 {
		p.Poses = make([]PoseStamped, n)
		for i := range p.Poses {
			p.Poses[i].DecodeCDR(r)
		}
	}
}
