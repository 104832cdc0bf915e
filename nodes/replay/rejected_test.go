package replay_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
)

// TestReplayEveryInputRejected replays a log whose joint states are all
// NaN: the node makes no prediction, and Run says why with the counts.
func TestReplayEveryInputRejected(t *testing.T) {
	params, err := node.LoadParams(livetest.PendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	trs := livetest.PendulumTrajectories(t, 1, 20)
	for i := range trs[0].Q {
		trs[0].Q[i] = math.NaN()
	}
	log := filepath.Join(t.TempDir(), "nan.mcap")
	if err := experiment.WritePendulumMCAP(log, trs, nil); err != nil {
		t.Fatal(err)
	}
	got := replayLog(t, params, randomPendulum(t), log, replay.Options{})
	n := trs[0].Len()
	if !errors.Is(got.err, replay.ErrNoPrediction) || got.res == nil || got.res.Messages != 2*n {
		t.Fatalf("err %v, result %+v; want ErrNoPrediction after %d messages", got.err, got.res, 2*n)
	}
	for _, want := range []string{"/joint_states: " + itoa(n) + " received, 0 accepted; rejected: " + itoa(n) + " with NaN", itoa(n) + " triggers suppressed"} {
		if !strings.Contains(got.err.Error(), want) {
			t.Errorf("error %q does not say %q", got.err, want)
		}
	}
}
