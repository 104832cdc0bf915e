package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// ros1JointState is a sensor_msgs/JointState as ROS 1 serializes it.
type ros1JointState struct {
	seq           uint32
	sec, nsec     uint32
	frame         string
	name          []string
	pos, vel, eff []float64
}

// decodeROS1JointState is a minimal, hand-written ROS 1 decoder of
// sensor_msgs/JointState (uint32 seq, time stamp, string frame_id,
// string[] name, float64[] position, velocity, effort; little endian,
// uint32 lengths), independent of package rosmsg, to check the message
// source against.
func decodeROS1JointState(b []byte) (m ros1JointState, err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("short message")
		}
	}()
	u32 := func() uint32 { v := binary.LittleEndian.Uint32(b); b = b[4:]; return v }
	str := func() string { n := u32(); s := string(b[:n]); b = b[n:]; return s }
	f64s := func() []float64 {
		n := u32()
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		return out
	}
	m.seq, m.sec, m.nsec = u32(), u32(), u32()
	m.frame = str()
	m.name = make([]string, u32())
	for i := range m.name {
		m.name[i] = str()
	}
	m.pos, m.vel, m.eff = f64s(), f64s(), f64s()
	if len(b) != 0 {
		return m, fmt.Errorf("%d trailing bytes", len(b))
	}
	return m, nil
}

// pr2Cache holds pr2JointStates' result: the bag's bz2 chunks are slow to
// read.
var pr2Cache struct {
	sync.Mutex
	states   []ros1JointState
	logTimes []uint64
	start    uint64
}

// pr2JointStates reads the PR2 fixture bag's /joint_states with the
// hand-written decoder, and the bag's start (its earliest log time).
func pr2JointStates(t *testing.T, path string) (states []ros1JointState, logTimes []uint64, start uint64) {
	t.Helper()
	pr2Cache.Lock()
	defer pr2Cache.Unlock()
	if pr2Cache.states == nil {
		pr2Cache.states, pr2Cache.logTimes, pr2Cache.start = readPR2JointStates(t, path)
	}
	return pr2Cache.states, pr2Cache.logTimes, pr2Cache.start
}

func readPR2JointStates(t *testing.T, path string) (states []ros1JointState, logTimes []uint64, start uint64) {
	t.Helper()
	r, err := logio.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start = math.MaxUint64
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		start = min(start, m.LogTime)
		if m.Channel.Topic != "/joint_states" {
			continue
		}
		js, err := decodeROS1JointState(m.Data)
		if err != nil {
			t.Fatalf("message %d: %v", len(states), err)
		}
		states = append(states, js)
		logTimes = append(logTimes, m.LogTime)
	}
	return states, logTimes, start
}

// TestMessageSourceBagFixture reads every joint's position, velocity and
// effort from the real PR2 bag (ROS 1, bz2 chunks) through the message
// source, on both clocks, and compares them with the hand-written decoder.
func TestMessageSourceBagFixture(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	states, logTimes, start := pr2JointStates(t, path)
	// The fixture's documented shape: 1325 joint states of 45 joints over
	// about 13.4 s.
	if len(states) != 1325 {
		t.Fatalf("%d joint states, want 1325", len(states))
	}
	names := states[0].name
	for i, s := range states {
		if !slices.Equal(s.name, names) || len(s.pos) != 45 || len(s.vel) != 45 || len(s.eff) != 45 {
			t.Fatalf("message %d: %d names (%d positions), want the 45 of the first", i, len(s.name), len(s.pos))
		}
	}
	if span := float64(logTimes[len(logTimes)-1]-logTimes[0]) / 1e9; math.Abs(span-13.4) > 0.1 {
		t.Errorf("span %.3f s, want about 13.4", span)
	}
	var paths []string
	for _, n := range names {
		for _, f := range []string{"position", "velocity", "effort"} {
			paths = append(paths, rosmsg.JointPath("/joint_states", f, n))
		}
	}
	for _, stamp := range []string{StampHeader, StampLogTime} {
		t.Run(stamp, func(t *testing.T) {
			src, err := OpenMessageLog(path, MessageLogOptions{Paths: paths, Stamp: stamp})
			if err != nil {
				t.Fatal(err)
			}
			series, err := src.Read(paths)
			if err != nil {
				t.Fatal(err)
			}
			if w := src.Warnings(); len(w) > 0 {
				t.Errorf("warnings %q", w)
			}
			for k, s := range states {
				ns := logTimes[k]
				if stamp == StampHeader {
					ns = uint64(s.sec)*1e9 + uint64(s.nsec)
				}
				tk := float64(int64(ns)-int64(start)) / 1e9
				for j := range names {
					for f, want := range []float64{s.pos[j], s.vel[j], s.eff[j]} {
						got := series[3*j+f]
						if got.Values[k] != want || got.Time[k] != tk {
							t.Fatalf("%s[%d] = %v at %v s, hand-decoded %v at %v s", got.Name, k, got.Values[k], got.Time[k], want, tk)
						}
					}
				}
			}
		})
	}

	// Errors name what the bag has.
	_, err := OpenMessageLog(path, MessageLogOptions{Paths: []string{"/joint_state.position[0]"}})
	if !errors.Is(err, ErrMissingChannel) || !strings.Contains(err.Error(), "/base_odometry/odom (nav_msgs/Odometry)") || !strings.Contains(err.Error(), "/joint_states (sensor_msgs/JointState)") {
		t.Errorf("missing topic: %v", err)
	}
	wrong := rosmsg.JointPath("/joint_states", "position", "r_shoulder_pan")
	src, err := OpenMessageLog(path, MessageLogOptions{Paths: []string{wrong}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Read([]string{wrong})
	if !errors.Is(err, ErrNoMessages) || !strings.Contains(err.Error(), "holds 45:") || !strings.Contains(err.Error(), `"r_shoulder_pan_joint"`) {
		t.Errorf("wrong joint name: %v", err)
	}
}

// TestConvertBagFixture converts the real PR2 bag end to end through the
// default opener: the base as a floating rigid body from
// /base_odometry/odom (pose, body twist), two joint efforts from
// /joint_states as the control port, aligned on the header-stamp clock,
// filtered and decimated. The held efforts of the dataset are checked
// against the hand-decoded messages.
func TestConvertBagFixture(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	odom := func(f string) statemap.Channel { return statemap.Channel{Name: "/base_odometry/odom." + f} }
	efforts := []string{"torso_lift_joint", "r_shoulder_pan_joint"}
	spec := &Spec{
		Robot:  "pr2",
		Inputs: []string{path},
		Spec: statemap.Spec{
			State: statemap.StateSpec{Kind: statemap.StateFloatingBase, Base: statemap.BaseSpec{
				Position:        []statemap.Channel{odom("pose.pose.position.x"), odom("pose.pose.position.y"), odom("pose.pose.position.z")},
				Orientation:     statemap.OrientationSpec{Channels: []statemap.Channel{odom("pose.pose.orientation.x"), odom("pose.pose.orientation.y"), odom("pose.pose.orientation.z"), odom("pose.pose.orientation.w")}},
				LinearVelocity:  statemap.VelocitySpec{Frame: statemap.FrameBody, Channels: []statemap.Channel{odom("twist.twist.linear.x"), odom("twist.twist.linear.y"), odom("twist.twist.linear.z")}},
				AngularVelocity: statemap.VelocitySpec{Frame: statemap.FrameBody, Channels: []statemap.Channel{odom("twist.twist.angular.x"), odom("twist.twist.angular.y"), odom("twist.twist.angular.z")}},
			}},
			Model: statemap.ModelSpec{Kind: statemap.ModelRigidBody, RigidBody: statemap.RigidBodySpec{Mass: 100, Inertia: []float64{8, 8, 6}}},
			Control: statemap.ControlSpec{Kind: statemap.ControlDirect, PortSpec: statemap.PortSpec{Interp: statemap.InterpHold, Names: efforts, Channels: []statemap.Channel{
				{Name: rosmsg.JointPath("/joint_states", "effort", efforts[0])}, {Name: rosmsg.JointPath("/joint_states", "effort", efforts[1])},
			}}},
		},
		Resample: ResampleSpec{Rate: 50, WorkRate: 100},
		Filter:   FilterSpec{Kind: "butterworth", Order: 4, Cutoff: 10, SkipPorts: true},
		Window:   WindowSpec{Length: 50, Stride: 10},
		Validate: ValidateSpec{MaxGap: 0.1, MaxQuatNormError: 0.01},
	}
	res, err := Convert(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Report.Files[0]
	t.Logf("%s", res.Report)
	if f.Rows != 1229 || math.Abs(f.InputRate-100) > 15 || len(f.Warnings) != 0 {
		t.Errorf("file report %+v, want the 1229 odometry messages at about 100 Hz and no warnings", f)
	}
	d := res.Splits["id"]
	if d == nil || res.Report.Windows.Kept < 25 || d.N != 6 || d.NU != 2 {
		t.Fatalf("windows %+v", res.Report.Windows)
	}
	// The robot stands nearly still: small base momenta.
	for _, ch := range res.Report.Splits["id"].Channels {
		if strings.HasPrefix(ch.Name, "p_") && math.Max(math.Abs(ch.Min), math.Abs(ch.Max)) > 100*0.5 {
			t.Errorf("%s in [%g, %g]: the base should be nearly still", ch.Name, ch.Min, ch.Max)
		}
	}

	// The held efforts at each dataset sample are the latest hand-decoded
	// ones stamped at or before it. The clock starts at the later of the
	// two topics' first stamps.
	states, _, start := pr2JointStates(t, path)
	src, err := OpenMessageLog(path, MessageLogOptions{Paths: spec.ChannelNames()})
	if err != nil {
		t.Fatal(err)
	}
	series, err := src.Read(spec.ChannelNames())
	if err != nil {
		t.Fatal(err)
	}
	t0 := math.Inf(-1)
	for _, s := range series {
		t0 = math.Max(t0, s.Time[0])
	}
	idx := map[string]int{}
	for i, n := range states[0].name {
		idx[n] = i
	}
	stampOf := func(s ros1JointState) float64 {
		return float64(int64(uint64(s.sec)*1e9+uint64(s.nsec))-int64(start)) / 1e9
	}
	checked := 0
	for _, ep := range d.Episodes {
		for k := range ep.Len {
			tk := t0 + ep.Tags["t0"] + float64(k)/50
			last := -1
			for i, s := range states {
				if stampOf(s) <= tk+1e-9 {
					last = i
				}
			}
			if last < 0 || math.Abs(stampOf(states[last])-tk) < 1e-6 {
				continue // too close to call
			}
			for u, name := range efforts {
				if got, want := ep.E[2*k+u], states[last].eff[idx[name]]; got != want {
					t.Fatalf("episode %s sample %d (t = %.4f s): %s effort %v, hand-decoded %v", ep.Name, k, tk, name, got, want)
				}
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Errorf("checked %d samples", checked)
	}
}
