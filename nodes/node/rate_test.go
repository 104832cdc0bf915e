package node_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/nodes/node"
)

const anymalTopic = "/state_estimator/anymal_state"

// arrival is one message as a transport delivers it.
type arrival struct {
	at    int64 // received [ns]
	stamp int64 // header stamp [ns]
	data  []byte
}

// estimatorStream returns n AnymalStates stamped every period from t0,
// each received 1 ms after its stamp and those isLate picks late by a
// further late ns, sorted by arrival (a late message after the next ones
// when they are due first, and then dropped as out of order): a state
// estimator on a loaded machine.
func estimatorStream(t testing.TB, p *node.Params, n int, period, late int64, isLate func(k int) bool) []arrival {
	t.Helper()
	schema := anymalSchema(t, p)
	rng := rand.New(rand.NewPCG(5, 6))
	pose := mechanics.SE3{R: mechanics.RPY(0.02, 0.01, 1), P: mechanics.Vec3{1, 2, 0.5}}
	out := make([]arrival, n)
	for k := range n {
		stamp := t0 + int64(k)*period
		a := arrival{at: stamp + ms, stamp: stamp, data: anymalState(t, schema, stamp, pose, [6]float64{0.4, 0, 0, 0, 0, 0.2}, rng)}
		if isLate(k) {
			a.at += late
		}
		out[k] = a
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// drive hands the node the messages at their arrival times with its
// timers run in between, as a replay does: the timers due before a
// message first, those due at its time after it.
func drive(t testing.TB, nd *node.Node, now *int64, msgs []arrival, topic string) {
	t.Helper()
	for _, m := range msgs {
		tickUntil(t, nd, now, m.at, false)
		*now = m.at
		if err := nd.Handle(node.Input{Topic: topic, Data: m.data, Received: m.at}); err != nil {
			t.Fatal(err)
		}
		tickUntil(t, nd, now, m.at, true)
	}
}

// tickUntil runs the node's timers due before limit (or at it, when
// inclusive), advancing the clock. As in a replay, the timers start after
// the first message's time (the first Tick is an inclusive one).
func tickUntil(t testing.TB, nd *node.Node, now *int64, limit int64, inclusive bool) {
	t.Helper()
	for next := nd.NextTick(); next < limit || (inclusive && next == limit); next = nd.NextTick() {
		if next == math.MinInt64 && !inclusive {
			return
		}
		if next > *now {
			*now = next
		}
		if err := nd.Tick(); err != nil {
			t.Fatal(err)
		}
		if nd.NextTick() == next {
			t.Fatalf("Tick at %d left the next tick at %d", *now, next)
		}
	}
}

// rateParams are params/anymal.yaml as shipped (timer trigger at 100 Hz,
// max_age 0.02 s, port history of 10 samples) with a short horizon.
func rateParams(t testing.TB) *node.Params {
	t.Helper()
	p := anymalParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerTimer, Rate: 100, Every: 1, Topic: anymalTopic}
	p.Node.Horizon, p.Node.PreviewStep = 10, 10
	if p.Node.MaxAge != 0.02 || p.Spec.History.PortMean != 10 {
		t.Fatalf("params/anymal.yaml: max_age %g, port_mean %d: the test is written for 0.02 s and 10", p.Node.MaxAge, p.Spec.History.PortMean)
	}
	return p
}

// TestHistoryAtTheInputsRate: the ANYmal node as shipped (timer trigger at
// 100 Hz, max_age 0.02 s) fed by a 100 Hz estimator (the shared logs'
// rate) and by a 400 Hz one, each with one message in 13 arriving 10 ms
// late. A late message is not a lost one: the port history never
// restarts, holds its 10 samples, and no prediction is suppressed as
// stale once it is full; the input's measured rate and its stale limit
// (three periods, at least max_age) are in the diagnostics. At 400 Hz the
// history takes the sample at every 10 ms: its ports are bit for bit
// those of a node fed only those samples.
func TestHistoryAtTheInputsRate(t *testing.T) {
	for _, c := range []struct {
		name     string
		period   int64
		rate     string
		staleLim string
		n        int
		isLate   func(int) bool
	}{
		// one message in 13 late
		{"100Hz", 10 * ms, "100", "0.03", 600, func(k int) bool { return k%13 == 5 }},
		// the same, but none of the samples at every 10 ms (a late
		// message here is dropped: the next ones came first)
		{"400Hz", 10 * ms / 4, "400", "0.02", 1601, func(k int) bool { return k%13 == 5 && k%4 != 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rateParams(t)
			model := quadrupedModel(t, p)
			now := t0
			pub := &memPub{}
			nd, err := node.New(node.Options{Params: p, Model: model, Now: func() int64 { return now }, Publisher: pub})
			if err != nil {
				t.Fatal(err)
			}
			stream := estimatorStream(t, p, c.n, c.period, 10*ms, c.isLate)
			drive(t, nd, &now, stream, anymalTopic)
			st := nd.Stats()
			if st.HistoryRestarts != 0 {
				t.Errorf("%d restarts of the port history from a %s input whose messages were only late", st.HistoryRestarts, c.name)
			}
			a := pub.lastDiagnostics(t)
			pred := status(t, a, node.StatusPrediction)
			if v := value(pred, "port_history_samples"); v != "10" {
				t.Errorf("port_history_samples %s, want 10", v)
			}
			in := status(t, a, node.StatusInputPrefix+anymalTopic)
			if r, _ := strconv.ParseFloat(value(in, "rate_hz"), 64); r < 0.97*mustFloat(t, c.rate) || r > 1.03*mustFloat(t, c.rate) {
				t.Errorf("rate_hz %s, want about %s", value(in, "rate_hz"), c.rate)
			}
			if v := value(in, "stale_after_s"); v[:min(len(v), len(c.staleLim))] != c.staleLim {
				t.Errorf("stale_after_s %s, want %s…", v, c.staleLim)
			}
			// Predictions at 100 Hz over the stream, none lost to staleness
			// (a few while the history fills).
			ticks := int((stream[len(stream)-1].at - t0) / (10 * ms))
			if int(st.Predictions) < ticks-12 {
				t.Errorf("%d predictions and %d suppressed in %d timer ticks", st.Predictions, st.Suppressed, ticks)
			}
			// The same ports as a node fed the samples at every 10 ms only.
			ref, err := node.New(node.Options{Params: p, Model: model, Now: func() int64 { return now }, Publisher: &memPub{}})
			if err != nil {
				t.Fatal(err)
			}
			var every10 []arrival
			for _, m := range stream {
				if (m.stamp-t0)%(10*ms) == 0 {
					every10 = append(every10, m)
				}
			}
			slices.SortFunc(every10, func(a, b arrival) int { return int(a.stamp - b.stamp) })
			if stream[len(stream)-1].stamp != every10[len(every10)-1].stamp {
				t.Fatal("the stream does not end on a 10 ms sample")
			}
			for _, m := range every10 {
				if err := ref.Handle(node.Input{Topic: anymalTopic, Data: m.data, Received: m.at}); err != nil {
					t.Fatal(err)
				}
			}
			nx, nu, nc := nd.Sampler().Layout()
			x, e := make([]float64, 2*nx), make([]float64, nu+nc)
			xr, er := make([]float64, 2*nx), make([]float64, nu+nc)
			if _, err := nd.State(x, e); err != nil {
				t.Fatal(err)
			}
			if _, err := ref.State(xr, er); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(e, er) {
				t.Errorf("the port history's means differ from those of the samples at every 10 ms:\n%v\n%v", e, er)
			}
		})
	}
}

func mustFloat(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWarmUp: with a port history the node predicts only once the history
// holds its 10 samples; until then each trigger is suppressed and
// /diagnostics says how far the warm-up is ("warming up: 3 of 10
// samples"). The first prediction reports port_history_samples 10. A lost
// sample restarts the history and the warm-up.
func TestWarmUp(t *testing.T) {
	p := rateParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerMessage, Every: 1, Topic: anymalTopic}
	p.Node.DiagnosticsPeriod = 0.005
	now := t0
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	stream := estimatorStream(t, p, 30, 10*ms, 0, func(int) bool { return false })
	check := func(k int, predictions uint64, msg string) {
		t.Helper()
		// the diagnostics of the period after the message
		tickUntil(t, nd, &now, stream[k].at+5*ms, true)
		if got := nd.Stats().Predictions; got != predictions {
			t.Fatalf("after message %d: %d predictions, want %d", k, got, predictions)
		}
		pred := status(t, pub.lastDiagnostics(t), node.StatusPrediction)
		if pred.Message != msg {
			t.Fatalf("after message %d: prediction status %q, want %q", k, pred.Message, msg)
		}
	}
	for k := range 10 {
		drive(t, nd, &now, stream[k:k+1], anymalTopic)
		check(k, 0, "warming up: "+strconv.Itoa(k)+" of 10 samples of the port history")
	}
	drive(t, nd, &now, stream[10:11], anymalTopic)
	check(10, 1, "predicting")
	if v := value(status(t, pub.lastDiagnostics(t), node.StatusPrediction), "port_history_samples"); v != "10" {
		t.Errorf("the first prediction's port_history_samples %s, want 10", v)
	}
	// sample 11 lost: 12 restarts the history
	drive(t, nd, &now, stream[12:13], anymalTopic)
	check(12, 1, "warming up: 0 of 10 samples of the port history")
	drive(t, nd, &now, stream[13:22], anymalTopic)
	check(21, 1, "warming up: 9 of 10 samples of the port history")
	drive(t, nd, &now, stream[22:23], anymalTopic)
	check(22, 2, "predicting")
	if st := nd.Stats(); st.HistoryRestarts != 1 || st.Suppressed != 20 {
		t.Errorf("%d restarts, %d suppressed; want 1 and 20", st.HistoryRestarts, st.Suppressed)
	}
}
