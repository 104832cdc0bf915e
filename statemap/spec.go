package statemap

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/calisym/calisym/mechanics"
	"gopkg.in/yaml.v3"
)

// ErrZeroScale is a channel's explicit scale of 0, which would read every
// value as 0 (an absent scale is 1).
var ErrZeroScale = errors.New("a scale of 0 reads every value as 0: want a nonzero factor (omit the key for 1)")

// ErrSpec wraps every problem found in a params file's mapping (and, in
// bagtools/convert, in the rest of its "convert:" section).
var ErrSpec = errors.New("convert: invalid spec")

// SpecKey is the key of the section of a params YAML file that holds the
// mapping; error messages name fields under it ("convert.state.kind").
const SpecKey = "convert"

// Spec is the mapping from a robot's logged or live channels to the state
// x = (q, p) and the ports e = (u, f_c): where every configuration,
// velocity, control and contact component comes from, and the mechanics
// model behind p = M(q)v. It is the part of a params file's "convert:"
// section that dataset conversion and the live node share.
//
// Channel names are column names for tables (CSV, parquet) and, for
// message logs and live topics, message paths in Foxglove's style
// ("/joint_states.position[1]").
type Spec struct {
	// State says where q and v come from.
	State StateSpec `yaml:"state" mapstructure:"state"`
	// Model is the mechanics behind p = M(q)v.
	Model ModelSpec `yaml:"model" mapstructure:"model"`
	// Control is the control port u; Kind "" or "none" leaves it empty.
	Control ControlSpec `yaml:"control" mapstructure:"control"`
	// Contact is the contact port f_c; empty Channels leave it empty.
	Contact PortSpec `yaml:"contact" mapstructure:"contact"`
	// History adds the ports' recent past to the control port.
	History HistorySpec `yaml:"history" mapstructure:"history"`
}

// MaxPortMean bounds HistorySpec.PortMean.
const MaxPortMean = 1000

// HistorySpec adds channels built from the samples before each sample
// (at the dataset rate) to the control port: the ports' recent past,
// which a one-sample state does not carry (an impulse the base took over
// the last steps, a torque still ramping). Conversion builds them from the
// log, the live node from its input history, with one PortHistory.
type HistorySpec struct {
	// PortMean is m: the mean of every measured port (u, f_c) over the m
	// samples before each sample, appended to the control port as
	// "mean<m>(<port>)" (the impulse over the last m steps divided by
	// m·dt). 0 (the default) adds none. Where fewer than m samples of the
	// same stretch of log came before (its start, after a gap), the mean
	// is over those there are, and over none it is the sample's own ports.
	PortMean int `yaml:"port_mean" mapstructure:"port_mean"`
}

// Channel groups: the role of each scalar input (Scalar.Group), by which
// conversion chooses interpolation and filtering.
const (
	GroupConfiguration = "configuration"
	GroupVelocity      = "velocity"
	GroupControl       = "control"
	GroupContact       = "contact"
)

// Channel is one scalar input: a source channel converted to SI units as
// (value·unit factor·Scale) + Offset, or a constant. In YAML a bare string
// is shorthand for {name: <string>}.
type Channel struct {
	// Name is the column name or message path.
	Name string `yaml:"name" mapstructure:"name"`
	// Unit is the unit the log records (see Units); "" means SI.
	Unit string `yaml:"unit" mapstructure:"unit"`
	// Scale multiplies the value after unit conversion (unset: 1; an
	// explicit 0 in a params file is refused, ErrZeroScale).
	Scale float64 `yaml:"scale" mapstructure:"scale"`
	// Offset is added last.
	Offset float64 `yaml:"offset" mapstructure:"offset"`
	// Const, when set, makes the channel the constant Const instead of
	// reading Name (for example zero controls on unactuated coordinates).
	Const *float64 `yaml:"const" mapstructure:"const"`
}

// IsZero reports whether the channel is unset.
func (c Channel) IsZero() bool { return c.Name == "" && c.Const == nil }

// unitFactor returns the factor from the named unit to SI and whether the
// unit is known. Names are case-insensitive; "" means SI.
func unitFactor(unit string) (float64, bool) {
	switch strings.ToLower(unit) {
	case "", "si", "rad", "rad/s", "m", "m/s", "s", "n", "n*m", "nm", "kg":
		return 1, true
	case "deg", "deg/s":
		return math.Pi / 180, true
	case "rpm":
		return 2 * math.Pi / 60, true
	case "cm":
		return 0.01, true
	case "mm", "mm/s", "ms", "mn", "mn*m", "n*mm", "g":
		return 1e-3, true
	case "a":
		return 1, true
	case "ma":
		return 1e-3, true
	case "us":
		return 1e-6, true
	case "ns":
		return 1e-9, true
	}
	return 0, false
}

// UnitNames lists the units a Channel accepts.
func UnitNames() []string {
	return []string{"rad", "deg", "rad/s", "deg/s", "rpm", "m", "cm", "mm", "m/s", "mm/s", "s", "ms", "us", "ns", "N", "mN", "N*m", "Nm", "mN*m", "N*mm", "kg", "g", "A", "mA"}
}

// Factor returns the channel's multiplier to SI: the unit's factor times
// Scale.
func (c Channel) Factor() float64 {
	f, _ := unitFactor(c.Unit)
	if c.Scale != 0 {
		f *= c.Scale
	}
	return f
}

// State kinds.
const (
	// StateJoints: q are joint positions, v their rates.
	StateJoints = "joints"
	// StateFloatingBase: q is the SE(3) logarithm of the base pose relative
	// to each window's first pose (then any joints); v the base's body
	// twist (linear, angular), then joint rates.
	StateFloatingBase = "floating_base"
	// StateFloatingBaseGravity: position and yaw relative to each window's
	// first pose (position in that pose's yaw frame), roll and pitch
	// absolute, q = (x, y, z, roll, pitch, yaw); v as StateFloatingBase.
	StateFloatingBaseGravity = "floating_base_gravity"
)

// StateSpec says where the configuration and velocity come from.
type StateSpec struct {
	// Kind is StateJoints, StateFloatingBase or StateFloatingBaseGravity.
	Kind string `yaml:"kind" mapstructure:"kind"`
	// Joints are the joint coordinates in the order of q. With a URDF
	// model their names must be the URDF's movable joints.
	Joints []JointSpec `yaml:"joints" mapstructure:"joints"`
	// Base is the floating base (floating-base kinds only).
	Base BaseSpec `yaml:"base" mapstructure:"base"`
}

// JointSpec is one joint coordinate.
type JointSpec struct {
	// Name names the coordinate (a URDF joint name with a URDF model).
	Name string `yaml:"name" mapstructure:"name"`
	// Joint is the robot's name of the joint, as its sensor_msgs/JointState
	// messages call it; the predictor node's predicted joint states carry
	// it, so that they match the robot's own (default: Name). Set it where
	// Name is a model's coordinate name that the robot does not use (the
	// simulated pendulum's q1, q2 are its joints shoulder and elbow).
	Joint string `yaml:"joint" mapstructure:"joint"`
	// Position is the joint angle [rad] or displacement [m].
	Position Channel `yaml:"position" mapstructure:"position"`
	// Velocity is the joint rate; when unset it is differentiated from the
	// filtered position (central differences at the working rate).
	Velocity Channel `yaml:"velocity" mapstructure:"velocity"`
}

// BaseSpec is a floating base's pose and twist.
type BaseSpec struct {
	// Position is the base origin in the world frame (3 channels) [m].
	Position []Channel `yaml:"position" mapstructure:"position"`
	// Orientation is the base orientation (body to world).
	Orientation OrientationSpec `yaml:"orientation" mapstructure:"orientation"`
	// LinearVelocity is the base origin's velocity; when unset the body
	// twist is differentiated from the filtered poses.
	LinearVelocity VelocitySpec `yaml:"linear_velocity" mapstructure:"linear_velocity"`
	// AngularVelocity is the base's angular velocity; unset as above.
	AngularVelocity VelocitySpec `yaml:"angular_velocity" mapstructure:"angular_velocity"`
}

// Orientation kinds.
const (
	// OrientationQuaternion reads four quaternion components.
	OrientationQuaternion = "quaternion"
	// OrientationRPY reads roll, pitch, yaw with R = Rz(yaw)·Ry(pitch)·Rx(roll).
	OrientationRPY = "rpy"
)

// OrientationSpec is a base orientation.
type OrientationSpec struct {
	// Kind is OrientationQuaternion (default) or OrientationRPY.
	Kind string `yaml:"kind" mapstructure:"kind"`
	// Order is the quaternion component order of Channels: "xyzw" (ROS,
	// default) or "wxyz".
	Order string `yaml:"order" mapstructure:"order"`
	// Channels are the 4 quaternion or 3 roll-pitch-yaw channels.
	Channels []Channel `yaml:"channels" mapstructure:"channels"`
}

// Velocity frames.
const (
	// FrameWorld: the vector is expressed in world axes.
	FrameWorld = "world"
	// FrameBody: the vector is expressed in the base's body axes.
	FrameBody = "body"
)

// VelocitySpec is a 3-vector velocity and the frame it is expressed in.
type VelocitySpec struct {
	// Frame is FrameWorld or FrameBody.
	Frame string `yaml:"frame" mapstructure:"frame"`
	// Channels are the x, y, z components.
	Channels []Channel `yaml:"channels" mapstructure:"channels"`
}

// Model kinds.
const (
	// ModelDoublePendulum is the analytic double pendulum of mechanics.
	ModelDoublePendulum = "double_pendulum"
	// ModelRigidBody is one free rigid body, M = diag(m I₃, I_body) about
	// its centre of mass.
	ModelRigidBody = "rigid_body"
	// ModelURDF is a URDF kinematic tree, M(q) by the composite-rigid-body
	// algorithm, plus the drive inertias of ModelSpec.Joints.
	ModelURDF = "urdf"
	// ModelIdentity is M = I: the momenta are the joint rates, p = q̇. It
	// is a first model of a robot without a URDF, for joint-space state
	// only (StateJoints): a floating base needs its mass and inertia
	// (ModelRigidBody, ModelURDF), and gives no potential energy (an
	// energy split then ranks windows by ½|q̇|²).
	ModelIdentity = "identity"
)

// ModelSpec is the mechanics model for p = M(q)v.
type ModelSpec struct {
	// Kind is ModelDoublePendulum, ModelRigidBody, ModelURDF or
	// ModelIdentity.
	Kind string `yaml:"kind" mapstructure:"kind"`
	// Pendulum holds the double pendulum's parameters.
	Pendulum PendulumSpec `yaml:"pendulum" mapstructure:"pendulum"`
	// RigidBody holds the rigid body's mass properties.
	RigidBody RigidBodySpec `yaml:"rigid_body" mapstructure:"rigid_body"`
	// URDF is the URDF file, relative to the data root unless absolute.
	// A xacro file is refused: expand it first (xacro robot.urdf.xacro >
	// robot.urdf).
	URDF string `yaml:"urdf" mapstructure:"urdf"`
	// Joints adds each listed joint's drive (rotor and gearbox) inertia to
	// the URDF's M(q) (ModelURDF only): URDF has no element for it, and
	// on a geared arm the reflected rotor inertia can exceed the links'.
	Joints []JointDriveSpec `yaml:"joints" mapstructure:"joints"`
	// Gravity is the gravitational acceleration for the energies used by
	// energy splits (default 9.81 m/s²). The pendulum uses its own g.
	Gravity float64 `yaml:"gravity" mapstructure:"gravity"`
}

// JointDriveSpec is the drive of one joint: a rotor of inertia Armature
// about its axis turning GearRatio times per joint turn adds the reflected
// inertia Armature·GearRatio² to M's diagonal entry of the joint.
type JointDriveSpec struct {
	// Name is the joint, one of state.joints.
	Name string `yaml:"name" mapstructure:"name"`
	// Armature is the rotor's inertia about its axis [kg·m²] (a prismatic
	// joint's drive: its reflected mass [kg]), at least 0.
	Armature float64 `yaml:"armature" mapstructure:"armature"`
	// GearRatio is the rotor's turns per joint turn (0 means 1: Armature
	// is already reflected to the joint side, as identified drive
	// inertias usually are).
	GearRatio float64 `yaml:"gear_ratio" mapstructure:"gear_ratio"`
}

// Reflected returns the inertia the drive adds at its joint,
// Armature·GearRatio² (GearRatio 0 counts as 1).
func (d JointDriveSpec) Reflected() float64 {
	g := d.GearRatio
	if g == 0 {
		g = 1
	}
	return d.Armature * g * g
}

// PendulumSpec gives double-pendulum parameters in the dfki
// model_parameters.yml format (inertias about the joint axes), either as a
// file or inline.
type PendulumSpec struct {
	// ParamsFile is a model_parameters.yml file, relative to the data root
	// unless absolute.
	ParamsFile string `yaml:"params_file" mapstructure:"params_file"`
	// Params are the parameters inline (keys m1 m2 l1 l2 r1 r2 I1 I2 g …).
	Params map[string]float64 `yaml:"params" mapstructure:"params"`
}

// RigidBodySpec gives a rigid body's mass properties in its body frame.
type RigidBodySpec struct {
	// Mass in kg.
	Mass float64 `yaml:"mass" mapstructure:"mass"`
	// Inertia about the centre of mass in kg·m²: 3 values (diagonal), 6
	// (Ixx Iyy Izz Ixy Ixz Iyz) or 9 (row-major).
	Inertia []float64 `yaml:"inertia" mapstructure:"inertia"`
	// COM is the centre of mass in the body frame (default the origin).
	COM []float64 `yaml:"com" mapstructure:"com"`
}

// Control kinds.
const (
	// ControlNone leaves the control port empty.
	ControlNone = "none"
	// ControlDirect reads the control values from channels.
	ControlDirect = "direct"
	// ControlQuadrotor maps motor commands to the 6-D body wrench.
	ControlQuadrotor = "quadrotor"
)

// Interpolation of port channels.
const (
	// InterpLinear interpolates linearly between samples (default).
	InterpLinear = "linear"
	// InterpHold holds each sample until the next one.
	InterpHold = "hold"
)

// PortSpec is a port read from channels.
type PortSpec struct {
	// Names name the port values (default: the channel names).
	Names []string `yaml:"names" mapstructure:"names"`
	// Channels are the port values.
	Channels []Channel `yaml:"channels" mapstructure:"channels"`
	// Interp is InterpLinear or InterpHold.
	Interp string `yaml:"interp" mapstructure:"interp"`
	// BodyAxes (contact port of a floating base only) says that the
	// channels are (x, y, z) force triplets logged in world axes, to be
	// rotated into the base's body axes at each sample: the body-frame
	// momenta change with the forces in body axes, which a configuration
	// relative to a window's first pose cannot otherwise recover (the
	// absolute yaw is not in q).
	BodyAxes bool `yaml:"body_axes" mapstructure:"body_axes"`
}

// ControlSpec is the control port.
type ControlSpec struct {
	// Kind is ControlNone, ControlDirect or ControlQuadrotor.
	Kind string `yaml:"kind" mapstructure:"kind"`
	// PortSpec holds the channels of a direct control port.
	PortSpec `yaml:",inline" mapstructure:",squash"`
	// Quadrotor maps motor commands to the body wrench.
	Quadrotor QuadrotorSpec `yaml:"quadrotor" mapstructure:"quadrotor"`
}

// QuadrotorSpec maps four motor commands to the body wrench
// (Fx, Fy, Fz, τx, τy, τz) through each rotor's thrust and the allocation
// matrix of the rotor layout.
type QuadrotorSpec struct {
	// Motors are the motor command channels, in the layout's motor order.
	Motors []Channel `yaml:"motors" mapstructure:"motors"`
	// ThrustPoly maps a command c to the rotor thrust f = Σ ThrustPoly[k]·c^k [N]
	// (with Voltage set, of the voltage-scaled command c·V/VoltageRef).
	ThrustPoly []float64 `yaml:"thrust_poly" mapstructure:"thrust_poly"`
	// Voltage, when set, is the battery's voltage [V], which drives the
	// motors: each command is scaled by V/VoltageRef before ThrustPoly, as
	// a motor's speed for a given duty cycle grows with the voltage behind
	// it. A planner holds the last measured voltage over its horizon.
	Voltage Channel `yaml:"voltage" mapstructure:"voltage"`
	// VoltageRef is the voltage [V] at which ThrustPoly maps the command
	// unscaled; required with Voltage.
	VoltageRef float64 `yaml:"voltage_ref" mapstructure:"voltage_ref"`
	// ArmLength is the distance from the centre to each rotor axis [m].
	ArmLength float64 `yaml:"arm_length" mapstructure:"arm_length"`
	// TorqueCoeff is the rotor drag torque per unit thrust [m].
	TorqueCoeff float64 `yaml:"torque_coeff" mapstructure:"torque_coeff"`
	// Layout is "crazyflie" (X configuration, Crazyflie motor numbering,
	// default) or "custom" (Rotors).
	Layout string `yaml:"layout" mapstructure:"layout"`
	// Rotors give each rotor's position and yaw-torque sign for "custom".
	Rotors []RotorSpec `yaml:"rotors" mapstructure:"rotors"`
}

// RotorSpec is one rotor of a custom layout.
type RotorSpec struct {
	// X and Y are the rotor axis position in the body frame [m].
	X float64 `yaml:"x" mapstructure:"x"`
	Y float64 `yaml:"y" mapstructure:"y"` // see X
	// YawSign is +1 when the rotor's drag torque on the body points along
	// +z (a clockwise rotor seen from above), −1 otherwise.
	YawSign float64 `yaml:"yaw_sign" mapstructure:"yaw_sign"`
}

// UnmarshalYAML reads a channel; a bare string is its name. Unknown keys
// are an error.
func (c *Channel) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		*c = Channel{Name: n.Value}
		return nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch k := n.Content[i]; k.Value {
			case "scale":
				if v := n.Content[i+1]; v.Kind == yaml.ScalarNode {
					var f float64
					if v.Decode(&f) == nil && f == 0 {
						return fmt.Errorf("line %d: channel scale %s: %w", k.Line, v.Value, ErrZeroScale)
					}
				}
			case "name", "unit", "offset", "const":
			default:
				return fmt.Errorf("line %d: channel has no key %q (keys: name, unit, scale, offset, const)", k.Line, k.Value)
			}
		}
	}
	type plain Channel
	return n.Decode((*plain)(c))
}

// Defaults fills in the defaults of unset fields.
func (s *Spec) Defaults() {
	if s.State.Base.Orientation.Kind == "" {
		s.State.Base.Orientation.Kind = OrientationQuaternion
	}
	if s.State.Base.Orientation.Order == "" {
		s.State.Base.Orientation.Order = "xyzw"
	}
	if s.Control.Kind == "" {
		s.Control.Kind = ControlNone
		if len(s.Control.Channels) > 0 {
			s.Control.Kind = ControlDirect
		}
	}
	if s.Control.Interp == "" {
		s.Control.Interp = InterpLinear
	}
	if s.Contact.Interp == "" {
		s.Contact.Interp = InterpLinear
	}
	if s.Control.Kind == ControlQuadrotor && s.Control.Quadrotor.Layout == "" {
		s.Control.Quadrotor.Layout = "crazyflie"
	}
	if s.Model.Gravity == 0 {
		s.Model.Gravity = 9.81
	}
}

// Check validates the mapping (after Defaults), naming the first
// offending field. It checks the spec alone; parameter files and URDFs
// are checked when the model is built (NewModel).
func (s *Spec) Check() error {
	if err := s.checkState(); err != nil {
		return err
	}
	if err := s.checkModel(); err != nil {
		return err
	}
	if err := s.checkPorts(); err != nil {
		return err
	}
	if m := s.History.PortMean; m < 0 || m > MaxPortMean {
		return FieldError("history.port_mean", "must be a number of samples from 0 (none) to %d, got %d", MaxPortMean, m)
	}
	if c, k := s.MeasuredPortNames(); s.History.PortMean > 0 && len(c)+len(k) == 0 {
		return FieldError("history.port_mean", "needs ports to average (control or contact channels)")
	}
	if s.Control.BodyAxes {
		return FieldError("control.body_axes", "applies to the contact port only")
	}
	if s.Contact.BodyAxes {
		if s.State.Kind == StateJoints {
			return FieldError("contact.body_axes", "needs a floating base (state.kind %q has no base orientation)", s.State.Kind)
		}
		if n := len(s.Contact.Channels); n%3 != 0 {
			return FieldError("contact.body_axes", "needs (x, y, z) triplets, got %d channels", n)
		}
	}
	return nil
}

// Floating reports whether q starts with floating-base coordinates.
func (s *Spec) Floating() bool { return s.State.Kind != StateJoints }

// FieldError returns an error wrapping ErrSpec that names the field of
// the params file's section ("state.kind" is reported as
// "convert.state.kind").
func FieldError(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s.%s: %s", ErrSpec, SpecKey, field, fmt.Sprintf(format, args...))
}

// CheckOneOf returns a FieldError unless got is one of allowed.
func CheckOneOf(field, got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	q := make([]string, len(allowed))
	for i, v := range allowed {
		q[i] = fmt.Sprintf("%q", v)
	}
	return FieldError(field, "%q is not one of %s", got, strings.Join(q, ", "))
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func checkChannel(field string, c Channel, required bool) error {
	if c.IsZero() {
		if required {
			return FieldError(field, "channel is required")
		}
		return nil
	}
	if c.Name != "" && c.Const != nil {
		return FieldError(field, "give either name or const, not both")
	}
	if _, ok := unitFactor(c.Unit); !ok {
		return FieldError(field+".unit", "unknown unit %q (known: %s)", c.Unit, strings.Join(UnitNames(), ", "))
	}
	if !finite(c.Scale) || !finite(c.Offset) || (c.Const != nil && !finite(*c.Const)) {
		return FieldError(field, "scale, offset and const must be finite")
	}
	return nil
}

func checkChannels(field string, cs []Channel, n int) error {
	if len(cs) != n {
		return FieldError(field, "needs %d channels, got %d", n, len(cs))
	}
	for i, c := range cs {
		if err := checkChannel(fmt.Sprintf("%s[%d]", field, i), c, true); err != nil {
			return err
		}
	}
	return nil
}

func (s *Spec) checkState() error {
	st := &s.State
	if err := CheckOneOf("state.kind", st.Kind, StateJoints, StateFloatingBase, StateFloatingBaseGravity); err != nil {
		return err
	}
	names, robots := map[string]bool{}, map[string]bool{}
	for i, j := range st.Joints {
		f := fmt.Sprintf("state.joints[%d]", i)
		if j.Name == "" {
			return FieldError(f+".name", "joint has no name")
		}
		if names[j.Name] {
			return FieldError(f+".name", "duplicate joint %q", j.Name)
		}
		names[j.Name] = true
		robot := j.RobotName()
		if robots[robot] {
			return FieldError(f+".joint", "duplicate robot joint name %q", robot)
		}
		robots[robot] = true
		if err := checkChannel(f+".position", j.Position, true); err != nil {
			return err
		}
		if err := checkChannel(f+".velocity", j.Velocity, false); err != nil {
			return err
		}
	}
	if st.Kind == StateJoints {
		if len(st.Joints) == 0 {
			return FieldError("state.joints", "kind %q needs at least one joint", st.Kind)
		}
		if len(st.Base.Position) > 0 || len(st.Base.Orientation.Channels) > 0 {
			return FieldError("state.base", "kind %q has no floating base; use %q", st.Kind, StateFloatingBase)
		}
		return nil
	}
	b := &st.Base
	if err := checkChannels("state.base.position", b.Position, 3); err != nil {
		return err
	}
	if err := CheckOneOf("state.base.orientation.kind", b.Orientation.Kind, OrientationQuaternion, OrientationRPY); err != nil {
		return err
	}
	n := 4
	if b.Orientation.Kind == OrientationRPY {
		n = 3
	} else if err := CheckOneOf("state.base.orientation.order", b.Orientation.Order, "xyzw", "wxyz"); err != nil {
		return err
	}
	if err := checkChannels("state.base.orientation.channels", b.Orientation.Channels, n); err != nil {
		return err
	}
	for _, v := range []struct {
		field string
		spec  VelocitySpec
	}{{"state.base.linear_velocity", b.LinearVelocity}, {"state.base.angular_velocity", b.AngularVelocity}} {
		if len(v.spec.Channels) == 0 {
			continue
		}
		if err := CheckOneOf(v.field+".frame", v.spec.Frame, FrameWorld, FrameBody); err != nil {
			return err
		}
		if err := checkChannels(v.field+".channels", v.spec.Channels, 3); err != nil {
			return err
		}
	}
	if (len(b.LinearVelocity.Channels) == 0) != (len(b.AngularVelocity.Channels) == 0) {
		return FieldError("state.base", "give both linear_velocity and angular_velocity, or neither (to differentiate the pose)")
	}
	return nil
}

func (s *Spec) checkModel() error {
	m := &s.Model
	if err := CheckOneOf("model.kind", m.Kind, ModelDoublePendulum, ModelRigidBody, ModelURDF, ModelIdentity); err != nil {
		return err
	}
	if err := s.checkDrives(); err != nil {
		return err
	}
	if !(m.Gravity > 0) || !finite(m.Gravity) {
		return FieldError("model.gravity", "must be positive, got %g", m.Gravity)
	}
	switch m.Kind {
	case ModelDoublePendulum:
		if s.State.Kind != StateJoints || len(s.State.Joints) != 2 {
			return FieldError("state", "model %q needs kind %q with exactly 2 joints", m.Kind, StateJoints)
		}
		if (m.Pendulum.ParamsFile == "") == (len(m.Pendulum.Params) == 0) {
			return FieldError("model.pendulum", "give exactly one of params_file and params")
		}
	case ModelRigidBody:
		if s.State.Kind == StateJoints || len(s.State.Joints) > 0 {
			return FieldError("state", "model %q is a single free body: needs a floating-base kind and no joints", m.Kind)
		}
		rb := &m.RigidBody
		if !(rb.Mass > 0) || !finite(rb.Mass) {
			return FieldError("model.rigid_body.mass", "must be positive, got %g", rb.Mass)
		}
		switch len(rb.Inertia) {
		case 3, 6, 9:
		default:
			return FieldError("model.rigid_body.inertia", "needs 3 (diagonal), 6 (Ixx Iyy Izz Ixy Ixz Iyz) or 9 values, got %d", len(rb.Inertia))
		}
		if len(rb.COM) != 0 && len(rb.COM) != 3 {
			return FieldError("model.rigid_body.com", "needs 3 values, got %d", len(rb.COM))
		}
	case ModelURDF:
		if m.URDF == "" {
			return FieldError("model.urdf", "no URDF file")
		}
		if len(s.State.Joints) == 0 {
			return FieldError("state.joints", "model %q needs the URDF joints listed", m.Kind)
		}
	case ModelIdentity:
		if s.State.Kind != StateJoints {
			return FieldError("model.kind", "%q (p = q̇) is for joint-space state (state.kind %q), not %q: a floating base's momenta need its mass and inertia (kind %q for one body, %q for a tree)",
				m.Kind, StateJoints, s.State.Kind, ModelRigidBody, ModelURDF)
		}
	}
	return nil
}

// checkDrives checks model.joints: URDF models only, each entry a joint of
// state.joints once, armature ≥ 0 and gear ratio > 0 (or 0 for 1).
func (s *Spec) checkDrives() error {
	m := &s.Model
	if len(m.Joints) == 0 {
		return nil
	}
	if m.Kind != ModelURDF {
		hint := ""
		if m.Kind == ModelDoublePendulum {
			hint = " (the double pendulum's rotor inertia is its parameters' Ir and gr)"
		}
		return FieldError("model.joints", "drive inertias apply to model kind %q, not %q%s", ModelURDF, m.Kind, hint)
	}
	names := s.JointNames()
	seen := map[string]bool{}
	for i, d := range m.Joints {
		f := fmt.Sprintf("model.joints[%d]", i)
		if !slices.Contains(names, d.Name) {
			return FieldError(f+".name", "%q is not one of state.joints (%s)", d.Name, strings.Join(names, ", "))
		}
		if seen[d.Name] {
			return FieldError(f+".name", "joint %q listed twice", d.Name)
		}
		seen[d.Name] = true
		if !(d.Armature >= 0) || !finite(d.Armature) {
			return FieldError(f+".armature", "must be a finite inertia ≥ 0 kg·m², got %g", d.Armature)
		}
		if !(d.GearRatio >= 0) || !finite(d.GearRatio) {
			return FieldError(f+".gear_ratio", "must be a finite positive ratio (rotor turns per joint turn; 0 or unset for 1), got %g", d.GearRatio)
		}
	}
	return nil
}

func (s *Spec) checkPorts() error {
	c := &s.Control
	if err := CheckOneOf("control.kind", c.Kind, ControlNone, ControlDirect, ControlQuadrotor); err != nil {
		return err
	}
	if err := CheckOneOf("control.interp", c.Interp, InterpLinear, InterpHold); err != nil {
		return err
	}
	switch c.Kind {
	case ControlNone:
		if len(c.Channels) > 0 || len(c.Quadrotor.Motors) > 0 {
			return FieldError("control.kind", "%q but channels are given", c.Kind)
		}
	case ControlDirect:
		if err := checkPort("control", &c.PortSpec); err != nil {
			return err
		}
	case ControlQuadrotor:
		alloc, err := QuadrotorAllocation(c.Quadrotor)
		if err != nil {
			return err
		}
		if err := checkChannels("control.quadrotor.motors", c.Quadrotor.Motors, len(alloc)); err != nil {
			return err
		}
		if len(c.Quadrotor.ThrustPoly) == 0 {
			return FieldError("control.quadrotor.thrust_poly", "no thrust coefficients")
		}
		for i, v := range c.Quadrotor.ThrustPoly {
			if !finite(v) {
				return FieldError(fmt.Sprintf("control.quadrotor.thrust_poly[%d]", i), "must be finite, got %g", v)
			}
		}
		if err := checkChannel("control.quadrotor.voltage", c.Quadrotor.Voltage, false); err != nil {
			return err
		}
		switch ref := c.Quadrotor.VoltageRef; {
		case c.Quadrotor.Voltage.IsZero() && ref != 0:
			return FieldError("control.quadrotor.voltage_ref", "%g V but no voltage channel is given", ref)
		case !c.Quadrotor.Voltage.IsZero() && (!finite(ref) || ref <= 0):
			return FieldError("control.quadrotor.voltage_ref", "must be a positive voltage with control.quadrotor.voltage, got %g", ref)
		}
	}
	if err := CheckOneOf("contact.interp", s.Contact.Interp, InterpLinear, InterpHold); err != nil {
		return err
	}
	if len(s.Contact.Channels) > 0 {
		return checkPort("contact", &s.Contact)
	}
	return nil
}

func checkPort(field string, p *PortSpec) error {
	if len(p.Channels) == 0 {
		return FieldError(field+".channels", "no channels")
	}
	if len(p.Names) != 0 && len(p.Names) != len(p.Channels) {
		return FieldError(field+".names", "%d names for %d channels", len(p.Names), len(p.Channels))
	}
	for i, c := range p.Channels {
		if err := checkChannel(fmt.Sprintf("%s.channels[%d]", field, i), c, true); err != nil {
			return err
		}
		if c.Name == "" && len(p.Names) == 0 {
			return FieldError(field+".names", "constant channel %d needs a name", i)
		}
	}
	return nil
}

// QuadrotorPrior returns the constants of a rigid-body quadrotor prior
// (mechanics.QuadrotorPrior, substeps Runge–Kutta steps a period) for a
// quadrotor (control.kind quadrotor) on the gravity-aware floating base
// with a rigid-body model of diagonal inertia about its centre of mass;
// false for any other conversion.
func (s *Spec) QuadrotorPrior(substeps int) (mechanics.QuadrotorParams, bool) {
	rb := s.Model.RigidBody
	if s.State.Kind != StateFloatingBaseGravity || s.Model.Kind != ModelRigidBody || s.Control.Kind != ControlQuadrotor ||
		len(rb.Inertia) != 3 || slices.ContainsFunc(rb.COM, func(v float64) bool { return v != 0 }) {
		return mechanics.QuadrotorParams{}, false
	}
	return mechanics.QuadrotorParams{Mass: rb.Mass, Inertia: [3]float64(rb.Inertia), Gravity: s.Model.Gravity, Substeps: substeps}, true
}
