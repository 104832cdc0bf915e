package replay_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
)

// played is one /joint_states message as Play delivered it.
type played struct {
	stamp, at int64 // header stamp as delivered, wall clock at delivery (ns)
	logTime   int64
	orig      int64 // header stamp in the log
}

// playStamps plays the /joint_states messages of a log passes times at
// speed and returns them as delivered, decoding the stamps with decode.
func playStamps(t *testing.T, path string, speed float64, passes int, decode func([]byte) (int64, error)) []played {
	t.Helper()
	var orig, logTimes []int64
	r, err := logio.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Channel.Topic == "/joint_states" {
			s, err := decode(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			orig, logTimes = append(orig, s), append(logTimes, int64(m.LogTime))
		}
	}
	r.Close()
	var out []played
	for range passes {
		r, err := logio.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = replay.Play(context.Background(), r, func(topic string, data []byte) {
			at := time.Now().UnixNano()
			s, err := decode(data)
			if err != nil {
				t.Fatal(err)
			}
			i := len(out) % len(orig)
			out = append(out, played{stamp: s, at: at, logTime: logTimes[i], orig: orig[i]})
		}, replay.PlayOptions{Topics: []string{"/joint_states"}, Speed: speed})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != passes*len(orig) {
		t.Fatalf("%d messages played, want %d passes of %d", len(out), passes, len(orig))
	}
	return out
}

// TestPlayStampsFollowPlaybackClock plays a ROS 2 MCAP and the real PR2
// ROS 1 bag faster than real time, twice: every header stamp (CDR and ROS
// 1 alike) is mapped to the playback clock, so that no message is stamped
// after the wall clock it arrives at (an input age is never negative), the
// stamps are the log's spaced by 1/speed, and the second pass's stamps
// come after the first's (a node keeps accepting them). Stamps were
// shifted but not scaled, running ahead of the clock at speeds above 1
// and going back at each pass; a bag's were not shifted at all.
func TestPlayStampsFollowPlaybackClock(t *testing.T) {
	mcap := filepath.Join(t.TempDir(), "pendulum.mcap")
	livetest.PendulumLog(t, mcap, livetest.PendulumTrajectories(t, 1, 150))
	cdr := func(b []byte) (int64, error) {
		var js msgs.JointState
		err := msgs.Unmarshal(b, &js)
		return js.Header.Stamp.Nanos(), err
	}
	ros1 := func(b []byte) (int64, error) {
		js, err := decodeROS1JointState(b)
		return js.stamp, err
	}
	for _, tc := range []struct {
		name   string
		path   string
		speed  float64
		decode func([]byte) (int64, error)
	}{
		{"ROS 2 MCAP", mcap, 8, cdr},
		{"ROS 1 bag", fixtures.Path(t, "bags", "pr1012_sensors.bag"), 25, ros1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now().UnixNano()
			got := playStamps(t, tc.path, tc.speed, 2, tc.decode)
			n := len(got) / 2
			for i, p := range got {
				if p.stamp < start {
					t.Fatalf("message %d stamped %d, before the playback started (%d): not restamped", i, p.stamp, start)
				}
				if p.stamp > p.at {
					t.Fatalf("message %d stamped %.6f s after it arrived (a negative age)", i, float64(p.stamp-p.at)/1e9)
				}
				first := got[i/n*n]
				// The playback clock starts at the first message's log time.
				want := float64(p.orig-first.logTime) / tc.speed
				if d := float64(p.stamp-first.stamp) - (want - float64(first.orig-first.logTime)/tc.speed); d > 2 || d < -2 {
					t.Fatalf("message %d: stamp %d ns off the log's stamp at speed %g", i, int64(d), tc.speed)
				}
			}
			for i := range n {
				if got[n+i].stamp <= got[n-1].stamp {
					t.Fatalf("second pass, message %d stamped %d, not after the first pass's last %d", i, got[n+i].stamp, got[n-1].stamp)
				}
			}
		})
	}
}

// TestInputTypesROS1Bag: a bag's input types are its own, ROS 1
// serialization and ros1msg schemas, so that a node built with them
// decodes the bag's bytes (a node told CDR rejects every message).
func TestInputTypesROS1Bag(t *testing.T) {
	params, err := node.LoadParams(filepath.Join("testdata", "pr2_arm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := logio.Open(fixtures.Path(t, "bags", "pr1012_sensors.bag"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	types, err := replay.InputTypes(r, params, 0)
	if err != nil {
		t.Fatal(err)
	}
	js, ok := types["/joint_states"]
	if len(types) != 1 || !ok || js.Encoding != "ros1" || js.SchemaEncoding != "ros1msg" || js.Type != "sensor_msgs/JointState" || js.Definition == "" {
		t.Fatalf("types %+v", types)
	}
}
