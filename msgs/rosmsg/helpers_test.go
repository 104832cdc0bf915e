package rosmsg_test

// The tests are an external package because they use the typed messages of
// msgs (which imports rosmsg) as inputs; they dot-import the package they
// test, and export_test.go names the few internals they look at.

import (
	"encoding/binary"
	"math"
	"testing"

	. "github.com/calisym/calisym/msgs/rosmsg"
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

// mustSchema parses a definition or fails the test.
func mustSchema(t testing.TB, name string, d Dialect, text string) *Schema {
	t.Helper()
	s, err := ParseSchema(name, d, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
