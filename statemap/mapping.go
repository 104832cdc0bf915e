package statemap

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/mechanics"
)

// Mapper is the per-sample mapping from one sample's inputs, in SI units,
// to the state and the ports: joint positions, the generalised velocity
// (the base's body twist, then the joint rates), the momenta p = M(q)v of
// the mechanics model, the control port (channels, or the quadrotor body
// wrench through the rotor allocation) and the contact port (rotated into
// body axes under contact.body_axes). Dataset conversion calls it at every
// sample after alignment and filtering; the live Sampler calls it on the
// latest values. There is one mapping, so training and serving cannot
// drift apart.
//
// A Mapper is not safe for concurrent use.
type Mapper struct {
	spec   *Spec
	plan   *Plan
	model  Model
	alloc  Allocation
	nj, nv int
	nu, nc int       // measured ports
	hu     int       // the model's control ports (nu and the port history's)
	m      []float64 // nv×nv scratch
	thrust []float64
}

// NewMapper fills in the spec's defaults, checks it, builds its mechanics
// model (relative parameter files and URDFs resolved against dataRoot)
// and plans its inputs.
func NewMapper(spec *Spec, dataRoot string) (*Mapper, error) {
	spec.Defaults()
	if err := spec.Check(); err != nil {
		return nil, err
	}
	model, err := NewModel(spec, dataRoot)
	if err != nil {
		return nil, err
	}
	m := &Mapper{spec: spec, plan: NewPlan(spec), model: model, nj: len(spec.State.Joints), nv: model.NV()}
	if spec.Control.Kind == ControlQuadrotor {
		if m.alloc, err = QuadrotorAllocation(spec.Control.Quadrotor); err != nil {
			return nil, err
		}
		m.thrust = make([]float64, len(m.alloc))
	}
	ctrl, cont := spec.MeasuredPortNames()
	m.nu, m.nc = len(ctrl), len(cont)
	withHistory, _ := spec.PortNames()
	m.hu = len(withHistory)
	m.m = make([]float64, m.nv*m.nv)
	return m, nil
}

// Spec returns the mapping's spec.
func (m *Mapper) Spec() *Spec { return m.spec }

// Plan returns the plan of the mapping's inputs.
func (m *Mapper) Plan() *Plan { return m.plan }

// Model returns the mechanics model behind p = M(q)v.
func (m *Mapper) Model() Model { return m.model }

// Layout returns n (configuration coordinates), n_u and n_c of the
// model: n_u counts the port history's channels (Spec.PortNames).
func (m *Mapper) Layout() (n, nu, nc int) { return m.nv, m.hu, m.nc }

// Measured returns the number of measured ports, n_u + n_c without the
// port history: the ports Map writes.
func (m *Mapper) Measured() int { return m.nu + m.nc }

// Input is one sample's inputs in SI units.
type Input struct {
	// Values holds the value of every plan scalar (Plan.Scalars order),
	// after the channel's unit, scale and offset; constants included.
	// The orientation's scalars are not read: Pose carries them.
	Values []float64
	// Pose is the base pose in the world (floating bases).
	Pose mechanics.SE3
	// JointVelocity holds, by joint, the rates of the joints the spec
	// gives no velocity channel (Plan.JointVel −1), differentiated by the
	// caller; other entries are not read. Nil when every joint has one.
	JointVelocity []float64
	// Twist is the base's body twist (v, ω) when the spec gives no base
	// velocity channels, differentiated by the caller.
	Twist mechanics.Twist
}

// Sample is the mapping of one Input. Map writes into its slices, which
// the caller may point into larger arrays.
type Sample struct {
	// Joints are the joint positions (spec order).
	Joints []float64
	// V is the generalised velocity: the base's body twist, then the
	// joint rates.
	V []float64
	// P is the momentum M(q)v.
	P []float64
	// Ports are the measured (u, f_c) (Spec.MeasuredPortNames): the port
	// history, which needs the samples before, is PortHistory's.
	Ports []float64
	// Kinetic is the kinetic energy ½ vᵀM(q)v.
	Kinetic float64
}

// NewSample returns a Sample with its own slices.
func (m *Mapper) NewSample() *Sample {
	return &Sample{Joints: make([]float64, m.nj), V: make([]float64, m.nv), P: make([]float64, m.nv), Ports: make([]float64, m.nu+m.nc)}
}

// Map maps one sample's inputs. It allocates nothing.
func (m *Mapper) Map(in *Input, out *Sample) error {
	pl := m.plan
	nv, nj := m.nv, m.nj
	if len(in.Values) < len(pl.Scalars) || len(out.Joints) < nj || len(out.V) < nv || len(out.P) < nv || len(out.Ports) < m.nu+m.nc {
		return fmt.Errorf("statemap: map: %d values, %d joint, %d velocity, %d momentum and %d port slots; want %d, %d, %d, %d and %d",
			len(in.Values), len(out.Joints), len(out.V), len(out.P), len(out.Ports), len(pl.Scalars), nj, nv, nv, m.nu+m.nc)
	}
	vals, v, qj := in.Values, out.V, out.Joints
	for i := range nj {
		qj[i] = vals[pl.JointPos[i]]
		if vi := pl.JointVel[i]; vi >= 0 {
			v[nv-nj+i] = vals[vi]
		} else {
			v[nv-nj+i] = in.JointVelocity[i]
		}
	}
	if m.model.Floating() {
		tw := in.Twist
		if len(pl.LinVel) == 3 {
			var lin, ang mechanics.Vec3
			for a := range 3 {
				lin[a] = vals[pl.LinVel[a]]
				ang[a] = vals[pl.AngVel[a]]
			}
			b := &m.spec.State.Base
			Rt := in.Pose.R.T()
			if b.LinearVelocity.Frame == FrameWorld {
				lin = Rt.MulVec(lin)
			}
			if b.AngularVelocity.Frame == FrameWorld {
				ang = Rt.MulVec(ang)
			}
			tw = mechanics.Twist{lin[0], lin[1], lin[2], ang[0], ang[1], ang[2]}
		}
		copy(v[:6], tw[:])
	}
	M := m.m
	if err := m.model.MassMatrix(M, qj[:nj]); err != nil {
		return err
	}
	p := out.P
	var kin float64
	for r := range nv {
		var acc float64
		for c := range nv {
			acc += M[r*nv+c] * v[c]
		}
		p[r] = acc
		kin += 0.5 * acc * v[r]
	}
	out.Kinetic = kin
	e := out.Ports
	if m.spec.Control.Kind == ControlQuadrotor {
		q := &m.spec.Control.Quadrotor
		scale := 1.0
		if pl.Voltage >= 0 {
			v := vals[pl.Voltage]
			if !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("statemap: battery voltage %g V (control.quadrotor.voltage %q): the thrust map needs a positive voltage", v, q.Voltage.Name)
			}
			scale = v / q.VoltageRef
		}
		for i, sc := range pl.Control {
			m.thrust[i] = Thrust(q.ThrustPoly, vals[sc]*scale)
		}
		w := m.alloc.Wrench(m.thrust)
		copy(e, w[:])
	} else {
		for i, sc := range pl.Control {
			e[i] = vals[sc]
		}
	}
	for i, sc := range pl.Contact {
		e[m.nu+i] = vals[sc]
	}
	if m.spec.Contact.BodyAxes {
		rotateToBody(e[m.nu:m.nu+m.nc], in.Pose.R)
	}
	return nil
}

// Potential returns the potential energy of a sample (mechanics model).
func (m *Mapper) Potential(pose mechanics.SE3, joints []float64) float64 {
	return m.model.Potential(pose, joints)
}

// BaseCoordinates returns the six floating-base coordinates of q for a
// base at pose T, relative to the origin pose T0 (a window's first pose):
// the SE(3) logarithm of T0⁻¹T (StateFloatingBase), or (x, y, z) in T0's
// yaw frame, absolute roll and pitch and the yaw change
// (StateFloatingBaseGravity). Conversion expresses every sample of a
// window relative to its first; the live node expresses the latest sample
// relative to itself (T0 = T), as the first sample of a window.
func (s *Spec) BaseCoordinates(T0, T mechanics.SE3) [6]float64 {
	if s.State.Kind == StateFloatingBase {
		return mechanics.LogSE3(T0.Inverse().Mul(T))
	}
	return GravityCoordinates(T0, T)
}

// GravityCoordinates returns the StateFloatingBaseGravity coordinates
// (x, y, z, roll, pitch, yaw) of the pose T relative to T0: the position
// change in T0's yaw frame, T's absolute roll and pitch and the yaw change
// wrapped to (−π, π].
func GravityCoordinates(T0, T mechanics.SE3) [6]float64 {
	_, _, yaw0 := EulerZYX(T0.R)
	roll, pitch, yaw := EulerZYX(T.R)
	rz := mechanics.RPY(0, 0, yaw0)
	d := rz.T().MulVec(T.P.Sub(T0.P))
	dy := math.Remainder(yaw-yaw0, 2*math.Pi)
	return [6]float64{d[0], d[1], d[2], roll, pitch, dy}
}

// BasePose returns the world pose of predicted floating-base coordinates
// q (the first six of a predicted configuration) for a prediction that
// started at the base pose origin: origin·exp(q) for StateFloatingBase,
// and for StateFloatingBaseGravity the position origin.P + Rz(yaw₀)(x, y, z)
// and orientation Rz(yaw₀ + yaw)·Ry(pitch)·Rx(roll). Without a floating
// base it returns origin.
func (s *Spec) BasePose(origin mechanics.SE3, q []float64) mechanics.SE3 {
	switch s.State.Kind {
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

// EulerZYX returns the roll, pitch and yaw of R = Rz(yaw)·Ry(pitch)·Rx(roll)
// (mechanics.RPY), with pitch in [−π/2, π/2].
func EulerZYX(R mechanics.Mat3) (roll, pitch, yaw float64) {
	pitch = math.Asin(math.Max(-1, math.Min(1, -R[2][0])))
	roll = math.Atan2(R[2][1], R[2][2])
	yaw = math.Atan2(R[1][0], R[0][0])
	return roll, pitch, yaw
}

// QuatOf returns the raw (unnormalised) orientation quaternion of the
// orientation channels' values in plan order (Plan.Orient): four
// components (w, x, y, z), or roll, pitch and yaw converted through
// R = Rz(yaw)·Ry(pitch)·Rx(roll).
func QuatOf(c []float64) mechanics.Quat {
	if len(c) == 4 {
		return mechanics.Quat{W: c[0], X: c[1], Y: c[2], Z: c[3]}
	}
	return mechanics.QuatFromRotation(mechanics.RPY(c[0], c[1], c[2]))
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
