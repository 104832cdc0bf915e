package rosmsg_test

import (
	"errors"
	"math"
	"testing"

	"github.com/calisym/calisym/msgs"
	. "github.com/calisym/calisym/msgs/rosmsg"
)

// robotDef exercises every kind of path step. Header is left for the parser
// to supply.
const robotDef = `std_msgs/Header header
string[] name
float64[] position
int32[] ids
float32[3] gains
bool enabled
uint8 mode
Leg[] legs
Leg[2] pair
================================================================================
MSG: test_msgs/Leg
string name
geometry_msgs/Point foot
float64[] forces
================================================================================
MSG: geometry_msgs/Point
float64 x
float64 y
float64 z
`

// robotMessage returns the schema and a value of test_msgs/Robot.
func robotMessage(t testing.TB) (*Schema, *Struct) {
	s := mustSchema(t, "test_msgs/msg/Robot", ROS2Msg, robotDef)
	leg := func(name string, x, y, z float64, forces ...float64) *Struct {
		foot := &Struct{Def: s.Type("geometry_msgs/Point"), Fields: []any{x, y, z}}
		if forces == nil {
			forces = []float64{}
		}
		return &Struct{Def: s.Type("test_msgs/Leg"), Fields: []any{name, foot, forces}}
	}
	hdr := &Struct{Def: s.Type("std_msgs/Header"), Fields: []any{
		&Struct{Def: s.Type("builtin_interfaces/Time"), Fields: []any{int32(12), uint32(250_000_000)}}, "base"}}
	v := &Struct{Def: s.Root, Fields: []any{
		hdr,
		[]string{"a", "b", "c", "d"},
		[]float64{1, 2, 3},
		[]int32{5, 7, 9},
		[]float32{0.5, 0.25, 0.125},
		true,
		uint8(200),
		[]*Struct{leg("lf", 1, 2, 3, 10, 11), leg("rf", 4, 5, 6, 20), leg("lh", 7, 8, 9)},
		[]*Struct{leg("p0", -1, -2, -3), leg("p1", -4, -5, -6, 1, 2, 3)},
	}}
	return s, v
}

func TestMessagePaths(t *testing.T) {
	s, v := robotMessage(t)
	cdr, err := s.Encode(EncodingCDR, v)
	if err != nil {
		t.Fatal(err)
	}
	ros1, err := s.Encode(EncodingROS1, v)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr    string
		want    float64
		wantErr error
		topic   string
	}{
		{expr: "/robot.position[1]", want: 2, topic: "/robot"},
		{expr: "position[-1]", want: 3},
		{expr: ".position[-3]", want: 1},
		{expr: `/a/b.position[name=="b"]`, want: 2, topic: "/a/b"},
		{expr: `.position[ name == 'c' ]`, want: 3},
		{expr: `.position[name=="d"]`, wantErr: ErrIndexRange},
		{expr: `.position[name=="zz"]`, wantErr: ErrNoMatch},
		{expr: `.position[ids==7]`, want: 2},
		{expr: `.position[ids==8]`, wantErr: ErrNoMatch},
		{expr: ".position[3]", wantErr: ErrIndexRange},
		{expr: ".position[-4]", wantErr: ErrIndexRange},
		{expr: ".ids[2]", want: 9},
		{expr: ".gains[2]", want: 0.125},
		{expr: ".enabled", want: 1},
		{expr: ".mode", want: 200},
		{expr: ".header.stamp", want: 12.25},
		{expr: ".header.stamp.nanosec", want: 250_000_000},
		{expr: ".legs[1].foot.z", want: 6},
		{expr: ".legs[-1].foot.x", want: 7},
		{expr: ".legs[5].foot.x", wantErr: ErrIndexRange},
		{expr: `.legs[:]{name=="rf"}.foot.y`, want: 5},
		{expr: `.legs{name=="lf"}.forces[1]`, want: 11},
		{expr: `.legs[:]{foot.z==9}.foot.x`, want: 7},
		{expr: `.legs[:]{name=="xx"}.foot.x`, wantErr: ErrNoMatch},
		{expr: `.legs{name=="lh"}.forces[0]`, wantErr: ErrIndexRange},
		{expr: ".pair[1].forces[2]", want: 3},
		{expr: ".pair[0].foot.y", want: -2},
		{expr: `{header.frame_id=="base"}.position[0]`, want: 1},
		{expr: `/robot{enabled==true}.mode`, want: 200, topic: "/robot"},
		{expr: `{header.frame_id=="odom"}.position[0]`, wantErr: ErrNoMatch},
		{expr: `{mode==200}.header.stamp.sec`, want: 12},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := CompilePath(s, tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if p.Topic() != tt.topic || p.String() != tt.expr || !p.Numeric() {
				t.Errorf("topic %q string %q numeric %v", p.Topic(), p.String(), p.Numeric())
			}
			got, err := p.Float64(v)
			check := func(how string, got float64, err error) {
				t.Helper()
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Errorf("%s: got %v, %v; want error %v", how, got, err, tt.wantErr)
					}
					return
				}
				if err != nil || got != tt.want {
					t.Errorf("%s: got %v, %v; want %v", how, got, err, tt.want)
				}
			}
			check("decoded", got, err)
			for _, c := range []struct {
				how  string
				enc  Encoding
				data []byte
			}{{"CDR extractor", EncodingCDR, cdr}, {"ROS 1 extractor", EncodingROS1, ros1}} {
				x, err := NewExtractor(s, c.enc, p)
				if err != nil {
					t.Fatal(err)
				}
				out := []float64{0}
				err = x.Extract(c.data, out)
				check(c.how, out[0], err)
				if err != nil {
					var xerr *ExtractError
					if !errors.As(err, &xerr) || xerr.Path != tt.expr || !math.IsNaN(out[0]) {
						t.Errorf("%s: error %v, value %v", c.how, err, out[0])
					}
				}
			}
		})
	}
	// Value reaches non-numeric leaves.
	for expr, want := range map[string]any{
		`.legs[:]{foot.x==4}.name`: "rf",
		".name[0]":                 "a",
		".header.frame_id":         "base",
	} {
		p, err := CompilePath(s, expr)
		if err != nil {
			t.Fatal(err)
		}
		if p.Numeric() {
			t.Errorf("%s is numeric", expr)
		}
		if got, err := p.Value(v); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
		if _, err := p.Float64(v); !errors.Is(err, ErrPath) {
			t.Errorf("%s: Float64 gave %v", expr, err)
		}
		if _, err := NewExtractor(s, EncodingCDR, p); !errors.Is(err, ErrPath) {
			t.Errorf("%s: NewExtractor gave %v", expr, err)
		}
	}
	if got, err := mustPath(t, s, ".position").Value(v); err != nil || len(got.([]float64)) != 3 {
		t.Errorf(".position = %v, %v", got, err)
	}
}

func mustPath(t testing.TB, s *Schema, expr string) *MessagePath {
	t.Helper()
	p, err := CompilePath(s, expr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompilePathErrors(t *testing.T) {
	s, _ := robotMessage(t)
	for _, expr := range []string{
		".nope", ".position.x", ".position[1][2]", ".header[0]", ".mode[0]",
		`.position[name==1]`, `.position[ids=="a"]`, `.position[nope=="a"]`, `.position[mode==1]`,
		".position[:]", ".position[:]{x==1}", `.legs{forces==1}`, `.legs{foot==1}`, `.legs{name==1}`,
		`.legs{foot.x=="a"}`, `.legs{nope==1}`, "..", ".position[", ".position[x]", "{", "{a}", `.legs{name=="a}`,
		".legs[0].foot.x.y", `"/unterminated`, ".3d", "#",
	} {
		if _, err := CompilePath(s, expr); !errors.Is(err, ErrPath) {
			t.Errorf("CompilePath(%q) = %v, want ErrPath", expr, err)
		}
	}
	// The empty path is the message itself: valid, but not numeric.
	if p, err := CompilePath(s, "/robot"); err != nil || p.Numeric() {
		t.Errorf("/robot: %v", err)
	}
	if topic, err := TopicOf(`"/odd topic".x`); err != nil || topic != "/odd topic" {
		t.Errorf("TopicOf = %q, %v", topic, err)
	}
	// A path compiled against one schema is refused by another's extractor.
	other := mustSchema(t, "test_msgs/msg/Robot", ROS2Msg, robotDef)
	if _, err := NewExtractor(other, EncodingCDR, mustPath(t, s, ".mode")); err == nil {
		t.Error("foreign path accepted")
	}
	// Evaluating on a message of another type fails cleanly.
	js := msgs.Marshal(&msgs.JointState{})
	jss, _ := msgs.SchemaOf(&msgs.JointState{})
	jv, _ := jss.Decode(EncodingCDR, js)
	if _, err := mustPath(t, s, ".mode").Float64(jv); !errors.Is(err, ErrPath) {
		t.Errorf("foreign message: %v", err)
	}
}

// TestExtractorMemo reads many paths that share prefixes and checks that
// the extractor allocates nothing per message.
func TestExtractorMemo(t *testing.T) {
	s, v := robotMessage(t)
	data, err := s.Encode(EncodingCDR, v)
	if err != nil {
		t.Fatal(err)
	}
	exprs := []string{`.position[name=="a"]`, `.position[name=="c"]`, ".legs[2].foot.z", ".pair[1].foot.x",
		".header.stamp", ".mode", ".gains[0]", `.legs[:]{name=="rf"}.forces[0]`}
	var paths []*MessagePath
	for _, e := range exprs {
		paths = append(paths, mustPath(t, s, e))
	}
	x, err := NewExtractor(s, EncodingCDR, paths...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(paths))
	want := []float64{1, 3, 9, -4, 12.25, 200, 0.5, 20}
	for range 3 { // the memo is reset between messages
		if err := x.Extract(data, out); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if out[i] != want[i] {
				t.Errorf("%s = %v, want %v", exprs[i], out[i], want[i])
			}
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = x.Extract(data, out) }); allocs != 0 {
		t.Errorf("%v allocations per message", allocs)
	}
	if err := x.Extract(data, out[:2]); err == nil {
		t.Error("short dst accepted")
	}
	if err := x.Extract(data[:30], out); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	if len(x.Paths()) != len(paths) {
		t.Error("Paths")
	}
}

func TestJointPath(t *testing.T) {
	m := &msgs.JointState{Name: []string{"plain", `we"ird\]{j==1}`}, Position: []float64{1, 2}}
	s, err := msgs.SchemaOf(m)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Decode(EncodingCDR, msgs.Marshal(m))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range m.Name {
		expr := JointPath("/joint_states", "position", name)
		p, err := CompilePath(s, expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got, err := p.Float64(v); err != nil || got != m.Position[i] || p.Topic() != "/joint_states" {
			t.Errorf("%s = %v, %v", expr, got, err)
		}
	}
	if got := JointPath("/js", "effort", "knee"); got != `/js.effort[name=="knee"]` {
		t.Errorf("JointPath = %s", got)
	}
}

func TestCompileExtractor(t *testing.T) {
	m := &msgs.JointState{Name: []string{"a", "b"}, Position: []float64{1, 2}}
	x, err := CompileExtractor(m.ROSType(), "ros2msg", []byte(m.ROSDefinition()), "cdr",
		JointPath("/joint_states", "position", "b"), ".position[0]")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 2)
	if err := x.Extract(msgs.Marshal(m), out); err != nil || out[0] != 2 || out[1] != 1 {
		t.Errorf("got %v, %v", out, err)
	}
	if x.Schema().Root.Name != "sensor_msgs/JointState" {
		t.Errorf("schema %s", x.Schema().Root.Name)
	}
	for _, args := range [][]string{
		{"ros2idl", "cdr", ".position[0]"},
		{"ros2msg", "json", ".position[0]"},
		{"ros2msg", "cdr", ".nope"},
		{"ros2msg", "cdr", ".name[0]"},
	} {
		if _, err := CompileExtractor(m.ROSType(), args[0], []byte(m.ROSDefinition()), args[1], args[2]); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	if _, err := CompileExtractor("x/Y", "ros2msg", []byte("Missing m\n"), "cdr"); !errors.Is(err, ErrUnknownType) {
		t.Errorf("bad schema: %v", err)
	}
}
