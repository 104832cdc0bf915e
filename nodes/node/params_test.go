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

// TestExplicitZeroRefused: an explicit 0 at a key whose unset value 0
// stands for a default is refused naming the key (it used to become the
// default: a wrench decay of 0 held over the horizon, every: 0 predicted
// on each trigger, a channel's scale 0 read as 1); the same keys with a
// valid value load.
func TestExplicitZeroRefused(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "\n  diagnostics_period: 1.0"
	if !strings.Contains(string(raw), anchor) {
		t.Fatalf("fixture lacks %q", anchor)
	}
	load := func(t *testing.T, text string) error {
		t.Helper()
		path := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := node.LoadParams(path)
		return err
	}
	for _, c := range []struct {
		name, zero, valid, want string
	}{
		{"horizon", "\n  horizon: 0", "\n  horizon: 50", "node.horizon: 0 given explicitly"},
		{"max_age", "\n  max_age: 0.0", "\n  max_age: 0.2", "node.max_age: 0.0 given explicitly"},
		{"stale_periods", "\n  stale_periods: 0", "\n  stale_periods: 2", "node.stale_periods"},
		{"preview_step", "\n  preview_step: 0", "\n  preview_step: 10", "node.preview_step"},
		{"diagnostics_period", "\n  diagnostics_period: 0", "\n  diagnostics_period: 2", "node.diagnostics_period"},
		{"queue", "\n  queue: 0", "\n  queue: 8", "node.queue"},
		{"trigger.every", "\n  trigger: {kind: message, topic: /torque_command, every: 0}", "\n  trigger: {kind: message, topic: /torque_command, every: 2}", "node.trigger.every: 0 given explicitly"},
		{"ports.max_age", "\n  ports: {forecast: hold, max_age: 0}", "\n  ports: {forecast: hold, max_age: 0.3}", "node.ports.max_age"},
		{"topics max_age", "\n  topics:\n    - {topic: /joint_states, type: sensor_msgs/msg/JointState}\n    - {topic: /torque_command, type: std_msgs/msg/Float64MultiArray, max_age: 0}",
			"\n  topics:\n    - {topic: /joint_states, type: sensor_msgs/msg/JointState}\n    - {topic: /torque_command, type: std_msgs/msg/Float64MultiArray, max_age: 0.3}", "node.topics[1].max_age"},
		{"force_estimate.window", "\n  force_estimate: {window: 0}", "\n  force_estimate: {window: 5}", "node.force_estimate.window"},
		{"force_estimate.decay", "\n  force_estimate: {decay: 0}", "\n  force_estimate: {decay: 0.5}", "node.force_estimate.decay"},
		{"wrench_estimate.window", "\n  wrench_estimate: {window: 0}", "\n  wrench_estimate: {window: 100}", "node.wrench_estimate.window"},
		{"wrench_estimate.gate", "\n  wrench_estimate: {gate: 0}", "\n  wrench_estimate: {gate: 3}", "node.wrench_estimate.gate"},
		{"wrench_estimate.decay", "\n  wrench_estimate: {decay: -0.0}", "\n  wrench_estimate: {decay: 0.9}", "node.wrench_estimate.decay: -0.0 given explicitly"},
		{"wrench_estimate.blocks", "\n  wrench_estimate: {blocks: 0}", "\n  wrench_estimate: {blocks: 4}", "node.wrench_estimate.blocks"},
		{"channel scale", "\n  channels: [{from: '/torque_command.data[0]', name: '/torque_command.data[0]', scale: 0}]",
			"\n  channels: [{from: '/torque_command.data[0]', name: '/torque_command.data[0]', scale: 2}]", "scale 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := string(raw)
			if strings.Contains(c.zero, "topics:") {
				// replaces the fixture's topics
				i, j := strings.Index(text, "\n  topics:"), strings.Index(text, "\n  # The controller")
				text = text[:i] + text[j:]
			}
			if strings.Contains(c.zero, "trigger:") {
				text = strings.Replace(text, "\n  trigger:\n    kind: message\n    topic: /torque_command", "", 1)
			}
			if strings.Contains(c.zero, "ports:") {
				text = strings.Replace(text, "\n  ports:\n    forecast: hold", "", 1)
			}
			if strings.Contains(c.zero, "horizon:") {
				text = strings.Replace(text, "\n  horizon: 100          # 1 s at 100 Hz", "", 1)
			}
			if strings.Contains(c.zero, "max_age: 0.0") || strings.Contains(c.valid, "max_age: 0.2") {
				text = strings.Replace(text, "\n  max_age: 0.05 ", "\n  #", 1)
			}
			edit := func(v string) string { return strings.Replace(text, anchor, anchor+v, 1) }
			if strings.Contains(c.zero, "diagnostics_period:") {
				edit = func(v string) string { return strings.Replace(text, anchor, v, 1) }
			}
			err := load(t, edit(c.zero))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "p.yaml") {
				t.Errorf("explicit 0: error %v, want one naming p.yaml and %q", err, c.want)
			}
			if err := load(t, edit(c.valid)); err != nil {
				t.Errorf("valid value: %v", err)
			}
		})
	}
}
