package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/livetest"
)

// TestBenchFailedLeavesNoStaleSummary runs a benchmark whose logs are
// missing into a directory holding an earlier run's summary.md: the
// failed run leaves no summary of numbers it did not produce.
func TestBenchFailedLeavesNoStaleSummary(t *testing.T) {
	out := t.TempDir()
	summary := filepath.Join(out, "summary.md")
	if err := os.WriteFile(summary, []byte("an earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "bench", "--system", "crazyflie", "--quiet", "--data", t.TempDir(), "--out", out); err == nil {
		t.Fatal("bench without logs succeeded")
	}
	if _, err := os.Stat(summary); !os.IsNotExist(err) {
		t.Errorf("the failed bench left the earlier summary.md (%v)", err)
	}
}

// TestReplayFailureLeavesNoFile replays a log with a corrupt chunk after
// its first predictions (a replay that fails midway) and one in which
// every input is rejected: both exit non-zero and leave no file at --out,
// nor a temporary one beside it.
func TestReplayFailureLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	model := randomPendulumModel(t, dir)
	params := livetest.PendulumParams()
	logs := livetest.PendulumDamaged(t, dir, livetest.PendulumTrajectories(t, 1, 100))
	// Fails midway: the corrupt chunk comes after predictions were
	// written.
	failed := t.TempDir()
	out := filepath.Join(failed, "replay.mcap")
	stdout, _, err := runCLI(t, "replay", "--params", params, "--model", model, logs.Corrupt, "--out", out)
	if err == nil || !strings.Contains(err.Error(), "not written") || strings.Contains(stdout, " 0 predictions") {
		t.Errorf("corrupt log: err %v\n%s", err, stdout)
	}
	if names := dirEntries(t, failed); len(names) != 0 {
		t.Errorf("a failed replay left %v", names)
	}

	// Every input rejected: no prediction, a non-zero exit that says why.
	trs := livetest.PendulumTrajectories(t, 1, 20)
	for i := range trs[0].Q {
		trs[0].Q[i] = math.NaN()
	}
	nan := filepath.Join(dir, "nan.mcap")
	if err := experiment.WritePendulumMCAP(nan, trs, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI(t, "replay", "--params", params, "--model", model, nan, "--out", out)
	if err == nil || !strings.Contains(err.Error(), "no prediction") || !strings.Contains(err.Error(), "with NaN or infinite values") {
		t.Errorf("every input rejected: err %v", err)
	}
	if names := dirEntries(t, failed); len(names) != 0 {
		t.Errorf("a replay without predictions left %v", names)
	}
}
