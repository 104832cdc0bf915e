package msgs_test

// The tests are an external package because they share internal/msgstest
// (which imports msgs) with rosmsg's tests; they dot-import the package
// they test.

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	. "github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/internal/msgstest"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// TestTypedRoundTrip checks every typed message against the dynamic codec:
// typed encode → dynamic decode → dynamic encode gives the same bytes, and
// typed decode gives back the value.
func TestTypedRoundTrip(t *testing.T) {
	for _, m := range msgstest.SampleMessages() {
		t.Run(m.ROSType(), func(t *testing.T) {
			data := Marshal(m)
			if !bytes.Equal(data[:4], []byte{0, 1, 0, 0}) {
				t.Fatalf("header % x", data[:4])
			}
			got := reflect.New(reflect.TypeOf(m).Elem()).Interface().(Message)
			if err := Unmarshal(data, got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("typed round trip:\n got %+v\nwant %+v", got, m)
			}
			s, err := SchemaOf(m)
			if err != nil {
				t.Fatal(err)
			}
			v, err := s.Decode(rosmsg.EncodingCDR, data)
			if err != nil {
				t.Fatal(err)
			}
			again, err := s.Encode(rosmsg.EncodingCDR, v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Errorf("dynamic re-encoding differs:\n got % x\nwant % x", again, data)
			}
			// ROS 1 serialization of the same value round-trips too.
			r1, err := s.Encode(rosmsg.EncodingROS1, v)
			if err != nil {
				t.Fatal(err)
			}
			v1, err := s.Decode(rosmsg.EncodingROS1, r1)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v1.Map(), v.Map()) {
				t.Errorf("ROS 1 round trip:\n got %v\nwant %v", v1.Map(), v.Map())
			}
		})
	}
}

// TestUnmarshalErrors checks that Unmarshal fails cleanly on every
// truncation of a valid message and names the same field, at the same
// offset, as the dynamic decoder.
func TestUnmarshalErrors(t *testing.T) {
	js, err := SchemaOf(&JointState{})
	if err != nil {
		t.Fatal(err)
	}
	good := Marshal(&JointState{Header: msgstest.SampleHeader, Name: []string{"a", "b"}, Position: []float64{1, 2}})
	for n := range len(good) - 1 {
		_, err := js.Decode(rosmsg.EncodingCDR, good[:n])
		if !errors.Is(err, rosmsg.ErrTruncated) {
			t.Fatalf("cut at %d: %v", n, err)
		}
		var m JointState
		uerr := Unmarshal(good[:n], &m)
		if uerr == nil || uerr.Error() != err.Error() {
			t.Fatalf("cut at %d: Unmarshal %v, Decode %v", n, uerr, err)
		}
	}
}

func TestTimeHelpers(t *testing.T) {
	for _, ns := range []int64{0, 1, 1_700_000_000_123_456_789, -1, -1_500_000_000} {
		tm := TimeFromNanos(ns)
		if tm.Nanos() != ns || tm.Nanosec >= 1e9 {
			t.Errorf("TimeFromNanos(%d) = %+v", ns, tm)
		}
	}
	tm := Time{Sec: 2, Nanosec: 500_000_000}
	if tm.Seconds() != 2.5 {
		t.Errorf("Seconds %v", tm.Seconds())
	}
}

func TestPredictedTrajectoryValidate(t *testing.T) {
	ok := &PredictedTrajectory{Dt: 0.1, Horizon: 2, CoordinateNames: []string{"a"}, Q: []float64{1, 2}, P: []float64{3, 4},
		PortNames: []string{"u", "f"}, Ports: []float64{1, 2, 3, 4}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if ok.QAt(1, 0) != 2 || ok.PAt(0, 0) != 3 {
		t.Error("QAt/PAt")
	}
	for _, edit := range []func(*PredictedTrajectory){
		func(p *PredictedTrajectory) { p.Q = p.Q[:1] },
		func(p *PredictedTrajectory) { p.P = nil },
		func(p *PredictedTrajectory) { p.Ports = p.Ports[:3] },
		func(p *PredictedTrajectory) { p.Dt = 0 },
	} {
		bad := *ok
		edit(&bad)
		if err := bad.Validate(); !errors.Is(err, rosmsg.ErrValue) {
			t.Errorf("Validate(%+v) = %v", bad, err)
		}
	}
}
