package replay_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
	"github.com/calisym/calisym/statemap"
)

// ros1JointState is a sensor_msgs/JointState decoded from ROS 1
// serialization by hand, independently of msgs/rosmsg: header (seq, stamp,
// frame_id), then name, position, velocity and effort.
type ros1JointState struct {
	stamp                      int64 // ns
	names                      []string
	position, velocity, effort []float64
}

func decodeROS1JointState(b []byte) (ros1JointState, error) {
	var js ros1JointState
	bad := errors.New("short ROS 1 JointState")
	u32 := func() (uint32, error) {
		if len(b) < 4 {
			return 0, bad
		}
		v := binary.LittleEndian.Uint32(b)
		b = b[4:]
		return v, nil
	}
	str := func() (string, error) {
		n, err := u32()
		if err != nil || uint32(len(b)) < n {
			return "", bad
		}
		s := string(b[:n])
		b = b[n:]
		return s, nil
	}
	floats := func() ([]float64, error) {
		n, err := u32()
		if err != nil || uint64(len(b)) < 8*uint64(n) {
			return nil, bad
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		b = b[8*n:]
		return v, nil
	}
	if _, err := u32(); err != nil { // seq
		return js, err
	}
	sec, err := u32()
	if err != nil {
		return js, err
	}
	nsec, err := u32()
	if err != nil {
		return js, err
	}
	js.stamp = int64(sec)*1e9 + int64(nsec)
	if _, err := str(); err != nil { // frame_id
		return js, err
	}
	n, err := u32()
	if err != nil {
		return js, err
	}
	for range n {
		s, err := str()
		if err != nil {
			return js, err
		}
		js.names = append(js.names, s)
	}
	if js.position, err = floats(); err != nil {
		return js, err
	}
	if js.velocity, err = floats(); err != nil {
		return js, err
	}
	js.effort, err = floats()
	return js, err
}

// bagJointStates reads the /joint_states messages of a ROS 1 bag with their
// log times.
func bagJointStates(t *testing.T, path string) (states []ros1JointState, logTimes []int64) {
	t.Helper()
	r, err := logio.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Channel.Topic != "/joint_states" {
			continue
		}
		js, err := decodeROS1JointState(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, js)
		logTimes = append(logTimes, int64(m.LogTime))
	}
	return states, logTimes
}

// TestReplayROS1Bag replays the real PR2 ROS 1 bag (data/bags) with two
// of its arm joints mapped as a double pendulum (testdata/pr2_arm.yaml)
// and checks it against the bag decoded by hand: one trigger per
// /joint_states message; no prediction exactly for the messages whose
// header stamp is more than max_age older than the time the bag recorded
// them (the recorder's lag, up to 82 ms in this bag); every prediction
// equal, to 1e-9 relative, to an offline rollout from that message's state
// p = M(q)q̇ and its efforts held. The inputs are ROS 1, not CDR: replay
// counts them as not copied into its MCAP. A copy of the bag cut in the
// middle replays up to the cut with the whole bag's predictions.
func TestReplayROS1Bag(t *testing.T) {
	bag := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	params, err := node.LoadParams(filepath.Join("testdata", "pr2_arm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	model := randomPendulum(t)
	// the pendulum's layout, its ports the PR2 arm's efforts
	model.Meta.Provenance = map[string]string{statemap.PortMapKey: params.Spec.PortMap()}
	got := replayLog(t, params, model, bag, replay.Options{})
	if got.err != nil || got.res.Truncated != nil {
		t.Fatalf("replay: %v (truncated: %v)", got.err, got.res.Truncated)
	}
	states, logTimes := bagJointStates(t, bag)
	maxAge := int64(math.Round(params.Node.MaxAge * 1e9))
	var fresh []ros1JointState
	for i, js := range states {
		if logTimes[i]-js.stamp <= maxAge {
			fresh = append(fresh, js)
		}
	}
	st := got.res.Stats
	if got.res.Messages != len(states) || got.res.Skipped != len(states) ||
		st.Predictions != uint64(len(fresh)) || st.Suppressed != uint64(len(states)-len(fresh)) || len(got.preds) != len(fresh) {
		t.Fatalf("%d /joint_states messages, %d fresh: replay handled %d, skipped %d, %d predictions (%d in the file), %d suppressed",
			len(states), len(fresh), got.res.Messages, got.res.Skipped, st.Predictions, len(got.preds), st.Suppressed)
	}
	t.Logf("%d /joint_states messages: %d predictions, %d stale (header more than %v s older than the recording)", len(states), len(fresh), len(states)-len(fresh), params.Node.MaxAge)
	if len(fresh) < 1000 || len(states)-len(fresh) == 0 {
		t.Fatalf("%d of %d messages fresh: the bag no longer tests both cases", len(fresh), len(states))
	}

	plan, err := model.Compile()
	if err != nil {
		t.Fatal(err)
	}
	off := newPendulumOffline(plan, mechanics.PaperPendulum(), params.Node.Horizon)
	joints := []string{"r_shoulder_pan_joint", "r_shoulder_lift_joint"}
	var worst float64
	for i, raw := range got.preds {
		var p msgs.PredictedTrajectory
		if err := msgs.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		js := fresh[i]
		if p.Header.Stamp.Nanos() != js.stamp {
			t.Fatalf("prediction %d stamped %d, its state %d", i, p.Header.Stamp.Nanos(), js.stamp)
		}
		var q, v, u [2]float64
		for j, name := range joints {
			k := slices.Index(js.names, name)
			if k < 0 {
				t.Fatalf("message %d has no %s", i, name)
			}
			q[j], v[j], u[j] = js.position[k], js.velocity[k], js.effort[k]
		}
		worst = math.Max(worst, off.gap(t, &p, q, v, u))
	}
	if worst > 1e-9 {
		t.Errorf("predictions differ from the offline rollout by %.3g (relative)", worst)
	}

	// The bag cut in the middle of its data: the predictions up to the cut.
	raw, err := os.ReadFile(bag)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.bag")
	if err := os.WriteFile(cut, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	part := replayLog(t, params, model, cut, replay.Options{})
	if part.err != nil || !errors.Is(part.res.Truncated, logio.ErrTruncated) {
		t.Fatalf("cut bag: error %v, truncated %v", part.err, part.res.Truncated)
	}
	if n := len(part.preds); n == 0 || n >= len(got.preds) {
		t.Fatalf("cut bag: %d predictions of the whole bag's %d", n, len(got.preds))
	}
	for i, p := range part.preds {
		if !bytes.Equal(p, got.preds[i]) {
			t.Fatalf("cut bag: prediction %d differs from the whole bag's", i)
		}
	}
}
