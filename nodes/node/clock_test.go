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
// before it.
func (c *clocked) handle(t *testing.T, topic string, at int64, data []byte) {
	t.Helper()
	for next := c.nd.NextTick(); next < at && next > c.now; next = c.nd.NextTick() {
		c.now = next
		if err := c.nd.Tick(); err != nil {
			t.Fatal(err)
		}
	}
	c.now = at
	if err := c.nd.Handle(node.Input{Topic: topic, Data: data, Received: at}); err != nil {
		t.Fatal(err)
	}
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
	a := c.pub.lastDiagnostics(t)
	pred := status(t, a, node.StatusPrediction)
	if pred.Level != msgs.DiagnosticError || !strings.Contains(pred.Message, "/joint_states is stamped 0.030000 s after the node's clock") {
		t.Errorf("prediction status %+v", pred)
	}
	if in := status(t, a, node.StatusInputPrefix+"/joint_states"); in.Level != msgs.DiagnosticError || value(in, "age_s") != "-0.03" {
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
