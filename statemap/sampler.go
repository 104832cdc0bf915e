package statemap

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// SamplerOptions configures NewSampler.
type SamplerOptions struct {
	// DataRoot resolves relative parameter files and URDFs.
	DataRoot string
	// Channels maps channel names of the spec to the channels they are read
	// from live. Training data recorded as tables names its channels by
	// column ("pos_meas1"); a live node reads the same quantity through a
	// message path ("/joint_states.position[name==\"shoulder\"]"). A mapped
	// channel's Unit, Scale and Offset turn the live value into the logged
	// quantity, to which the spec's own conversion is then applied; its
	// Const is not allowed. Names not in the map are read as written.
	Channels map[string]Channel
	// MaxQuatNormError rejects a sample whose orientation quaternion's
	// norm is off by more than this (the params' validate.max_quat_norm_error;
	// zero disables the check).
	MaxQuatNormError float64
}

// ErrNaN wraps a sample with a NaN or infinite value.
var ErrNaN = errors.New("statemap: NaN or infinite value")

// Sampler maps the latest value of every input of a spec to one sample:
// the state x = (q, p) and the ports e = (u, f_c). It converts the raw
// channel values to SI units, builds the base pose, and hands them to the
// Mapper that dataset conversion calls at every sample; there is no
// alignment, filtering or windowing, and velocities must come from
// channels (nothing is differentiated).
//
// A floating base is expressed as the conversion expresses the first
// sample of a window: relative to its own pose (Spec.BaseCoordinates with
// T0 = T); BasePose maps predicted coordinates back to the world.
//
// A Sampler is not safe for concurrent use.
type Sampler struct {
	mapper *Mapper
	spec   *Spec
	plan   *Plan
	names  []string // source channels, in slot order
	fields [][]string
	slot   []int // per plan scalar: slot, −1 for constants
	// Per plan scalar: the live channel's own conversion to the logged
	// quantity (mapped channels only), then the spec's to SI units.
	mapped         []bool
	preMul, preAdd []float64
	mul, add       []float64
	maxQN          float64
	in             Input
	smp            Sample
	orient         []float64
}

// NewSampler checks spec (after Spec.Defaults), builds its mechanics model
// and plans the inputs of one sample.
func NewSampler(spec *Spec, opts SamplerOptions) (*Sampler, error) {
	s, err := planSampler(spec, opts)
	if err != nil {
		return nil, err
	}
	if s.mapper, err = NewMapper(spec, opts.DataRoot); err != nil {
		return nil, err
	}
	m := s.mapper
	s.in = Input{Values: make([]float64, len(s.plan.Scalars))}
	for i, sc := range s.plan.Scalars {
		if sc.Channel.Const != nil {
			s.in.Values[i] = *sc.Channel.Const
		}
	}
	// Joints, P and Ports point into the caller's x and e at each Sample.
	n, _, _ := m.Layout()
	s.smp = Sample{V: make([]float64, n)}
	s.orient = make([]float64, len(s.plan.Orient))
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
	pl := NewPlan(spec)
	if err := liveVelocities(spec, pl); err != nil {
		return nil, err
	}
	s := &Sampler{spec: spec, plan: pl, maxQN: opts.MaxQuatNormError}
	index := map[string]int{}
	for _, sc := range pl.Scalars {
		name := sc.Channel.Name
		var pre Channel
		mapped := false
		s.mul, s.add = append(s.mul, sc.Channel.Factor()), append(s.add, sc.Channel.Offset)
		if live, ok := opts.Channels[name]; ok && sc.Channel.Const == nil {
			if live.Const != nil || live.Name == "" {
				return nil, FieldError(sc.Field, "live channel for %q must name a channel, not a constant", name)
			}
			if err := checkChannel(sc.Field+" (live)", live, true); err != nil {
				return nil, err
			}
			pre, mapped, name = live, true, live.Name
		}
		s.mapped = append(s.mapped, mapped)
		s.preMul, s.preAdd = append(s.preMul, pre.Factor()), append(s.preAdd, pre.Offset)
		if sc.Channel.Const != nil {
			s.slot = append(s.slot, -1)
			continue
		}
		i, ok := index[name]
		if !ok {
			i = len(s.names)
			index[name] = i
			s.names = append(s.names, name)
			s.fields = append(s.fields, nil)
		}
		s.fields[i] = append(s.fields[i], sc.Field)
		s.slot = append(s.slot, i)
	}
	return s, nil
}

// liveVelocities reports the state velocities a live sample cannot have:
// those the conversion would differentiate.
func liveVelocities(s *Spec, p *Plan) error {
	for i, vi := range p.JointVel {
		if vi < 0 {
			return FieldError(fmt.Sprintf("state.joints[%d].velocity", i), "the live mapping needs a velocity channel (conversion may differentiate positions, a single sample cannot)")
		}
	}
	if s.State.Kind != StateJoints && len(p.LinVel) == 0 {
		return FieldError("state.base", "the live mapping needs linear_velocity and angular_velocity channels")
	}
	return nil
}

// Channels returns the names of the source channels a sample reads (after
// SamplerOptions.Channels), in the order Sample expects their values.
func (s *Sampler) Channels() []string { return s.names }

// Fields returns the spec fields that read channel i of Channels, for
// messages that say what a bad value breaks.
func (s *Sampler) Fields(i int) []string { return s.fields[i] }

// StateChannel reports whether channel i of Channels feeds the state
// (a field of state.joints or state.base), rather than only the ports.
func (s *Sampler) StateChannel(i int) bool {
	return slices.ContainsFunc(s.fields[i], func(f string) bool { return strings.HasPrefix(f, "state.") })
}

// Layout returns n (configuration coordinates), n_u and n_c.
func (s *Sampler) Layout() (n, nu, nc int) { return s.mapper.Layout() }

// Coordinates returns the names of q, as the conversion's datasets name
// them.
func (s *Sampler) Coordinates() []string { return s.spec.Coordinates() }

// Measured returns the number of measured ports Sample writes: n_u + n_c
// of Layout less the port history's channels.
func (s *Sampler) Measured() int { return s.mapper.Measured() }

// Ports returns the names of the model's ports e = (u, f_c), the port
// history's included (Spec.PortNames).
func (s *Sampler) Ports() []string {
	c, k := s.spec.PortNames()
	return append(append([]string(nil), c...), k...)
}

// Floating reports whether q starts with floating-base coordinates.
func (s *Sampler) Floating() bool { return s.spec.Floating() }

// Joints returns the robot's names of the joint coordinates (as its
// sensor_msgs/JointState messages call them: JointSpec.RobotName), which
// follow the six base coordinates of a floating base in q. Coordinates
// has the model's names.
func (s *Sampler) Joints() []string { return s.spec.RobotJointNames() }

// Sample writes the state x (2n values) and the measured ports e
// (Measured values: (u, f_c) without the port history, which
// PortHistory builds from the samples before) of one sample whose channel
// values (raw, in the order of Channels) are values, and returns the base
// pose in the world (the identity without a
// floating base). A value that is NaN or infinite, or a quaternion whose
// norm is off by more than SamplerOptions.MaxQuatNormError, is an error
// wrapping ErrNaN or ErrSpec that names the spec field. It allocates
// nothing.
func (s *Sampler) Sample(values, x, e []float64) (mechanics.SE3, error) {
	pose := mechanics.IdentitySE3()
	n, _, _ := s.mapper.Layout()
	ne := s.mapper.Measured()
	if len(values) < len(s.names) || len(x) < 2*n || len(e) < ne {
		return pose, fmt.Errorf("statemap: sample: %d values, %d state and %d port slots; want %d, %d and %d",
			len(values), len(x), len(e), len(s.names), 2*n, ne)
	}
	vals := s.in.Values
	for i, sl := range s.slot {
		if sl < 0 {
			continue
		}
		v := values[sl]
		if !finite(v) {
			return pose, fmt.Errorf("%w: %s = %g (channel %q)", ErrNaN, s.plan.Scalars[i].Field, v, s.names[sl])
		}
		if s.mapped[i] {
			// The live channel's conversion gives the logged quantity,
			// to which the spec's own applies, as to a logged sample.
			v = v*s.preMul[i] + s.preAdd[i]
		}
		vals[i] = v*s.mul[i] + s.add[i]
	}
	if s.spec.Floating() {
		var err error
		if pose, err = s.pose(vals); err != nil {
			return pose, err
		}
	}
	s.in.Pose = pose
	base := n - len(s.spec.State.Joints)
	s.smp.Joints = x[base:n]
	s.smp.P = x[n : 2*n]
	s.smp.Ports = e[:ne]
	if err := s.mapper.Map(&s.in, &s.smp); err != nil {
		return pose, err
	}
	if base > 0 {
		c := s.spec.BaseCoordinates(pose, pose)
		copy(x[:6], c[:])
	}
	return pose, nil
}

// pose returns the base pose from the position and orientation values.
func (s *Sampler) pose(vals []float64) (mechanics.SE3, error) {
	var P mechanics.Vec3
	for a, i := range s.plan.BasePos {
		P[a] = vals[i]
	}
	for a, i := range s.plan.Orient {
		s.orient[a] = vals[i]
	}
	qt := QuatOf(s.orient)
	if len(s.orient) == 4 {
		nq := qt.Norm()
		if lim := s.maxQN; lim > 0 && math.Abs(nq-1) > lim {
			return mechanics.IdentitySE3(), fmt.Errorf("%w: state.base.orientation: quaternion norm %g is off by more than validate.max_quat_norm_error = %g", ErrSpec, nq, lim)
		}
	}
	u, err := qt.Normalized()
	if err != nil {
		return mechanics.IdentitySE3(), fmt.Errorf("statemap: state.base.orientation: %w", err)
	}
	return mechanics.SE3{R: u.Rotation(), P: P}, nil
}

// BasePose returns the world pose of predicted floating-base coordinates
// (Spec.BasePose).
func (s *Sampler) BasePose(origin mechanics.SE3, q []float64) mechanics.SE3 {
	return s.spec.BasePose(origin, q)
}

// Topics returns the topics named by the message paths among the
// sampler's channels, in first-use order; channels that are not message
// paths (table columns) are returned in the second list.
func (s *Sampler) Topics() (topics, other []string) {
	seen := map[string]bool{}
	for _, n := range s.names {
		t, err := rosmsg.TopicOf(n)
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
