package msgs

import "github.com/calisym/calisym/msgs/rosmsg"

// String is std_msgs/msg/String: one string, such as the URDF robot
// description on /robot_description.
type String struct {
	// Data is the string.
	Data string
}

// ROSType returns "std_msgs/msg/String".
func (s *String) ROSType() string { return "std_msgs/msg/String" }

// ROSDefinition returns the complete ros2msg definition.
func (s *String) ROSDefinition() string { return definitionOf("std_msgs/String") }

// EncodeCDR appends the fields.
func (s *String) EncodeCDR(w *rosmsg.CDRWriter) { w.String(s.Data) }

// DecodeCDR reads the fields.
func (s *String) DecodeCDR(r *rosmsg.CDRReader) { s.Data = r.String() }

// Transform is geometry_msgs/msg/Transform: a child frame's pose in its
// parent frame, the translation of its origin and its rotation.
type Transform struct {
	// Translation is the child frame's origin in parent coordinates.
	Translation Vector3
	// Rotation rotates child coordinates into parent coordinates.
	Rotation Quaternion
}

// ROSType returns "geometry_msgs/msg/Transform".
func (t *Transform) ROSType() string { return "geometry_msgs/msg/Transform" }

// ROSDefinition returns the complete ros2msg definition.
func (t *Transform) ROSDefinition() string { return definitionOf("geometry_msgs/Transform") }

// EncodeCDR appends the fields.
func (t *Transform) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Translation.EncodeCDR(w)
	t.Rotation.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (t *Transform) DecodeCDR(r *rosmsg.CDRReader) {
	t.Translation.DecodeCDR(r)
	t.Rotation.DecodeCDR(r)
}

// TransformStamped is geometry_msgs/msg/TransformStamped: the transform
// from Header.FrameID (the parent) to ChildFrameID at Header.Stamp.
type TransformStamped struct {
	// Header stamps the transform and names the parent frame.
	Header Header
	// ChildFrameID names the child frame.
	ChildFrameID string
	// Transform is the child frame's pose in the parent frame.
	Transform Transform
}

// ROSType returns "geometry_msgs/msg/TransformStamped".
func (t *TransformStamped) ROSType() string { return "geometry_msgs/msg/TransformStamped" }

// ROSDefinition returns the complete ros2msg definition.
func (t *TransformStamped) ROSDefinition() string {
	return definitionOf("geometry_msgs/TransformStamped")
}

// EncodeCDR appends the fields.
func (t *TransformStamped) EncodeCDR(w *rosmsg.CDRWriter) {
	t.Header.EncodeCDR(w)
	w.String(t.ChildFrameID)
	t.Transform.EncodeCDR(w)
}

// DecodeCDR reads the fields.
func (t *TransformStamped) DecodeCDR(r *rosmsg.CDRReader) {
	t.Header.DecodeCDR(r)
	t.ChildFrameID = r.String()
	t.Transform.DecodeCDR(r)
}

// TFMessage is tf2_msgs/msg/TFMessage, the type of /tf and /tf_static: a
// batch of transforms.
type TFMessage struct {
	// Transforms are the transforms.
	Transforms []TransformStamped
}

// ROSType returns "tf2_msgs/msg/TFMessage".
func (m *TFMessage) ROSType() string { return "tf2_msgs/msg/TFMessage" }

// ROSDefinition returns the complete ros2msg definition.
func (m *TFMessage) ROSDefinition() string { return definitionOf("tf2_msgs/TFMessage") }

// EncodeCDR appends the fields.
func (m *TFMessage) EncodeCDR(w *rosmsg.CDRWriter) {
	w.SequenceLength(len(m.Transforms))
	for i := range m.Transforms {
		m.Transforms[i].EncodeCDR(w)
	}
}

// DecodeCDR reads the fields.
func (m *TFMessage) DecodeCDR(r *rosmsg.CDRReader) {
	m.Transforms = nil
	// A transform is at least a header, an empty child frame id (4 bytes)
	// and seven float64s.
	if n := r.SequenceLength(minHeaderSize + 4 + 7*8); n > 0 {
		m.Transforms = make([]TransformStamped, n)
		for i := range m.Transforms {
			m.Transforms[i].DecodeCDR(r)
		}
	}
}
