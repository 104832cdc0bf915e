package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
)

// runCLI runs the command line in process and returns its stdout and
// stderr.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestSimMCAPConvertTopics runs `sim --mcap`, `topics` on a written log and
// `convert` with params/pendulum_sim.yaml, and checks that the converted
// dataset holds the simulator's windows.
func TestSimMCAPConvertTopics(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if out, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil || !strings.Contains(out, "id.mcap") {
		t.Fatalf("sim: %v\n%s", err, out)
	}
	for _, split := range []string{"train", "id", "ood"} {
		if st, err := os.Stat(filepath.Join(sim, split+".mcap")); err != nil || st.Size() == 0 {
			t.Fatalf("%s.mcap: %v", split, err)
		}
	}

	out, _, err := runCLI(t, "topics", filepath.Join(sim, "id.mcap"))
	if err != nil {
		t.Fatal(err)
	}
	// Smoke: 2 trajectories of 301 samples.
	for _, want := range []string{"1204 messages on 2 topics", "/joint_states    sensor_msgs/msg/JointState      cdr       602", "/torque_command  std_msgs/msg/Float64MultiArray  cdr       602"} {
		if !strings.Contains(out, want) {
			t.Errorf("topics output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, "topics", "--json", filepath.Join(sim, "id.mcap"))
	var topics []topicJSON
	if err != nil || json.Unmarshal([]byte(out), &topics) != nil || len(topics) != 2 || topics[0].Count != 602 || topics[0].First != "2024-01-01T00:00:00.000000000Z" {
		t.Errorf("topics --json: %v\n%s", err, out)
	}

	conv := filepath.Join(dir, "conv")
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	out, _, err = runCLI(t, "convert", "--params", params, "--out", conv, filepath.Join(sim, "id.mcap"))
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, out)
	}
	// 2 trajectories of 3 s from 0 and 4 s: 701 samples, 61 windows, 21
	// in each trajectory, the 19 that reach into the pause rejected.
	for _, want := range []string{"42 of 61 windows kept (rejected: gap 19)", "split id, per channel:", "p_q1", "u2", "wrote " + conv} {
		if !strings.Contains(out, want) {
			t.Errorf("convert output lacks %q:\n%s", want, out)
		}
	}
	got, err := dataset.Load(filepath.Join(conv, "id"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := dataset.Load(filepath.Join(sim, "id"))
	if err != nil {
		t.Fatal(err)
	}
	gw, ww := got.Windows(), want.Windows()
	if len(gw) != len(ww) {
		t.Fatalf("%d windows, simulator %d", len(gw), len(ww))
	}
	for i := range gw {
		ge, we := got.Episodes[gw[i].Episode], want.Episodes[ww[i].Episode]
		for k := range 4 * ww[i].Len {
			if d := ge.X[4*gw[i].Start+k] - we.X[4*ww[i].Start+k]; d > 1e-12 || d < -1e-12 {
				t.Fatalf("window %d value %d differs by %g", i, k, d)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(conv, "report.json")); err != nil {
		t.Error(err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "--out", conv}, "--params is required"},
		{[]string{"convert", "--params", params}, "--out is required"},
		{[]string{"convert", "--params", params, "--out", conv, filepath.Join(dir, "nope.mcap")}, "matches no file"},
		{[]string{"convert", "--params", params, "--out", conv, "--stamp", "wall", filepath.Join(sim, "id.mcap")}, "clock.stamp"},
		{[]string{"topics", filepath.Join(dir, "nope.mcap")}, "no such file"},
		{[]string{"topics", params}, "unknown log format"},
	} {
		if _, _, err := runCLI(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

// TestTopicsBagFixture lists the real PR2 bag's topics.
func TestTopicsBagFixture(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	out, _, err := runCLI(t, "topics", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/joint_states", "sensor_msgs/JointState", "ros1", "1325", "/base_odometry/odom", "nav_msgs/Odometry", "1229"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
