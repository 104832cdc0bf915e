package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
)

// TestReplayAndNodeCommands runs `sim --mcap` and `replay` as a user would,
// and `node --check` on every params file with a node section.
func TestReplayAndNodeCommands(t *testing.T) {
	dir := t.TempDir()
	model := livetest.TrainPendulum(t, dir)
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatal(err)
	}
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	out := filepath.Join(dir, "pred.mcap")
	stdout, _, err := runCLI(t, "replay", "--params", params, "--model", model, "--compression", "lz4", "--every", "1", filepath.Join(sim, "ood.mcap"), "--out", out)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stdout)
	}
	// Smoke OOD split: 2 trajectories of 301 samples, one prediction per command.
	if !strings.Contains(stdout, "1204 input messages, 602 predictions, 0 suppressed") || !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("replay output:\n%s", stdout)
	}
	topics, _, err := runCLI(t, "topics", out)
	if err != nil || !strings.Contains(topics, "/calisym/prediction") || !strings.Contains(topics, "calisym/msg/PredictedTrajectory") {
		t.Errorf("topics of the replay: %v\n%s", err, topics)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--params", params, "--model", model, filepath.Join(sim, "ood.mcap")}, "--out, --foxglove"},
		{[]string{"replay", "--model", model, "--out", out, filepath.Join(sim, "ood.mcap")}, "--params is required"},
		{[]string{"replay", "--params", params, "--out", out, filepath.Join(sim, "ood.mcap")}, "no model"},
		{[]string{"node", "--params", params, "--model", model, "--transport", "ros2"}, "nodes/ros2"},
		{[]string{"node", "--params", params, "--model", model}, "--input LOG or --sim-pendulum"},
	} {
		if _, _, err := runCLI(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
	// --check loads the mechanics model's files as the node does: those
	// of anymal.yaml and double_pendulum_hw.yaml are under the data.
	dataRoots := map[string][]string{"anymal.yaml": {"anymal_sim"}, "double_pendulum_hw.yaml": {}}
	files, _ := filepath.Glob(filepath.Join(fixtures.Root(), "params", "*.yaml"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(raw), "\nnode:") {
			continue
		}
		args := []string{"node", "--check", "--params", f}
		if rel, ok := dataRoots[filepath.Base(f)]; ok {
			args = append(args, "--data", fixtures.Path(t, rel...))
		}
		if out, _, err := runCLI(t, args...); err != nil || !strings.Contains(out, ": OK") {
			t.Errorf("node --check %s: %v\n%s", f, err, out)
		}
	}
}
