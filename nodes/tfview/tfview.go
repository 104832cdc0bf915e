// Package tfview turns the predictor node's measured state and its
// prediction into what a 3D viewer (Foxglove's 3D panel, RViz) needs to
// draw the robot twice: the robot description and the tf2 frames of the
// measured robot and of a predicted "ghost" of it a chosen lookahead
// ahead, under its own frame prefix.
//
// What it makes, following REP 105 and tf2's conventions (and
// robot_state_publisher's split between moving and fixed joints):
//
//   - the URDF as a std_msgs/msg/String, for /robot_description (published
//     once, transient local);
//   - the fixed joints of both robots as one tf2_msgs/msg/TFMessage, for
//     /tf_static (once, transient local), and for a robot without a
//     floating base the identity from the fixed frame to each robot's root
//     link;
//   - for /tf, the measured robot's moving frames (Measured: the base,
//     fixed frame → the URDF's root link, and every movable joint, parent
//     link → child link, at the measured joint positions), which the node
//     publishes at the state's own rate, and the ghost's (Ghost: fixed
//     frame → prefix + root link, and the joints at the predicted
//     positions), which it publishes with each prediction; Frames makes
//     both in one message (forward kinematics of the URDF,
//     mechanics.URDFJoint.Pose).
//
// A robot without a URDF (a quadrotor: Crazyflie, PX4) gets the measured
// and predicted body frames only: fixed frame → Config.BaseFrame and
// fixed frame → prefix + Config.BaseFrame.
//
// The package computes messages and publishes nothing; the node
// (nodes/node) publishes them.
package tfview

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
)

// ErrConfig wraps every problem found in a Config or Options.
var ErrConfig = errors.New("tfview: invalid config")

// Config is the "tf:" part of the node's params: which topics carry the
// robot description and the frames, and how the ghost is drawn.
type Config struct {
	// Topic is the tf2_msgs/msg/TFMessage topic of the moving frames,
	// one message per prediction (default "/tf"); "-" publishes no
	// frames, no static frames and no description.
	Topic string `yaml:"topic"`
	// StaticTopic is the TFMessage topic of the fixed joints, published
	// once, transient local (default "/tf_static"); "-" for none.
	StaticTopic string `yaml:"static_topic"`
	// DescriptionTopic is the std_msgs/msg/String topic of the URDF,
	// published once, transient local (default "/robot_description");
	// "-" for none.
	DescriptionTopic string `yaml:"description_topic"`
	// URDF is the robot description to publish and whose frames to
	// compute, relative to the data root unless absolute (default: the
	// model's URDF, convert.model.urdf, where the model is one).
	URDF string `yaml:"urdf"`
	// BaseFrame names the body frame of a robot without a URDF (default
	// "base_link", REP 105); with a URDF the base frame is its root link.
	BaseFrame string `yaml:"base_frame"`
	// GhostPrefix starts the name of every frame of the predicted robot
	// (default "ghost/"); Foxglove's URDF layer takes it as its frame
	// prefix.
	GhostPrefix string `yaml:"ghost_prefix"`
	// Ghost is the lookahead [s] at which the ghost is drawn: the state
	// predicted for t + Ghost, drawn at t. It must be a whole number of
	// model steps within the horizon; 0 (the default) is the horizon's
	// end.
	Ghost float64 `yaml:"ghost"`
}

// Defaults fills in the defaults of unset fields.
func (c *Config) Defaults() {
	for _, f := range []struct {
		p   *string
		def string
	}{{&c.Topic, "/tf"}, {&c.StaticTopic, "/tf_static"}, {&c.DescriptionTopic, "/robot_description"}, {&c.BaseFrame, "base_link"}, {&c.GhostPrefix, "ghost/"}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
}

// Enabled reports whether frames are published at all.
func (c *Config) Enabled() bool { return c.Topic != "-" }

// Check checks the fields that need no model (after Defaults).
func (c *Config) Check() error {
	switch {
	case c.Ghost < 0 || math.IsNaN(c.Ghost) || math.IsInf(c.Ghost, 0):
		return fmt.Errorf("%w: ghost: the lookahead must be a positive number of seconds (0 for the horizon's end), got %g", ErrConfig, c.Ghost)
	case strings.ContainsAny(c.GhostPrefix, " \t\n"):
		return fmt.Errorf("%w: ghost_prefix %q: a frame prefix has no white space", ErrConfig, c.GhostPrefix)
	case strings.ContainsAny(c.BaseFrame, " \t\n"):
		return fmt.Errorf("%w: base_frame %q: a frame name has no white space", ErrConfig, c.BaseFrame)
	}
	return nil
}

// Options configures New.
type Options struct {
	// Config is the "tf:" params (after Defaults).
	Config Config
	// Frame is the fixed frame the bases are placed in (the node's
	// frame_id, "odom").
	Frame string
	// URDF is the robot description; nil for a robot without one.
	URDF []byte
	// Floating says whether the state has a floating base.
	Floating bool
	// Joints names the joint coordinates of the state (after the six base
	// coordinates of a floating base), URDF joint names.
	Joints []string
	// Dt is the model's step [s] and Horizon the number of predicted
	// steps.
	Dt      float64
	Horizon int
}

// View makes the messages of one robot's frames. It is not safe for
// concurrent use (the node calls it under its lock).
type View struct {
	cfg      Config
	frame    string
	desc     string
	tree     *mechanics.URDFTree
	base     string // the measured base frame
	floating bool
	step     int
	moving   []int     // index in tree.Joints of each movable joint
	coord    []int     // the joint coordinate of each moving joint, −1 for none
	names    [2][]edge // the frames of the base and the moving joints, measured then ghost
	nj       int
	msg      msgs.TFMessage
}

// edge names a transform's parent and child frames.
type edge struct{ parent, child string }

// New builds a view. A robot without a floating base and without a URDF
// has no frame to draw: New returns nil and no error. A URDF movable
// joint that is not among Options.Joints is drawn at its zero position;
// a joint coordinate that is not a URDF joint is an error.
func New(o Options) (*View, error) {
	cfg := o.Config
	cfg.Defaults()
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() || (o.URDF == nil && !o.Floating) {
		return nil, nil
	}
	if o.Frame == "" {
		return nil, fmt.Errorf("%w: no fixed frame", ErrConfig)
	}
	step := o.Horizon
	if cfg.Ghost > 0 {
		k := math.Round(cfg.Ghost / o.Dt)
		if math.Abs(k*o.Dt-cfg.Ghost) > 1e-9*cfg.Ghost || k < 1 || int(k) > o.Horizon {
			return nil, fmt.Errorf("%w: ghost: a lookahead of %g s is not a whole number of model steps (dt = %g s) between 1 and the horizon's %d (%g s)",
				ErrConfig, cfg.Ghost, o.Dt, o.Horizon, float64(o.Horizon)*o.Dt)
		}
		step = int(k)
	}
	v := &View{cfg: cfg, frame: o.Frame, base: cfg.BaseFrame, floating: o.Floating, step: step, nj: len(o.Joints)}
	if o.URDF != nil {
		tree, err := mechanics.ParseURDFTree(o.URDF)
		if err != nil {
			return nil, fmt.Errorf("tfview: robot description: %w", err)
		}
		v.tree, v.desc, v.base = tree, string(o.URDF), tree.Root
		used := make([]bool, len(o.Joints))
		for i := range tree.Joints {
			j := &tree.Joints[i]
			if j.Type == mechanics.JointFixed {
				continue
			}
			c := slices.Index(o.Joints, j.Name)
			if c >= 0 {
				used[c] = true
			}
			v.moving, v.coord = append(v.moving, i), append(v.coord, c)
		}
		for c, ok := range used {
			if !ok {
				return nil, fmt.Errorf("%w: joint coordinate %q is not a movable joint of the robot description %q", ErrConfig, o.Joints[c], tree.Name)
			}
		}
	}
	if v.base == "" || v.base == o.Frame || cfg.GhostPrefix+v.base == o.Frame {
		return nil, fmt.Errorf("%w: the base frame %q and the fixed frame %q must differ", ErrConfig, v.base, o.Frame)
	}
	// The frame names, made once: Frames allocates nothing.
	for r, prefix := range []string{"", cfg.GhostPrefix} {
		v.names[r] = append(v.names[r], edge{o.Frame, prefix + v.base})
		for _, ji := range v.moving {
			j := &v.tree.Joints[ji]
			v.names[r] = append(v.names[r], edge{prefix + j.Parent, prefix + j.Child})
		}
	}
	n := 2 * (len(v.moving) + 1)
	v.msg.Transforms = make([]msgs.TransformStamped, 0, n)
	return v, nil
}

// Step returns the ghost's lookahead in model steps (1 … horizon): it is
// drawn at the prediction's step Step()−1 (0-based).
func (v *View) Step() int { return v.step }

// Config returns the view's config, defaults filled in.
func (v *View) Config() Config { return v.cfg }

// BaseFrame returns the measured robot's base frame (the URDF's root
// link, or Config.BaseFrame), and GhostFrame the ghost's.
func (v *View) BaseFrame() string { return v.base }

// GhostFrame returns the ghost's base frame: the prefix and BaseFrame.
func (v *View) GhostFrame() string { return v.cfg.GhostPrefix + v.base }

// Links returns every frame below the fixed frame that the view's
// messages name, the measured robot's then the ghost's: the URDF's
// links, or the base frame.
func (v *View) Links() []string {
	links := []string{v.base}
	if v.tree != nil {
		links = slices.Clone(v.tree.Links)
	}
	out := slices.Clone(links)
	for _, l := range links {
		out = append(out, v.cfg.GhostPrefix+l)
	}
	return out
}

// Description returns the robot description message, or nil without a
// URDF or a description topic.
func (v *View) Description() *msgs.String {
	if v.tree == nil || v.cfg.DescriptionTopic == "-" {
		return nil
	}
	return &msgs.String{Data: v.desc}
}

// Static returns the transforms of the fixed joints of both robots, and
// for a robot without a floating base the identity from the fixed frame to
// both root links, stamped at stamp [ns]; nil when there are none or no
// static topic.
func (v *View) Static(stamp int64) *msgs.TFMessage {
	if v.cfg.StaticTopic == "-" {
		return nil
	}
	var m msgs.TFMessage
	t := msgs.TimeFromNanos(stamp)
	if !v.floating {
		for _, child := range []string{v.base, v.GhostFrame()} {
			m.Transforms = append(m.Transforms, transform(t, v.frame, child, mechanics.IdentitySE3()))
		}
	}
	for _, prefix := range []string{"", v.cfg.GhostPrefix} {
		if v.tree == nil {
			break
		}
		for i := range v.tree.Joints {
			j := &v.tree.Joints[i]
			if j.Type == mechanics.JointFixed {
				m.Transforms = append(m.Transforms, transform(t, prefix+j.Parent, prefix+j.Child, j.Origin))
			}
		}
	}
	if len(m.Transforms) == 0 {
		return nil
	}
	return &m
}

// Frames returns the moving frames of one prediction stamped at stamp
// [ns]: the measured base pose and joint positions q (the joint
// coordinates, Options.Joints' order), then the ghost's, ghostPose and
// ghostQ, each under its own frames. A robot without a floating base
// ignores the poses. The message is reused by the next call.
func (v *View) Frames(stamp int64, pose mechanics.SE3, q []float64, ghostPose mechanics.SE3, ghostQ []float64) (*msgs.TFMessage, error) {
	if len(q) != v.nj || len(ghostQ) != v.nj {
		return nil, fmt.Errorf("tfview: frames: %d and %d joint positions, want %d", len(q), len(ghostQ), v.nj)
	}
	t := msgs.TimeFromNanos(stamp)
	v.msg.Transforms = v.msg.Transforms[:0]
	for r, robot := range [2]struct {
		pose mechanics.SE3
		q    []float64
	}{{pose, q}, {ghostPose, ghostQ}} {
		names := v.names[r]
		if v.floating {
			v.msg.Transforms = append(v.msg.Transforms, transform(t, names[0].parent, names[0].child, robot.pose))
		}
		for i, ji := range v.moving {
			var x float64
			if c := v.coord[i]; c >= 0 {
				x = robot.q[c]
			}
			e := names[1+i]
			v.msg.Transforms = append(v.msg.Transforms, transform(t, e.parent, e.child, v.tree.Joints[ji].Pose(x)))
		}
	}
	return &v.msg, nil
}

// Measured returns the moving frames of the measured robot alone,
// stamped at stamp [ns]: the node publishes them at the state's own rate.
// The message is reused by the next call.
func (v *View) Measured(stamp int64, pose mechanics.SE3, q []float64) (*msgs.TFMessage, error) {
	return v.robot(0, stamp, pose, q)
}

// Ghost returns the moving frames of the ghost alone, stamped at stamp
// [ns]: the node publishes them with each prediction. The message is
// reused by the next call.
func (v *View) Ghost(stamp int64, pose mechanics.SE3, q []float64) (*msgs.TFMessage, error) {
	return v.robot(1, stamp, pose, q)
}

// robot returns the moving frames of robot r (0 measured, 1 ghost).
func (v *View) robot(r int, stamp int64, pose mechanics.SE3, q []float64) (*msgs.TFMessage, error) {
	if len(q) != v.nj {
		return nil, fmt.Errorf("tfview: frames: %d joint positions, want %d", len(q), v.nj)
	}
	t := msgs.TimeFromNanos(stamp)
	v.msg.Transforms = v.msg.Transforms[:0]
	names := v.names[r]
	if v.floating {
		v.msg.Transforms = append(v.msg.Transforms, transform(t, names[0].parent, names[0].child, pose))
	}
	for i, ji := range v.moving {
		var x float64
		if c := v.coord[i]; c >= 0 {
			x = q[c]
		}
		e := names[1+i]
		v.msg.Transforms = append(v.msg.Transforms, transform(t, e.parent, e.child, v.tree.Joints[ji].Pose(x)))
	}
	return &v.msg, nil
}

// transform returns the TransformStamped from parent to child of pose
// (the child frame's pose in the parent's).
func transform(t msgs.Time, parent, child string, pose mechanics.SE3) msgs.TransformStamped {
	q := mechanics.QuatFromRotation(pose.R)
	return msgs.TransformStamped{
		Header:       msgs.Header{Stamp: t, FrameID: parent},
		ChildFrameID: child,
		Transform: msgs.Transform{
			Translation: msgs.Vector3{X: pose.P[0], Y: pose.P[1], Z: pose.P[2]},
			Rotation:    msgs.Quaternion{X: q.X, Y: q.Y, Z: q.Z, W: q.W},
		},
	}
}
