package msgs

import "github.com/calisym/calisym/msgs/rosmsg"

// Time is builtin_interfaces/msg/Time: a point in time since the Unix epoch.
type Time struct {
	// Sec is the whole seconds (may be negative).
	Sec int32
	// Nanosec is the nanoseconds past Sec, 0 to 999999999.
	Nanosec uint32
}

// TimeFromNanos returns the Time ns nanoseconds after the Unix epoch.
func TimeFromNanos(ns int64) Time {
	sec, nsec := ns/1e9, ns%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return Time{Sec: int32(sec), Nanosec: uint32(nsec)}
}

// Nanos returns t in nanoseconds since the Unix epoch.
func (t *Time) Nanos() int64 { return int64(t.Sec)*1e9 + int64(t.Nanosec) }

// Seconds returns t in seconds since the Unix epoch.
func (t *Time) Seconds() float64 { return float64(t.Sec) + float64(t.Nanosec)*1e-9 }

// ROSType returns "builtin_interfaces/msg/Time".
func (t *Time) ROSType() string { return "builtin_interfaces/msg/Time" }

// ROSDefinition returns the complete ros2msg definition.
func (t *Time) ROSDefinition() string { return definitionOf("builtin_interfaces/Time") }

// EncodeCDR appends the fields.
func (t *Time) EncodeCDR(w *rosmsg.CDRWriter) {
	w.Int32(t.Sec)
	w.Uint32(t.Nanosec)
}

// DecodeCDR reads the fields.
func (t *Time) DecodeCDR(r *rosmsg.CDRReader) {
	t.Sec = r.Int32()
	t.Nanosec = r.Uint32()
}

// Duration is builtin_interfaces/msg/Duration: a span of time.
type Duration struct {
	// Sec is the whole seconds (may be negative).
	Sec int32
	// Nanosec is the nanoseconds added to Sec, 0 to 999999999.
	Nanosec uint32
}

// ROSType returns "builtin_interfaces/msg/Duration".
func (d *Duration) ROSType() string { return "builtin_interfaces/msg/Duration" }

// ROSDefinition returns the complete ros2msg definition.
func (d *Duration) ROSDefinition() string { return definitionOf("builtin_interfaces/Duration") }

// EncodeCDR appends the fields.
func (d *Duration) EncodeCDR(w *rosmsg.CDRWriter) {
	w.Int32(d.Sec)
	w.Uint32(d.Nanosec)
}

// DecodeCDR reads the fields.
func (d *Duration) DecodeCDR(r *rosmsg.CDRReader) {
	d.Sec = r.Int32()
	d.Nanosec = r.Uint32()
}

// Header is std_msgs/msg/Header: the time stamp and frame of stamped data.
type Header struct {
	// Stamp is the time the data refers to.
	Stamp Time
	// FrameID is the coordinate frame of the data.
	FrameID string
}

// ROSType returns "std_msgs/msg/Header".
func (h *Header) ROSType() string { return "std_msgs/msg/Header" }

// ROSDefinition returns the complete ros2msg definition.
func (h *Header) ROSDefinition() string { return definitionOf("std_msgs/Header") }

// EncodeCDR appends the fields.
func (h *Header) EncodeCDR(w *rosmsg.CDRWriter) {
	h.Stamp.EncodeCDR(w)
	w.String(h.FrameID)
}

// DecodeCDR reads the fields.
func (h *Header) DecodeCDR(r *rosmsg.CDRReader) {
	h.Stamp.DecodeCDR(r)
	h.FrameID = r.String()
}

// minHeaderSize is the smallest CDR size of a Header (stamp and an empty
// string's length).
const minHeaderSize = 12

// MultiArrayDimension is std_msgs/msg/MultiArrayDimension: one dimension of
// a multi-dimensional array.
type MultiArrayDimension struct {
	// Label names the dimension.
	Label string
	// Size is the number of elements along the dimension.
	Size uint32
	// Stride is the number of data elements per step of the dimension
	// times the strides of the inner dimensions (see MultiArrayLayout).
	Stride uint32
}

// ROSType returns "std_msgs/msg/MultiArrayDimension".
func (d *MultiArrayDimension) ROSType() string { return "std_msgs/msg/MultiArrayDimension" }

// ROSDefinition returns the complete ros2msg definition.
func (d *MultiArrayDimension) ROSDefinition() string {
	return definitionOf("std_msgs/MultiArrayDimension")
}

// EncodeCDR appends the fields.
func (d *MultiArrayDimension) EncodeCDR(w *rosmsg.CDRWriter) {
	w.String(d.Label)
	w.Uint32(d.Size)
	w.Uint32(d.Stride)
}

// DecodeCDR reads the fields.
func (d *MultiArrayDimension) DecodeCDR(r *rosmsg.CDRReader) {
	d.Label = r.String()
	d.Size = r.Uint32()
	d.Stride = r.Uint32()
}

// MultiArrayLayout is std_msgs/msg/MultiArrayLayout: the dimensions of a
// multi-dimensional array, outermost first; element (i, j, k) is at
// data[DataOffset + Dim[1].Stride*i + Dim[2].Stride*j + k].
type MultiArrayLayout struct {
	// Dim describes the dimensions, outermost first.
	Dim []MultiArrayDimension
	// DataOffset is the number of padding elements at the front of data.
	DataOffset uint32
}

// ROSType returns "std_msgs/msg/MultiArrayLayout".
func (l *MultiArrayLayout) ROSType() string { return "std_msgs/msg/MultiArrayLayout" }

// ROSDefinition returns the complete ros2msg definition.
func (l *MultiArrayLayout) ROSDefinition() string { return definitionOf("std_msgs/MultiArrayLayout") }

// EncodeCDR appends the fields.
func (l *MultiArrayLayout) EncodeCDR(w *rosmsg.CDRWriter) {
	w.SequenceLength(len(l.Dim))
	for i := range l.Dim {
		l.Dim[i].EncodeCDR(w)
	}
	w.Uint32(l.DataOffset)
}

// DecodeCDR reads the fields.
func (l *MultiArrayLayout) DecodeCDR(r *rosmsg.CDRReader) {
	l.Dim = nil
	if n := r.SequenceLength(12); n > 0 {
		l.Dim = make([]MultiArrayDimension, n)
		for i := range l.Dim {
			l.Dim[i].DecodeCDR(r)
		}
	}
	l.DataOffset = r.Uint32()
}

// Float64MultiArray is std_msgs/msg/Float64MultiArray: a multi-dimensional
// array of float64.
type Float64MultiArray struct {
	// Layout describes the dimensions of Data.
	Layout MultiArrayLayout
	// Data holds the elements.
	Data []float64
}

// ROSType returns "std_msgs/msg/Float64MultiArray".
func (a *Float64MultiArray) ROSType() string { return "std_msgs/msg/Float64MultiArray" }

// ROSDefinition returns the complete ros2msg definition.
func (a *Float64MultiArray) ROSDefinition() string {
	return definitionOf("std_msgs/Float64MultiArray")
}

// EncodeCDR appends the fields.
func (a *Float64MultiArray) EncodeCDR(w *rosmsg.CDRWriter) {
	a.Layout.EncodeCDR(w)
	w.Float64s(a.Data)
}

// DecodeCDR reads the fields.
func (a *Float64MultiArray) DecodeCDR(r *rosmsg.CDRReader) {
	a.Layout.DecodeCDR(r)
	a.Data = r.Float64s()
}

// JointState is sensor_msgs/msg/JointState: the state of a set of joints.
// Position, Velocity and Effort are either empty or as long as Name.
type JointState struct {
	// Header stamps the measurement.
	Header Header
	// Name lists the joints.
	Name []string
	// Position holds joint positions (rad or m).
	Position []float64
	// Velocity holds joint velocities (rad/s or m/s).
	Velocity []float64
	// Effort holds joint efforts (N·m or N).
	Effort []float64
}

// ROSType returns "sensor_msgs/msg/JointState".
func (j *JointState) ROSType() string { return "sensor_msgs/msg/JointState" }

// ROSDefinition returns the complete ros2msg definition.
func (j *JointState) ROSDefinition() string { return definitionOf("sensor_msgs/JointState") }

// EncodeCDR appends the fields.
func (j *JointState) EncodeCDR(w *rosmsg.CDRWriter) {
	j.Header.EncodeCDR(w)
	w.Strings(j.Name)
	w.Float64s(j.Position)
	w.Float64s(j.Velocity)
	w.Float64s(j.Effort)
}

// DecodeCDR reads the fields.
func (j *JointState) DecodeCDR(r *rosmsg.CDRReader) {
	j.Header.DecodeCDR(r)
	j.Name = r.Strings()
	j.Position = r.Float64s()
	j.Velocity = r.Float64s()
	j.Effort = r.Float64s()
}
