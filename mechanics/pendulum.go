package mechanics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"gopkg.in/yaml.v3"
)

// CoulombSharpness is the slope factor of the smooth Coulomb friction model
// cf·atan(CoulombSharpness·q̇), the one used by the dfki double_pendulum
// plant for the identified hardware models.
const CoulombSharpness = 100.0

// PendulumParams are the physical parameters of a planar, torque-controlled
// double pendulum with joint springs, viscous and Coulomb friction and
// geared motors.
//
// Conventions (those of the dfki double_pendulum package, which the real
// robot data in data/double_pendulum_hw follows): q1 is the absolute angle of
// link 1 measured from the downward vertical, q2 is the angle of link 2
// relative to link 1 (0 = straight), both counter-clockwise positive; gravity
// acts along the downward vertical; τ = (τ1, τ2) are the torques at joints 1
// and 2. Link i has mass Mi, length Li (joint-to-joint), centre of mass at
// distance Ri from its proximal joint along the link, and moment of inertia Ii
// about its centre of mass (axis normal to the plane). The pivot inertia is
// therefore Ii + Mi·Ri².
//
// The kinetic energy is ½ q̇ᵀM(q)q̇ with (J_i = I_i + m_i r_i², h = m2 l1 r2)
//
//	M11 = J1 + J2 + m2 l1² + 2h cos q2 + (gr² + 1) Ir
//	M12 = J2 + h cos q2 − gr Ir
//	M22 = J2 + gr² Ir
//
// (Ir, gr: rotor inertia and gear ratio of the motors, zero for the
// simulated pendulum). The potential energy is gravity plus linear joint
// springs ½k1 q1² + ½k2 q2², with its zero at the hanging rest position q = 0,
// so that every state has non-negative energy. Dissipation is the joint
// friction torque F(q̇)_i = b_i q̇_i + cf_i·atan(100 q̇_i).
type PendulumParams struct {
	M1, M2   float64 // link masses [kg]
	L1, L2   float64 // link lengths [m]
	R1, R2   float64 // centre-of-mass distance from the proximal joint [m]
	I1, I2   float64 // moments of inertia about the centres of mass [kg·m²]
	K1, K2   float64 // joint spring stiffness [N·m/rad]
	B1, B2   float64 // viscous friction [N·m·s/rad]
	G        float64 // gravitational acceleration [m/s²]
	Ir       float64 // motor rotor inertia [kg·m²]; 0 for the ideal pendulum
	Gr       float64 // motor gear ratio; only matters when Ir ≠ 0
	Cf1, Cf2 float64 // Coulomb friction torque [N·m]
	// TorqueLimit is the actuator torque limit per joint [N·m]; zero means
	// unlimited. It is informational: the dynamics never clip torques.
	TorqueLimit [2]float64
}

// PaperPendulum returns the double pendulum of the CaLiSym paper (Table II):
// m = (2.1, 1.3) kg, l = (0.4, 1.3) m, I = (1.1, 0.7) kg·m², k = (0.03, 0.06)
// N·m/rad, b = (0.3, 0.6) N·m·s/rad, g = 9.81 m/s². The paper does not give
// the centre-of-mass positions; we place them at the middle of each link,
// r_i = l_i/2, and read the table's inertias as inertias about the centres of
// mass. There is no motor model and no Coulomb friction.
func PaperPendulum() PendulumParams {
	return PendulumParams{
		M1: 2.1, M2: 1.3,
		L1: 0.4, L2: 1.3,
		R1: 0.2, R2: 0.65,
		I1: 1.1, I2: 0.7,
		K1: 0.03, K2: 0.06,
		B1: 0.3, B2: 0.6,
		G: 9.81,
	}
}

// PivotInertia returns the moments of inertia of the two links about their
// proximal joints, I_i + m_i r_i².
func (pp *PendulumParams) PivotInertia() [2]float64 {
	return [2]float64{pp.I1 + pp.M1*pp.R1*pp.R1, pp.I2 + pp.M2*pp.R2*pp.R2}
}

// Validate reports parameters that do not describe a physical pendulum:
// non-finite values, non-positive masses or lengths, negative stiffness,
// friction, gravity or rotor inertia, or a mass matrix that is not positive
// definite for some q. Inertias about the centre of mass may be negative
// (identified hardware models sometimes are) as long as M(q) stays positive
// definite.
func (pp *PendulumParams) Validate() error {
	vals := []struct {
		name string
		v    float64
	}{
		{"m1", pp.M1}, {"m2", pp.M2}, {"l1", pp.L1}, {"l2", pp.L2}, {"r1", pp.R1}, {"r2", pp.R2},
		{"I1", pp.I1}, {"I2", pp.I2}, {"k1", pp.K1}, {"k2", pp.K2}, {"b1", pp.B1}, {"b2", pp.B2},
		{"g", pp.G}, {"Ir", pp.Ir}, {"gr", pp.Gr}, {"cf1", pp.Cf1}, {"cf2", pp.Cf2},
		{"tl1", pp.TorqueLimit[0]}, {"tl2", pp.TorqueLimit[1]},
	}
	for _, x := range vals {
		if math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			return fmt.Errorf("mechanics: pendulum parameter %s = %g is not finite", x.name, x.v)
		}
	}
	for _, x := range vals[:4] {
		if x.v <= 0 {
			return fmt.Errorf("mechanics: pendulum parameter %s = %g must be positive", x.name, x.v)
		}
	}
	for _, x := range vals[8:] {
		if x.name != "gr" && x.v < 0 {
			return fmt.Errorf("mechanics: pendulum parameter %s = %g must be non-negative", x.name, x.v)
		}
	}
	// det M(q2) is concave in cos q2, so checking cos q2 = ±1 suffices.
	for _, q2 := range []float64{0, math.Pi} {
		m := pp.MassMatrix([2]float64{0, q2})
		if !(m[0][0] > 0 && m[1][1] > 0 && m[0][0]*m[1][1]-m[0][1]*m[1][0] > 0) {
			return fmt.Errorf("mechanics: pendulum mass matrix %v at q2 = %g is not positive definite", m, q2)
		}
	}
	return nil
}

// coupling returns h = m2 l1 r2, the coefficient of cos q2 in M12.
func (pp *PendulumParams) coupling() float64 { return pp.M2 * pp.L1 * pp.R2 }

// MassMatrix returns the generalised mass matrix M(q) (symmetric 2×2), so
// that p = M(q) q̇ and the kinetic energy is ½ q̇ᵀM q̇. It depends on q2 only.
func (pp *PendulumParams) MassMatrix(q [2]float64) [2][2]float64 {
	j := pp.PivotInertia()
	h := pp.coupling()
	c := math.Cos(q[1])
	m11 := j[0] + j[1] + pp.M2*pp.L1*pp.L1 + 2*h*c + (pp.Gr*pp.Gr+1)*pp.Ir
	m12 := j[1] + h*c - pp.Gr*pp.Ir
	m22 := j[1] + pp.Gr*pp.Gr*pp.Ir
	return [2][2]float64{{m11, m12}, {m12, m22}}
}

// InverseMassMatrix returns M(q)⁻¹.
func (pp *PendulumParams) InverseMassMatrix(q [2]float64) [2][2]float64 {
	return inv2(pp.MassMatrix(q))
}

func inv2(m [2][2]float64) [2][2]float64 {
	det := m[0][0]*m[1][1] - m[0][1]*m[1][0]
	return [2][2]float64{{m[1][1] / det, -m[0][1] / det}, {-m[1][0] / det, m[0][0] / det}}
}

func mul2(m [2][2]float64, v [2]float64) [2]float64 {
	return [2]float64{m[0][0]*v[0] + m[0][1]*v[1], m[1][0]*v[0] + m[1][1]*v[1]}
}

// MassMatrixDerivative returns ∂M/∂q2; ∂M/∂q1 is identically zero.
func (pp *PendulumParams) MassMatrixDerivative(q [2]float64) [2][2]float64 {
	hs := -pp.coupling() * math.Sin(q[1])
	return [2][2]float64{{2 * hs, hs}, {hs, 0}}
}

// Momentum returns the generalised momenta p = M(q) q̇.
func (pp *PendulumParams) Momentum(q, qdot [2]float64) [2]float64 {
	return mul2(pp.MassMatrix(q), qdot)
}

// Velocity returns the joint velocities q̇ = M(q)⁻¹ p.
func (pp *PendulumParams) Velocity(q, p [2]float64) [2]float64 {
	return mul2(pp.InverseMassMatrix(q), p)
}

// PotentialEnergy returns V(q): gravity plus joint springs, zero at q = 0
// (hanging at rest), V(q) = g[(m1 r1 + m2 l1)(1 − cos q1) + m2 r2 (1 − cos(q1+q2))] + ½k1 q1² + ½k2 q2².
func (pp *PendulumParams) PotentialEnergy(q [2]float64) float64 {
	a := pp.M1*pp.R1 + pp.M2*pp.L1
	b := pp.M2 * pp.R2
	grav := pp.G * (a*(1-math.Cos(q[0])) + b*(1-math.Cos(q[0]+q[1])))
	return grav + 0.5*pp.K1*q[0]*q[0] + 0.5*pp.K2*q[1]*q[1]
}

// PotentialGradient returns ∂V/∂q, the generalised gravity and spring
// torques that the joints must supply to hold the pendulum still at q.
func (pp *PendulumParams) PotentialGradient(q [2]float64) [2]float64 {
	a := pp.M1*pp.R1 + pp.M2*pp.L1
	b := pp.M2 * pp.R2
	s12 := math.Sin(q[0] + q[1])
	return [2]float64{
		pp.G*(a*math.Sin(q[0])+b*s12) + pp.K1*q[0],
		pp.G*b*s12 + pp.K2*q[1],
	}
}

// KineticEnergy returns ½ q̇ᵀ M(q) q̇.
func (pp *PendulumParams) KineticEnergy(q, qdot [2]float64) float64 {
	mv := mul2(pp.MassMatrix(q), qdot)
	return 0.5 * (qdot[0]*mv[0] + qdot[1]*mv[1])
}

// Energy returns the total mechanical energy T(q, q̇) + V(q) in velocity
// coordinates.
func (pp *PendulumParams) Energy(q, qdot [2]float64) float64 {
	return pp.KineticEnergy(q, qdot) + pp.PotentialEnergy(q)
}

// Hamiltonian returns H(q, p) = ½ pᵀ M(q)⁻¹ p + V(q).
func (pp *PendulumParams) Hamiltonian(q, p [2]float64) float64 {
	v := pp.Velocity(q, p)
	return 0.5*(p[0]*v[0]+p[1]*v[1]) + pp.PotentialEnergy(q)
}

// HamiltonianGradQ returns ∂H/∂q at (q, p):
// ∂V/∂q_i − ½ q̇ᵀ (∂M/∂q_i) q̇ with q̇ = M⁻¹p.
func (pp *PendulumParams) HamiltonianGradQ(q, p [2]float64) [2]float64 {
	v := pp.Velocity(q, p)
	return pp.hamGradQ(q, v)
}

func (pp *PendulumParams) hamGradQ(q, v [2]float64) [2]float64 {
	dV := pp.PotentialGradient(q)
	// ½ q̇ᵀ ∂M/∂q2 q̇ = −h sin q2 (q̇1² + q̇1 q̇2).
	hs := pp.coupling() * math.Sin(q[1])
	return [2]float64{dV[0], dV[1] + hs*(v[0]*v[0]+v[0]*v[1])}
}

// CoriolisMatrix returns C(q, q̇) (the dfki/Spong factorisation), with
// C q̇ the Coriolis and centrifugal torques and Ṁ − 2C skew-symmetric.
func (pp *PendulumParams) CoriolisMatrix(q, qdot [2]float64) [2][2]float64 {
	hs := pp.coupling() * math.Sin(q[1])
	return [2][2]float64{
		{-2 * hs * qdot[1], -hs * qdot[1]},
		{hs * qdot[0], 0},
	}
}

// CoriolisForce returns C(q, q̇) q̇ = Ṁq̇ − ½ ∂/∂q (q̇ᵀMq̇).
func (pp *PendulumParams) CoriolisForce(q, qdot [2]float64) [2]float64 {
	return mul2(pp.CoriolisMatrix(q, qdot), qdot)
}

// Friction returns the dissipative joint torques F(q̇) = b q̇ + cf·atan(100 q̇),
// which oppose the motion.
func (pp *PendulumParams) Friction(qdot [2]float64) [2]float64 {
	return [2]float64{
		pp.B1*qdot[0] + pp.Cf1*math.Atan(CoulombSharpness*qdot[0]),
		pp.B2*qdot[1] + pp.Cf2*math.Atan(CoulombSharpness*qdot[1]),
	}
}

// Acceleration returns q̈ from the Lagrangian (manipulator) form
// M(q) q̈ + C(q, q̇) q̇ + ∂V/∂q + F(q̇) = τ.
func (pp *PendulumParams) Acceleration(q, qdot, tau [2]float64) [2]float64 {
	c := pp.CoriolisForce(q, qdot)
	dV := pp.PotentialGradient(q)
	fr := pp.Friction(qdot)
	rhs := [2]float64{tau[0] - c[0] - dV[0] - fr[0], tau[1] - c[1] - dV[1] - fr[1]}
	return mul2(pp.InverseMassMatrix(q), rhs)
}

// HamiltonianRHS returns the time derivative of the canonical state
// x = (q1, q2, p1, p2) under torque τ:
//
//	q̇ = M(q)⁻¹ p,   ṗ = −∂H/∂q − F(q̇) + τ.
func (pp *PendulumParams) HamiltonianRHS(x [4]float64, tau [2]float64) [4]float64 {
	q := [2]float64{x[0], x[1]}
	v := mul2(pp.InverseMassMatrix(q), [2]float64{x[2], x[3]})
	dH := pp.hamGradQ(q, v)
	fr := pp.Friction(v)
	return [4]float64{v[0], v[1], tau[0] - dH[0] - fr[0], tau[1] - dH[1] - fr[1]}
}

// LagrangianRHS returns the time derivative of the velocity state
// x = (q1, q2, q̇1, q̇2) under torque τ: (q̇, q̈) with q̈ from Acceleration.
func (pp *PendulumParams) LagrangianRHS(x [4]float64, tau [2]float64) [4]float64 {
	q := [2]float64{x[0], x[1]}
	v := [2]float64{x[2], x[3]}
	a := pp.Acceleration(q, v, tau)
	return [4]float64{v[0], v[1], a[0], a[1]}
}

// HamiltonianODE returns the right-hand side of HamiltonianRHS as an ODEFunc
// on y = (q1, q2, p1, p2). The torque is read from *tau at every evaluation,
// so a caller holding tau can change it between Integrate calls (zero-order
// hold). The parameters are read through pp at every call as well.
func (pp *PendulumParams) HamiltonianODE(tau *[2]float64) ODEFunc {
	return func(_ float64, y, dydt []float64) {
		d := pp.HamiltonianRHS([4]float64{y[0], y[1], y[2], y[3]}, *tau)
		copy(dydt, d[:])
	}
}

// LagrangianODE is HamiltonianODE for the velocity state y = (q1, q2, q̇1, q̇2).
func (pp *PendulumParams) LagrangianODE(tau *[2]float64) ODEFunc {
	return func(_ float64, y, dydt []float64) {
		d := pp.LagrangianRHS([4]float64{y[0], y[1], y[2], y[3]}, *tau)
		copy(dydt, d[:])
	}
}

// pendulumYAML mirrors the identified-parameter files of the dfki
// double_pendulum package (model_parameters.yml). There I1, I2 are inertias
// about the joint axes (pivots).
type pendulumYAML struct {
	M1  *float64 `yaml:"m1"`
	M2  *float64 `yaml:"m2"`
	L1  *float64 `yaml:"l1"`
	L2  *float64 `yaml:"l2"`
	R1  *float64 `yaml:"r1"`
	R2  *float64 `yaml:"r2"`
	I1  *float64 `yaml:"I1"`
	I2  *float64 `yaml:"I2"`
	G   *float64 `yaml:"g"`
	K1  float64  `yaml:"k1"`
	K2  float64  `yaml:"k2"`
	B1  float64  `yaml:"b1"`
	B2  float64  `yaml:"b2"`
	Ir  float64  `yaml:"Ir"`
	Gr  float64  `yaml:"gr"`
	Cf1 float64  `yaml:"cf1"`
	Cf2 float64  `yaml:"cf2"`
	TL1 float64  `yaml:"tl1"`
	TL2 float64  `yaml:"tl2"`
}

// ParsePendulumParamsYAML reads double-pendulum parameters in the format of
// the dfki double_pendulum package's model_parameters.yml (keys m1 m2 l1 l2
// r1 r2 I1 I2 g, optional k1 k2 b1 b2 Ir gr cf1 cf2 tl1 tl2). In that format
// I1, I2 are inertias about the joint axes; they are converted to inertias
// about the centres of mass, I_i − m_i r_i², which may come out negative for
// identified models (the dynamics only depend on the pivot inertia). The
// result is validated.
func ParsePendulumParamsYAML(r io.Reader) (PendulumParams, error) {
	var raw pendulumYAML
	dec := yaml.NewDecoder(r)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return PendulumParams{}, fmt.Errorf("mechanics: pendulum parameters: empty YAML document")
		}
		return PendulumParams{}, fmt.Errorf("mechanics: pendulum parameters: %w", err)
	}
	required := []struct {
		key string
		v   *float64
	}{
		{"m1", raw.M1}, {"m2", raw.M2}, {"l1", raw.L1}, {"l2", raw.L2},
		{"r1", raw.R1}, {"r2", raw.R2}, {"I1", raw.I1}, {"I2", raw.I2}, {"g", raw.G},
	}
	for _, f := range required {
		if f.v == nil {
			return PendulumParams{}, fmt.Errorf("mechanics: pendulum parameters: missing key %q", f.key)
		}
	}
	pp := PendulumParams{
		M1: *raw.M1, M2: *raw.M2, L1: *raw.L1, L2: *raw.L2, R1: *raw.R1, R2: *raw.R2,
		I1: *raw.I1 - *raw.M1**raw.R1**raw.R1,
		I2: *raw.I2 - *raw.M2**raw.R2**raw.R2,
		K1: raw.K1, K2: raw.K2, B1: raw.B1, B2: raw.B2, G: *raw.G,
		Ir: raw.Ir, Gr: raw.Gr, Cf1: raw.Cf1, Cf2: raw.Cf2,
		TorqueLimit: [2]float64{raw.TL1, raw.TL2},
	}
	if err := pp.Validate(); err != nil {
		return PendulumParams{}, fmt.Errorf("mechanics: pendulum parameters: %w", err)
	}
	return pp, nil
}

// LoadPendulumParamsYAML reads a dfki model_parameters.yml file; see
// ParsePendulumParamsYAML.
func LoadPendulumParamsYAML(path string) (PendulumParams, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PendulumParams{}, fmt.Errorf("mechanics: %w", err)
	}
	pp, err := ParsePendulumParamsYAML(bytes.NewReader(b))
	if err != nil {
		return PendulumParams{}, fmt.Errorf("%s: %w", path, err)
	}
	return pp, nil
}
