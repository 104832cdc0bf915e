package mechanics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// HamiltonianHessian returns the Hessian of H(q, p) = ½ pᵀM(q)⁻¹p + V(q)
// with respect to x = (q1, q2, p1, p2), analytically: with A = M⁻¹,
// v = A p and M' = ∂M/∂q2,
//
//	H_pp = A,  ∂v/∂q2 = −A M' v,  H_qq = ∇²V + e₂e₂ᵀ ∂²/∂q2² (−½ vᵀM'v).
//
// It is symmetric; the torque term −τᵀq of the forced Hamiltonian is
// linear and does not change it.
func (pp *PendulumParams) HamiltonianHessian(q, p [2]float64) [4][4]float64 {
	a := pp.InverseMassMatrix(q)
	v := mul2(a, p)
	h := pp.coupling()
	s, c := math.Sin(q[1]), math.Cos(q[1])
	md := pp.MassMatrixDerivative(q)
	mv := mul2(md, v)
	dv := mul2(a, mv) // ∂v/∂q2 = −A M' v
	dv[0], dv[1] = -dv[0], -dv[1]
	ga := pp.M1*pp.R1 + pp.M2*pp.L1
	gb := pp.M2 * pp.R2
	c12 := math.Cos(q[0] + q[1])
	var hs [4][4]float64
	// ∂²V/∂q²
	hs[0][0] = pp.G*(ga*math.Cos(q[0])+gb*c12) + pp.K1
	hs[0][1] = pp.G * gb * c12
	hs[1][0] = hs[0][1]
	hs[1][1] = pp.G*gb*c12 + pp.K2
	// ∂/∂q2 of h sin q2 (v1² + v1 v2), the kinetic part of ∂H/∂q2
	hs[1][1] += h*c*(v[0]*v[0]+v[0]*v[1]) + h*s*(2*v[0]*dv[0]+dv[0]*v[1]+v[0]*dv[1])
	// ∂²H/∂q2∂p = ∂v/∂q2 (∂H/∂q1 does not depend on p)
	hs[1][2], hs[1][3] = dv[0], dv[1]
	hs[2][1], hs[3][1] = dv[0], dv[1]
	hs[2][2], hs[2][3], hs[3][2], hs[3][3] = a[0][0], a[0][1], a[1][0], a[1][1]
	return hs
}

// hamGrad returns ∇H̃ = (∂H/∂q − τ, ∂H/∂p) of the forced Hamiltonian
// H̃ = H(q, p) − τᵀq.
func (pp *PendulumParams) hamGrad(x [4]float64, tau [2]float64) [4]float64 {
	q := [2]float64{x[0], x[1]}
	v := pp.Velocity(q, [2]float64{x[2], x[3]})
	dq := pp.hamGradQ(q, v)
	return [4]float64{dq[0] - tau[0], dq[1] - tau[1], v[0], v[1]}
}

// ErrMidpointNoConvergence reports that the implicit-midpoint Newton
// iteration did not reach machine precision.
var ErrMidpointNoConvergence = errors.New("mechanics: implicit midpoint did not converge")

// ErrOutOfDomain reports a state a prior cannot step: not finite, or at a
// singularity of its coordinates (the quadrotor's pitch at ±π/2). A
// composed rollout that runs into it has diverged, and the evaluation
// counts it so (trainer.EvalResult.Diverged) instead of failing.
var ErrOutOfDomain = errors.New("mechanics: state outside the prior's domain")

// midpointMaxIter bounds the Newton iterations of one implicit-midpoint
// step; at the pendulum's 10 ms steps it converges in 3–5.
const midpointMaxIter = 50

// MidpointStep advances x = (q1, q2, p1, p2) by one step of the implicit
// midpoint rule on the forced, frictionless Hamiltonian H̃(q, p) =
// H(q, p) − τᵀq with τ held over the step:
//
//	x' = x + h J ∇H̃((x + x')/2),   J = [[0, I], [−I, 0]].
//
// The rule is symplectic for every Hamiltonian (its Jacobian is the Cayley
// transform of h J ∇²H at the midpoint, MidpointJacobian), so the step is a
// symplectic map of x for fixed τ, whatever h. The midpoint m = (x + x')/2
// is solved by Newton's method on m − x − (h/2) J∇H̃(m) = 0 with the
// analytic Hessian until the update stops shrinking below round-off; an
// iteration that does not get there in 50 steps, or a non-finite state,
// returns ErrMidpointNoConvergence. Friction is not part of the step (see
// FrictionStep). It does not allocate.
func (pp *PendulumParams) MidpointStep(x [4]float64, tau [2]float64, h float64) ([4]float64, error) {
	m, err := pp.midpoint(x, tau, h)
	if err != nil {
		return x, err
	}
	return [4]float64{2*m[0] - x[0], 2*m[1] - x[1], 2*m[2] - x[2], 2*m[3] - x[3]}, nil
}

// midpoint solves the implicit-midpoint equation for m = (x + x')/2.
func (pp *PendulumParams) midpoint(x [4]float64, tau [2]float64, h float64) ([4]float64, error) {
	if !(h > 0) || math.IsInf(h, 0) {
		return x, fmt.Errorf("mechanics: implicit midpoint step h = %g must be positive and finite", h)
	}
	if !allFinite(x[:]) {
		return x, fmt.Errorf("%w (%w): non-finite state %v", ErrMidpointNoConvergence, ErrOutOfDomain, x)
	}
	// explicit Euler guess of the midpoint
	m := x
	g := pp.hamGrad(m, tau)
	m = [4]float64{x[0] + h/2*g[2], x[1] + h/2*g[3], x[2] - h/2*g[0], x[3] - h/2*g[1]}
	prev := math.Inf(1)
	for range midpointMaxIter {
		g = pp.hamGrad(m, tau)
		// residual r = m − x − (h/2) J ∇H̃(m)
		r := [4]float64{m[0] - x[0] - h/2*g[2], m[1] - x[1] - h/2*g[3], m[2] - x[2] + h/2*g[0], m[3] - x[3] + h/2*g[1]}
		a := midpointMatrix(pp.HamiltonianHessian([2]float64{m[0], m[1]}, [2]float64{m[2], m[3]}), h)
		d, ok := solve4(a, r)
		if !ok {
			return x, fmt.Errorf("%w: singular Newton matrix at %v", ErrMidpointNoConvergence, m)
		}
		var dn, mn float64
		for i := range m {
			m[i] -= d[i]
			dn = max(dn, math.Abs(d[i]))
			mn = max(mn, math.Abs(m[i]))
		}
		if math.IsNaN(dn) || math.IsInf(dn, 0) {
			return x, fmt.Errorf("%w (%w): non-finite iterate from %v", ErrMidpointNoConvergence, ErrOutOfDomain, x)
		}
		// converged once the update is at round-off, or stops shrinking
		// there (it then only jitters in the last bits)
		if dn <= 4e-16*max(mn, 1) || (dn <= 1e-13*max(mn, 1) && dn >= prev/2) {
			return m, nil
		}
		prev = dn
	}
	return x, fmt.Errorf("%w in %d iterations from %v (τ %v, h %g)", ErrMidpointNoConvergence, midpointMaxIter, x, tau, h)
}

// midpointMatrix returns I − (h/2) J S for the symmetric Hessian S.
func midpointMatrix(s [4][4]float64, h float64) [4][4]float64 {
	var a [4][4]float64
	for j := range 4 {
		// (J S)_{ij}: rows 0,1 are S rows 2,3; rows 2,3 are −S rows 0,1
		a[0][j] = -h / 2 * s[2][j]
		a[1][j] = -h / 2 * s[3][j]
		a[2][j] = h / 2 * s[0][j]
		a[3][j] = h / 2 * s[1][j]
	}
	for i := range 4 {
		a[i][i]++
	}
	return a
}

// MidpointJacobian returns the Jacobian ∂x'/∂x of MidpointStep at x (by
// the implicit function theorem): with S = ∇²H at the midpoint,
//
//	∂x'/∂x = (I − (h/2) J S)⁻¹ (I + (h/2) J S),
//
// a symplectic matrix (the Cayley transform of the Hamiltonian matrix
// h J S). It returns the step's state as well.
func (pp *PendulumParams) MidpointJacobian(x [4]float64, tau [2]float64, h float64) (next [4]float64, jac [4][4]float64, err error) {
	m, err := pp.midpoint(x, tau, h)
	if err != nil {
		return x, jac, err
	}
	a := midpointMatrix(pp.HamiltonianHessian([2]float64{m[0], m[1]}, [2]float64{m[2], m[3]}), h)
	// ∂x'/∂x = 2 A⁻¹ − I, column by column
	for j := range 4 {
		var e [4]float64
		e[j] = 1
		col, ok := solve4(a, e)
		if !ok {
			return x, jac, fmt.Errorf("%w: singular Jacobian matrix at %v", ErrMidpointNoConvergence, m)
		}
		for i := range 4 {
			jac[i][j] = 2 * col[i]
		}
		jac[j][j]--
	}
	return [4]float64{2*m[0] - x[0], 2*m[1] - x[1], 2*m[2] - x[2], 2*m[3] - x[3]}, jac, nil
}

// solve4 solves a y = b by Gaussian elimination with partial pivoting.
func solve4(a [4][4]float64, b [4]float64) ([4]float64, bool) {
	for c := range 4 {
		piv := c
		for r := c + 1; r < 4; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if a[piv][c] == 0 {
			return b, false
		}
		a[c], a[piv] = a[piv], a[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < 4; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < 4; k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	var y [4]float64
	for r := 3; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < 4; k++ {
			s -= a[r][k] * y[k]
		}
		y[r] = s / a[r][r]
	}
	return y, true
}

// FrictionStep applies the joint friction over s seconds at fixed q, as
// one backward-Euler step of ṗ = −F(M(q)⁻¹p): it solves p' + s F(M⁻¹p') =
// p by Newton's method (F is monotone and M⁻¹ positive definite, so the
// solution is unique and the step is stable however stiff the smooth
// Coulomb term). It is the dissipative, non-symplectic factor that a
// friction-aware prior composes with MidpointStep (PendulumPrior).
func (pp *PendulumParams) FrictionStep(x [4]float64, s float64) ([4]float64, error) {
	if !allFinite(x[:]) {
		return x, fmt.Errorf("%w (%w): friction step from the non-finite state %v", ErrMidpointNoConvergence, ErrOutOfDomain, x)
	}
	q := [2]float64{x[0], x[1]}
	a := pp.InverseMassMatrix(q)
	p0 := [2]float64{x[2], x[3]}
	p := p0
	b := [2]float64{pp.B1, pp.B2}
	cf := [2]float64{pp.Cf1, pp.Cf2}
	for range midpointMaxIter {
		v := mul2(a, p)
		f := pp.Friction(v)
		r := [2]float64{p[0] + s*f[0] - p0[0], p[1] + s*f[1] - p0[1]}
		// ∂r/∂p = I + s diag(F'(v)) A
		var d [2]float64
		for i := range 2 {
			d[i] = b[i] + cf[i]*CoulombSharpness/(1+CoulombSharpness*CoulombSharpness*v[i]*v[i])
		}
		j := [2][2]float64{{1 + s*d[0]*a[0][0], s * d[0] * a[0][1]}, {s * d[1] * a[1][0], 1 + s*d[1]*a[1][1]}}
		dp := mul2(inv2(j), r)
		p[0], p[1] = p[0]-dp[0], p[1]-dp[1]
		dn := max(math.Abs(dp[0]), math.Abs(dp[1]))
		if math.IsNaN(dn) {
			break
		}
		if dn <= 4e-16*max(math.Abs(p[0]), math.Abs(p[1]), 1) {
			return [4]float64{x[0], x[1], p[0], p[1]}, nil
		}
	}
	return x, fmt.Errorf("%w: friction step from %v", ErrMidpointNoConvergence, x)
}

// PriorKind names the one-step physics prior of a composed model.
type PriorKind string

// The prior kinds.
const (
	// PriorMidpoint is the frictionless implicit-midpoint step
	// (MidpointStep): symplectic in x for fixed τ.
	PriorMidpoint PriorKind = "pendulum_midpoint"
	// PriorMidpointFriction is PriorMidpoint between two half steps of
	// friction (FrictionStep, a Strang splitting): dissipative, not
	// symplectic.
	PriorMidpointFriction PriorKind = "pendulum_midpoint_friction"
	// PriorDOP853 integrates the full model (friction included) with
	// DOP853 at tolerances 1e-10: the reference, not symplectic.
	PriorDOP853 PriorKind = "pendulum_dop853"
	// PriorDOP853NoFriction is PriorDOP853 without friction.
	PriorDOP853NoFriction PriorKind = "pendulum_dop853_nofriction"
)

// PendulumPriorKinds lists the double pendulum's prior kinds.
func PendulumPriorKinds() []PriorKind {
	return []PriorKind{PriorMidpoint, PriorMidpointFriction, PriorDOP853, PriorDOP853NoFriction}
}

// PriorKinds lists every prior kind: the pendulum's and the quadrotor's.
func PriorKinds() []PriorKind { return append(PendulumPriorKinds(), PriorQuadrotorRK4) }

// PendulumPrior is one step Φ₀(x, τ) of an identified pendulum model over
// a fixed sampling period, the torque held over the step: a predictor by
// itself (Rollout) and the physics part of a composed model. It is not
// safe for concurrent use; make one per goroutine (Clone).
type PendulumPrior struct {
	// Kind selects the step.
	Kind PriorKind
	// Params are the identified parameters (their friction is ignored by
	// the frictionless kinds).
	Params PendulumParams
	// Dt is the step [s].
	Dt float64

	noFric PendulumParams
	ode    DOP853
	tau    [2]float64
	f      ODEFunc
	y      []float64
}

// NewPendulumPrior validates the parameters, the kind and the step.
func NewPendulumPrior(kind PriorKind, pp PendulumParams, dt float64) (*PendulumPrior, error) {
	if err := pp.Validate(); err != nil {
		return nil, err
	}
	if !(dt > 0) || math.IsInf(dt, 0) {
		return nil, fmt.Errorf("mechanics: prior step dt = %g must be positive and finite", dt)
	}
	ok := false
	for _, k := range PendulumPriorKinds() {
		ok = ok || k == kind
	}
	if !ok {
		return nil, fmt.Errorf("mechanics: pendulum prior kind %q: want one of %v", kind, PendulumPriorKinds())
	}
	p := &PendulumPrior{Kind: kind, Params: pp, Dt: dt, y: make([]float64, 4)}
	p.noFric = pp
	p.noFric.B1, p.noFric.B2, p.noFric.Cf1, p.noFric.Cf2 = 0, 0, 0, 0
	model := &p.Params
	if kind == PriorDOP853NoFriction {
		model = &p.noFric
	}
	p.f = model.HamiltonianODE(&p.tau)
	return p, nil
}

// Clone implements Prior: an independent prior with the same kind,
// parameters and step.
func (p *PendulumPrior) Clone() Prior {
	c, err := NewPendulumPrior(p.Kind, p.Params, p.Dt)
	if err != nil {
		panic(err) // p was validated when it was made
	}
	return c
}

// Step returns Φ₀(x, τ). It does not allocate.
func (p *PendulumPrior) Step(x [4]float64, tau [2]float64) ([4]float64, error) {
	switch p.Kind {
	case PriorMidpoint:
		return p.Params.MidpointStep(x, tau, p.Dt)
	case PriorMidpointFriction:
		y, err := p.Params.FrictionStep(x, p.Dt/2)
		if err != nil {
			return x, err
		}
		if y, err = p.noFric.MidpointStep(y, tau, p.Dt); err != nil {
			return x, err
		}
		return p.Params.FrictionStep(y, p.Dt/2)
	}
	p.tau = tau
	copy(p.y, x[:])
	if err := p.ode.Integrate(p.f, 0, p.Dt, p.y); err != nil {
		if errors.Is(err, ErrNonFinite) {
			return x, fmt.Errorf("mechanics: prior step: %w (%w)", err, ErrOutOfDomain)
		}
		return x, fmt.Errorf("mechanics: prior step: %w", err)
	}
	return [4]float64{p.y[0], p.y[1], p.y[2], p.y[3]}, nil
}

// StateDim implements Prior: 4.
func (p *PendulumPrior) StateDim() int { return 4 }

// PortDim implements Prior: the 2 joint torques.
func (p *PendulumPrior) PortDim() int { return 2 }

// StepTo implements Prior: out = Φ₀(x, e) with the torques e[0], e[1]. It
// does not allocate.
func (p *PendulumPrior) StepTo(out, x, e []float64) error {
	if len(x) < 4 || len(out) < 4 || len(e) < 2 {
		return fmt.Errorf("mechanics: pendulum prior: state %d, output %d and %d port values, want 4, 4 and the 2 torques", len(x), len(out), len(e))
	}
	y, err := p.Step([4]float64{x[0], x[1], x[2], x[3]}, [2]float64{e[0], e[1]})
	if err != nil {
		return err
	}
	copy(out, y[:])
	return nil
}

// Rollout rolls the prior out alone: from x0 (q1, q2, p1, p2) under ports
// (horizon rows of ne values, the torques τ1, τ2 first) it writes x̂_1 …
// x̂_H into out (RolloutPrior). It does not allocate.
func (p *PendulumPrior) Rollout(x0, ports []float64, horizon int, out []float64) error {
	return RolloutPrior(p, x0, ports, horizon, out)
}

// PriorProvenanceKey is the key of a model file's provenance metadata that
// records a composed model's physics prior (the JSON of a PriorSpec); see
// trainer.Composed. Whatever runs a model file's learned map alone must
// refuse a file that has it.
const PriorProvenanceKey = "physics_prior"

// PriorSpec describes a prior completely: what a composed model's file
// records (as JSON) so that loading it rebuilds the same prior. A
// pendulum's Params are in PendulumParams' own fields and units (inertias
// about the centres of mass); a quadrotor's (kind PriorQuadrotorRK4) are
// in Quadrotor, and its file has no "params".
type PriorSpec struct {
	Kind      PriorKind        `json:"kind"`
	Dt        float64          `json:"dt"`
	Params    PendulumParams   `json:"params,omitzero"`
	Quadrotor *QuadrotorParams `json:"quadrotor,omitempty"`
}

// Spec implements Prior.
func (p *PendulumPrior) Spec() PriorSpec { return PriorSpec{Kind: p.Kind, Dt: p.Dt, Params: p.Params} }

// New builds the prior the spec describes (NewPendulumPrior's or
// NewQuadrotorPrior's checks).
func (s PriorSpec) New() (Prior, error) {
	if s.Kind == PriorQuadrotorRK4 {
		if s.Quadrotor == nil {
			return nil, fmt.Errorf("mechanics: prior %s needs its quadrotor constants", s.Kind)
		}
		if s.Params != (PendulumParams{}) {
			return nil, fmt.Errorf("mechanics: prior %s: pendulum params given to a quadrotor prior", s.Kind)
		}
		return NewQuadrotorPrior(*s.Quadrotor, s.Dt)
	}
	if s.Quadrotor != nil {
		return nil, fmt.Errorf("mechanics: prior %s: quadrotor constants given to a pendulum prior", s.Kind)
	}
	return NewPendulumPrior(s.Kind, s.Params, s.Dt)
}

// StateDim is the size of the state the spec's prior steps (4 for a
// pendulum, 12 for a quadrotor).
func (s PriorSpec) StateDim() int {
	if s.Kind == PriorQuadrotorRK4 {
		return quadDim
	}
	return 4
}

// PortDim is the number of leading port values the spec's prior reads
// (the pendulum's 2 torques, the quadrotor's 6 wrench values).
func (s PriorSpec) PortDim() int {
	if s.Kind == PriorQuadrotorRK4 {
		if s.Quadrotor != nil {
			return s.Quadrotor.WrenchPort + 6
		}
		return 6
	}
	return 2
}

// Fits reports a model of stateDim state values and portDim ports that
// cannot sit behind the spec's prior: it must step the prior's state and
// have at least its ports (Needs says which).
func (s PriorSpec) Fits(stateDim, portDim int) error {
	if stateDim != s.StateDim() || portDim < s.PortDim() {
		return fmt.Errorf("mechanics: the %s prior steps %s, the model has n = %d (state size %d) and %d ports", s.Kind, s.Needs(), stateDim/2, stateDim, portDim)
	}
	return nil
}

// Needs says what the spec's prior steps, for the errors that refuse a
// model of another state or fewer ports (Fits).
func (s PriorSpec) Needs() string {
	if s.Kind == PriorQuadrotorRK4 {
		k := 0
		if s.Quadrotor != nil {
			k = s.Quadrotor.WrenchPort
		}
		if k == 0 {
			return "a quadrotor's gravity-aware floating base alone, n = 6 (12 state values), with at least 6 ports, the body wrench first"
		}
		return fmt.Sprintf("a quadrotor's gravity-aware floating base alone, n = 6 (12 state values), with at least %d ports, the body wrench from port %d", k+6, k)
	}
	return "a double pendulum, n = 2 (q1, q2, p1, p2), with at least 2 ports, the torques first"
}

// Prior is one step Φ₀(x, e) of an identified physics model over a fixed
// sampling period, its first PortDim ports held over the step: the physics
// part of a composed model (trainer.Composed, ComposedStepper). A Prior is
// not safe for concurrent use; make one per goroutine (Clone).
type Prior interface {
	// StateDim is the size of the state it steps.
	StateDim() int
	// PortDim is the number of leading port values a step reads.
	PortDim() int
	// StepTo writes Φ₀(x, e) into out without allocating.
	StepTo(out, x, e []float64) error
	// Spec describes the prior for a model file.
	Spec() PriorSpec
	// Clone returns an independent prior of the same spec.
	Clone() Prior
}

// TangentPrior is a Prior with the adjoint of its step, which training
// through several steps of a composed model needs.
type TangentPrior interface {
	Prior
	// HasAdjoint reports whether Adjoint succeeds for this prior (a kind
	// may have none).
	HasAdjoint() bool
	// Adjoint writes (∂Φ₀/∂x)ᵀ λ at (x, e) into out without allocating.
	Adjoint(out, x, e, lambda []float64) error
}

// HasAdjoint reports whether a prior's step has an adjoint: a
// TangentPrior whose HasAdjoint says so (the quadrotor prior and the
// pendulum's implicit-midpoint kinds, with or without friction).
func HasAdjoint(p Prior) bool {
	tp, ok := p.(TangentPrior)
	return ok && tp.HasAdjoint()
}

// RolloutPrior rolls a prior out alone: from x0 (StateDim values) under
// ports (horizon rows of ne values, the prior's ports first) it writes
// x̂_1 … x̂_H into out. ne is read off len(ports)/horizon. It does not
// allocate.
func RolloutPrior(p Prior, x0, ports []float64, horizon int, out []float64) error {
	if horizon < 1 {
		return nil
	}
	nx, ne := p.StateDim(), len(ports)/horizon
	switch {
	case len(x0) != nx:
		return fmt.Errorf("mechanics: %s prior rollout: state has %d values, want %d", p.Spec().Kind, len(x0), nx)
	case ne < p.PortDim():
		return fmt.Errorf("mechanics: %s prior rollout: %d port values for %d steps, want at least %d a step", p.Spec().Kind, len(ports), horizon, p.PortDim())
	case len(out) < nx*horizon:
		return fmt.Errorf("mechanics: %s prior rollout: output has room for %d values, need %d", p.Spec().Kind, len(out), nx*horizon)
	}
	x := x0
	for k := range horizon {
		o := out[k*nx : (k+1)*nx]
		if err := p.StepTo(o, x, ports[k*ne:(k+1)*ne]); err != nil {
			return fmt.Errorf("mechanics: %s prior rollout, step %d: %w", p.Spec().Kind, k+1, err)
		}
		x = o
	}
	return nil
}

// ParsePriorSpec decodes a PriorSpec from JSON, refusing unknown keys,
// trailing data and a spec NewPendulumPrior refuses.
func ParsePriorSpec(b []byte) (*PriorSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s PriorSpec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mechanics: prior spec: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("mechanics: prior spec: trailing data after the JSON object")
	}
	if _, err := s.New(); err != nil {
		return nil, fmt.Errorf("mechanics: prior spec: %w", err)
	}
	return &s, nil
}
