package node_test

import (
	"math"
	"strings"
	"testing"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// clocked is a node driven by direct calls on a clock the test sets, as a
// replay drives it.
type clocked struct {
	nd  *node.Node
	pub *memPub
	now int64
}

func newClocked(t *testing.T) *clocked {
	t.Helper()
	c := &clocked{pub: &memPub{}, now: t0}
	nd, err := node.New(node.Options{Params: pendulumParams(t), Model: pendulumModel(t), Now: func() int64 { return c.now }, Publisher: c.pub})
	if err != nil {
		t.Fatal(err)
	}
	c.nd = nd
	return c
}

// handle hands a message to the node at time at, after the timers due
// before it (those due at the last message's time first, after its
// messages, as a replay runs them).
func (c *clocked) handle(t *testing.T, topic string, at int64, data []byte) {
	t.Helper()
	if at > c.now {
		c.settle(t)
	}
	tickUntil(t, c.nd, &c.now, at, false)
	c.now = at
	if err := c.nd.Handle(node.Input{Topic: topic, Data: data, Received: at}); err != nil {
		t.Fatal(err)
	}
}

// settle runs the timers due now, after the messages of this instant, as
// a replay does: the diagnostics of a change they made.
func (c *clocked) settle(t *testing.T) {
	t.Helper()
	tickUntil(t, c.nd, &c.now, c.now, true)
}

// TestFutureStampSuppresses: an input stamped after the node's clock (a
// negative age, as a log played faster than real time with its stamps
// unscaled gave) makes no prediction: its state is not fresh, it is from
// a clock the node does not follow. The prediction and the input say so
// at error level; a message stamped on the clock resumes the predictions.
func TestFutureStampSuppresses(t *testing.T) {
	c := newClocked(t)
	q, v := [2]float64{0.1, 0.2}, [2]float64{0.3, 0.4}
	c.handle(t, "/torque_command", t0, torque(0.5, -0.25))
	c.handle(t, "/joint_states", t0, jointState(t0, pendulumJoints, q, v))
	if st := c.nd.Stats(); st.Predictions != 1 || st.Suppressed != 0 {
		t.Fatalf("on the clock: %+v", st)
	}
	// Received at t0+10 ms, stamped 30 ms later than that.
	c.handle(t, "/joint_states", t0+10*ms, jointState(t0+40*ms, pendulumJoints, q, v))
	if st := c.nd.Stats(); st.Predictions != 1 || st.Suppressed != 1 {
		t.Fatalf("stamped ahead of the clock: %d predictions, %d suppressed; want 1, 1", st.Predictions, st.Suppressed)
	}
	// the change is published once it has held for DiagnosticsSettle
	tickUntil(t, c.nd, &c.now, c.now+node.DiagnosticsSettle, true)
	a := c.pub.lastDiagnostics(t)
	pred := status(t, a, node.StatusPrediction)
	if pred.Level != msgs.DiagnosticError || !strings.Contains(pred.Message, "/joint_states is stamped 0.030000 s after the node's clock") {
		t.Errorf("prediction status %+v", pred)
	}
	if in := status(t, a, node.StatusInputPrefix+"/joint_states"); in.Level != msgs.DiagnosticError || value(in, "age_s") != "-0.02" {
		t.Errorf("input status %+v", in)
	}
	c.handle(t, "/torque_command", t0+50*ms, torque(0.5, -0.25))
	c.handle(t, "/joint_states", t0+50*ms, jointState(t0+50*ms, pendulumJoints, q, v))
	if st := c.nd.Stats(); st.Predictions != 2 {
		t.Errorf("back on the clock: %d predictions, want 2", st.Predictions)
	}
}

// TestDiagnosticsRateLimited: a status that changes with every message (a
// log played again from its start, whose messages are all out of order,
// alternating with NaN messages; rejections whose numbers differ each
// time) publishes at most node.DiagnosticsBurst diagnostics a period, not
// one a message; the last status is still published.
func TestDiagnosticsRateLimited(t *testing.T) {
	c := newClocked(t)
	q, v := [2]float64{0.1, 0.2}, [2]float64{0.3, 0.4}
	c.handle(t, "/torque_command", t0, torque(0.5, -0.25))
	c.handle(t, "/joint_states", t0+5*ms, jointState(t0+5*ms, pendulumJoints, q, v))
	before := len(c.pub.on("/diagnostics"))
	const n = 2000 // 2 s at 1 kHz
	for i := range n {
		at := t0 + 10*ms + int64(i)*ms
		c.handle(t, "/torque_command", at, torque(0.5, -0.25))
		switch i % 3 {
		case 0: // out of order, by a different amount each time
			c.handle(t, "/joint_states", at, jointState(t0+int64(i%5)*ms, pendulumJoints, q, v))
		case 1: // NaN
			c.handle(t, "/joint_states", at, jointState(at, pendulumJoints, [2]float64{q[0], math.NaN()}, v))
		default: // accepted
			c.handle(t, "/joint_states", at, jointState(at, pendulumJoints, q, v))
		}
	}
	published := len(c.pub.on("/diagnostics")) - before
	// 2 s of a 1 s period: at most DiagnosticsBurst a period, and one more
	// for the period boundary.
	if limit := 2*node.DiagnosticsBurst + 2; published > limit || published < 2 {
		t.Errorf("%d diagnostics for %d messages in 2 s, want 2 to %d", published, 2*n, limit)
	}
	st := c.nd.Stats().Inputs["/joint_states"]
	if st.OutOfOrder == 0 || st.RejectedNaN == 0 {
		t.Errorf("counts %+v", st)
	}
	// The last message was a NaN (i = 1999); an accepted one clears the
	// status, published within a period.
	at := t0 + 10*ms + n*ms + 20*ms
	c.handle(t, "/torque_command", at, torque(0.5, -0.25))
	c.handle(t, "/joint_states", at, jointState(at, pendulumJoints, q, v))
	c.handle(t, "/unknown", at+1000*ms, nil) // the timers due in the next second
	if in := status(t, c.pub.lastDiagnostics(t), node.StatusInputPrefix+"/joint_states"); in.Level == msgs.DiagnosticError {
		t.Errorf("the cleared status was not published: %+v", in)
	}
}

// TestTriggerEvery: with trigger.every 3 the node predicts on the 1st,
// 4th, 7th… accepted trigger message and on every 3rd timer tick, and
// the triggers in between are neither predictions nor suppressions; a
// negative every is refused.
func TestTriggerEvery(t *testing.T) {
	for _, kind := range []string{node.TriggerMessage, node.TriggerTimer} {
		t.Run(kind, func(t *testing.T) {
			p := pendulumParams(t)
			p.Node.Trigger.Every = 3
			if kind == node.TriggerTimer {
				p.Node.Trigger.Kind, p.Node.Trigger.Rate = node.TriggerTimer, 100
			}
			c := &clocked{pub: &memPub{}, now: t0}
			nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return c.now }, Publisher: c.pub})
			if err != nil {
				t.Fatal(err)
			}
			c.nd = nd
			q, v := [2]float64{0.1, 0.2}, [2]float64{0.3, 0.4}
			for i := range 10 { // 10 ms apart: 10 messages, 10 timer ticks
				at := t0 + int64(i)*10*ms
				c.handle(t, "/torque_command", at, torque(0.5, -0.25))
				c.handle(t, "/joint_states", at, jointState(at, pendulumJoints, q, v))
				if err := c.nd.Tick(); err != nil { // the timers due at at, after its messages
					t.Fatal(err)
				}
			}
			ps := c.pub.predictions(t)
			if len(ps) < 3 || c.nd.Stats().Suppressed != 0 {
				t.Fatalf("%d predictions, %d suppressed", len(ps), c.nd.Stats().Suppressed)
			}
			for i := 1; i < len(ps); i++ {
				if d := ps[i].Header.Stamp.Nanos() - ps[i-1].Header.Stamp.Nanos(); d != 30*ms {
					t.Errorf("predictions %d and %d are %d ms apart, want every 3rd 10 ms trigger", i-1, i, d/ms)
				}
			}
		})
	}
	p := pendulumParams(t)
	p.Node.Trigger.Every = -1
	if err := p.Node.Check(p.Spec); err == nil || !strings.Contains(err.Error(), "trigger.every") {
		t.Errorf("every -1: %v", err)
	}
}

// TestDiagnosticsOncePerChange: the pendulum on a 100 Hz timer, its state
// and command arriving together (one instant) and one message in 7 late
// by 12 ms (a moment stale with max_age 0.02 s and stale_periods 1). The
// node publishes no two DiagnosticArrays at one instant, nor closer than
// node.DiagnosticsSettle: a status that changes and changes back within
// it publishes nothing. A lasting change (the commands stop) is published
// once it has held for DiagnosticsSettle.
func TestDiagnosticsOncePerChange(t *testing.T) {
	c := &clocked{pub: &memPub{}, now: t0}
	p := pendulumParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerTimer, Rate: 100, Every: 1, Topic: "/joint_states"}
	p.Node.MaxAge, p.Node.StalePeriods = 0.02, 1
	nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return c.now }, Publisher: c.pub})
	if err != nil {
		t.Fatal(err)
	}
	c.nd = nd
	q, v := [2]float64{0.1, 0.2}, [2]float64{0.3, 0.4}
	const n = 300
	for k := range int64(n) {
		at := t0 + k*10*ms + 3*ms
		if k%7 == 3 {
			at += 12 * ms
		}
		c.handle(t, "/torque_command", at, torque(0.5, -0.25))
		c.handle(t, "/joint_states", at, jointState(t0+k*10*ms, pendulumJoints, q, v))
	}
	// the commands stop; the joint states go on
	stop := t0 + n*10*ms
	for k := range int64(10) {
		at := stop + k*10*ms + 3*ms
		c.handle(t, "/joint_states", at, jointState(stop+k*10*ms, pendulumJoints, q, v))
	}
	c.settle(t)
	ds := c.pub.on("/diagnostics")
	for i := 1; i < len(ds); i++ {
		if d := ds[i].stamp - ds[i-1].stamp; d < node.DiagnosticsSettle {
			t.Errorf("diagnostics %d and %d published %d µs apart", i-1, i, d/1000)
		}
	}
	if nd.Stats().Suppressed == 0 {
		t.Fatal("no prediction was suppressed: the late messages did not make the input stale")
	}
	// the torque command is stale from 0.02 s after the last one
	last := ds[len(ds)-1]
	var a msgs.DiagnosticArray
	if err := msgs.Unmarshal(last.data, &a); err != nil {
		t.Fatal(err)
	}
	onset := t0 + (n-1)*10*ms + 3*ms + 20*ms
	if pred := status(t, a, node.StatusPrediction); pred.Level != msgs.DiagnosticWarn || !strings.Contains(pred.Message, "/torque_command") {
		t.Errorf("last prediction status %+v, want the stale torque command", pred)
	}
	if last.stamp < onset || last.stamp > onset+node.DiagnosticsSettle+10*ms {
		t.Errorf("the stale command was published %d ms after it went stale", (last.stamp-onset)/ms)
	}
}
