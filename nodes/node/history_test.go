package node_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

// historyModel is a random model of the pendulum's mapping with a port
// history of m samples: n_u = 2 torques + their 2 means.
func historyModel(t *testing.T, p *node.Params) *predictor.Model {
	t.Helper()
	m, err := predictor.New(predictor.Layout{N: 2, NU: 4}, predictor.Arch{Kind: predictor.KindGR, Layers: 1, Width: 4, StepSize: 0.1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	c, k := p.Spec.PortNames()
	m.Meta = predictor.Metadata{Name: "history", Coordinates: p.Spec.Coordinates(), Ports: append(c, k...), Dt: 1 / p.Rate}
	return m
}

// TestPortHistoryForecast: with convert.history.port_mean the node's ports
// are the measured torques, then their means over the samples observed
// before (one per dt); the forecast continues the means over the held
// torques or a planner's trajectory of measured ports, a gap restarts the
// history, the diagnostics report it, and a model without the means is
// refused with a hint.
func TestPortHistoryForecast(t *testing.T) {
	p := pendulumParams(t)
	p.Spec.History.PortMean = 2
	if c, _ := p.Spec.PortNames(); strings.Join(c, ",") != "u1,u2,mean2(u1),mean2(u2)" {
		t.Fatalf("ports %v", c)
	}
	if _, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return 0 }, Publisher: &memPub{}}); err == nil || !strings.Contains(err.Error(), "port_mean") {
		t.Errorf("a model without the means: %v", err)
	}
	p.Node.Ports = node.PortsConfig{Forecast: node.ForecastTopic, Topic: "/calisym/port_plan", MaxAge: 0.015}
	var now int64
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: historyModel(t, p), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	// step feeds sample k and returns the ports of its prediction or,
	// while the history warms up (fewer than 2 samples before; no
	// prediction then), the sample's model ports (node.State), the first
	// row a prediction would have.
	x, e := make([]float64, 4), make([]float64, 4)
	step := func(k int, u float64, predicts bool) struct{ Ports []float64 } {
		t.Helper()
		now = t0 + int64(k)*10*ms
		before := len(pub.predictions(t))
		for _, m := range []node.Input{
			{Topic: "/torque_command", Data: torque(u, 10*u), Received: now},
			{Topic: "/joint_states", Data: jointState(now, pendulumJoints, [2]float64{0.1, 0.2}, [2]float64{0, 0}), Received: now},
		} {
			if err := nd.Handle(m); err != nil {
				t.Fatal(err)
			}
		}
		ps := pub.predictions(t)
		if _, err := nd.State(x, e); err != nil {
			t.Fatal(err)
		}
		if predicts {
			if len(ps) != before+1 {
				t.Fatalf("sample %d: %d predictions, want one", k, len(ps)-before)
			}
			return struct{ Ports []float64 }{ps[len(ps)-1].Ports}
		}
		if len(ps) != before {
			t.Fatalf("sample %d: a prediction while the history warms up", k)
		}
		return struct{ Ports []float64 }{e}
	}
	check := func(what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: ports %v, want %v", what, got[:len(want)], want)
			}
		}
	}
	check("first sample: its own torques", step(0, 1, false).Ports, []float64{1, 10, 1, 10})
	check("one sample before", step(1, 2, false).Ports, []float64{2, 20, 1, 10})
	pr := step(2, 4, true)
	// held: steps 0, 1, 2 of the forecast average (1, 2), (2, 4), (4, 4)
	check("held torques", pr.Ports, []float64{4, 40, 1.5, 15, 4, 40, 3, 30, 4, 40, 4, 40})
	// a plan of measured ports, 2 rows: the means run over it
	plan := msgs.Float64MultiArray{Data: []float64{6, 60, 8, 80}}
	now = t0 + 25*ms
	if err := nd.Handle(node.Input{Topic: "/calisym/port_plan", Data: msgs.Marshal(&plan), Received: now}); err != nil {
		t.Fatal(err)
	}
	pr = step(3, 5, true)
	check("planned torques", pr.Ports, []float64{6, 60, 3, 30, 8, 80, 5, 50, 8, 80, 7, 70})
	// a lost sample (k = 4): the history restarts at k = 5
	check("after a gap", step(5, 7, false).Ports, []float64{7, 70, 7, 70})
	if st := nd.Stats(); st.HistoryRestarts != 1 {
		t.Errorf("%d history restarts, want 1", st.HistoryRestarts)
	}
	check("one sample after the gap", step(6, 9, false).Ports, []float64{9, 90, 7, 70})
	now += int64(p.Node.DiagnosticsPeriod*1e9) + ms // the next periodic diagnostics
	if err := nd.Tick(); err != nil {
		t.Fatal(err)
	}
	d := status(t, pub.lastDiagnostics(t), node.StatusPrediction)
	if value(d, "port_history_samples") != "1" || value(d, "port_history_restarts") != "1" {
		t.Errorf("diagnostics %+v", d.Values)
	}
}

// TestPortHistoryAllocations: with a port history and the force estimate,
// a message that observes a sample, predicts and publishes the prediction,
// the joint states and the diagnostics' change check allocates nothing.
func TestPortHistoryAllocations(t *testing.T) {
	p := pendulumParams(t)
	p.Spec.History.PortMean = 5
	p.Node.ForceEstimate = &predictor.ForceEstimate{Window: 10, Decay: 0.9}
	p.Node.DiagnosticsPeriod = 1e6
	var now int64
	nd, err := node.New(node.Options{Params: p, Model: historyModel(t, p), Now: func() int64 { return now }, Publisher: nopPub{}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	js, tq := make([][]byte, n), make([][]byte, n)
	for k := range n {
		at := t0 + int64(k)*10*ms
		js[k] = jointState(at, pendulumJoints, [2]float64{0.1 * float64(k%7), 0.2}, [2]float64{0, 0})
		tq[k] = torque(float64(k%5), 1)
	}
	k := 0
	step := func() {
		now = t0 + int64(k)*10*ms
		if err := nd.Handle(node.Input{Topic: "/torque_command", Data: tq[k], Received: now}); err != nil {
			t.Fatal(err)
		}
		if err := nd.Handle(node.Input{Topic: "/joint_states", Data: js[k], Received: now}); err != nil {
			t.Fatal(err)
		}
		k++
	}
	for range 20 {
		step()
	}
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Errorf("%v allocations per sample", a)
	}
	// every sample predicts once the history holds its 5 samples
	if st := nd.Stats(); st.Predictions != uint64(k-5) || st.HistoryRestarts != 0 {
		t.Errorf("%d predictions of %d samples (5 warming up), %d restarts", st.Predictions, k, st.HistoryRestarts)
	}
}

// nopPub drops every publication without recording it.
type nopPub struct{ memPubNoRecord }

func (nopPub) Publish(string, int64, []byte) error { return nil }
