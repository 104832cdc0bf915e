package msgs

import (
	"encoding/binary"
	"math"
	"testing"
)

// testWriter lays out test messages by hand, independently of the package's
// encoders: CDR in either byte order and either XCDR version, or ROS 1.
type testWriter struct {
	b        []byte
	origin   int
	big      bool
	ros1     bool
	maxAlign int
}

// newCDRTestWriter starts CDR data with the encapsulation kind given (0x00 BE,
// 0x01 LE, 0x06 BE XCDR2, 0x07 LE XCDR2).
func newCDRTestWriter(kind byte) *testWriter {
	w := &testWriter{b: []byte{0, kind, 0, 0}, origin: 4, big: kind == 0x00 || kind == 0x06, maxAlign: 8}
	if kind >= 0x06 {
		w.maxAlign = 4
	}
	return w
}

func newROS1TestWriter() *testWriter { return &testWriter{ros1: true} }

func (w *testWriter) order() binary.AppendByteOrder {
	if w.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func (w *testWriter) align(n int) {
	if w.ros1 {
		return
	}
	n = min(n, w.maxAlign)
	for (len(w.b)-w.origin)%n != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *testWriter) u8(v uint8) *testWriter { w.b = append(w.b, v); return w }
func (w *testWriter) i16(v int16) *testWriter {
	w.align(2)
	w.b = w.order().AppendUint16(w.b, uint16(v))
	return w
}
func (w *testWriter) u32(v uint32) *testWriter {
	w.align(4)
	w.b = w.order().AppendUint32(w.b, v)
	return w
}
func (w *testWriter) i32(v int32) *testWriter { return w.u32(uint32(v)) }
func (w *testWriter) u64(v uint64) *testWriter {
	w.align(8)
	w.b = w.order().AppendUint64(w.b, v)
	return w
}
func (w *testWriter) f64(v float64) *testWriter { return w.u64(math.Float64bits(v)) }
func (w *testWriter) str(s string) *testWriter {
	if w.ros1 {
		w.u32(uint32(len(s)))
		w.b = append(w.b, s...)
		return w
	}
	w.u32(uint32(len(s) + 1))
	w.b = append(w.b, s...)
	w.b = append(w.b, 0)
	return w
}
func (w *testWriter) strs(v ...string) *testWriter {
	w.u32(uint32(len(v)))
	for _, s := range v {
		w.str(s)
	}
	return w
}
func (w *testWriter) f64s(v ...float64) *testWriter {
	w.u32(uint32(len(v)))
	for _, x := range v {
		w.f64(x)
	}
	return w
}

// sampleHeader is the header of the sample messages.
var sampleHeader = Header{Stamp: Time{Sec: 1_700_000_000, Nanosec: 123_456_789}, FrameID: "base_link"}

// sampleMessages returns one or more values of every typed message, with
// nil (not empty) slices so that decoded copies compare equal.
func sampleMessages() []Message {
	hdr := sampleHeader
	pose := Pose{Position: Point{1.5, -2.25, 3e-9}, Orientation: Quaternion{0.1, 0.2, 0.3, 0.9}}
	twist := Twist{Linear: Vector3{0.5, 0, -0.5}, Angular: Vector3{1e300, -1e-300, 7}}
	var cov [36]float64
	for i := range cov {
		cov[i] = float64(i) * 0.125
	}
	return []Message{
		&Time{Sec: -3, Nanosec: 999_999_999},
		&Duration{Sec: 2, Nanosec: 5},
		&hdr,
		&Header{},
		&JointState{Header: hdr, Name: []string{"hip", "knee", "ankle_é"}, Position: []float64{0.1, -2.5e-7, math.Pi},
			Velocity: []float64{1, 2, 3}},
		&JointState{},
		&JointState{Header: Header{FrameID: "x"}, Name: []string{"a"}, Effort: []float64{-1}},
		&MultiArrayDimension{Label: "rows", Size: 2, Stride: 6},
		&MultiArrayLayout{Dim: []MultiArrayDimension{{"rows", 2, 6}}, DataOffset: 1},
		&Float64MultiArray{Layout: MultiArrayLayout{Dim: []MultiArrayDimension{{"rows", 2, 6}, {"cols", 3, 3}}},
			Data: []float64{1, 2, 3, 4, 5, 6}},
		&Float64MultiArray{},
		&Point{1, 2, 3},
		&Vector3{-1, -2, -3},
		&Quaternion{0, 0, 0, 1},
		&pose,
		&PoseStamped{Header: hdr, Pose: pose},
		&twist,
		&Wrench{Force: Vector3{10, 20, 30}, Torque: Vector3{-1, -2, -3}},
		&WrenchStamped{Header: Header{FrameID: "lf_foot"}, Wrench: Wrench{Force: Vector3{0, 0, 150}}},
		&PoseWithCovariance{Pose: pose, Covariance: cov},
		&TwistWithCovariance{Twist: twist, Covariance: cov},
		&Odometry{Header: hdr, ChildFrameID: "base", Pose: PoseWithCovariance{Pose: pose, Covariance: cov},
			Twist: TwistWithCovariance{Twist: twist}},
		&Path{Header: hdr, Poses: []PoseStamped{{Header: hdr, Pose: pose}, {Pose: Pose{Orientation: IdentityQuaternion()}}}},
		&Path{},
		&KeyValue{Key: "temperature", Value: "41.5"},
		&DiagnosticStatus{Level: DiagnosticWarn, Name: "motor", Message: "hot", HardwareID: "m1",
			Values: []KeyValue{{"temperature", "81"}, {"", ""}}},
		&DiagnosticArray{Header: hdr, Status: []DiagnosticStatus{{Level: DiagnosticOK, Name: "a"},
			{Level: DiagnosticStale, Name: "b", Values: []KeyValue{{"k", "v"}}}}},
		&PredictedTrajectory{Header: hdr, Dt: 0.01, CoordinateNames: []string{"q1", "q2"}, Horizon: 3,
			Q: []float64{1, 2, 3, 4, 5, 6}, P: []float64{-1, -2, -3, -4, -5, -6}, PortNames: []string{"u1"},
			Ports: []float64{0.5, 0.25, 0.125}, ModelID: "double_pendulum", ModelSHA256: "ab12", InferenceLatencyS: 1.5e-4},
		&PredictedTrajectory{Dt: 1},
	}
}

// mustSchema parses a definition or fails the test.
func mustSchema(t testing.TB, name string, d Dialect, text string) *Schema {
	t.Helper()
	s, err := ParseSchema(name, d, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
