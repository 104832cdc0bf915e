package rosmsg_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/internal/msgstest"
	. "github.com/calisym/calisym/msgs/rosmsg"
)

// jsCase is one message for test/js/decode_cdr.mjs.
type jsCase struct {
	Name       string `json:"name"`
	Definition string `json:"definition"`
	Data       []byte `json:"data"` // base64 in JSON
	schema     *Schema
	reencoded  []byte // what the JS writer must produce (little-endian XCDR1)
}

// jsResult is decode_cdr.mjs's answer for one message.
type jsResult struct {
	Name      string `json:"name"`
	Value     any    `json:"value"`
	Reencoded []byte `json:"reencoded"`
	Trailing  bool   `json:"trailing"`
}

// TestCrossCheckJS decodes what this package encodes with Foxglove's
// MessageReader (and re-encodes it with its MessageWriter), and compares
// values and bytes exactly: every typed message, a dynamic message with
// every primitive kind and alignment case, an empty message, and big-endian
// and XCDR2 data laid out by hand.
func TestCrossCheckJS(t *testing.T) {
	nodetest.Require(t)
	var cases []jsCase
	for _, m := range msgstest.SampleMessages() {
		s, err := msgs.SchemaOf(m)
		if err != nil {
			t.Fatal(err)
		}
		data := msgs.Marshal(m)
		cases = append(cases, jsCase{Name: m.ROSType(), Definition: m.ROSDefinition(), Data: data, schema: s, reencoded: data})
	}
	// Every primitive kind, empty arrays between differently aligned
	// fields, nested fixed arrays of messages.
	const kinds = "uint8 a\nfloat64[] empty\nuint32 b\nint64[] big\nint8[] small\nint16[2] pair\nuint64 u\n" +
		"string[] names\nbool[] flags\nfloat32 f\nint8 i8\nuint16 u16\nbyte[] raw\nfloat64[] tail\n" +
		"t/In[2] ins\nt/In[] more\n================================================================================\n" +
		"MSG: t/In\nuint8 x\nfloat64 y\n"
	ks := mustSchema(t, "t/msg/Kinds", ROS2Msg, kinds)
	in := func(x uint8, y float64) *Struct { return &Struct{Def: ks.Type("t/In"), Fields: []any{x, y}} }
	kv := &Struct{Def: ks.Root, Fields: []any{
		uint8(7), []float64{}, uint32(4_000_000_000), []int64{math.MinInt64, 1, math.MaxInt64}, []int8{-128, 127},
		[]int16{-300, 300}, uint64(math.MaxUint64), []string{"", "x", "long string with spaces"}, []bool{true, false, true},
		float32(-1.5), int8(-7), uint16(65535), []uint8{0, 255, 16}, []float64{math.Inf(1), math.Copysign(0, -1), 5e-324},
		[]*Struct{in(1, 1.5), in(2, -2.5)}, []*Struct{in(3, 3)},
	}}
	kdata, err := ks.Encode(EncodingCDR, kv)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, jsCase{Name: "t/msg/Kinds", Definition: kinds, Data: kdata, schema: ks, reencoded: kdata})
	empty := mustSchema(t, "std_msgs/msg/Empty", ROS2Msg, "")
	edata, err := empty.Encode(EncodingCDR, &Struct{Def: empty.Root})
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, jsCase{Name: "std_msgs/msg/Empty", Definition: "", Data: edata, schema: empty, reencoded: edata})
	// The same JointState laid out by hand in other CDR variants.
	jsDef := (&msgs.JointState{}).ROSDefinition()
	jsSchema := mustSchema(t, "sensor_msgs/msg/JointState", ROS2Msg, jsDef)
	want := &msgs.JointState{Header: msgs.Header{Stamp: msgs.Time{Sec: 1, Nanosec: 2}, FrameID: "frame"}, Name: []string{"a", "knee"},
		Position: []float64{1, 2}, Effort: []float64{3}}
	for _, kind := range []byte{0x00, 0x06, 0x07} {
		w := newCDRTestWriter(kind)
		w.i32(1).u32(2).str("frame").strs("a", "knee").f64s(1, 2).f64s().f64s(3)
		cases = append(cases, jsCase{Name: "sensor_msgs/msg/JointState", Definition: jsDef, Data: w.b, schema: jsSchema,
			reencoded: msgs.Marshal(want)})
	}

	dir := t.TempDir()
	input, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "input.json")
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	var results []jsResult
	if err := json.Unmarshal(nodetest.Run(t, time.Minute, "decode_cdr.mjs", path), &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(cases) {
		t.Fatalf("%d results for %d cases", len(results), len(cases))
	}
	for i, c := range cases {
		r := results[i]
		v, err := c.schema.Decode(EncodingCDR, c.Data)
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, c.Name, err)
		}
		goValue := nodetest.JSONValue(t, v.Map())
		jsValue := nodetest.JSONValue(t, r.Value)
		if !reflect.DeepEqual(goValue, jsValue) {
			t.Errorf("case %d (%s): values differ\n  Go: %v\n  JS: %v", i, c.Name, goValue, jsValue)
		}
		// Foxglove's writer sizes strings in UTF-16 units and cuts
		// multi-byte UTF-8 short, so only ASCII messages re-encode exactly.
		if !hasNonASCII(v.Map()) && !bytes.Equal(r.Reencoded, c.reencoded) {
			t.Errorf("case %d (%s): JS re-encoding differs\n  JS: % x\nwant: % x", i, c.Name, r.Reencoded, c.reencoded)
		}
		if r.Trailing {
			t.Errorf("case %d (%s): JS left trailing bytes", i, c.Name)
		}
	}
}

// hasNonASCII reports whether a decoded value holds a string with a byte
// outside ASCII.
func hasNonASCII(v any) bool {
	switch x := v.(type) {
	case string:
		for i := 0; i < len(x); i++ {
			if x[i] >= 0x80 {
				return true
			}
		}
	case []string:
		for _, s := range x {
			if hasNonASCII(s) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNonASCII(e) {
				return true
			}
		}
	case []map[string]any:
		for _, e := range x {
			if hasNonASCII(e) {
				return true
			}
		}
	}
	return false
}
