package rosmsg_test

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/internal/msgstest"
	. "github.com/calisym/calisym/msgs/rosmsg"
)

// ros1OdometryDef and ros1TFDef are ROS 1 message_definitions of types the
// fuzzers decode.
const (
	ros1OdometryDef = `Header header
string child_frame_id
geometry_msgs/PoseWithCovariance pose
geometry_msgs/TwistWithCovariance twist
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
================================================================================
MSG: geometry_msgs/PoseWithCovariance
Pose pose
float64[36] covariance
================================================================================
MSG: geometry_msgs/Pose
Point position
Quaternion orientation
================================================================================
MSG: geometry_msgs/Point
float64 x
float64 y
float64 z
================================================================================
MSG: geometry_msgs/Quaternion
float64 x
float64 y
float64 z
float64 w
================================================================================
MSG: geometry_msgs/TwistWithCovariance
Twist twist
float64[36] covariance
================================================================================
MSG: geometry_msgs/Twist
Vector3  linear
Vector3  angular
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
`
	ros1TFDef = `geometry_msgs/TransformStamped[] transforms
================================================================================
MSG: geometry_msgs/TransformStamped
Header header
string child_frame_id
Transform transform
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
================================================================================
MSG: geometry_msgs/Transform
Vector3 translation
Quaternion rotation
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
================================================================================
MSG: geometry_msgs/Quaternion
float64 x
float64 y
float64 z
float64 w
`
)

// fuzzTarget is a schema and the numeric paths the fuzzers compare between
// the decoder and the extractor.
type fuzzTarget struct {
	schema *Schema
	paths  []*MessagePath
	xs     []*Extractor
}

func newFuzzTarget(t testing.TB, s *Schema, enc Encoding, extra ...string) fuzzTarget {
	exprs := append(numericPaths(s.Root, "", 0), extra...)
	ft := fuzzTarget{schema: s}
	for _, e := range exprs {
		p, err := CompilePath(s, e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		x, err := NewExtractor(s, enc, p)
		if err != nil {
			t.Fatal(err)
		}
		ft.paths, ft.xs = append(ft.paths, p), append(ft.xs, x)
	}
	return ft
}

// numericPaths lists paths to the numeric values of d: scalars, and the
// first and last element of arrays, up to a small depth.
func numericPaths(d *MsgDef, prefix string, depth int) []string {
	var out []string
	if depth > 4 {
		return nil
	}
	for _, f := range d.Fields {
		p := prefix + "." + f.Name
		if f.Array != NotArray {
			for _, idx := range []string{"[0]", "[-1]"} {
				if f.Msg != nil {
					out = append(out, numericPaths(f.Msg, p+idx, depth+1)...)
				} else if f.Kind.Numeric() {
					out = append(out, p+idx)
				}
			}
			continue
		}
		switch {
		case f.Msg != nil:
			if IsTimeLike(f.Msg) {
				out = append(out, p)
			}
			out = append(out, numericPaths(f.Msg, p, depth+1)...)
		case f.Kind.Numeric():
			out = append(out, p)
		}
	}
	return out
}

// check decodes data and, where it decodes, checks that it re-encodes
// stably and that the extractor agrees with the decoded message.
func (ft fuzzTarget) check(t *testing.T, enc Encoding, data []byte) {
	v, err := ft.schema.Decode(enc, data)
	if err != nil {
		var derr *DecodeError
		if !errors.As(err, &derr) {
			t.Fatalf("error is not a DecodeError: %v", err)
		}
		return
	}
	b1, err := ft.schema.Encode(enc, v)
	if err == nil {
		v2, err := ft.schema.Decode(enc, b1)
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
		b2, err := ft.schema.Encode(enc, v2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("re-encoding is not stable: %v", err)
		}
	} else if !errors.Is(err, ErrValue) {
		t.Fatalf("re-encoding: %v", err)
	}
	out := []float64{0}
	for i, p := range ft.paths {
		want, werr := p.Float64(v)
		xerr := ft.xs[i].Extract(data, out)
		if (werr == nil) != (xerr == nil) {
			t.Fatalf("%s: decoded %v (%v), extracted %v (%v)", p, want, werr, out[0], xerr)
		}
		if werr == nil && out[0] != want && !(math.IsNaN(want) && math.IsNaN(out[0])) {
			t.Fatalf("%s: decoded %v, extracted %v", p, want, out[0])
		}
	}
}

func FuzzDecodeCDR(f *testing.F) {
	var targets []fuzzTarget
	seen := map[string]bool{}
	for _, m := range msgstest.SampleMessages() {
		s, err := msgs.SchemaOf(m)
		if err != nil {
			f.Fatal(err)
		}
		if !seen[m.ROSType()] {
			seen[m.ROSType()] = true
			var extra []string
			if m.ROSType() == "sensor_msgs/msg/JointState" {
				extra = []string{`.position[name=="knee"]`, `.effort[name=="a"]`}
			}
			targets = append(targets, newFuzzTarget(f, s, EncodingCDR, extra...))
		}
	}
	rs, rv := robotMessage(f)
	targets = append(targets, newFuzzTarget(f, rs, EncodingCDR, `.position[name=="b"]`, `.position[ids==9]`,
		`.legs[:]{name=="rf"}.foot.y`, `{header.frame_id=="base"}.mode`))
	for i, m := range msgstest.SampleMessages() {
		for j, tg := range targets {
			if tg.schema.Root.Name == NormalizeType(m.ROSType()) {
				data := msgs.Marshal(m)
				f.Add(uint8(j), data)
				if i%3 == 0 && len(data) > 8 {
					f.Add(uint8(j), data[:len(data)/2])
				}
			}
		}
	}
	rdata, err := rs.Encode(EncodingCDR, rv)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(len(targets)-1), rdata)
	be := newCDRTestWriter(0x00)
	be.i32(1).u32(2).str("frame").strs("a", "knee").f64s(1, 2).f64s().f64s(3)
	f.Add(uint8(4), be.b)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		targets[int(which)%len(targets)].check(t, EncodingCDR, data)
	})
}

func FuzzDecodeROS1(f *testing.F) {
	rs, rv := robotMessage(f)
	targets := []fuzzTarget{
		newFuzzTarget(f, mustSchema(f, "sensor_msgs/JointState", ROS1Msg, ros1JointStateDef), EncodingROS1,
			`.position[name=="j2"]`, ".header.stamp"),
		newFuzzTarget(f, mustSchema(f, "nav_msgs/Odometry", ROS1Msg, ros1OdometryDef), EncodingROS1),
		newFuzzTarget(f, mustSchema(f, "tf2_msgs/TFMessage", ROS1Msg, ros1TFDef), EncodingROS1,
			`.transforms[:]{child_frame_id=="base"}.transform.translation.x`),
		newFuzzTarget(f, rs, EncodingROS1, `.position[name=="b"]`),
	}
	js := newROS1TestWriter()
	js.u32(42).u32(1_600_000_000).u32(500_000_000).str("base").strs("j1", "j2").f64s(0.5, -0.5).f64s().f64s(3, 4)
	f.Add(uint8(0), js.b)
	f.Add(uint8(0), js.b[:30])
	odom := newROS1TestWriter()
	odom.u32(1).u32(2).u32(3).str("odom").str("base")
	for range 7 + 36 + 6 + 36 {
		odom.f64(0.25)
	}
	f.Add(uint8(1), odom.b)
	tf := newROS1TestWriter()
	tf.u32(2)
	for _, child := range []string{"base", "arm"} {
		tf.u32(0).u32(5).u32(6).str("world").str(child)
		for k := range 7 {
			tf.f64(float64(k))
		}
	}
	f.Add(uint8(2), tf.b)
	rdata, err := rs.Encode(EncodingROS1, rv)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(3), rdata)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		targets[int(which)%len(targets)].check(t, EncodingROS1, data)
	})
}

func FuzzParseSchema(f *testing.F) {
	for _, m := range msgstest.SampleMessages() {
		f.Add(m.ROSDefinition(), false)
	}
	for _, seed := range []string{robotDef, ros1JointStateDef, ros1OdometryDef, ros1TFDef,
		"string S=\"a#b\" # c\nstring<=3[<=2] x 'q'\n", "int32[] a [1, 2]\n==\nMSG: x/Y\n", "MSG:\n", "a/B b\n===\nMSG: a/B\na/B[] b\n",
		"x/Y[3] y\n===\nMSG: x/Y\nx/Z[5] z\n===\nMSG: x/Z\n", "byte[4] b\nchar c\ntime t\nduration[] d\n"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	probes := [][]byte{make([]byte, 64), bytes.Repeat([]byte{1}, 64), bytes.Repeat([]byte{0xff}, 16),
		append([]byte{0, 1, 0, 0}, bytes.Repeat([]byte{2, 0, 0, 0}, 16)...)}
	f.Fuzz(func(t *testing.T, text string, ros1 bool) {
		d := ROS2Msg
		if ros1 {
			d = ROS1Msg
		}
		s, err := ParseSchema("fuzz/msg/Root", d, []byte(text))
		if err != nil {
			return
		}
		var paths []*MessagePath
		for i, f := range s.Root.Fields {
			if i > 8 {
				break
			}
			expr := "." + f.Name
			if f.Array != NotArray {
				expr += "[" + strconv.Itoa(i%2) + "]"
			}
			p, err := CompilePath(s, expr)
			if err != nil {
				t.Fatalf("path %s: %v", expr, err)
			}
			if p.Numeric() {
				paths = append(paths, p)
			}
		}
		for _, enc := range []Encoding{EncodingCDR, EncodingROS1} {
			x, err := NewExtractor(s, enc, paths...)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float64, len(paths))
			for _, data := range probes {
				v, err := s.Decode(enc, data)
				_ = x.Extract(data, out)
				if err == nil {
					for _, p := range paths {
						_, _ = p.Float64(v)
					}
				}
			}
		}
	})
}
