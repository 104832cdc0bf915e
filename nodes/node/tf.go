package node

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/tfview"
	"github.com/calisym/calisym/statemap"
)

// viewState is the node's part of the robot's frames for 3D viewers
// (Config.TF, package nodes/tfview): the view, nil where there is nothing
// to draw, and whether the robot description and static frames are out.
type viewState struct {
	v     *tfview.View
	sent  bool
	x, em []float64 // scratch: the measured state and ports
	vals  []float64 // scratch: the channel values of the measured state
}

// newView builds the view from Config.TF and the robot description (its
// urdf, else the model's URDF, relative to root, else for the double
// pendulum one made from its parameters, mechanics.PendulumURDF) and
// advertises its topics: the description and the static frames latched.
// A ghost lookahead for a robot with nothing to draw is an error.
func (nd *Node) newView(root string) error {
	cfg := nd.cfg.TF
	var urdf []byte
	path := cfg.URDF
	if path == "" && nd.params.Spec.Model.Kind == statemap.ModelURDF {
		path = nd.params.Spec.Model.URDF
	}
	switch model := nd.params.Spec.Model; {
	case !cfg.Enabled():
	case path != "":
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("node: tf: robot description: %w", err)
		}
		urdf = b
	case model.Kind == statemap.ModelDoublePendulum && len(nd.joints) == 2:
		// the double pendulum's own: two links of the params' lengths
		pp, err := model.Pendulum.Load(root)
		if err != nil {
			return fmt.Errorf("node: tf: robot description: %w", err)
		}
		urdf = []byte(mechanics.PendulumURDF(pp, [2]string{nd.joints[0], nd.joints[1]}))
	}
	v, err := tfview.New(tfview.Options{Config: cfg, Frame: nd.cfg.FrameID, URDF: urdf, Floating: nd.sampler.Floating(),
		Joints: nd.joints, Dt: nd.dt, Horizon: nd.h})
	if err != nil {
		return fmt.Errorf("node: tf: %w", err)
	}
	if v == nil {
		if cfg.Ghost > 0 {
			return configError("tf.ghost", "a lookahead of %g s, but the robot has no frames to draw (no URDF, no floating base, or tf.topic \"-\")", cfg.Ghost)
		}
		return nil
	}
	cfg = v.Config()
	type output struct {
		topic string
		m     msgs.Message
		latch bool
	}
	// The latched topics first: a client that subscribes in the order of
	// advertisement has the robot before its first frames.
	var outs []output
	if v.Description() != nil {
		outs = append(outs, output{cfg.DescriptionTopic, &msgs.String{}, true})
	}
	if v.Static(0) != nil {
		outs = append(outs, output{cfg.StaticTopic, &msgs.TFMessage{}, true})
	}
	outs = append(outs, output{cfg.Topic, &msgs.TFMessage{}, false})
	for _, o := range outs {
		t := TypeOf(o.m)
		t.Latched = o.latch
		if err := nd.pub.Advertise(o.topic, t); err != nil {
			return fmt.Errorf("node: advertise %s: %w", o.topic, err)
		}
	}
	nd.view.v = v
	nd.view.x, nd.view.em = make([]float64, 2*nd.n), make([]float64, nd.nm)
	nd.view.vals = make([]float64, len(nd.sampler.Channels()))
	return nil
}

// publishLatched publishes the robot description and the static frames,
// stamped at now, once: at the node's first Tick or Handle (a live node's
// start, a replay's first message), so that a viewer opened before the
// first prediction (a robot standing still, inputs stale, the history
// warming up) shows the robot.
func (nd *Node) publishLatched(now int64) error {
	v := nd.view.v
	if v == nil || nd.view.sent {
		return nil
	}
	nd.view.sent = true
	cfg := v.Config()
	if d := v.Description(); d != nil {
		if err := nd.pub.Publish(cfg.DescriptionTopic, now, msgs.Marshal(d)); err != nil {
			return fmt.Errorf("node: publish %s: %w", cfg.DescriptionTopic, err)
		}
	}
	if st := v.Static(now); st != nil {
		if err := nd.pub.Publish(cfg.StaticTopic, now, msgs.Marshal(st)); err != nil {
			return fmt.Errorf("node: publish %s: %w", cfg.StaticTopic, err)
		}
	}
	return nil
}

// publishGhost publishes the ghost's frames of one prediction stamped at
// stamp, from the measured base pose and the prediction nd.traj.
func (nd *Node) publishGhost(stamp int64, pose mechanics.SE3) error {
	v := nd.view.v
	if v == nil {
		return nil
	}
	n, k := nd.n, v.Step()-1
	q := nd.traj.Q[k*n : (k+1)*n]
	predicted, ghost := q, pose
	if nd.sampler.Floating() {
		predicted = q[6:]
		ghost = nd.sampler.BasePose(pose, q[:6])
	}
	m, err := v.Ghost(stamp, ghost, predicted)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nd.publishFrames(stamp, m)
}

// publishMeasured publishes the measured robot's frames at its state
// stamp: at each accepted message of an input that carries state
// channels, the state's own rate, whether or not a prediction follows.
// A state that cannot be built yet (an input of state channels missing)
// publishes nothing; the inputs of ports alone need not have come.
func (nd *Node) publishMeasured() error {
	v := nd.view.v
	if v == nil {
		return nil
	}
	for _, in := range nd.inputs {
		if in.feeds && !in.have {
			return nil
		}
	}
	// The measured frames need the state only: a port channel whose input
	// has no message yet (the pendulum's first joint state comes before
	// its first torque command) is taken as 0 here.
	vals := nd.view.vals
	for i, v := range nd.values {
		if math.IsNaN(v) && !nd.sampler.StateChannel(i) {
			v = 0
		}
		vals[i] = v
	}
	pose, err := nd.sampler.Sample(vals, nd.view.x, nd.view.em)
	if err != nil {
		return nil // the prediction's diagnostics report it
	}
	measured := nd.view.x[:nd.n]
	if nd.sampler.Floating() {
		measured = nd.view.x[6:nd.n]
	}
	stamp := nd.stateStamp()
	m, err := v.Measured(stamp, pose, measured)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nd.publishFrames(stamp, m)
}

func (nd *Node) publishFrames(stamp int64, m *msgs.TFMessage) error {
	topic := nd.view.v.Config().Topic
	nd.buf = nd.enc.Append(nd.buf[:0], m)
	if err := nd.pub.Publish(topic, stamp, nd.buf); err != nil {
		return fmt.Errorf("node: publish %s: %w", topic, err)
	}
	return nil
}
