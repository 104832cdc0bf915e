package rosmsg_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/internal/msgstest"
	. "github.com/calisym/calisym/msgs/rosmsg"
)

// TestDecodeLayouts decodes the same message laid out by hand in every
// supported CDR variant and in ROS 1.
func TestDecodeLayouts(t *testing.T) {
	s := mustSchema(t, "t/msg/Mix", ROS2Msg, "int16 a\nfloat64 b\nstring s\nfloat64[] v\nuint8 c\nint64[2] w\nbool f\nfloat32 g\n")
	write := func(w *testWriter) []byte {
		w.i16(-2).f64(2.5).str("hi").f64s(1, -1).u8(9)
		w.u64(uint64(1 << 40)).u64(math.MaxUint64) // int64 -1
		w.u8(1)
		w.u32(math.Float32bits(0.5))
		return w.b
	}
	want := map[string]any{"a": int16(-2), "b": 2.5, "s": "hi", "v": []float64{1, -1}, "c": uint8(9),
		"w": []int64{1 << 40, -1}, "f": true, "g": float32(0.5)}
	tests := []struct {
		name string
		enc  Encoding
		data []byte
	}{
		{"CDR little endian", EncodingCDR, write(newCDRTestWriter(0x01))},
		{"CDR big endian", EncodingCDR, write(newCDRTestWriter(0x00))},
		{"XCDR2 little endian", EncodingCDR, write(newCDRTestWriter(0x07))},
		{"XCDR2 big endian", EncodingCDR, write(newCDRTestWriter(0x06))},
		{"ROS 1", EncodingROS1, write(newROS1TestWriter())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := s.Decode(tt.enc, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.Map(), want) {
				t.Errorf("got %v\nwant %v", v.Map(), want)
			}
			// The extractor reads the same numbers.
			var paths []*MessagePath
			for _, e := range []string{".a", ".b", ".v[1]", ".c", ".w[0]", ".w[-1]", ".f", ".g"} {
				p, err := CompilePath(s, e)
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			x, err := NewExtractor(s, tt.enc, paths...)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float64, len(paths))
			if err := x.Extract(tt.data, out); err != nil {
				t.Fatal(err)
			}
			if wantOut := []float64{-2, 2.5, -1, 9, 1 << 40, -1, 1, 0.5}; !reflect.DeepEqual(out, wantOut) {
				t.Errorf("extracted %v, want %v", out, wantOut)
			}
		})
	}
	// XCDR1 aligns 8-byte values relative to the end of the header: b
	// starts 8 bytes after it, not 4.
	le := write(newCDRTestWriter(0x01))
	if got := binary.LittleEndian.Uint64(le[4+8:]); math.Float64frombits(got) != 2.5 {
		t.Errorf("b is not at body offset 8: % x", le)
	}
}

// TestDecodeROS1JointState decodes a ROS 1 JointState laid out by hand.
func TestDecodeROS1JointState(t *testing.T) {
	s := mustSchema(t, "sensor_msgs/JointState", ROS1Msg, ros1JointStateDef)
	w := newROS1TestWriter()
	w.u32(42).u32(1_600_000_000).u32(500_000_000).str("base")
	w.strs("j1", "j2").f64s(0.5, -0.5).f64s().f64s(3, 4)
	v, err := s.Decode(EncodingROS1, w.b)
	if err != nil {
		t.Fatal(err)
	}
	hdr := v.Map()["header"].(map[string]any)
	if hdr["seq"] != uint32(42) || hdr["frame_id"] != "base" ||
		!reflect.DeepEqual(hdr["stamp"], map[string]any{"sec": uint32(1_600_000_000), "nsec": uint32(500_000_000)}) {
		t.Errorf("header %v", hdr)
	}
	stamp, err := CompilePath(s, ".header.stamp")
	if err != nil {
		t.Fatal(err)
	}
	if sec, err := stamp.Float64(v); err != nil || sec != 1_600_000_000.5 {
		t.Errorf("stamp %v, %v", sec, err)
	}
	again, err := s.Encode(EncodingROS1, v)
	if err != nil || !bytes.Equal(again, w.b) {
		t.Errorf("ROS 1 re-encoding: %v\n got % x\nwant % x", err, again, w.b)
	}
}

func TestDecodeErrors(t *testing.T) {
	js := mustSchema(t, "sensor_msgs/msg/JointState", ROS2Msg, (&msgs.JointState{}).ROSDefinition())
	good := msgs.Marshal(&msgs.JointState{Header: msgstest.SampleHeader, Name: []string{"a", "b"}, Position: []float64{1, 2}})
	hostile := newCDRTestWriter(0x01)
	hostile.i32(1).u32(2).str("f").u32(0xffffffff) // name: 4 billion strings
	wstr := mustSchema(t, "t/W", ROS2Msg, "wstring w\n")
	tests := []struct {
		name   string
		schema *Schema
		enc    Encoding
		data   []byte
		want   error
		field  string
		offset int
	}{
		{"empty", js, EncodingCDR, nil, ErrTruncated, "", 0},
		{"bad header", js, EncodingCDR, []byte{1, 1, 0, 0}, ErrInvalid, "", 0},
		{"unknown kind", js, EncodingCDR, []byte{0, 0x42, 0, 0}, ErrInvalid, "", 0},
		{"parameter list CDR", js, EncodingCDR, []byte{0, 0x03, 0, 0}, ErrUnsupported, "", 0},
		{"delimited CDR2", js, EncodingCDR, []byte{0, 0x09, 0, 0}, ErrUnsupported, "", 0},
		{"no stamp", js, EncodingCDR, []byte{0, 1, 0, 0, 1, 0}, ErrTruncated, ".header.stamp.sec", 4},
		{"cut in frame_id", js, EncodingCDR, good[:20], ErrTruncated, ".header.frame_id", 16},
		{"name count too large", js, EncodingCDR, good[:34], ErrTruncated, ".name", 32},
		{"cut in name", js, EncodingCDR, good[:42], ErrTruncated, ".name[1]", 40},
		{"cut in position", js, EncodingCDR, good[:len(good)-20], ErrTruncated, ".position", 52},
		{"hostile count", js, EncodingCDR, hostile.b, ErrTruncated, ".name", 24},
		{"wstring", wstr, EncodingCDR, []byte{0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, ErrUnsupported, ".w", 4},
		{"unknown encoding", js, Encoding(7), good, ErrUnsupported, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.schema.Decode(tt.enc, tt.data)
			var derr *DecodeError
			if !errors.As(err, &derr) || !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want a DecodeError wrapping %v", err, tt.want)
			}
			if derr.Field != tt.field || derr.Offset != tt.offset {
				t.Errorf("field %q offset %d, want %q at %d (%v)", derr.Field, derr.Offset, tt.field, tt.offset, err)
			}
			if derr.Type != tt.schema.Root.Name {
				t.Errorf("type %q", derr.Type)
			}
		})
	}
	// Every truncation of a valid message fails cleanly (msgs' tests check
	// that Unmarshal names the same field).
	for n := range len(good) - 1 {
		_, err := js.Decode(EncodingCDR, good[:n])
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
	// A hostile count allocates nothing in proportion to it.
	allocs := testing.AllocsPerRun(10, func() { _, _ = js.Decode(EncodingCDR, hostile.b) })
	if allocs > 20 {
		t.Errorf("%v allocations for a hostile count", allocs)
	}
}

func TestEncodeErrors(t *testing.T) {
	s := mustSchema(t, "t/msg/E", ROS2Msg, "float64[2] fixed\nint32[<=1] bounded\nstring<=3 s\nt/In in\n===\nMSG: t/In\nuint8 x\n")
	in := s.Type("t/In")
	valid := func() *Struct {
		return &Struct{Def: s.Root, Fields: []any{[]float64{1, 2}, []int32{5}, "abc", &Struct{Def: in, Fields: []any{uint8(1)}}}}
	}
	if _, err := s.Encode(EncodingCDR, valid()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		edit  func(v *Struct)
		field string
	}{
		{"fixed length", func(v *Struct) { v.Fields[0] = []float64{1} }, ".fixed"},
		{"wrong slice type", func(v *Struct) { v.Fields[0] = []float32{1, 2} }, ".fixed"},
		{"bound", func(v *Struct) { v.Fields[1] = []int32{1, 2} }, ".bounded"},
		{"string bound", func(v *Struct) { v.Fields[2] = "abcd" }, ".s"},
		{"wrong scalar", func(v *Struct) { v.Fields[3].(*Struct).Fields[0] = 1 }, ".in.x"},
		{"nil message", func(v *Struct) { v.Fields[3] = (*Struct)(nil) }, ".in"},
		{"short message", func(v *Struct) { v.Fields[3] = &Struct{Def: in} }, ".in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := valid()
			tt.edit(v)
			out, err := s.AppendEncode([]byte("keep"), EncodingCDR, v)
			if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "field "+tt.field+":") {
				t.Fatalf("got %v, want ErrValue at %s", err, tt.field)
			}
			if string(out) != "keep" {
				t.Errorf("dst not restored: %q", out)
			}
		})
	}
}
