package node_test

import (
	"math"
	"testing"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// TestFirstStatePublishesMeasuredFrames: the measured robot's /tf goes
// out with every state message, the first included, although the
// pendulum's first joint state comes before any torque command (an input
// of ports alone): its frames need the state only. The elbow's transform
// turns by the measured q2 about the joint's axis.
func TestFirstStatePublishesMeasuredFrames(t *testing.T) {
	nd, pub, now := shippedPendulum(t)
	handle := func(topic string, at int64, data []byte) {
		t.Helper()
		*now = at
		if err := nd.Handle(node.Input{Topic: topic, Data: data, Received: at}); err != nil {
			t.Fatal(err)
		}
	}
	for k, c := range []struct {
		topic string
		q2    float64
		tf    int // /tf messages after it
	}{
		{"/joint_states", 0.3, 1},
		{"/torque_command", 0, 2}, // the prediction's ghost
		{"/joint_states", -0.4, 3},
	} {
		at := t0 + int64(k)*10*ms
		data := torque(1, 2)
		if c.topic == "/joint_states" {
			data = jointState(at, pendulumJoints, [2]float64{0.1, c.q2}, [2]float64{})
		}
		handle(c.topic, at+ms/5, data)
		tfs := pub.on("/tf")
		if len(tfs) != c.tf {
			t.Fatalf("after message %d (%s): %d /tf messages, want %d", k, c.topic, len(tfs), c.tf)
		}
		if c.topic != "/joint_states" {
			continue
		}
		var m msgs.TFMessage
		if err := msgs.Unmarshal(tfs[len(tfs)-1].data, &m); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tr := range m.Transforms {
			if tr.Header.Stamp.Nanos() != at {
				t.Errorf("message %d: %s stamped %d, want the state's %d", k, tr.ChildFrameID, tr.Header.Stamp.Nanos(), at)
			}
			r := tr.Transform.Rotation
			angle := 2 * math.Atan2(math.Sqrt(r.X*r.X+r.Y*r.Y+r.Z*r.Z), r.W)
			if math.Abs(angle-math.Abs(c.q2)) < 1e-12 {
				found = true
			}
		}
		if !found {
			t.Errorf("message %d: no transform turned by q2 = %g in %+v", k, c.q2, m.Transforms)
		}
	}
}
