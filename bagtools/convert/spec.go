package convert

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/viper"

	"github.com/calisym/calisym/mechanics"
)

// ErrSpec wraps every problem found in a conversion spec.
var ErrSpec = errors.New("convert: invalid spec")

// SpecKey is the key of the conversion spec in a params YAML file.
const SpecKey = "convert"

// Spec says how to turn robot logs into a calisym dataset: where every
// configuration, velocity, control and contact component comes from, the
// mechanics model for p = M(q)v, the clock, resampling, filtering,
// windowing, validation and the ID/OOD split. It is read from the
// "convert:" section of a params YAML file by LoadSpec.
//
// Channel names are column names for tables (CSV, parquet) and, for message
// logs, message paths in Foxglove's style ("/joint_states.position[1]").
type Spec struct {
	// Robot names the robot, recorded in the dataset's provenance.
	Robot string `yaml:"robot" mapstructure:"robot"`
	// Inputs are the log files, as glob patterns relative to the data root
	// (Options.DataRoot) unless absolute.
	Inputs []string `yaml:"inputs" mapstructure:"inputs"`
	// Source configures how tables are read.
	Source SourceSpec `yaml:"source" mapstructure:"source"`
	// Clock says which timestamps to trust.
	Clock ClockSpec `yaml:"clock" mapstructure:"clock"`
	// State says where q and v come from.
	State StateSpec `yaml:"state" mapstructure:"state"`
	// Model is the mechanics behind p = M(q)v.
	Model ModelSpec `yaml:"model" mapstructure:"model"`
	// Control is the control port u; Kind "" or "none" leaves it empty.
	Control ControlSpec `yaml:"control" mapstructure:"control"`
	// Contact is the contact port f_c; empty Channels leave it empty.
	Contact PortSpec `yaml:"contact" mapstructure:"contact"`
	// Resample sets the target and working rates.
	Resample ResampleSpec `yaml:"resample" mapstructure:"resample"`
	// Filter is the zero-phase low-pass applied at the working rate.
	Filter FilterSpec `yaml:"filter" mapstructure:"filter"`
	// Window sets the training windows.
	Window WindowSpec `yaml:"window" mapstructure:"window"`
	// Validate sets the thresholds that reject samples and windows.
	Validate ValidateSpec `yaml:"validate" mapstructure:"validate"`
	// Split assigns windows to splits (ID, OOD, …).
	Split SplitSpec `yaml:"split" mapstructure:"split"`
}

// SourceSpec configures the table readers.
type SourceSpec struct {
	// Format is "csv", "parquet", "mcap" or "bag" (message logs, whose
	// reader is chosen by the file's magic bytes), or "" to choose by file
	// extension.
	Format string `yaml:"format" mapstructure:"format"`
	// NoHeader says that CSV files have no header line; Columns then names
	// their columns.
	NoHeader bool `yaml:"no_header" mapstructure:"no_header"`
	// Columns names the columns of header-less CSV files, in file order.
	Columns []string `yaml:"columns" mapstructure:"columns"`
	// Comma is the CSV field separator (default ",").
	Comma string `yaml:"comma" mapstructure:"comma"`
}

// Clock stamps.
const (
	// StampHeader trusts each message's header.stamp (message logs).
	StampHeader = "header"
	// StampLogTime trusts the time the recorder logged each message.
	StampLogTime = "log_time"
)

// ClockSpec says which timestamps to trust.
type ClockSpec struct {
	// Stamp chooses, for message logs, between StampHeader and
	// StampLogTime (default StampHeader). Under StampHeader, messages of
	// a type without a header, or with a zero stamp, are stamped with
	// their log time, and the conversion report's warnings say so (see
	// MessageSource).
	Stamp string `yaml:"stamp" mapstructure:"stamp"`
	// Column is the time column of tables.
	Column string `yaml:"column" mapstructure:"column"`
	// Unit is the unit of Column: "s" (default), "ms", "us" or "ns".
	Unit string `yaml:"unit" mapstructure:"unit"`
}

// Channel is one scalar input: a source channel converted to SI units as
// (value·unit factor·Scale) + Offset, or a constant. In YAML a bare string
// is shorthand for {name: <string>}.
type Channel struct {
	// Name is the column name or message path.
	Name string `yaml:"name" mapstructure:"name"`
	// Unit is the unit the log records (see Units); "" means SI.
	Unit string `yaml:"unit" mapstructure:"unit"`
	// Scale multiplies the value after unit conversion (0 means 1).
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
	case "us":
		return 1e-6, true
	case "ns":
		return 1e-9, true
	}
	return 0, false
}

// UnitNames lists the units a Channel accepts.
func UnitNames() []string {
	return []string{"rad", "deg", "rad/s", "deg/s", "rpm", "m", "cm", "mm", "m/s", "mm/s", "s", "ms", "us", "ns", "N", "mN", "N*m", "Nm", "mN*m", "N*mm", "kg", "g"}
}

// factor returns the channel's multiplier to SI.
func (c Channel) factor() float64 {
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
	// algorithm.
	ModelURDF = "urdf"
)

// ModelSpec is the mechanics model for p = M(q)v.
type ModelSpec struct {
	// Kind is ModelDoublePendulum, ModelRigidBody or ModelURDF.
	Kind string `yaml:"kind" mapstructure:"kind"`
	// Pendulum holds the double pendulum's parameters.
	Pendulum PendulumSpec `yaml:"pendulum" mapstructure:"pendulum"`
	// RigidBody holds the rigid body's mass properties.
	RigidBody RigidBodySpec `yaml:"rigid_body" mapstructure:"rigid_body"`
	// URDF is the URDF file, relative to the data root unless absolute.
	URDF string `yaml:"urdf" mapstructure:"urdf"`
	// Gravity is the gravitational acceleration for the energies used by
	// energy splits (default 9.81 m/s²). The pendulum uses its own g.
	Gravity float64 `yaml:"gravity" mapstructure:"gravity"`
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

// rotateToBody rewrites the (x, y, z) triplets of f, given in world axes,
// in the body axes of a base with orientation R: f ← Rᵀf.
func rotateToBody(f []float64, R mechanics.Mat3) {
	Rt := R.T()
	for i := 0; i+2 < len(f); i += 3 {
		v := Rt.MulVec(mechanics.Vec3{f[i], f[i+1], f[i+2]})
		f[i], f[i+1], f[i+2] = v[0], v[1], v[2]
	}
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
	// ThrustPoly maps a command c to the rotor thrust f = Σ ThrustPoly[k]·c^k [N].
	ThrustPoly []float64 `yaml:"thrust_poly" mapstructure:"thrust_poly"`
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

// ResampleSpec sets the rates.
type ResampleSpec struct {
	// Rate is the dataset's sampling rate in hertz.
	Rate float64 `yaml:"rate" mapstructure:"rate"`
	// WorkRate is the uniform rate the inputs are aligned and filtered at
	// before decimation to Rate; it must be an integer multiple of Rate.
	// Zero chooses the multiple of Rate nearest the input's median rate.
	WorkRate float64 `yaml:"work_rate" mapstructure:"work_rate"`
}

// FilterSpec is the zero-phase Butterworth low-pass.
type FilterSpec struct {
	// Kind is "butterworth" or "none" (default "none").
	Kind string `yaml:"kind" mapstructure:"kind"`
	// Order is the filter order (the paper: 6).
	Order int `yaml:"order" mapstructure:"order"`
	// Cutoff is the −3 dB frequency in hertz (the paper: 18); it must lie
	// below the Nyquist frequency of Rate.
	Cutoff float64 `yaml:"cutoff" mapstructure:"cutoff"`
	// Channels are the channel groups the filter acts on (FilterGroups):
	// "configuration" (base pose, joint positions), "velocity" (base
	// twist, joint rates), "momentum" (p = M(q)v, computed at the working
	// rate and filtered before decimation, the paper's quadruped
	// preparation), "control" and "contact". Empty means every input
	// group: configuration, velocity, control and contact (without the
	// last two under SkipPorts), with p computed from the filtered inputs.
	Channels []string `yaml:"channels" mapstructure:"channels"`
	// SkipPorts leaves the ports unfiltered (they are still decimated);
	// with Channels empty only. Prefer Channels.
	SkipPorts bool `yaml:"skip_ports" mapstructure:"skip_ports"`
}

// Filter channel groups (FilterSpec.Channels).
const (
	FilterConfiguration = "configuration"
	FilterVelocity      = "velocity"
	FilterMomentum      = "momentum"
	FilterControl       = "control"
	FilterContact       = "contact"
)

// FilterGroups returns the channel groups FilterSpec.Channels accepts.
func FilterGroups() []string {
	return []string{FilterConfiguration, FilterVelocity, FilterMomentum, FilterControl, FilterContact}
}

// Filters reports whether the filter acts on the channel group.
func (f *FilterSpec) Filters(group string) bool {
	if f.Kind != "butterworth" {
		return false
	}
	if len(f.Channels) == 0 {
		switch group {
		case FilterConfiguration, FilterVelocity:
			return true
		case FilterControl, FilterContact:
			return !f.SkipPorts
		}
		return false
	}
	return slices.Contains(f.Channels, group)
}

// WindowSpec sets the training windows, in samples at Rate.
type WindowSpec struct {
	// Length is the number of samples in a window (≥ 2).
	Length int `yaml:"length" mapstructure:"length"`
	// Stride is the distance between window starts (≥ 1).
	Stride int `yaml:"stride" mapstructure:"stride"`
	// Storage says how windows become dataset episodes when q is relative
	// to a window's first pose (floating-base kinds): StorageWindow
	// (default) writes every window as its own episode, exactly as the
	// trainer consumes it; StorageEpisode merges consecutive windows into
	// one episode with q relative to the episode's first pose, about
	// Length/Stride times smaller, to be re-expressed per window with
	// RebaseSE3 or RebaseGravity. Joint-only datasets always merge.
	Storage string `yaml:"storage" mapstructure:"storage"`
}

// Window storage modes.
const (
	// StorageWindow writes one episode per window.
	StorageWindow = "window"
	// StorageEpisode merges consecutive windows into episodes.
	StorageEpisode = "episode"
)

// ValidateSpec sets the thresholds of validation. Zero disables a check.
type ValidateSpec struct {
	// MaxGap is the longest time between two input samples before the
	// samples between them are rejected as a gap [s].
	MaxGap float64 `yaml:"max_gap" mapstructure:"max_gap"`
	// MaxSpeed bounds the speed of the base origin between consecutive raw
	// samples [m/s]; a faster step is a position jump.
	MaxSpeed float64 `yaml:"max_speed" mapstructure:"max_speed"`
	// MaxAngularSpeed bounds the base's rotation rate between consecutive
	// raw samples [rad/s].
	MaxAngularSpeed float64 `yaml:"max_angular_speed" mapstructure:"max_angular_speed"`
	// MaxJointSpeed bounds each joint's rate between consecutive raw
	// samples [rad/s or m/s].
	MaxJointSpeed float64 `yaml:"max_joint_speed" mapstructure:"max_joint_speed"`
	// MaxQuatNormError bounds ||q| − 1| of raw quaternions.
	MaxQuatNormError float64 `yaml:"max_quat_norm_error" mapstructure:"max_quat_norm_error"`
	// MaxMomentumStep bounds |p_i(k+1) − p_i(k)| at Rate, one value for all
	// components or one per component.
	MaxMomentumStep []float64 `yaml:"max_momentum_step" mapstructure:"max_momentum_step"`
	// MomentumJumpMAD flags a momentum step more than this many robust
	// standard deviations (1.4826·MAD of the file's steps) from the median.
	MomentumJumpMAD float64 `yaml:"momentum_jump_mad" mapstructure:"momentum_jump_mad"`
	// MaxNaNFraction fails a file with a channel whose fraction of NaN
	// samples exceeds it. A channel that is entirely NaN always fails.
	MaxNaNFraction float64 `yaml:"max_nan_fraction" mapstructure:"max_nan_fraction"`
	// Exclude rejects the windows that overlap known bad stretches of
	// named files (unmodelled contacts, a fall, an operator's push),
	// counted under ReasonExcluded.
	Exclude []ExcludeSpec `yaml:"exclude" mapstructure:"exclude"`
}

// ExcludeSpec names a stretch of some input files whose windows are
// rejected.
type ExcludeSpec struct {
	// Files are glob patterns matched, like SplitRule.Files, against the
	// input path relative to the data root and against its base name.
	Files []string `yaml:"files" mapstructure:"files"`
	// Time is [from, to) in seconds since the start of the file; to may
	// be omitted for "to the end". Empty excludes the whole file.
	Time []float64 `yaml:"time" mapstructure:"time"`
	// Why is recorded in the conversion report.
	Why string `yaml:"why" mapstructure:"why"`
}

// matchFiles reports whether rel (a path relative to the data root)
// matches one of the glob patterns, whole or by its base name.
func matchFiles(patterns []string, rel string) bool {
	for _, pat := range patterns {
		if ok, _ := filepath.Match(pat, rel); ok {
			return true
		}
		if ok, _ := filepath.Match(pat, filepath.Base(rel)); ok {
			return true
		}
	}
	return false
}

// excludes reports whether the stretch [from, to] of file rel overlaps
// the exclusion.
func (e *ExcludeSpec) excludes(rel string, from, to float64) bool {
	if !matchFiles(e.Files, rel) {
		return false
	}
	switch len(e.Time) {
	case 0:
		return true
	case 1:
		return to >= e.Time[0]
	}
	return to >= e.Time[0] && from < e.Time[1]
}

// Split criteria.
const (
	// SplitByFile assigns whole files by glob pattern.
	SplitByFile = "file"
	// SplitByTime assigns windows by their start time since the start of
	// their file.
	SplitByTime = "time"
	// SplitByEnergy assigns windows by the mechanical energy at their start,
	// by absolute range or by quantile over all windows.
	SplitByEnergy = "energy"
)

// SplitSpec assigns windows to named splits.
type SplitSpec struct {
	// By is SplitByFile, SplitByTime, SplitByEnergy or "" (everything to
	// Default).
	By string `yaml:"by" mapstructure:"by"`
	// Default is the split of windows no rule matches (default "id").
	Default string `yaml:"default" mapstructure:"default"`
	// Rules are tried in order; the first match wins.
	Rules []SplitRule `yaml:"rules" mapstructure:"rules"`
}

// SplitRule assigns matching windows to Split.
type SplitRule struct {
	// Split names the split.
	Split string `yaml:"split" mapstructure:"split"`
	// Files are glob patterns matched against the input path relative to
	// the data root and against its base name (SplitByFile).
	Files []string `yaml:"files" mapstructure:"files"`
	// Time is [from, to) in seconds since the start of the file
	// (SplitByTime).
	Time []float64 `yaml:"time" mapstructure:"time"`
	// Energy is [min, max) in joules (SplitByEnergy); omit max for no bound.
	Energy []float64 `yaml:"energy" mapstructure:"energy"`
	// Quantile is [from, to) of the distribution of window energies over
	// all inputs, in [0, 1] (SplitByEnergy).
	Quantile []float64 `yaml:"quantile" mapstructure:"quantile"`
}

// LoadSpec reads the "convert:" section of the params YAML file at path
// with viper, rejecting unknown keys, fills in defaults and validates it.
// Errors name the offending field, e.g. "convert.window.length".
func LoadSpec(path string) (*Spec, error) {
	v := viper.New()
	v.SetConfigFile(path)
	if err := v.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("convert: read params %s: %w", path, err)
	}
	return SpecFromViper(v, path)
}

// SpecFromViper decodes the "convert:" section of v (see LoadSpec); where
// names the configuration in errors.
func SpecFromViper(v *viper.Viper, where string) (*Spec, error) {
	if !v.IsSet(SpecKey) {
		return nil, fmt.Errorf("%s: %w: no %q section (keys: %s)", where, ErrSpec, SpecKey, strings.Join(topKeys(v), ", "))
	}
	sub := v.Sub(SpecKey)
	if sub == nil {
		return nil, fmt.Errorf("%s: %w: %q is not a mapping", where, ErrSpec, SpecKey)
	}
	var s Spec
	if err := sub.UnmarshalExact(&s, viper.DecodeHook(channelHook)); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", where, ErrSpec, decodeMessage(err))
	}
	s.Defaults()
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &s, nil
}

// decodeMessage turns a mapstructure decoding error into one line with
// full field paths: "'window' has invalid keys: strid" becomes
// "convert.window has invalid keys: strid".
func decodeMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "decoding failed due to the following error(s):")
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "* "))
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "''"); ok {
			line = SpecKey + rest
		} else if rest, ok := strings.CutPrefix(line, "'"); ok {
			if field, tail, ok := strings.Cut(rest, "'"); ok {
				line = SpecKey + "." + field + tail
			}
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

func topKeys(v *viper.Viper) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range v.AllKeys() {
		top, _, _ := strings.Cut(k, ".")
		if !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	return out
}

// channelHook decodes a bare string into Channel{Name: s}.
func channelHook(from, to reflect.Type, data any) (any, error) {
	if to == reflect.TypeFor[Channel]() && from.Kind() == reflect.String {
		return Channel{Name: data.(string)}, nil
	}
	return data, nil
}

// Defaults fills in the defaults of unset fields.
func (s *Spec) Defaults() {
	if s.Clock.Stamp == "" {
		s.Clock.Stamp = StampHeader
	}
	if s.Clock.Unit == "" {
		s.Clock.Unit = "s"
	}
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
	if s.Filter.Kind == "" {
		s.Filter.Kind = "none"
	}
	if s.Split.Default == "" {
		s.Split.Default = "id"
	}
	if s.Window.Storage == "" {
		s.Window.Storage = StorageWindow
	}
}

// specError returns an error wrapping ErrSpec that names the field.
func specError(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s.%s: %s", ErrSpec, SpecKey, field, fmt.Sprintf(format, args...))
}

func oneOf(field, got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	return specError(field, "%q is not one of %s", got, strings.Join(quoteAll(allowed), ", "))
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func checkChannel(field string, c Channel, required bool) error {
	if c.IsZero() {
		if required {
			return specError(field, "channel is required")
		}
		return nil
	}
	if c.Name != "" && c.Const != nil {
		return specError(field, "give either name or const, not both")
	}
	if _, ok := unitFactor(c.Unit); !ok {
		return specError(field+".unit", "unknown unit %q (known: %s)", c.Unit, strings.Join(UnitNames(), ", "))
	}
	if !finite(c.Scale) || !finite(c.Offset) || (c.Const != nil && !finite(*c.Const)) {
		return specError(field, "scale, offset and const must be finite")
	}
	return nil
}

func checkChannels(field string, cs []Channel, n int) error {
	if len(cs) != n {
		return specError(field, "needs %d channels, got %d", n, len(cs))
	}
	for i, c := range cs {
		if err := checkChannel(fmt.Sprintf("%s[%d]", field, i), c, true); err != nil {
			return err
		}
	}
	return nil
}

// Check validates the spec (after Defaults), naming the first offending
// field. It checks the spec alone; files are checked when opened.
func (s *Spec) Check() error {
	if len(s.Inputs) == 0 {
		return specError("inputs", "no input files")
	}
	if s.Source.Format != "" {
		if err := oneOf("source.format", s.Source.Format, "csv", "parquet", "mcap", "bag"); err != nil {
			return err
		}
	}
	if s.Source.NoHeader && len(s.Source.Columns) == 0 {
		return specError("source.columns", "header-less CSV needs column names")
	}
	if len([]rune(s.Source.Comma)) > 1 {
		return specError("source.comma", "%q is not a single character", s.Source.Comma)
	}
	if err := oneOf("clock.stamp", s.Clock.Stamp, StampHeader, StampLogTime); err != nil {
		return err
	}
	if err := oneOf("clock.unit", s.Clock.Unit, "s", "ms", "us", "ns"); err != nil {
		return err
	}
	if err := s.checkState(); err != nil {
		return err
	}
	if err := s.checkModel(); err != nil {
		return err
	}
	if err := s.checkPorts(); err != nil {
		return err
	}
	if err := s.checkProcessing(); err != nil {
		return err
	}
	return s.checkSplit()
}

func (s *Spec) checkState() error {
	st := &s.State
	if err := oneOf("state.kind", st.Kind, StateJoints, StateFloatingBase, StateFloatingBaseGravity); err != nil {
		return err
	}
	names := map[string]bool{}
	for i, j := range st.Joints {
		f := fmt.Sprintf("state.joints[%d]", i)
		if j.Name == "" {
			return specError(f+".name", "joint has no name")
		}
		if names[j.Name] {
			return specError(f+".name", "duplicate joint %q", j.Name)
		}
		names[j.Name] = true
		if err := checkChannel(f+".position", j.Position, true); err != nil {
			return err
		}
		if err := checkChannel(f+".velocity", j.Velocity, false); err != nil {
			return err
		}
	}
	if st.Kind == StateJoints {
		if len(st.Joints) == 0 {
			return specError("state.joints", "kind %q needs at least one joint", st.Kind)
		}
		if len(st.Base.Position) > 0 || len(st.Base.Orientation.Channels) > 0 {
			return specError("state.base", "kind %q has no floating base; use %q", st.Kind, StateFloatingBase)
		}
		return nil
	}
	b := &st.Base
	if err := checkChannels("state.base.position", b.Position, 3); err != nil {
		return err
	}
	if err := oneOf("state.base.orientation.kind", b.Orientation.Kind, OrientationQuaternion, OrientationRPY); err != nil {
		return err
	}
	n := 4
	if b.Orientation.Kind == OrientationRPY {
		n = 3
	} else if err := oneOf("state.base.orientation.order", b.Orientation.Order, "xyzw", "wxyz"); err != nil {
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
		if err := oneOf(v.field+".frame", v.spec.Frame, FrameWorld, FrameBody); err != nil {
			return err
		}
		if err := checkChannels(v.field+".channels", v.spec.Channels, 3); err != nil {
			return err
		}
	}
	if (len(b.LinearVelocity.Channels) == 0) != (len(b.AngularVelocity.Channels) == 0) {
		return specError("state.base", "give both linear_velocity and angular_velocity, or neither (to differentiate the pose)")
	}
	return nil
}

func (s *Spec) checkModel() error {
	m := &s.Model
	if err := oneOf("model.kind", m.Kind, ModelDoublePendulum, ModelRigidBody, ModelURDF); err != nil {
		return err
	}
	if !(m.Gravity > 0) || !finite(m.Gravity) {
		return specError("model.gravity", "must be positive, got %g", m.Gravity)
	}
	switch m.Kind {
	case ModelDoublePendulum:
		if s.State.Kind != StateJoints || len(s.State.Joints) != 2 {
			return specError("state", "model %q needs kind %q with exactly 2 joints", m.Kind, StateJoints)
		}
		if (m.Pendulum.ParamsFile == "") == (len(m.Pendulum.Params) == 0) {
			return specError("model.pendulum", "give exactly one of params_file and params")
		}
	case ModelRigidBody:
		if s.State.Kind == StateJoints || len(s.State.Joints) > 0 {
			return specError("state", "model %q is a single free body: needs a floating-base kind and no joints", m.Kind)
		}
		rb := &m.RigidBody
		if !(rb.Mass > 0) || !finite(rb.Mass) {
			return specError("model.rigid_body.mass", "must be positive, got %g", rb.Mass)
		}
		switch len(rb.Inertia) {
		case 3, 6, 9:
		default:
			return specError("model.rigid_body.inertia", "needs 3 (diagonal), 6 (Ixx Iyy Izz Ixy Ixz Iyz) or 9 values, got %d", len(rb.Inertia))
		}
		if len(rb.COM) != 0 && len(rb.COM) != 3 {
			return specError("model.rigid_body.com", "needs 3 values, got %d", len(rb.COM))
		}
	case ModelURDF:
		if m.URDF == "" {
			return specError("model.urdf", "no URDF file")
		}
		if len(s.State.Joints) == 0 {
			return specError("state.joints", "model %q needs the URDF joints listed", m.Kind)
		}
	}
	return nil
}

func (s *Spec) checkPorts() error {
	c := &s.Control
	if err := oneOf("control.kind", c.Kind, ControlNone, ControlDirect, ControlQuadrotor); err != nil {
		return err
	}
	if err := oneOf("control.interp", c.Interp, InterpLinear, InterpHold); err != nil {
		return err
	}
	switch c.Kind {
	case ControlNone:
		if len(c.Channels) > 0 || len(c.Quadrotor.Motors) > 0 {
			return specError("control.kind", "%q but channels are given", c.Kind)
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
			return specError("control.quadrotor.thrust_poly", "no thrust coefficients")
		}
		for i, v := range c.Quadrotor.ThrustPoly {
			if !finite(v) {
				return specError(fmt.Sprintf("control.quadrotor.thrust_poly[%d]", i), "must be finite, got %g", v)
			}
		}
	}
	if err := oneOf("contact.interp", s.Contact.Interp, InterpLinear, InterpHold); err != nil {
		return err
	}
	if len(s.Contact.Channels) > 0 {
		return checkPort("contact", &s.Contact)
	}
	return nil
}

func checkPort(field string, p *PortSpec) error {
	if len(p.Channels) == 0 {
		return specError(field+".channels", "no channels")
	}
	if len(p.Names) != 0 && len(p.Names) != len(p.Channels) {
		return specError(field+".names", "%d names for %d channels", len(p.Names), len(p.Channels))
	}
	for i, c := range p.Channels {
		if err := checkChannel(fmt.Sprintf("%s.channels[%d]", field, i), c, true); err != nil {
			return err
		}
		if c.Name == "" && len(p.Names) == 0 {
			return specError(field+".names", "constant channel %d needs a name", i)
		}
	}
	return nil
}

func (s *Spec) checkProcessing() error {
	r := &s.Resample
	if !(r.Rate > 0) || !finite(r.Rate) {
		return specError("resample.rate", "must be positive, got %g", r.Rate)
	}
	if r.WorkRate != 0 {
		ratio := r.WorkRate / r.Rate
		if !(ratio >= 1) || math.Abs(ratio-math.Round(ratio)) > 1e-9 {
			return specError("resample.work_rate", "%g Hz is not an integer multiple of rate %g Hz", r.WorkRate, r.Rate)
		}
	}
	f := &s.Filter
	if err := oneOf("filter.kind", f.Kind, "none", "butterworth"); err != nil {
		return err
	}
	if f.Kind == "butterworth" {
		if f.Order < 1 || f.Order > 32 {
			return specError("filter.order", "must be in [1, 32], got %d", f.Order)
		}
		if !(f.Cutoff > 0 && f.Cutoff < r.Rate/2) {
			return specError("filter.cutoff", "%g Hz must lie between 0 and the Nyquist frequency %g Hz of rate %g Hz", f.Cutoff, r.Rate/2, r.Rate)
		}
	}
	for i, g := range f.Channels {
		if !slices.Contains(FilterGroups(), g) {
			return specError(fmt.Sprintf("filter.channels[%d]", i), "unknown channel group %q (known: %s)", g, strings.Join(FilterGroups(), ", "))
		}
		if slices.Index(f.Channels, g) != i {
			return specError(fmt.Sprintf("filter.channels[%d]", i), "channel group %q given twice", g)
		}
	}
	if len(f.Channels) > 0 && f.SkipPorts {
		return specError("filter.skip_ports", "give either filter.channels or filter.skip_ports, not both")
	}
	if s.Control.BodyAxes {
		return specError("control.body_axes", "applies to the contact port only")
	}
	if s.Contact.BodyAxes {
		if s.State.Kind == StateJoints {
			return specError("contact.body_axes", "needs a floating base (state.kind %q has no base orientation)", s.State.Kind)
		}
		if n := len(s.Contact.Channels); n%3 != 0 {
			return specError("contact.body_axes", "needs (x, y, z) triplets, got %d channels", n)
		}
	}
	for i, e := range s.Validate.Exclude {
		key := fmt.Sprintf("validate.exclude[%d]", i)
		if len(e.Files) == 0 {
			return specError(key+".files", "name at least one file pattern")
		}
		for _, pat := range e.Files {
			if _, err := filepath.Match(pat, ""); err != nil {
				return specError(key+".files", "bad pattern %q: %v", pat, err)
			}
		}
		if len(e.Time) > 2 || (len(e.Time) == 2 && !(e.Time[1] > e.Time[0])) || (len(e.Time) > 0 && !finite(e.Time[0])) {
			return specError(key+".time", "must be [from] or [from, to) with from < to, got %v", e.Time)
		}
	}
	w := &s.Window
	if w.Length < 2 {
		return specError("window.length", "must be at least 2, got %d", w.Length)
	}
	if w.Stride < 1 {
		return specError("window.stride", "must be at least 1, got %d", w.Stride)
	}
	if err := oneOf("window.storage", w.Storage, StorageWindow, StorageEpisode); err != nil {
		return err
	}
	v := &s.Validate
	for _, x := range []struct {
		name string
		v    float64
	}{
		{"max_gap", v.MaxGap}, {"max_speed", v.MaxSpeed}, {"max_angular_speed", v.MaxAngularSpeed},
		{"max_joint_speed", v.MaxJointSpeed}, {"max_quat_norm_error", v.MaxQuatNormError},
		{"momentum_jump_mad", v.MomentumJumpMAD}, {"max_nan_fraction", v.MaxNaNFraction},
	} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			return specError("validate."+x.name, "must be a finite non-negative number, got %g", x.v)
		}
	}
	if v.MaxNaNFraction > 1 {
		return specError("validate.max_nan_fraction", "must be at most 1, got %g", v.MaxNaNFraction)
	}
	nv := len(s.State.Joints)
	if s.State.Kind != StateJoints {
		nv += 6
	}
	if n := len(v.MaxMomentumStep); n > 1 && n != nv {
		return specError("validate.max_momentum_step", "needs 1 value or one per momentum component (%d), got %d", nv, n)
	}
	for i, x := range v.MaxMomentumStep {
		if !(x > 0) || math.IsInf(x, 0) {
			return specError(fmt.Sprintf("validate.max_momentum_step[%d]", i), "must be positive, got %g", x)
		}
	}
	return nil
}

func (s *Spec) checkSplit() error {
	sp := &s.Split
	if err := oneOf("split.by", sp.By, "", SplitByFile, SplitByTime, SplitByEnergy); err != nil {
		return err
	}
	if sp.By == "" && len(sp.Rules) > 0 {
		return specError("split.by", "rules given but no criterion")
	}
	for i, r := range sp.Rules {
		f := fmt.Sprintf("split.rules[%d]", i)
		if r.Split == "" {
			return specError(f+".split", "rule has no split name")
		}
		switch sp.By {
		case SplitByFile:
			if len(r.Files) == 0 {
				return specError(f+".files", "no patterns")
			}
		case SplitByTime:
			if len(r.Time) != 2 || !(r.Time[1] > r.Time[0]) {
				return specError(f+".time", "needs [from, to) with to > from, got %v", r.Time)
			}
		case SplitByEnergy:
			switch {
			case len(r.Energy) > 0 && len(r.Quantile) > 0:
				return specError(f, "give energy or quantile, not both")
			case len(r.Energy) == 1, len(r.Energy) == 2 && r.Energy[1] > r.Energy[0]:
			case len(r.Quantile) == 2 && r.Quantile[0] >= 0 && r.Quantile[1] <= 1 && r.Quantile[1] > r.Quantile[0]:
			default:
				return specError(f, "needs energy: [min] or [min, max), or quantile: [from, to) within [0, 1]")
			}
		}
	}
	return nil
}
