package convert

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
)

// SamplerOptions configures NewSampler.
type SamplerOptions struct {
	// DataRoot resolves relative parameter files and URDFs, as
	// Options.DataRoot does for a conversion.
	DataRoot string
	// Channels maps channel names of the spec to the channels they are read
	// from live. Training data recorded as tables names its channels by
	// column ("pos_meas1"); a live node reads the same quantity through a
	// message path ("/joint_states.position[name==\"shoulder\"]"). A mapped
	// channel's Unit, Scale and Offset turn the live value into the logged
	// quantity, to which the spec's own conversion is then applied; its
	// Const is not allowed. Names not in the map are read as written.
	Channels map[string]Channel
}

// Sampler maps the latest value of every input of a conversion spec to one
// sample of the dataset the spec produces: the state x = (q, p) and the
// ports e = (u, f_c), with the spec's units, mechanics model (p = M(q)v),
// quadrotor allocation and coordinate conventions. It is the per-sample
// part of a conversion, for the live predictor, so that training and
// serving share one mapping: there is no alignment, filtering or
// windowing, and velocities must come from channels (nothing is
// differentiated).
//
// A floating base is expressed as the conversion expresses the first
// sample of a window: relative to its own pose, so q's base coordinates
// are zero (StateFloatingBase) or (0, 0, 0, roll, pitch, 0)
// (StateFloatingBaseGravity); BasePose maps predicted coordinates back to
// the world.
//
// A Sampler is not safe for concurrent use.
type Sampler struct {
	spec   *Spec
	plan   *plan
	model  Model
	alloc  Allocation
	names  []string // source channels, in slot order
	fields [][]string
	slot   []int     // per plan scalar: slot, −1 for constants
	mul    []float64 // per plan scalar: live factor × spec factor
	add    []float64 // per plan scalar: offset after mul
	nj, nv int
	nu, nc int
	m      []float64 // nv×nv scratch
	v      []float64 // nv scratch
	thrust []float64
}

// NewSampler checks spec (after Spec.Defaults), builds its mechanics model
// and plans the inputs of one sample.
func NewSampler(spec *Spec, opts SamplerOptions) (*Sampler, error) {
	s, err := planSampler(spec, opts)
	if err != nil {
		return nil, err
	}
	if s.model, err = NewModel(spec, opts.DataRoot); err != nil {
		return nil, err
	}
	s.nv = s.model.NV()
	s.m = make([]float64, s.nv*s.nv)
	s.v = make([]float64, s.nv)
	return s, nil
}

// LiveChannels returns the source channels a Sampler of spec would read
// (Sampler.Channels) and, for each, the spec fields that read it, without
// building the mechanics model (so without opening parameter files or
// URDFs): for checking a params file against the topics it names.
func LiveChannels(spec *Spec, opts SamplerOptions) (names []string, fields [][]string, err error) {
	s, err := planSampler(spec, opts)
	if err != nil {
		return nil, nil, err
	}
	return s.names, s.fields, nil
}

// planSampler checks the spec and plans a sample's inputs.
func planSampler(spec *Spec, opts SamplerOptions) (*Sampler, error) {
	spec.Defaults()
	if err := spec.Check(); err != nil {
		return nil, err
	}
	pl := newPlan(spec)
	if err := liveVelocities(spec, pl); err != nil {
		return nil, err
	}
	s := &Sampler{spec: spec, plan: pl, nj: len(spec.State.Joints)}
	if spec.Control.Kind == ControlQuadrotor {
		var err error
		if s.alloc, err = QuadrotorAllocation(spec.Control.Quadrotor); err != nil {
			return nil, err
		}
		s.thrust = make([]float64, len(s.alloc))
	}
	ctrl, cont := portNames(spec)
	s.nu, s.nc = len(ctrl), len(cont)
	index := map[string]int{}
	for _, sc := range pl.scalars {
		mul, add := sc.ch.factor(), sc.ch.Offset
		name := sc.ch.Name
		if live, ok := opts.Channels[name]; ok && sc.ch.Const == nil {
			if live.Const != nil || live.Name == "" {
				return nil, specError(sc.field, "live channel for %q must name a channel, not a constant", name)
			}
			if err := checkChannel(sc.field+" (live)", live, true); err != nil {
				return nil, err
			}
			// (x·lf + lo)·f + o = x·(lf·f) + (lo·f + o)
			lf := live.factor()
			add += live.Offset * mul
			mul *= lf
			name = live.Name
		}
		if sc.ch.Const != nil {
			s.slot = append(s.slot, -1)
			s.mul, s.add = append(s.mul, 0), append(s.add, *sc.ch.Const)
			continue
		}
		i, ok := index[name]
		if !ok {
			i = len(s.names)
			index[name] = i
			s.names = append(s.names, name)
			s.fields = append(s.fields, nil)
		}
		s.fields[i] = append(s.fields[i], sc.field)
		s.slot = append(s.slot, i)
		s.mul, s.add = append(s.mul, mul), append(s.add, add)
	}
	return s, nil
}

// liveVelocities reports the state velocities a live sample cannot have:
// those the conversion would differentiate.
func liveVelocities(s *Spec, p *plan) error {
	for i, vi := range p.jointVel {
		if vi < 0 {
			return specError(fmt.Sprintf("state.joints[%d].velocity", i), "the live mapping needs a velocity channel (conversion may differentiate positions, a single sample cannot)")
		}
	}
	if s.State.Kind != StateJoints && len(p.linVel) == 0 {
		return specError("state.base", "the live mapping needs linear_velocity and angular_velocity channels")
	}
	return nil
}

// Channels returns the names of the source channels a sample reads (after
// SamplerOptions.Channels), in the order Sample expects their values.
func (s *Sampler) Channels() []string { return s.names }

// Fields returns the spec fields that read channel i of Channels, for
// messages that say what a bad value breaks.
func (s *Sampler) Fields(i int) []string { return s.fields[i] }

// Layout returns n (configuration coordinates), n_u and n_c.
func (s *Sampler) Layout() (n, nu, nc int) { return s.nv, s.nu, s.nc }

// Coordinates returns the names of q, as the conversion's datasets name
// them.
func (s *Sampler) Coordinates() []string { return coordinateNames(s.spec) }

// Ports returns the names of e = (u, f_c).
func (s *Sampler) Ports() []string {
	c, k := portNames(s.spec)
	return append(append([]string(nil), c...), k...)
}

// Floating reports whether q starts with floating-base coordinates.
func (s *Sampler) Floating() bool { return s.spec.State.Kind != StateJoints }

// Joints returns the names of the joint coordinates, which follow the six
// base coordinates of a floating base in q.
func (s *Sampler) Joints() []string {
	out := make([]string, s.nj)
	for i, j := range s.spec.State.Joints {
		out[i] = j.Name
	}
	return out
}

// value returns plan scalar i in SI units.
func (s *Sampler) value(values []float64, i int) float64 {
	if sl := s.slot[i]; sl >= 0 {
		return values[sl]*s.mul[i] + s.add[i]
	}
	return s.add[i]
}

// Sample writes the state x (2n values) and the ports e (n_u + n_c values)
// of one sample whose channel values (raw, in the order of Channels) are
// values, and returns the base pose in the world (the identity without a
// floating base). A value that is NaN or infinite, or a quaternion whose
// norm is off by more than validate.max_quat_norm_error, is an error
// wrapping ErrNaN or ErrSpec that names the spec field.
func (s *Sampler) Sample(values, x, e []float64) (mechanics.SE3, error) {
	pose := mechanics.IdentitySE3()
	n := s.nv
	if len(values) < len(s.names) || len(x) < 2*n || len(e) < s.nu+s.nc {
		return pose, fmt.Errorf("convert: sample: %d values, %d state and %d port slots; want %d, %d and %d",
			len(values), len(x), len(e), len(s.names), 2*n, s.nu+s.nc)
	}
	for i, sl := range s.slot {
		if sl >= 0 && !finite(values[sl]) {
			return pose, fmt.Errorf("%w: %s = %g (channel %q)", ErrNaN, s.plan.scalars[i].field, values[sl], s.names[sl])
		}
	}
	q, v := x[:n], s.v
	base := n - s.nj
	for i := range s.nj {
		q[base+i] = s.value(values, s.plan.jointPos[i])
		v[base+i] = s.value(values, s.plan.jointVel[i])
	}
	if s.Floating() {
		var err error
		if pose, err = s.pose(values); err != nil {
			return pose, err
		}
		var lin, ang mechanics.Vec3
		for a := range 3 {
			lin[a] = s.value(values, s.plan.linVel[a])
			ang[a] = s.value(values, s.plan.angVel[a])
		}
		b := &s.spec.State.Base
		Rt := pose.R.T()
		if b.LinearVelocity.Frame == FrameWorld {
			lin = Rt.MulVec(lin)
		}
		if b.AngularVelocity.Frame == FrameWorld {
			ang = Rt.MulVec(ang)
		}
		copy(v[:3], lin[:])
		copy(v[3:6], ang[:])
		c := [6]float64{}
		if s.spec.State.Kind == StateFloatingBaseGravity {
			c = gravityCoordinates(pose, pose)
		}
		copy(q[:6], c[:])
	}
	if err := s.model.MassMatrix(s.m, q[base:]); err != nil {
		return pose, err
	}
	p := x[n : 2*n]
	for r := range n {
		var acc float64
		for c := range n {
			acc += s.m[r*n+c] * v[c]
		}
		p[r] = acc
	}
	s.ports(values, e)
	if s.spec.Contact.BodyAxes {
		rotateToBody(e[s.nu:s.nu+s.nc], pose.R)
	}
	return pose, nil
}

// pose returns the base pose from the position and orientation channels.
func (s *Sampler) pose(values []float64) (mechanics.SE3, error) {
	var P mechanics.Vec3
	for a, i := range s.plan.basePos {
		P[a] = s.value(values, i)
	}
	o := s.plan.orient
	var R mechanics.Mat3
	if len(o) == 3 {
		R = mechanics.RPY(s.value(values, o[0]), s.value(values, o[1]), s.value(values, o[2]))
	} else {
		qt := mechanics.Quat{W: s.value(values, o[0]), X: s.value(values, o[1]), Y: s.value(values, o[2]), Z: s.value(values, o[3])}
		nq := qt.Norm()
		if lim := s.spec.Validate.MaxQuatNormError; lim > 0 && math.Abs(nq-1) > lim {
			return mechanics.IdentitySE3(), fmt.Errorf("%w: state.base.orientation: quaternion norm %g is off by more than validate.max_quat_norm_error = %g", ErrSpec, nq, lim)
		}
		u, err := qt.Normalized()
		if err != nil {
			return mechanics.IdentitySE3(), fmt.Errorf("convert: state.base.orientation: %w", err)
		}
		R = u.Rotation()
	}
	return mechanics.SE3{R: R, P: P}, nil
}

// ports writes (u, f_c).
func (s *Sampler) ports(values, e []float64) {
	if s.spec.Control.Kind == ControlQuadrotor {
		for i, sc := range s.plan.control {
			s.thrust[i] = Thrust(s.spec.Control.Quadrotor.ThrustPoly, s.value(values, sc))
		}
		w := s.alloc.Wrench(s.thrust)
		copy(e, w[:])
	} else {
		for i, sc := range s.plan.control {
			e[i] = s.value(values, sc)
		}
	}
	for i, sc := range s.plan.contact {
		e[s.nu+i] = s.value(values, sc)
	}
}

// BasePose returns the world pose of predicted floating-base coordinates
// q (the first six of a predicted configuration) for a prediction that
// started at the base pose origin (as Sample returned it): origin·exp(q)
// for StateFloatingBase, and for StateFloatingBaseGravity the position
// origin.P + Rz(yaw₀)(x, y, z) and orientation Rz(yaw₀ + yaw)·Ry(pitch)·Rx(roll).
// Without a floating base it returns origin.
func (s *Sampler) BasePose(origin mechanics.SE3, q []float64) mechanics.SE3 {
	switch s.spec.State.Kind {
	case StateFloatingBase:
		return origin.Mul(mechanics.ExpSE3(mechanics.Twist{q[0], q[1], q[2], q[3], q[4], q[5]}))
	case StateFloatingBaseGravity:
		_, _, yaw0 := EulerZYX(origin.R)
		rz := mechanics.RPY(0, 0, yaw0)
		return mechanics.SE3{
			R: mechanics.RPY(q[3], q[4], yaw0+q[5]),
			P: origin.P.Add(rz.MulVec(mechanics.Vec3{q[0], q[1], q[2]})),
		}
	}
	return origin
}

// Topics returns the topics named by the message paths among the
// sampler's channels, in first-use order; channels that are not message
// paths (table columns) are returned in the second list.
func (s *Sampler) Topics() (topics, other []string) {
	seen := map[string]bool{}
	for _, n := range s.names {
		t, err := msgs.TopicOf(n)
		if err != nil || t == "" {
			other = append(other, n)
			continue
		}
		if !seen[t] {
			seen[t] = true
			topics = append(topics, t)
		}
	}
	return topics, other
}
