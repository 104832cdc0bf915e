package msgs

import (
	"bytes"
	"testing"
)

// TestEncoder: an Encoder appends what AppendMarshal appends, message after
// message into one buffer, and then allocates nothing.
func TestEncoder(t *testing.T) {
	var e Encoder
	js := &JointState{Header: Header{Stamp: TimeFromNanos(1_700_000_000_123_456_789), FrameID: "base"}, Name: []string{"a", "b"}, Position: []float64{1, 2}}
	arr := &Float64MultiArray{Data: []float64{3, 4, 5}}
	var buf []byte
	for _, m := range []Message{js, arr, js} {
		buf = e.Append(buf[:0], m)
		if want := Marshal(m); !bytes.Equal(buf, want) {
			t.Fatalf("%s: Encoder %x, Marshal %x", m.ROSType(), buf, want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { buf = e.Append(buf[:0], js) }); a != 0 {
		t.Errorf("%v allocations per message", a)
	}
}
