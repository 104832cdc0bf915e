package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calisym/calisym/statemap"

	"github.com/gorilla/websocket"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/foxglove"
	"github.com/calisym/calisym/nodes/node"
)

const anymalStateTopic = "/state_estimator/anymal_state"

// anymalFixture is what the ANYmal command tests share: the anymal_sim
// data root, params/anymal.yaml, a quadruped-preset model file and a
// 3-second slice of an OOD log.
type anymalFixture struct {
	root, params, model, log string
	urdfJoints               []string
}

// newAnymalFixture skips the test where anymal_sim is absent (fails it
// when CI=true). The model is livetest.QuadrupedModel with the names of
// params/anymal.yaml: the commands' plumbing does not depend on what the
// model learned.
func newAnymalFixture(t *testing.T) anymalFixture {
	t.Helper()
	urdf := fixtures.Path(t, "anymal_sim", "anymal_d_simple_description", "urdf", "anymal.urdf")
	push := fixtures.Path(t, "anymal_sim", "ood", "push_401.mcap")
	dir := t.TempDir()
	f := anymalFixture{root: filepath.Join(fixtures.DataDir(), "anymal_sim"), params: filepath.Join(fixtures.Root(), "params", "anymal.yaml"),
		model: filepath.Join(dir, "anymal.safetensors"), log: filepath.Join(dir, "push_401_20s.mcap")}
	u, err := mechanics.LoadURDF(urdf)
	if err != nil {
		t.Fatal(err)
	}
	f.urdfJoints = u.JointNames()

	p, err := node.LoadParams(f.params)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(f.root))
	if err != nil {
		t.Fatal(err)
	}
	m := livetest.QuadrupedModel(t, "anymal-cli-test", smp.Coordinates(), smp.Ports())
	if err := m.Save(f.model); err != nil {
		t.Fatal(err)
	}

	// 300 messages (3 s) from 20 s into ood/push_401, a ROS 2 MCAP as the
	// simulator wrote it.
	r, err := logio.Open(push, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := logio.CreateROS2(f.log, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var first uint64
	n := 0
	for n < 300 {
		m, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if first == 0 {
			first = m.LogTime
			for _, ch := range r.Channels() {
				if err := w.AddTopic(ch.Topic, ch.Type, string(ch.Schema), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if m.LogTime < first+20e9 {
			continue
		}
		if err := w.Write(m.Channel.Topic, m.LogTime, m.LogTime, m.Data); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReplayAnymalCommand runs `calisym replay --params params/anymal.yaml`
// on an OOD slice of the simulated ANYmal as docs/benchmarks.md writes it: with
// --data, with $CALISYM_DATA instead (the same bytes), and with neither,
// where the URDF cannot be found and the error must say to give --data.
func TestReplayAnymalCommand(t *testing.T) {
	f := newAnymalFixture(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "pred.mcap")
	stdout, _, err := runCLI(t, "replay", "--params", f.params, "--model", f.model, "--data", f.root, "--every", "1", f.log, "--out", out)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stdout)
	}
	// every message predicts but the first 10, while the port history
	// fills (the node predicts once it holds its 10 samples)
	if !strings.Contains(stdout, "300 input messages, 290 predictions, 10 suppressed") || !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("replay output:\n%s", stdout)
	}
	topics, _, err := runCLI(t, "topics", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`/calisym/predicted_joint_states\s+sensor_msgs/msg/JointState\s+cdr\s+290\b`,
		`/calisym/predicted_path\s+nav_msgs/msg/Path\s+cdr\s+290\b`,
		`/calisym/prediction\s+calisym/msg/PredictedTrajectory\s+cdr\s+290\b`,
		`/state_estimator/anymal_state\s+anymal_msgs/msg/AnymalState\s+cdr\s+300\b`,
	} {
		if !regexp.MustCompile(want).MatchString(topics) {
			t.Errorf("topics of the replay: no line matching %s\n%s", want, topics)
		}
	}
	// What Foxglove's 3D panel needs: joint states named as the URDF's
	// joints, and the path in odom.
	r, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := map[string]int{}
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Channel.Topic {
		case "/calisym/predicted_joint_states":
			var js msgs.JointState
			if err := msgs.Unmarshal(m.Data, &js); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(js.Name, f.urdfJoints) || len(js.Position) != len(js.Name) {
				t.Fatalf("predicted joint states named %v with %d positions, want the URDF's joints %v", js.Name, len(js.Position), f.urdfJoints)
			}
		case "/calisym/predicted_path":
			var p msgs.Path
			if err := msgs.Unmarshal(m.Data, &p); err != nil {
				t.Fatal(err)
			}
			if p.Header.FrameID != "odom" || len(p.Poses) != 101 || p.Poses[100].Header.FrameID != "odom" {
				t.Fatalf("predicted path in %q with %d poses", p.Header.FrameID, len(p.Poses))
			}
		}
		seen[m.Channel.Topic]++
	}
	if seen["/calisym/predicted_joint_states"] != 290 || seen["/calisym/predicted_path"] != 290 {
		t.Errorf("messages read back: %v", seen)
	}

	// $CALISYM_DATA instead of --data: the same file (written under the
	// same name, which the file's rosbag2 metadata records).
	t.Setenv(fixtures.EnvVar, f.root)
	if err := os.Mkdir(filepath.Join(dir, "env"), 0o755); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "env", "pred.mcap")
	if stdout, _, err := runCLI(t, "replay", "--params", f.params, "--model", f.model, "--every", "1", f.log, "--out", out2); err != nil {
		t.Fatalf("replay with $CALISYM_DATA: %v\n%s", err, stdout)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(out2)
	if !bytes.Equal(a, b) {
		t.Errorf("replay with --data and with $CALISYM_DATA wrote different files (%d and %d bytes)", len(a), len(b))
	}

	// Neither: the data root is params/, which has no URDF.
	t.Setenv(fixtures.EnvVar, "")
	for _, args := range [][]string{
		{"replay", "--params", f.params, "--model", f.model, f.log, "--out", filepath.Join(dir, "none.mcap")},
		{"node", "--params", f.params, "--model", f.model, "--transport", "foxglove", "--input", f.log, "--addr", "127.0.0.1:0"},
	} {
		_, _, err := runCLI(t, args...)
		if err == nil {
			t.Fatalf("%s without --data or $CALISYM_DATA succeeded", args[0])
		}
		for _, want := range []string{"--data", "anymal_d_simple_description/urdf/anymal.urdf", "neither --data nor $CALISYM_DATA"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s without a data root: %v; want it to mention %q", args[0], err, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none.mcap")); err == nil {
		t.Errorf("the failed replay left an output file")
	}
}

// lockedBuffer is a bytes.Buffer safe for a command writing while the
// test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNodeAnymalFoxglove serves `calisym node --transport foxglove --input
// LOG` with params/anymal.yaml on a loopback port chosen by the system,
// connects as a Foxglove client would (foxglove.websocket.v1), subscribes
// to the outputs and checks what arrives: predictions, joint states named
// as the URDF's joints and the base path in odom. Bounded: 60 s at most.
func TestNodeAnymalFoxglove(t *testing.T) {
	f := newAnymalFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var stdout, stderr lockedBuffer
	root := newRootCmd()
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"node", "--params", f.params, "--model", f.model, "--data", f.root, "--transport", "foxglove",
		"--input", f.log, "--loop", "--addr", "127.0.0.1:0"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(runCtx) }()

	addr := regexp.MustCompile(`serving Foxglove WebSocket on (ws://127\.0\.0\.1:\d+)`)
	var url string
	deadline := time.Now().Add(60 * time.Second)
	for url == "" {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("node exited before serving: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("node did not start serving:\n%s", stderr.String())
		}
	}

	d := websocket.Dialer{Subprotocols: []string{foxglove.Subprotocol}, HandshakeTimeout: 5 * time.Second}
	conn, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(deadline)
	want := map[string]string{"/calisym/prediction": "calisym/msg/PredictedTrajectory", "/calisym/predicted_joint_states": "sensor_msgs/msg/JointState",
		"/calisym/predicted_path": "nav_msgs/msg/Path", anymalStateTopic: "anymal_msgs/msg/AnymalState"}
	subs := map[uint32]string{} // subscription id → topic
	count := map[string]int{}
	for count["/calisym/prediction"] < 20 || count["/calisym/predicted_joint_states"] == 0 || count["/calisym/predicted_path"] == 0 || count[anymalStateTopic] == 0 {
		kind, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("after %v: %v\nnode stderr:\n%s", count, err, stderr.String())
		}
		if kind == websocket.TextMessage {
			var msg struct {
				Op       string `json:"op"`
				Channels []struct {
					ID             uint32 `json:"id"`
					Topic          string `json:"topic"`
					Encoding       string `json:"encoding"`
					SchemaName     string `json:"schemaName"`
					SchemaEncoding string `json:"schemaEncoding"`
				} `json:"channels"`
			}
			if err := json.Unmarshal(data, &msg); err != nil {
				t.Fatal(err)
			}
			if msg.Op != "advertise" {
				continue
			}
			type sub struct {
				ID        uint32 `json:"id"`
				ChannelID uint32 `json:"channelId"`
			}
			var req struct {
				Op            string `json:"op"`
				Subscriptions []sub  `json:"subscriptions"`
			}
			req.Op = "subscribe"
			for _, c := range msg.Channels {
				typ, ok := want[c.Topic]
				if !ok {
					continue
				}
				if c.SchemaName != typ || c.Encoding != "cdr" || c.SchemaEncoding != "ros2msg" {
					t.Errorf("channel %s: %s (%s, %s), want %s (cdr, ros2msg)", c.Topic, c.SchemaName, c.Encoding, c.SchemaEncoding, typ)
				}
				id := uint32(len(subs) + 1)
				subs[id] = c.Topic
				req.Subscriptions = append(req.Subscriptions, sub{id, c.ID})
			}
			if len(req.Subscriptions) > 0 {
				if err := conn.WriteJSON(req); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if len(data) < 13 || data[0] != 0x01 {
			continue // time and other binary messages
		}
		topic := subs[binary.LittleEndian.Uint32(data[1:5])]
		payload := data[13:]
		switch topic {
		case "/calisym/prediction":
			var p msgs.PredictedTrajectory
			if err := msgs.Unmarshal(payload, &p); err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil || p.Horizon != 100 || p.Header.FrameID != "odom" || !slices.Equal(p.CoordinateNames[6:], f.urdfJoints) {
				t.Fatalf("prediction: %v, horizon %d in %q, coordinates %v", err, p.Horizon, p.Header.FrameID, p.CoordinateNames)
			}
		case "/calisym/predicted_joint_states":
			var js msgs.JointState
			if err := msgs.Unmarshal(payload, &js); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(js.Name, f.urdfJoints) || len(js.Position) != len(js.Name) {
				t.Fatalf("joint states named %v with %d positions, want the URDF's joints %v", js.Name, len(js.Position), f.urdfJoints)
			}
		case "/calisym/predicted_path":
			var p msgs.Path
			if err := msgs.Unmarshal(payload, &p); err != nil {
				t.Fatal(err)
			}
			if p.Header.FrameID != "odom" || len(p.Poses) != 101 {
				t.Fatalf("path in %q with %d poses", p.Header.FrameID, len(p.Poses))
			}
		}
		count[topic]++
	}
	conn.Close()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("node did not stop within 20 s of its context ending")
	}
	if out := stdout.String(); !regexp.MustCompile(`^[1-9]\d* predictions, \d+ suppressed`).MatchString(out) {
		t.Errorf("node summary: %q", out)
	}
	if s := stderr.String(); !strings.Contains(s, "predicting 100 steps of 0.01 s from "+anymalStateTopic) {
		t.Errorf("node stderr:\n%s", s)
	}
}
