package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/statemap"
)

// servedNode is `calisym node` running in process until stop.
type servedNode struct {
	url            string
	stdout, stderr *lockedBuffer
	done           chan error
	stop           context.CancelFunc
}

// startNodeCmd runs `calisym node args… --addr 127.0.0.1:0` and waits
// until it serves Foxglove WebSocket.
func startNodeCmd(t *testing.T, args ...string) *servedNode {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &servedNode{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan error, 1), stop: stop}
	root := newRootCmd()
	root.SetOut(s.stdout)
	root.SetErr(s.stderr)
	root.SetArgs(append(append([]string{"node"}, args...), "--addr", "127.0.0.1:0"))
	go func() { s.done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() { s.finish(t) })
	addr := regexp.MustCompile(`serving Foxglove WebSocket on (ws://127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := addr.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("node exited before serving: %v\n%s", err, s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("node did not start serving:\n%s", s.stderr.String())
		}
	}
}

// finish stops the node (once) and returns its stdout.
func (s *servedNode) finish(t *testing.T) string {
	t.Helper()
	s.stop()
	select {
	case err, ok := <-s.done:
		if ok && err != nil {
			t.Errorf("node: %v\n%s", err, s.stderr.String())
		}
		if ok {
			close(s.done)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("node did not stop within 20 s of its context ending")
	}
	return s.stdout.String()
}

// nodeSummary parses the node's closing line.
func nodeSummary(t *testing.T, out string) (predictions, suppressed, diagnostics int) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(\d+) predictions, (\d+) suppressed, (\d+) diagnostics`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary in the node's output:\n%s", out)
	}
	p, _ := strconv.Atoi(m[1])
	s, _ := strconv.Atoi(m[2])
	d, _ := strconv.Atoi(m[3])
	return p, s, d
}

// foxgloveClientJSON is what test/js/foxglove_client.mjs prints.
type foxgloveClientJSON struct {
	Channel struct {
		Topic          string `json:"topic"`
		Encoding       string `json:"encoding"`
		SchemaName     string `json:"schemaName"`
		SchemaEncoding string `json:"schemaEncoding"`
	} `json:"channel"`
	Messages []struct {
		Timestamp string         `json:"timestamp"`
		Message   map[string]any `json:"message"`
	} `json:"messages"`
}

// TestNodePlaysROS1Bag serves `calisym node --input BAG` on the real PR2
// ROS 1 bag (two arm joints as a double pendulum, as TestReplayROS1Bag
// replays it) and reads it with Foxglove's own client: the echoed
// /joint_states are advertised as what they carry, ROS 1 (ros1, ros1msg),
// and decode with Foxglove's ROS 1 reader into the bag's joints with
// fresh stamps; the predictions are CDR; and the node predicts (it used to
// decode the bag's bytes as CDR and reject every message, advertising
// them to Foxglove as cdr).
func TestNodePlaysROS1Bag(t *testing.T) {
	nodetest.Require(t)
	dir := t.TempDir()
	model := filepath.Join(dir, "pendulum.safetensors")
	params := filepath.Join(fixtures.Root(), "nodes", "replay", "testdata", "pr2_arm.yaml")
	p, err := node.LoadParams(params)
	if err != nil {
		t.Fatal(err)
	}
	// the pendulum's layout, its ports the PR2 arm's efforts
	m := livetest.PendulumModel(t)
	m.Meta.Provenance = map[string]string{statemap.PortMapKey: p.Spec.PortMap()}
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	bag := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	start := time.Now()
	s := startNodeCmd(t, "--params", params, "--model", model, "--input", bag, "--speed", "2", "--loop")

	read := func(topic string, n int) foxgloveClientJSON {
		raw := nodetest.Run(t, time.Minute, "foxglove_client.mjs", s.url, topic, strconv.Itoa(n), "30000")
		var out foxgloveClientJSON
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("foxglove_client.mjs %s: %v\n%s", topic, err, raw)
		}
		if len(out.Messages) != n {
			t.Fatalf("%s: %d messages, want %d", topic, len(out.Messages), n)
		}
		return out
	}
	js := read("/joint_states", 5)
	if c := js.Channel; c.Encoding != "ros1" || c.SchemaEncoding != "ros1msg" || c.SchemaName != "sensor_msgs/JointState" {
		t.Errorf("/joint_states advertised as %+v, want ros1 (ros1msg) sensor_msgs/JointState", c)
	}
	for _, m := range js.Messages {
		names, _ := m.Message["name"].([]any)
		header, _ := m.Message["header"].(map[string]any)
		stamp, _ := header["stamp"].(map[string]any)
		sec, _ := stamp["sec"].(float64)
		if len(names) != 45 || names[0] == "" || time.Unix(int64(sec), 0).Before(start.Add(-time.Second)) {
			t.Fatalf("decoded /joint_states: %d names, stamp %v s (the node started at %v): %v", len(names), sec, start.Unix(), m.Message)
		}
	}
	pred := read("/calisym/prediction", 3)
	if c := pred.Channel; c.Encoding != "cdr" || c.SchemaEncoding != "ros2msg" {
		t.Errorf("/calisym/prediction advertised as %+v", c)
	}
	for _, m := range pred.Messages {
		if names, _ := m.Message["coordinate_names"].([]any); len(names) != 2 {
			t.Fatalf("prediction %v", m.Message)
		}
	}
	out := s.finish(t)
	if p, _, _ := nodeSummary(t, out); p < 3 {
		t.Errorf("%d predictions:\n%s", p, out)
	}
	if strings.Contains(out, "undecodable") && !strings.Contains(out, " 0 undecodable") {
		t.Errorf("messages rejected as undecodable:\n%s", out)
	}
}

// TestNodeLoopFasterThanRealTime plays the simulated pendulum's log at 8×
// real time, looping: every pass is accepted (no message out of order;
// the stamps follow the playback clock, not the log's at 1×), so the node
// predicts from each pass, and the diagnostics stay at most
// node.DiagnosticsBurst a period. The stamps used to run ahead of the
// clock and go back at every pass: later passes were dropped while the
// node predicted on from a frozen state (the negative ages never stale),
// and the out-of-order diagnostics went out with every message.
func TestNodeLoopFasterThanRealTime(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "pendulum.safetensors")
	if err := livetest.PendulumModel(t).Save(model); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "pendulum.mcap")
	// 1 trajectory of 2 s: 201 joint states and commands a pass, 0.25 s at 8×.
	livetest.PendulumLog(t, log, livetest.PendulumTrajectories(t, 1, 200))
	params := livetest.PendulumParams()
	start := time.Now()
	s := startNodeCmd(t, "--params", params, "--model", model, "--input", log, "--speed", "8", "--loop")
	time.Sleep(2 * time.Second)
	out := s.finish(t)
	elapsed := time.Since(start).Seconds()
	p, _, d := nodeSummary(t, out)
	if p <= 2*201 {
		t.Errorf("%d predictions in %.1f s of 0.25 s passes: later passes were not accepted\n%s", p, elapsed, out)
	}
	if m := regexp.MustCompile(`(?m)^  /joint_states: .* ([1-9]\d*) out of order`).FindStringSubmatch(out); m != nil {
		t.Errorf("%s joint states out of order:\n%s", m[1], out)
	}
	if limit := 10*int(elapsed+1) + 2; d > limit {
		t.Errorf("%d diagnostics in %.1f s, want at most %d (node.DiagnosticsBurst a second)\n%s", d, elapsed, limit, out)
	}
}
