package node_test

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// TestStaleInputsSuppressPredictions: through the transport, a torque
// command older than max_age stops the predictions and raises a
// diagnostic; a fresh one resumes them.
func TestStaleInputsSuppressPredictions(t *testing.T) {
	pub := &memPub{}
	l := startLive(t, pendulumParams(t), pub)
	st := func() node.Stats { return l.nd.Stats() }

	l.send("/torque_command", t0, torque(0.5, -0.25))
	l.send("/joint_states", t0, jointState(t0, pendulumJoints, [2]float64{0.1, 0.2}, [2]float64{0.3, 0.4}))
	waitFor(t, "first prediction", func() bool { return st().Predictions == 1 })
	l.send("/joint_states", t0+10*ms, jointState(t0+10*ms, pendulumJoints, [2]float64{0.11, 0.2}, [2]float64{0.3, 0.4}))
	waitFor(t, "second prediction", func() bool { return st().Predictions == 2 })

	// 100 ms without a torque command (max_age 50 ms).
	l.send("/joint_states", t0+100*ms, jointState(t0+100*ms, pendulumJoints, [2]float64{0.2, 0.2}, [2]float64{0.3, 0.4}))
	waitFor(t, "suppression", func() bool { return st().Suppressed == 1 })
	if n := st().Predictions; n != 2 {
		t.Fatalf("%d predictions from a stale torque command", n)
	}
	l.waitDiag(t, "stale diagnostic", func() bool {
		a := pub.lastDiagnostics(t)
		return status(t, a, node.StatusPrediction).Level == msgs.DiagnosticWarn
	})
	a := pub.lastDiagnostics(t)
	pred := status(t, a, node.StatusPrediction)
	if !strings.Contains(pred.Message, "/torque_command") || !strings.Contains(pred.Message, "max_age") || value(pred, "suppressed") != "1" {
		t.Errorf("prediction status %+v", pred)
	}
	in := status(t, a, node.StatusInputPrefix+"/torque_command")
	if in.Level != msgs.DiagnosticStale {
		t.Errorf("torque input status %+v, want STALE", in)
	}
	// published once the change held for DiagnosticsSettle, or at once
	// where a change from the predictions before the jump was still
	// pending and went out at the jump's first ticks, with the stale status
	// in it (TestDiagnosticsOncePerChange pins the settling itself)
	if age, _ := strconv.ParseFloat(value(in, "age_s"), 64); age < 0.1-1e-9 || age > 0.1+node.DiagnosticsSettle/1e9+1e-9 {
		t.Errorf("torque age %v, want 0.1 to 0.11", value(in, "age_s"))
	}
	if js := status(t, a, node.StatusInputPrefix+"/joint_states"); js.Level != msgs.DiagnosticOK {
		t.Errorf("joint state status %+v", js)
	}

	l.send("/torque_command", t0+110*ms, torque(0.1, 0.1))
	l.send("/joint_states", t0+110*ms, jointState(t0+110*ms, pendulumJoints, [2]float64{0.2, 0.2}, [2]float64{0.3, 0.4}))
	waitFor(t, "resumed prediction", func() bool { return st().Predictions == 3 })
	l.waitDiag(t, "OK diagnostic", func() bool {
		return status(t, pub.lastDiagnostics(t), node.StatusPrediction).Level == msgs.DiagnosticOK
	})
	ps := pub.predictions(t)
	if got := ps[2].Header.Stamp.Nanos(); got != t0+110*ms {
		t.Errorf("third prediction stamped %d, want the joint state's %d", got, t0+110*ms)
	}
	if ps[2].Ports[0] != 0.1 || ps[0].Ports[2*99] != 0.5 || ps[0].Ports[2*99+1] != -0.25 {
		t.Errorf("held ports %v … %v", ps[0].Ports[:2], ps[2].Ports[:2])
	}
}

// TestRejectedMessages: NaNs, joint names the mapping does not know and
// bytes that do not decode are rejected whole with a diagnostic.
func TestRejectedMessages(t *testing.T) {
	pub := &memPub{}
	l := startLive(t, pendulumParams(t), pub)
	st := func() node.InputStats { return l.nd.Stats().Inputs["/joint_states"] }
	l.send("/torque_command", t0, torque(0, 0))

	cases := []struct {
		name  string
		data  []byte
		count func(node.InputStats) uint64
		want  []string
	}{
		{"NaN", jointState(t0, pendulumJoints, [2]float64{math.NaN(), 0}, [2]float64{0, 0}),
			func(s node.InputStats) uint64 { return s.RejectedNaN }, []string{"NaN", `position[name=="shoulder"]`, "state.joints[0].position"}},
		{"infinite velocity", jointState(t0, pendulumJoints, [2]float64{0, 0}, [2]float64{0, math.Inf(1)}),
			func(s node.InputStats) uint64 { return s.RejectedNaN }, []string{"+Inf", `velocity[name=="elbow"]`}},
		{"joint names", jointState(t0, []string{"hip", "knee"}, [2]float64{0, 0}, [2]float64{0, 0}),
			func(s node.InputStats) uint64 { return s.RejectedMismatch }, []string{`name=="shoulder"`, "joint names"}},
		{"garbage", []byte{0, 1, 0, 0, 9, 9},
			func(s node.InputStats) uint64 { return s.RejectedDecode }, []string{"does not decode", "sensor_msgs/msg/JointState"}},
	}
	for i, c := range cases {
		// a millisecond apart: the node publishes one DiagnosticArray an
		// instant
		l.send("/joint_states", t0+int64(i+1)*ms, c.data)
		waitFor(t, c.name, func() bool { return c.count(st()) >= 1 && st().Received == uint64(i+1) })
		l.waitDiag(t, c.name+" diagnostic", func() bool {
			s := status(t, pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states")
			return s.Level == msgs.DiagnosticError && strings.Contains(s.Message, c.want[0])
		})
		s := status(t, pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states")
		for _, w := range c.want {
			if !strings.Contains(s.Message, w) {
				t.Errorf("%s: diagnostic %q lacks %q", c.name, s.Message, w)
			}
		}
	}
	if n := l.nd.Stats().Predictions; n != 0 {
		t.Fatalf("%d predictions from rejected messages", n)
	}
	// A good message clears the error and predicts.
	l.send("/joint_states", t0+10*ms, jointState(t0+10*ms, pendulumJoints, [2]float64{0.1, 0}, [2]float64{0, 0}))
	waitFor(t, "prediction", func() bool { return l.nd.Stats().Predictions == 1 })
	l.waitDiag(t, "cleared diagnostic", func() bool {
		return status(t, pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states").Level == msgs.DiagnosticOK
	})
	s := st()
	if s.Accepted != 1 || s.RejectedNaN != 2 || s.RejectedMismatch != 1 || s.RejectedDecode != 1 {
		t.Errorf("counts %+v", s)
	}
}

// TestOutOfOrderAndDuplicateStamps: a joint state stamped before the newest
// accepted one is dropped and reported, a repeated stamp ignored; neither
// predicts.
func TestOutOfOrderAndDuplicateStamps(t *testing.T) {
	pub := &memPub{}
	l := startLive(t, pendulumParams(t), pub)
	st := func() node.Stats { return l.nd.Stats() }
	l.send("/torque_command", t0+20*ms, torque(0, 0))
	js := func(stamp int64, q float64) []byte {
		return jointState(stamp, pendulumJoints, [2]float64{q, 0}, [2]float64{0, 0})
	}
	l.send("/joint_states", t0+20*ms, js(t0+20*ms, 0.1))
	waitFor(t, "prediction", func() bool { return st().Predictions == 1 })
	l.send("/joint_states", t0+21*ms, js(t0+10*ms, 0.2)) // late
	l.send("/joint_states", t0+22*ms, js(t0+20*ms, 0.3)) // same stamp again
	waitFor(t, "both handled", func() bool { return st().Inputs["/joint_states"].Received == 3 })
	s := st()
	if in := s.Inputs["/joint_states"]; in.OutOfOrder != 1 || in.Duplicates != 1 || in.Accepted != 1 || s.Predictions != 1 {
		t.Fatalf("stats %+v", s)
	}
	l.waitDiag(t, "out-of-order diagnostic", func() bool {
		d := status(t, pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states")
		return d.Level == msgs.DiagnosticWarn && strings.Contains(d.Message, "before the newest") && value(d, "out_of_order") == "1"
	})
	// The values kept are those of the newest accepted message.
	l.send("/joint_states", t0+30*ms, js(t0+30*ms, 0.4))
	waitFor(t, "second prediction", func() bool { return st().Predictions == 2 })
	if d := status(t, pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states"); value(d, "duplicates") != "1" && d.Level != msgs.DiagnosticOK {
		t.Errorf("status %+v", d)
	}
}

// TestNeverBlocksSubscriber: while the transport's publisher is stuck, a
// subscriber delivering messages never waits; the node drops the oldest
// queued messages and counts them.
func TestNeverBlocksSubscriber(t *testing.T) {
	p := pendulumParams(t)
	p.Node.Queue = 4
	gate := make(chan struct{})
	pub := &memPub{gate: gate}
	l := startLive(t, p, pub)
	const n = 500
	var worst time.Duration
	start := time.Now()
	l.send("/torque_command", t0, torque(0, 0))
	for i := range n {
		at := t0 + int64(i)*ms
		msg := jointState(at, pendulumJoints, [2]float64{0.1, 0}, [2]float64{0, 0})
		s := time.Now()
		l.send("/joint_states", at, msg)
		worst = max(worst, time.Since(s))
	}
	total := time.Since(start)
	if worst > 20*time.Millisecond {
		t.Errorf("a delivery took %v while the publisher was blocked", worst)
	}
	t.Logf("%d deliveries in %v (worst %v) with the publisher blocked", n, total, worst)
	close(gate)
	var in node.InputStats
	waitFor(t, "queue drained", func() bool {
		in = l.nd.Stats().Inputs["/joint_states"]
		return in.Received+in.Dropped == n
	})
	if in.Dropped < n-10 {
		t.Errorf("dropped %d of %d while blocked (received %d)", in.Dropped, n, in.Received)
	}
	l.waitDiag(t, "dropped in diagnostics", func() bool {
		d := status(t, pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states")
		return value(d, "dropped") == fmt.Sprint(in.Dropped)
	})
}

// TestPortForecastFromTopic: the rollout follows a planner's port
// trajectory, holds its last row beyond its end and falls back to holding
// the measured ports when it is stale.
func TestPortForecastFromTopic(t *testing.T) {
	p := pendulumParams(t)
	p.Node.Ports = node.PortsConfig{Forecast: node.ForecastTopic, Topic: "/calisym/port_plan", MaxAge: 0.2}
	if err := p.Node.Check(p.Spec); err != nil {
		t.Fatal(err)
	}
	var now int64
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := nd.InputTypes()["/calisym/port_plan"]; !ok {
		t.Fatal("the port trajectory topic is not an input")
	}
	handle := func(topic string, at int64, data []byte) {
		t.Helper()
		now = at
		if err := nd.Handle(node.Input{Topic: topic, Data: data, Received: at}); err != nil {
			t.Fatal(err)
		}
	}
	plan := msgs.Float64MultiArray{Layout: msgs.MultiArrayLayout{Dim: []msgs.MultiArrayDimension{{Label: "steps", Size: 3, Stride: 6}, {Label: "ports", Size: 2, Stride: 2}}},
		Data: []float64{1, 2, 3, 4, 5, 6}}
	handle("/calisym/port_plan", t0, msgs.Marshal(&plan))
	handle("/torque_command", t0, torque(-1, -2))
	handle("/joint_states", t0, jointState(t0, pendulumJoints, [2]float64{0, 0}, [2]float64{0, 0}))
	ps := pub.predictions(t)
	if len(ps) != 1 {
		t.Fatalf("%d predictions", len(ps))
	}
	want := []float64{1, 2, 3, 4, 5, 6, 5, 6}
	for i, w := range want {
		if ps[0].Ports[i] != w {
			t.Fatalf("ports %v, want %v then the last row held", ps[0].Ports[:8], want)
		}
	}
	if last := ps[0].Ports[len(ps[0].Ports)-2:]; last[0] != 5 || last[1] != 6 {
		t.Errorf("last ports %v", last)
	}
	// A plan of the wrong width is rejected; 300 ms later the plan is stale.
	bad := msgs.Float64MultiArray{Data: []float64{1, 2, 3}}
	handle("/calisym/port_plan", t0+300*ms, msgs.Marshal(&bad))
	handle("/torque_command", t0+300*ms, torque(-1, -2))
	handle("/joint_states", t0+300*ms, jointState(t0+300*ms, pendulumJoints, [2]float64{0, 0}, [2]float64{0, 0}))
	ps = pub.predictions(t)
	if ps[1].Ports[0] != -1 || ps[1].Ports[len(ps[1].Ports)-1] != -2 {
		t.Errorf("stale plan: ports %v, want the held command", ps[1].Ports[:4])
	}
	if s := nd.Stats(); s.ForecastFallbacks != 1 {
		t.Errorf("fallbacks %d", s.ForecastFallbacks)
	}
	if err := nd.Tick(); err != nil { // the diagnostics of the change
		t.Fatal(err)
	}
	d := status(t, pub.lastDiagnostics(t), node.StatusPortForecast)
	if d.Level != msgs.DiagnosticError || !strings.Contains(d.Message, "3 values") || value(d, "rejected") != "1" {
		t.Errorf("port forecast status %+v", d)
	}
}

// TestTimerTrigger: with a timer trigger the node predicts at the timer's
// rate from the latest inputs, not per message.
func TestTimerTrigger(t *testing.T) {
	p := pendulumParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerTimer, Rate: 20, Topic: "/joint_states"}
	if err := p.Node.Check(p.Spec); err != nil {
		t.Fatal(err)
	}
	var now int64
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 { // 300 ms of inputs at 100 Hz
		now = t0 + int64(i)*10*ms
		for nt := nd.NextTick(); nt != math.MinInt64 && nt <= now; nt = nd.NextTick() {
			saved := now
			now = nt
			if err := nd.Tick(); err != nil {
				t.Fatal(err)
			}
			now = saved
		}
		if err := nd.Handle(node.Input{Topic: "/torque_command", Data: torque(0, 0), Received: now}); err != nil {
			t.Fatal(err)
		}
		if err := nd.Handle(node.Input{Topic: "/joint_states", Data: jointState(now, pendulumJoints, [2]float64{0, 0}, [2]float64{0, 0}), Received: now}); err != nil {
			t.Fatal(err)
		}
		if err := nd.Tick(); err != nil {
			t.Fatal(err)
		}
	}
	ps := pub.predictions(t)
	// Ticks at 0, 50, …, 250 ms; a tick due at the time of a message fires
	// before it (as in a replay), from the state of 10 ms before.
	if len(ps) != 6 {
		t.Fatalf("%d predictions in 300 ms at 20 Hz, want 6", len(ps))
	}
	for i, pr := range ps {
		want := t0 + int64(i)*50*ms - 10*ms
		if i == 0 {
			want = t0
		}
		if pr.Header.Stamp.Nanos() != want {
			t.Errorf("prediction %d starts at %d, want %d", i, pr.Header.Stamp.Nanos(), want)
		}
	}
}

func TestNewRejectsMismatchedModel(t *testing.T) {
	p := pendulumParams(t)
	m := pendulumModel(t)
	m.Meta.Coordinates = []string{"a", "b"}
	if _, err := node.New(node.Options{Params: p, Model: m, Now: func() int64 { return 0 }, Publisher: &memPub{}}); err == nil || !strings.Contains(err.Error(), "coordinates") {
		t.Errorf("coordinates: %v", err)
	}
	m = pendulumModel(t)
	m.Meta.Dt = 0.02
	if _, err := node.New(node.Options{Params: p, Model: m, Now: func() int64 { return 0 }, Publisher: &memPub{}}); err == nil || !strings.Contains(err.Error(), "dt") {
		t.Errorf("dt: %v", err)
	}
}
