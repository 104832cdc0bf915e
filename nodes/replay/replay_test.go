package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
	"github.com/calisym/calisym/predictor"
)

// replayTo replays log through the model into out (uncompressed).
func replayTo(t *testing.T, params *node.Params, model *predictor.Model, log, out string) *replay.Result {
	t.Helper()
	r, err := logio.Open(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := logio.CreateROS2(out, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), r, replay.Options{Params: params, Model: model, ModelSHA256: "abc", Out: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return res
}

// decoded is what the Go side reads back from the replay file.
type decoded struct {
	preds  []msgs.PredictedTrajectory
	joints map[int64]msgs.JointState // by stamp
	torque map[int64][]float64       // by log time
	diags  []msgs.DiagnosticArray
	topics map[string]string
}

func readBack(t *testing.T, path string) decoded {
	t.Helper()
	r, err := logio.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := decoded{joints: map[int64]msgs.JointState{}, torque: map[int64][]float64{}, topics: map[string]string{}}
	for _, ch := range r.Channels() {
		d.topics[ch.Topic] = ch.Type
	}
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Channel.Topic {
		case "/calisym/prediction":
			var p msgs.PredictedTrajectory
			if err := msgs.Unmarshal(m.Data, &p); err != nil {
				t.Fatal(err)
			}
			d.preds = append(d.preds, p)
		case "/joint_states":
			var js msgs.JointState
			if err := msgs.Unmarshal(m.Data, &js); err != nil {
				t.Fatal(err)
			}
			d.joints[js.Header.Stamp.Nanos()] = js
		case "/torque_command":
			var a msgs.Float64MultiArray
			if err := msgs.Unmarshal(m.Data, &a); err != nil {
				t.Fatal(err)
			}
			d.torque[int64(m.LogTime)] = a.Data
		case "/diagnostics":
			var a msgs.DiagnosticArray
			if err := msgs.Unmarshal(m.Data, &a); err != nil {
				t.Fatal(err)
			}
			d.diags = append(d.diags, a)
		}
	}
	return d
}

// pendulumOffline rolls a pendulum-layout model out offline, from the
// state (q, p = M(q)q̇) of a joint state with its torques held, to compare
// with the node's predictions.
type pendulumOffline struct {
	roller    *predictor.Roller
	pend      mechanics.PendulumParams
	h         int
	xs, ports []float64
}

func newPendulumOffline(plan *predictor.Plan, pend mechanics.PendulumParams, horizon int) *pendulumOffline {
	return &pendulumOffline{roller: plan.NewRoller(), pend: pend, h: horizon, xs: make([]float64, horizon*4), ports: make([]float64, horizon*2)}
}

// gap returns the largest difference, relative to 1 + |x|, between the
// prediction p and the offline rollout from (q, q̇ = v) under u held.
func (o *pendulumOffline) gap(t *testing.T, p *msgs.PredictedTrajectory, q, v, u [2]float64) float64 {
	t.Helper()
	mom := o.pend.Momentum(q, v)
	for k := range o.h {
		copy(o.ports[2*k:], u[:])
	}
	if err := o.roller.Rollout([]float64{q[0], q[1], mom[0], mom[1]}, o.ports, o.h, o.xs); err != nil {
		t.Fatal(err)
	}
	var worst float64
	for k := range o.h {
		for j := range 2 {
			worst = math.Max(worst, math.Abs(p.QAt(k, j)-o.xs[4*k+j])/(1+math.Abs(o.xs[4*k+j])))
			worst = math.Max(worst, math.Abs(p.PAt(k, j)-o.xs[4*k+2+j])/(1+math.Abs(o.xs[4*k+2+j])))
		}
	}
	return worst
}

// TestReplayPendulum replays a simulated pendulum log through a trained
// model and checks that every prediction equals an offline rollout from the
// same state, that Foxglove's @mcap/core reads the file and decodes the same
// values, and that the replay is deterministic.
func TestReplayPendulum(t *testing.T) {
	dir := t.TempDir()
	modelPath := livetest.TrainPendulum(t, dir)
	model, err := predictor.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	params, err := node.LoadParams(livetest.PendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	trs := livetest.PendulumTrajectories(t, 2, 150)
	log := filepath.Join(dir, "sim.mcap")
	livetest.PendulumLog(t, log, trs)

	out := filepath.Join(dir, "replay.mcap")
	res := replayTo(t, params, model, log, out)
	want := 0
	for _, tr := range trs {
		want += tr.Len()
	}
	if res.Messages != 2*want || res.Stats.Predictions != uint64(want) {
		t.Fatalf("replay handled %d messages and made %d predictions, want %d and %d (stats %+v)", res.Messages, res.Stats.Predictions, 2*want, want, res.Stats)
	}
	d := readBack(t, out)
	for topic, typ := range map[string]string{"/joint_states": "sensor_msgs/msg/JointState", "/torque_command": "std_msgs/msg/Float64MultiArray",
		"/calisym/prediction": "calisym/msg/PredictedTrajectory", "/calisym/predicted_joint_states": "sensor_msgs/msg/JointState",
		"/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"} {
		if d.topics[topic] != typ {
			t.Errorf("topic %s has type %q, want %s", topic, d.topics[topic], typ)
		}
	}
	if len(d.preds) != want {
		t.Fatalf("%d predictions in the file, want %d", len(d.preds), want)
	}

	// Offline: x0 from the logged joint state through the paper's
	// pendulum, held torque, the same model.
	pend := mechanics.PaperPendulum()
	plan, err := model.Compile()
	if err != nil {
		t.Fatal(err)
	}
	off := newPendulumOffline(plan, pend, params.Node.Horizon)
	H := params.Node.Horizon
	var worst float64
	for i, p := range d.preds {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		stamp := p.Header.Stamp.Nanos()
		js, ok := d.joints[stamp]
		if !ok {
			t.Fatalf("prediction %d: no joint state stamped %d", i, stamp)
		}
		u := d.torque[stamp]
		worst = math.Max(worst, off.gap(t, &p, [2]float64{js.Position[0], js.Position[1]}, [2]float64{js.Velocity[0], js.Velocity[1]}, [2]float64{u[0], u[1]}))
		if p.Dt != 0.01 || p.Horizon != uint32(H) || p.ModelSHA256 != "abc" || p.CoordinateNames[1] != "q2" || p.PortNames[0] != "u1" || p.Ports[2*(H-1)+1] != u[1] {
			t.Fatalf("prediction %d: fields %+v", i, p)
		}
	}
	if worst > 1e-9 {
		t.Errorf("predictions differ from the offline rollout by %.3g (relative)", worst)
	}
	if len(d.diags) == 0 || d.diags[0].Status[0].Name != node.StatusPrediction {
		t.Errorf("diagnostics %+v", d.diags)
	}

	// Deterministic: the same replay again gives the same bytes.
	if err := os.Mkdir(filepath.Join(dir, "again"), 0o755); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "again", "replay.mcap")
	replayTo(t, params, model, log, out2)
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(out2)
	if !bytes.Equal(a, b) {
		t.Errorf("two replays of the same log differ (%d and %d bytes)", len(a), len(b))
	}

	// Foxglove's own reader decodes the same predictions.
	raw := nodetest.Run(t, 2*time.Minute, "read_replay.mjs", out, "/calisym/prediction")
	var js struct {
		Profile      string `json:"profile"`
		MessageCount string `json:"messageCount"`
		Channels     []struct {
			Topic, SchemaName, MessageEncoding, SchemaEncoding string
		} `json:"channels"`
		Messages []struct {
			Topic   string          `json:"topic"`
			LogTime string          `json:"logTime"`
			Value   json.RawMessage `json:"value"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("read_replay.mjs output: %v", err)
	}
	if js.Profile != "ros2" || len(js.Messages) != len(d.preds) {
		t.Fatalf("@mcap/core: profile %q, %d predictions, want ros2 and %d", js.Profile, len(js.Messages), len(d.preds))
	}
	if n, _ := strconv.Atoi(js.MessageCount); n < 3*want {
		t.Errorf("statistics message count %s", js.MessageCount)
	}
	for _, c := range js.Channels {
		if c.MessageEncoding != "cdr" || c.SchemaEncoding != "ros2msg" {
			t.Errorf("channel %+v", c)
		}
	}
	for i, m := range js.Messages {
		diff, err := livetest.DiffPrediction(m.Value, &d.preds[i])
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Fatalf("message %d: %s", i, diff)
		}
	}
}

// TestReplayTimerAtMessageTime replays the pendulum log, whose joint state
// and torque command of each sample share one log time, with a 100 Hz
// timer trigger in phase with the samples. A message counts as received
// at its log time, so the tick at t runs after both messages of t: every
// sample gets one prediction, published at t, stamped t and holding the
// torque logged at t (a tick before the messages would start from the
// previous sample; one between them would pair the state of t with the
// torque of t − 10 ms).
func TestReplayTimerAtMessageTime(t *testing.T) {
	// Random parameters: the test is about when the node predicts, not
	// about what.
	model := livetest.PendulumModel(t)
	params, err := node.LoadParams(livetest.PendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	params.Node.Trigger = node.TriggerConfig{Kind: node.TriggerTimer, Rate: 100, Topic: "/joint_states"}
	dir := t.TempDir()
	trs := livetest.PendulumTrajectories(t, 1, 120)
	log := filepath.Join(dir, "sim.mcap")
	livetest.PendulumLog(t, log, trs)
	out := filepath.Join(dir, "replay.mcap")
	res := replayTo(t, params, model, log, out)
	want := trs[0].Len()
	if res.Messages != 2*want || res.Stats.Predictions != uint64(want) || res.Stats.Suppressed != 0 {
		t.Fatalf("%d messages, stats %+v; want %d predictions and none suppressed", res.Messages, res.Stats, want)
	}
	r, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	torque := map[int64][]float64{}
	n := 0
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Channel.Topic {
		case "/torque_command":
			var a msgs.Float64MultiArray
			if err := msgs.Unmarshal(m.Data, &a); err != nil {
				t.Fatal(err)
			}
			torque[int64(m.LogTime)] = a.Data
		case "/calisym/prediction":
			var p msgs.PredictedTrajectory
			if err := msgs.Unmarshal(m.Data, &p); err != nil {
				t.Fatal(err)
			}
			stamp := p.Header.Stamp.Nanos()
			u, ok := torque[stamp]
			if stamp != int64(m.LogTime) || !ok || p.Ports[0] != u[0] || p.Ports[1] != u[1] {
				t.Fatalf("prediction %d published at %d, stamped %d, ports %v; torque logged at its stamp %v", n, m.LogTime, stamp, p.Ports[:2], u)
			}
			n++
		}
	}
	if n != want {
		t.Errorf("%d predictions in the file, want %d", n, want)
	}
}
