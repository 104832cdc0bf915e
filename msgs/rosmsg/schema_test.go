package rosmsg_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/calisym/calisym/msgs/rosmsg"
)

// ros1JointStateDef is the message_definition ROS 1 records for
// sensor_msgs/JointState (comments dropped).
const ros1JointStateDef = `Header header

string[] name
float64[] position
float64[] velocity
float64[] effort

================================================================================
MSG: std_msgs/Header
# Standard metadata for higher-level stamped data types.
uint32 seq
time stamp
string frame_id
`

func TestParseSchema(t *testing.T) {
	type fieldWant struct {
		typeName string // "" for the root
		field    string
		kind     Kind
		array    ArrayKind
		n        int
		msg      string // resolved type of a message field
		strBound int
		def      string
	}
	tests := []struct {
		name      string
		rootName  string
		dialect   Dialect
		text      string
		fields    []fieldWant
		constants map[string]string // name -> value, in the root
		types     int
	}{
		{
			name: "ros2 features", rootName: "pkg/msg/Thing", dialect: ROS2Msg,
			text: "# comment\n" +
				"std_msgs/Header header\n" +
				"int32 A=7 # a constant\n" +
				"string S=\"x # not a comment\"\n" +
				"string<=10 label \"hi\" # bounded with default\n" +
				"float64[36] covariance\n" +
				"uint8[<=4] bytes [1, 2]\n" +
				"Inner[] inners\n" +
				"byte b\n" +
				"char c\n" +
				"float64 w 1.0\n" +
				"\t  int16   spaced\t# tabs\n" +
				"================================================================================\n" +
				"MSG: pkg/Inner\n" +
				"builtin_interfaces/Duration d\n" +
				"string<=5[<=3] names\n",
			fields: []fieldWant{
				{field: "header", kind: KindMessage, msg: "std_msgs/Header"},
				{field: "label", kind: KindString, strBound: 10, def: "hi"},
				{field: "covariance", kind: KindFloat64, array: FixedArray, n: 36},
				{field: "bytes", kind: KindUint8, array: BoundedSequence, n: 4, def: "[1, 2]"},
				{field: "inners", kind: KindMessage, array: Sequence, msg: "pkg/Inner"},
				{field: "b", kind: KindUint8},
				{field: "c", kind: KindUint8},
				{field: "w", kind: KindFloat64, def: "1.0"},
				{field: "spaced", kind: KindInt16},
				{typeName: "pkg/Inner", field: "d", kind: KindMessage, msg: "builtin_interfaces/Duration"},
				{typeName: "pkg/Inner", field: "names", kind: KindString, array: BoundedSequence, n: 3, strBound: 5},
				{typeName: "std_msgs/Header", field: "stamp", kind: KindMessage, msg: "builtin_interfaces/Time"},
			},
			constants: map[string]string{"A": "7", "S": "x # not a comment"},
			types:     5, // Thing, Inner, and the implied Header, Time, Duration
		},
		{
			name: "ros1 joint state", rootName: "sensor_msgs/JointState", dialect: ROS1Msg, text: ros1JointStateDef,
			fields: []fieldWant{
				{field: "header", kind: KindMessage, msg: "std_msgs/Header"},
				{field: "position", kind: KindFloat64, array: Sequence},
				{typeName: "std_msgs/Header", field: "seq", kind: KindUint32},
				{typeName: "std_msgs/Header", field: "stamp", kind: KindTime, msg: "time"},
			},
			types: 2,
		},
		{
			name: "ros1 constants and aliases", rootName: "pkg/C", dialect: ROS1Msg,
			text: "string GREETING = hello # world\nbyte B=-1\nchar C=200\nduration[2] d\nbyte x\nchar y\n",
			fields: []fieldWant{
				{field: "d", kind: KindDuration, array: FixedArray, n: 2, msg: "duration"},
				{field: "x", kind: KindInt8},
				{field: "y", kind: KindUint8},
			},
			constants: map[string]string{"GREETING": "hello # world", "B": "-1", "C": "200"},
			types:     1,
		},
		{
			name: "short names resolve in the package, then by unique suffix", rootName: "a/msg/Top", dialect: ROS2Msg,
			text: "Mid m\nLeaf l\n=====\nMSG: a/Mid\nLeaf l\n=====\nMSG: b/Leaf\nint8 x\n",
			fields: []fieldWant{
				{field: "m", kind: KindMessage, msg: "a/Mid"},
				{field: "l", kind: KindMessage, msg: "b/Leaf"},
				{typeName: "a/Mid", field: "l", kind: KindMessage, msg: "b/Leaf"},
			},
			types: 3,
		},
		{
			name: "repeated dependency and trailing separator", rootName: "a/T", dialect: ROS2Msg,
			text:   "a/L l\n====\nMSG: a/L\nint8 x\n====\nMSG: a/L\nint8 x\n====\n",
			fields: []fieldWant{{field: "l", kind: KindMessage, msg: "a/L"}},
			types:  2,
		},
		{
			name: "empty message", rootName: "std_msgs/msg/Empty", dialect: ROS2Msg, text: "",
			types: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSchema(t, tt.rootName, tt.dialect, tt.text)
			if s.Root.Name != NormalizeType(tt.rootName) {
				t.Errorf("root name %q, want %q", s.Root.Name, NormalizeType(tt.rootName))
			}
			if tt.name == "ros2 features" && strings.Join(s.Implied(), ",") != "std_msgs/Header,builtin_interfaces/Duration,builtin_interfaces/Time" {
				t.Errorf("implied %v", s.Implied())
			}
			if got := len(s.Types()); got != tt.types {
				var names []string
				for _, d := range s.Types() {
					names = append(names, d.Name)
				}
				t.Errorf("%d types %v, want %d", got, names, tt.types)
			}
			for _, w := range tt.fields {
				d := s.Root
				if w.typeName != "" {
					if d = s.Type(w.typeName); d == nil {
						t.Fatalf("no type %s", w.typeName)
					}
				}
				i := d.FieldIndex(w.field)
				if i < 0 {
					t.Fatalf("%s has no field %s", d.Name, w.field)
				}
				f := d.Fields[i]
				if f.Kind != w.kind || f.Array != w.array || f.Len != w.n || f.StringBound != w.strBound || f.Default != w.def {
					t.Errorf("%s.%s = %+v, want kind %v array %v n %d bound %d default %q", d.Name, w.field, f, w.kind, w.array, w.n, w.strBound, w.def)
				}
				if w.msg != "" && (f.Msg == nil || f.Msg.Name != w.msg) {
					t.Errorf("%s.%s resolves to %v, want %s", d.Name, w.field, f.Msg, w.msg)
				}
			}
			for name, val := range tt.constants {
				found := false
				for _, c := range s.Root.Constants {
					if c.Name == name {
						found = true
						if c.Value != val {
							t.Errorf("constant %s = %q, want %q", name, c.Value, val)
						}
					}
				}
				if !found {
					t.Errorf("no constant %s", name)
				}
			}
		})
	}
}

func TestParseSchemaErrors(t *testing.T) {
	tests := []struct {
		name    string
		dialect Dialect
		text    string
		want    error
	}{
		{"unknown type", ROS2Msg, "Missing m\n", ErrUnknownType},
		{"unknown qualified type", ROS2Msg, "pkg/Missing m\n", ErrUnknownType},
		{"recursive", ROS2Msg, "a/B b\n===\nMSG: a/B\na/C c\n===\nMSG: a/C\na/B[] b\n", ErrUnknownType},
		{"self", ROS2Msg, "a/T t\n===\nMSG: a/T\nint8 x\n", ErrUnknownType}, // the repeated root is ignored
		{"no field name", ROS2Msg, "int32\n", ErrSyntax},
		{"duplicate field", ROS2Msg, "int32 a\nfloat64 a\n", ErrSyntax},
		{"duplicate constant", ROS1Msg, "int32 A=1\nint32 A=2\n", ErrSyntax},
		{"bad field name", ROS2Msg, "int32 3x\n", ErrSyntax},
		{"bad array", ROS2Msg, "int32[x] a\n", ErrSyntax},
		{"array too long", ROS2Msg, "int32[99999999999] a\n", ErrSyntax},
		{"bounded non-string", ROS2Msg, "int32<=3 a\n", ErrSyntax},
		{"constant array", ROS2Msg, "int32[2] A=1\n", ErrSyntax},
		{"constant without value", ROS2Msg, "int32 A=\n", ErrSyntax},
		{"ros1 default value", ROS1Msg, "int32 a 5\n", ErrSyntax},
		{"message default", ROS2Msg, "a/B b 5\n===\nMSG: a/B\nint8 x\n", ErrSyntax},
		{"separator without MSG", ROS2Msg, "int8 a\n===\nint8 b\n", ErrSyntax},
		{"MSG in root", ROS2Msg, "MSG: a/T\nint8 a\n", ErrSyntax},
		{"unterminated string", ROS2Msg, "string s \"abc\n", ErrSyntax},
		{"bad type name", ROS2Msg, "a//b x\n", ErrSyntax},
		{"too large", ROS2Msg, "a/B[16000000] b\n===\nMSG: a/B\nfloat64[16000000] x\n", ErrUnknownType},
		{"ambiguous short name", ROS2Msg, "Leaf l\n===\nMSG: b/Leaf\nint8 x\n===\nMSG: c/Leaf\nint8 y\n", ErrUnknownType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSchema("a/T", tt.dialect, []byte(tt.text))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "rosmsg: parse a/T: ") {
				t.Errorf("error %q does not name the type", err)
			}
		})
	}
	if _, err := ParseSchema("a/T", Dialect(9), nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("bad dialect: %v", err)
	}
}

func TestNamesAndEncodings(t *testing.T) {
	for in, want := range map[string]string{
		"sensor_msgs/msg/JointState": "sensor_msgs/JointState",
		"sensor_msgs/JointState":     "sensor_msgs/JointState",
		"pkg/srv/Foo_Request":        "pkg/srv/Foo_Request",
		"Header":                     "Header",
	} {
		if got := NormalizeType(in); got != want {
			t.Errorf("NormalizeType(%q) = %q, want %q", in, got, want)
		}
	}
	for _, e := range []string{"cdr", "ros1"} {
		enc, err := EncodingFor(e)
		if err != nil || enc.String() != e {
			t.Errorf("EncodingFor(%q) = %v, %v", e, enc, err)
		}
	}
	for _, e := range []string{"ros2msg", "ros1msg"} {
		d, err := DialectFor(e)
		if err != nil || d.String() != e {
			t.Errorf("DialectFor(%q) = %v, %v", e, d, err)
		}
	}
	if _, err := EncodingFor("protobuf"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("EncodingFor(protobuf): %v", err)
	}
	if _, err := DialectFor("ros2idl"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("DialectFor(ros2idl): %v", err)
	}
}

// TestCompleteDefinition concatenates third-party definitions: comments,
// constants, bounds and arrays do not make dependencies, bare names take
// the referring package, a bare Header is std_msgs/Header, each dependency
// is written once, and lookup errors and cycles deeper than the limit come
// back as errors.
func TestCompleteDefinition(t *testing.T) {
	defs := map[string]string{
		"my_msgs/Robot": "# a robot: Leg legs are not a field\nint32 MODE_A=1\nHeader header\nstring<=8 name\nLeg[4] legs\n" +
			"geometry_msgs/Pose[] poses # other_msgs/Nope\nLeg spare\n",
		"my_msgs/Leg":             "float64[<=3] q\nstd_msgs/Header stamp_holder",
		"std_msgs/Header":         "builtin_interfaces/Time stamp\nstring frame_id\n",
		"geometry_msgs/Pose":      "float64 x\n",
		"builtin_interfaces/Time": "int32 sec\nuint32 nanosec\n",
		"loop_msgs/A":             "B b\n",
		"loop_msgs/B":             "A a\n",
	}
	own := func(name string) (string, error) {
		if d, ok := defs[name]; ok {
			return d, nil
		}
		return "", fmt.Errorf("no %s: %w", name, ErrUnknownType)
	}
	got, err := CompleteDefinition("my_msgs/msg/Robot", own)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for line := range strings.SplitSeq(got, "\n") {
		if name, ok := strings.CutPrefix(line, "MSG: "); ok {
			order = append(order, name)
		}
	}
	want := []string{"geometry_msgs/Pose", "my_msgs/Leg", "std_msgs/Header", "builtin_interfaces/Time"}
	if !slices.Equal(order, want) {
		t.Errorf("dependencies in order %v, want %v", order, want)
	}
	if !strings.Contains(got, "std_msgs/Header stamp_holder\n\n"+DefinitionDelimiter) {
		t.Error("a definition without a final newline was not completed")
	}
	if _, err := ParseSchema("my_msgs/msg/Robot", ROS2Msg, []byte(got)); err != nil {
		t.Errorf("the concatenation does not parse: %v", err)
	}
	delete(defs, "geometry_msgs/Pose")
	if _, err := CompleteDefinition("my_msgs/Robot", own); !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), "geometry_msgs/Pose") {
		t.Errorf("missing dependency: %v", err)
	}
	if _, err := CompleteDefinition("loop_msgs/A", own); err != nil {
		t.Errorf("a cycle is written once per type, then stops: %v", err)
	}
}
