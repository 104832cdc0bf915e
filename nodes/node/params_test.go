package node_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

// TestRepositoryParams loads every params file with a node section and
// checks it against the topics it names: listed with their types, the
// types' definitions found, every message path compiled against its
// topic's definition.
func TestRepositoryParams(t *testing.T) {
	want := map[string][]string{
		"pendulum_sim.yaml":       {"/joint_states", "/torque_command"},
		"px4_quadrotor.yaml":      {"/fmu/out/vehicle_odometry", "/fmu/out/actuator_motors"},
		"anymal.yaml":             {"/state_estimator/anymal_state"},
		"crazyflie.yaml":          {"/cf231/odom", "/cf231/motors"},
		"double_pendulum_hw.yaml": {"/joint_states"},
		"ur10e.yaml":              {"/joint_states"},
	}
	dir := filepath.Join(fixtures.Root(), "params")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		name := filepath.Base(f)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "\nnode:") {
			if _, ok := want[name]; ok {
				t.Errorf("%s has no node section", name)
			}
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) {
			p, err := node.LoadParams(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CheckTopics(); err != nil {
				t.Fatal(err)
			}
			var topics []string
			for _, tc := range p.Node.Topics {
				topics = append(topics, tc.Topic)
			}
			if w, ok := want[name]; ok && !slices.Equal(topics, w) {
				t.Errorf("topics %v, want %v", topics, w)
			}
		})
	}
	if seen < len(want) {
		t.Errorf("%d params files with a node section, want at least %d", seen, len(want))
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name, edit, want string
	}{
		{"unlisted topic", "    - topic: /torque_command\n      type: std_msgs/msg/Float64MultiArray", "reads topic /torque_command, which is not listed"},
		{"unknown key", "  horizon: 100", "  horizn: 100"},
		{"bad trigger", "    kind: message\n", "\"sometimes\" is not"},
		{"trigger not an input", "    topic: /torque_command\n  ports", "is not an input topic"},
		{"bad type", "type: sensor_msgs/msg/JointState", "is not a message type"},
		{"mapping typo", "        velocity: '/joint_states.velocity[name==\"shoulder\"]'", "velocty"},
		{"channel key typo", "      - /torque_command.data[0]", "scael"},
		{"no rate", "  resample:\n    rate: 100", "convert.resample.rate"},
		{"bad force estimate", "\n  horizon: 100", "node.force_estimate: predictor: force estimate decay 1.5"},
		{"stale periods below one", "\n  horizon: 100", "node.stale_periods: must be at least 1 (default 3), got 0.5"},
		{"history tolerance of half a step", "\n  horizon: 100", "node.history_tolerance: must be below dt/2 = 0.005 s (convert.resample.rate 100 Hz; 0: automatic), got 0.005"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			var repl string
			switch c.name {
			case "unlisted topic":
				repl = ""
			case "unknown key":
				repl, c.want = c.want, "horizn"
			case "bad trigger":
				repl = "    kind: sometimes\n"
			case "trigger not an input":
				repl = "    topic: /imu\n  ports"
			case "bad type":
				repl = "type: JointState"
			case "mapping typo":
				repl = "        velocty: '/joint_states.velocity[name==\"shoulder\"]'"
			case "channel key typo":
				repl = "      - {name: '/torque_command.data[0]', scael: 2}"
			case "no rate":
				repl = "  resample:\n    work_rate: 100"
			case "bad force estimate":
				repl = "\n  force_estimate: {window: 10, decay: 1.5}\n  horizon: 100"
			case "stale periods below one":
				repl = "\n  stale_periods: 0.5\n  horizon: 100"
			case "history tolerance of half a step":
				repl = "\n  history_tolerance: 0.005\n  horizon: 100"
			}
			if !strings.Contains(text, c.edit) {
				t.Fatalf("fixture lacks %q", c.edit)
			}
			path := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(path, []byte(strings.Replace(text, c.edit, repl, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = node.LoadParams(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestForceEstimateParams: an empty force_estimate turns the offset-free
// estimate on with its defaults; without the key it is off.
func TestForceEstimateParams(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		add  string
		want *predictor.ForceEstimate
	}{
		{"", nil},
		{"  force_estimate: {}\n", &predictor.ForceEstimate{Window: 10, Decay: 0.9}},
		{"  force_estimate: {window: 4, decay: 1}\n", &predictor.ForceEstimate{Window: 4, Decay: 1}},
	} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		text := strings.Replace(string(raw), "\n  horizon: 100", "\n"+c.add+"  horizon: 100", 1)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := node.LoadParams(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Node.ForceEstimate; (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%q: force estimate %+v, want %+v", c.add, got, c.want)
		}
	}
}
