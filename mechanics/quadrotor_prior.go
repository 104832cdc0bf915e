package mechanics

import (
	"fmt"
	"math"
	"slices"
)

// PriorQuadrotorRK4 is the rigid-body prior of a quadrotor in the
// gravity-aware floating-base coordinates (QuadrotorPrior): Newton–Euler
// with gravity under the body wrench held over the step, integrated by the
// classical Runge–Kutta method. It is not symplectic in these coordinates
// (the body momenta are not conjugate to the Euler angles).
const PriorQuadrotorRK4 PriorKind = "quadrotor_rk4"

// QuadrotorParams are the rigid-body constants of a QuadrotorPrior.
type QuadrotorParams struct {
	// Mass is the vehicle's mass [kg].
	Mass float64 `json:"mass"`
	// Inertia holds the principal moments of inertia about the centre of
	// mass, body axes [kg·m²].
	Inertia [3]float64 `json:"inertia"`
	// Gravity is the gravitational acceleration [m/s²], along −z of the
	// world (and of every window's yaw frame).
	Gravity float64 `json:"gravity"`
	// Substeps is the number of Runge–Kutta steps a sampling period is cut
	// into (≥ 1).
	Substeps int `json:"substeps"`
	// WrenchPort is the index of the first of the six ports that hold the
	// body wrench (0, the default: the ports themselves; 6 on a mapping
	// with a port history of the six: their means over the samples before,
	// a lagged wrench, statemap's convert.history.port_mean).
	WrenchPort int `json:"wrench_port,omitempty"`
}

// Validate checks that the constants are positive and finite.
func (qp *QuadrotorParams) Validate() error {
	pos := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("mechanics: quadrotor prior: %s = %g must be positive and finite", name, v)
		}
		return nil
	}
	if err := pos("mass", qp.Mass); err != nil {
		return err
	}
	for i, v := range qp.Inertia {
		if err := pos(fmt.Sprintf("inertia[%d]", i), v); err != nil {
			return err
		}
	}
	if err := pos("gravity", qp.Gravity); err != nil {
		return err
	}
	if qp.Substeps < 1 || qp.Substeps > 1000 {
		return fmt.Errorf("mechanics: quadrotor prior: substeps = %d, want 1…1000", qp.Substeps)
	}
	if qp.WrenchPort < 0 || qp.WrenchPort > 1000 {
		return fmt.Errorf("mechanics: quadrotor prior: wrench_port = %d, want a port index 0…1000", qp.WrenchPort)
	}
	return nil
}

// quadDim is the size of a QuadrotorPrior's state.
const quadDim = 12

// QuadrotorPrior is one step Φ₀(x, e) of a rigid quadrotor over a fixed
// sampling period: the state x = (r, φ, θ, ψ, p_v, p_ω) is the
// gravity-aware floating base of statemap (the position r and the yaw ψ
// in a fixed yaw frame, roll φ and pitch θ absolute, the orientation
// R = Rz(ψ)·Ry(θ)·Rx(φ)) with the body momenta p_v = m·v and p_ω = I·ω
// (v and ω the body twist); six ports, the first six unless
// Params.WrenchPort says otherwise, are the body wrench (F, τ), held over
// the step. The equations are Newton–Euler's in the body
// frame,
//
//	ṙ = R v,  (φ̇, θ̇, ψ̇) = W(φ, θ) ω,
//	ṗ_v = p_v × ω + F + m Rᵀ(0, 0, −g),  ṗ_ω = p_ω × ω + τ,
//
// integrated by Substeps steps of the classical Runge–Kutta method; the
// tangent map of those steps (Jacobian) is exact, so the step has an
// exact adjoint (Adjoint) for training through it. It allocates nothing
// and is not safe for concurrent use; make one per goroutine (Clone).
type QuadrotorPrior struct {
	// Params are the rigid-body constants.
	Params QuadrotorParams
	// Dt is the sampling period [s].
	Dt float64

	jac    [quadDim][quadDim]float64 // the last Jacobian (Jacobian)
	stages []float64                 // the stage states of the last Adjoint
}

// NewQuadrotorPrior validates the constants and the step.
func NewQuadrotorPrior(qp QuadrotorParams, dt float64) (*QuadrotorPrior, error) {
	if err := qp.Validate(); err != nil {
		return nil, err
	}
	if !(dt > 0) || math.IsInf(dt, 0) {
		return nil, fmt.Errorf("mechanics: prior step dt = %g must be positive and finite", dt)
	}
	return &QuadrotorPrior{Params: qp, Dt: dt}, nil
}

// StateDim implements Prior: 12.
func (p *QuadrotorPrior) StateDim() int { return quadDim }

// PortDim implements Prior: the body wrench's 6 values and the ports
// before them (QuadrotorParams.WrenchPort).
func (p *QuadrotorPrior) PortDim() int { return p.Params.WrenchPort + 6 }

// wrench returns the body wrench among the ports e.
func (p *QuadrotorPrior) wrench(e []float64) []float64 {
	return e[p.Params.WrenchPort : p.Params.WrenchPort+6]
}

// Spec implements Prior.
func (p *QuadrotorPrior) Spec() PriorSpec {
	qp := p.Params
	return PriorSpec{Kind: PriorQuadrotorRK4, Dt: p.Dt, Quadrotor: &qp}
}

// Clone implements Prior.
func (p *QuadrotorPrior) Clone() Prior { return &QuadrotorPrior{Params: p.Params, Dt: p.Dt} }

// rhs returns f(x) for the wrench w, and its Jacobian ∂f/∂x into a when a
// is not nil.
func (p *QuadrotorPrior) rhs(x *[quadDim]float64, w []float64, a *[quadDim][quadDim]float64) [quadDim]float64 {
	qp := &p.Params
	m, g := qp.Mass, qp.Gravity
	sphi, cphi := math.Sincos(x[3])
	sth, cth := math.Sincos(x[4])
	sps, cps := math.Sincos(x[5])
	var v, om [3]float64
	for i := range 3 {
		v[i] = x[6+i] / m
		om[i] = x[9+i] / qp.Inertia[i]
	}
	rx := Mat3{{1, 0, 0}, {0, cphi, -sphi}, {0, sphi, cphi}}
	ry := Mat3{{cth, 0, sth}, {0, 1, 0}, {-sth, 0, cth}}
	rz := Mat3{{cps, -sps, 0}, {sps, cps, 0}, {0, 0, 1}}
	rzy := rz.Mul(ry)
	r := rzy.Mul(rx)
	vv := Vec3{v[0], v[1], v[2]}
	var f [quadDim]float64
	rv := r.MulVec(vv)
	f[0], f[1], f[2] = rv[0], rv[1], rv[2]
	tth := sth / cth
	k := sphi*om[1] + cphi*om[2]
	f[3] = om[0] + tth*k
	f[4] = cphi*om[1] - sphi*om[2]
	f[5] = k / cth
	pv := Vec3{x[6], x[7], x[8]}
	pw := Vec3{x[9], x[10], x[11]}
	omv := Vec3(om)
	cv := pv.Cross(omv)
	cw := pw.Cross(omv)
	// m Rᵀ(0, 0, −g) = −m g (R₂₀, R₂₁, R₂₂)
	f[6] = cv[0] + w[0] + m*g*sth
	f[7] = cv[1] + w[1] - m*g*cth*sphi
	f[8] = cv[2] + w[2] - m*g*cth*cphi
	f[9] = cw[0] + w[3]
	f[10] = cw[1] + w[4]
	f[11] = cw[2] + w[5]
	if a == nil {
		return f
	}
	*a = [quadDim][quadDim]float64{}
	// ṙ = R v
	drx := Mat3{{0, 0, 0}, {0, -sphi, -cphi}, {0, cphi, -sphi}}
	dry := Mat3{{-sth, 0, cth}, {0, 0, 0}, {-cth, 0, -sth}}
	drz := Mat3{{-sps, -cps, 0}, {cps, -sps, 0}, {0, 0, 0}}
	cols := [3]Vec3{rzy.Mul(drx).MulVec(vv), rz.Mul(dry).Mul(rx).MulVec(vv), drz.Mul(ry).Mul(rx).MulVec(vv)}
	for i := range 3 {
		for j := range 3 {
			a[i][3+j] = cols[j][i]
			a[i][6+j] = r[i][j] / m
		}
	}
	// Euler rates
	c2 := cth * cth
	dk := cphi*om[1] - sphi*om[2] // ∂k/∂φ
	a[3][3] = tth * dk
	a[3][4] = k / c2
	a[4][3] = -sphi*om[1] - cphi*om[2]
	a[5][3] = dk / cth
	a[5][4] = k * sth / c2
	iw := qp.Inertia
	a[3][9], a[3][10], a[3][11] = 1/iw[0], tth*sphi/iw[1], tth*cphi/iw[2]
	a[4][10], a[4][11] = cphi/iw[1], -sphi/iw[2]
	a[5][10], a[5][11] = sphi/cth/iw[1], cphi/cth/iw[2]
	// ṗ_v = p_v × ω + F + gravity: ∂/∂p_v = −[ω]×, ∂/∂p_ω = [p_v]× diag(1/I)
	a[6][3], a[6][4] = 0, m*g*cth
	a[7][3], a[7][4] = -m*g*cth*cphi, m*g*sth*sphi
	a[8][3], a[8][4] = m*g*cth*sphi, m*g*sth*cphi
	ho, hv, hw := Hat(omv), Hat(pv), Hat(pw)
	for i := range 3 {
		for j := range 3 {
			a[6+i][6+j] = -ho[i][j]
			a[6+i][9+j] = hv[i][j] / iw[j]
			// ṗ_ω = p_ω × ω: −[ω]× + [p_ω]× diag(1/I)
			a[9+i][9+j] = -ho[i][j] + hw[i][j]/iw[j]
		}
	}
	return f
}

// integrate advances x by one sampling period under the wrench w,
// accumulates the step's Jacobian in p.jac when jac is set, and records
// every stage's state (substep by substep, 4 × 12 values each) in stages
// when it is not nil.
func (p *QuadrotorPrior) integrate(x *[quadDim]float64, w []float64, jac bool, stages []float64) {
	n := p.Params.Substeps
	h := p.Dt / float64(n)
	if jac {
		p.jac = [quadDim][quadDim]float64{}
		for i := range quadDim {
			p.jac[i][i] = 1
		}
	}
	var a [4][quadDim][quadDim]float64 // ∂k_s/∂x_sub, chained through the stages
	var y [quadDim]float64
	coef := [4]float64{0, 0.5, 0.5, 1}
	for sub := range n {
		var ks [4][quadDim]float64
		for s := range 4 {
			y = *x
			for i := range quadDim {
				if s > 0 {
					y[i] += coef[s] * h * ks[s-1][i]
				}
			}
			if stages != nil {
				copy(stages[(sub*4+s)*quadDim:], y[:])
			}
			if !jac {
				ks[s] = p.rhs(&y, w, nil)
				continue
			}
			var as [quadDim][quadDim]float64
			ks[s] = p.rhs(&y, w, &as)
			if s == 0 {
				a[0] = as
				continue
			}
			// ∂k_s/∂x = A(y_s)·(I + c_s h ∂k_{s−1}/∂x)
			for i := range quadDim {
				for j := range quadDim {
					sum := as[i][j]
					for l := range quadDim {
						sum += as[i][l] * coef[s] * h * a[s-1][l][j]
					}
					a[s][i][j] = sum
				}
			}
		}
		for i := range quadDim {
			x[i] += h / 6 * (ks[0][i] + 2*ks[1][i] + 2*ks[2][i] + ks[3][i])
		}
		if !jac {
			continue
		}
		// J ← (I + h/6 (K1 + 2K2 + 2K3 + K4)) J
		var t [quadDim][quadDim]float64
		for i := range quadDim {
			for l := range quadDim {
				g := h / 6 * (a[0][i][l] + 2*a[1][i][l] + 2*a[2][i][l] + a[3][i][l])
				if i == l {
					g++
				}
				if g == 0 {
					continue
				}
				for j := range quadDim {
					t[i][j] += g * p.jac[l][j]
				}
			}
		}
		p.jac = t
	}
}

// checkStep checks a step's arguments.
func (p *QuadrotorPrior) checkStep(out, x, e []float64) error {
	switch {
	case len(x) < quadDim || len(out) < quadDim:
		return fmt.Errorf("mechanics: quadrotor prior: state has %d values (output room %d), want 12", len(x), len(out))
	case len(e) < p.PortDim():
		return fmt.Errorf("mechanics: quadrotor prior: %d port values, want %d: the 6 of the body wrench from port %d", len(e), p.PortDim(), p.Params.WrenchPort)
	}
	if !allFinite(x[:quadDim]) {
		return fmt.Errorf("%w: quadrotor prior: non-finite state %v", ErrOutOfDomain, slices.Clone(x[:quadDim]))
	}
	if math.Abs(math.Cos(x[4])) < 1e-6 {
		return fmt.Errorf("%w: quadrotor prior: pitch %g rad is at the Euler angles' singularity (±π/2)", ErrOutOfDomain, x[4])
	}
	return nil
}

// StepTo implements Prior: out = Φ₀(x, e), six of e's values (from
// Params.WrenchPort) the body wrench. It does not allocate.
func (p *QuadrotorPrior) StepTo(out, x, e []float64) error {
	if err := p.checkStep(out, x, e); err != nil {
		return err
	}
	var y [quadDim]float64
	copy(y[:], x)
	p.integrate(&y, p.wrench(e), false, nil)
	copy(out, y[:])
	return finiteState("quadrotor prior", out[:quadDim])
}

// Jacobian returns Φ₀(x, e) and its Jacobian ∂Φ₀/∂x.
func (p *QuadrotorPrior) Jacobian(x, e []float64) ([quadDim]float64, [quadDim][quadDim]float64, error) {
	var y [quadDim]float64
	if err := p.checkStep(y[:], x, e); err != nil {
		return y, p.jac, err
	}
	copy(y[:], x)
	p.integrate(&y, p.wrench(e), true, nil)
	return y, p.jac, finiteState("quadrotor prior", y[:])
}

// Adjoint implements TangentPrior: out = (∂Φ₀/∂x)ᵀ λ at (x, e), by
// reverse mode through the Runge–Kutta stages (the stage states recorded
// by a forward pass): with k̄_s = (h/6) b_s λ', each stage from the last
// adds ȳ_s = A(y_s)ᵀ k̄_s to λ and c_s h ȳ_s to k̄_{s−1}. It does not
// allocate.
func (p *QuadrotorPrior) Adjoint(out, x, e, lambda []float64) error {
	if err := p.checkStep(out, x, e); err != nil {
		return err
	}
	if len(lambda) < quadDim {
		return fmt.Errorf("mechanics: quadrotor prior adjoint: λ has %d values, want 12", len(lambda))
	}
	n := p.Params.Substeps
	h := p.Dt / float64(n)
	if len(p.stages) < n*4*quadDim {
		p.stages = make([]float64, n*4*quadDim)
	}
	w := p.wrench(e)
	coef := [4]float64{0, 0.5, 0.5, 1}
	b := [4]float64{1, 2, 2, 1}
	// forward, recording every stage's state
	var y [quadDim]float64
	copy(y[:], x)
	p.integrate(&y, w, false, p.stages)
	// reverse
	var lam [quadDim]float64
	copy(lam[:], lambda)
	var a [quadDim][quadDim]float64
	for sub := n - 1; sub >= 0; sub-- {
		var kb [4][quadDim]float64
		for st := range 4 {
			for i := range quadDim {
				kb[st][i] = h / 6 * b[st] * lam[i]
			}
		}
		for st := 3; st >= 0; st-- {
			y = [quadDim]float64(p.stages[(sub*4+st)*quadDim : (sub*4+st+1)*quadDim])
			p.rhs(&y, w, &a)
			for j := range quadDim {
				var yb float64
				for i := range quadDim {
					yb += a[i][j] * kb[st][i]
				}
				lam[j] += yb
				if st > 0 {
					kb[st-1][j] += coef[st] * h * yb
				}
			}
		}
	}
	copy(out, lam[:])
	return nil
}

// Rollout rolls the prior out alone: from x0 (12 values) under ports
// (horizon rows of ne values, the body wrench first) it writes x̂_1 … x̂_H
// into out (RolloutPrior). It does not allocate.
func (p *QuadrotorPrior) Rollout(x0, ports []float64, horizon int, out []float64) error {
	return RolloutPrior(p, x0, ports, horizon, out)
}

// HasAdjoint implements TangentPrior: always.
func (p *QuadrotorPrior) HasAdjoint() bool { return true }

// finiteState reports a non-finite state a step produced.
func finiteState(what string, x []float64) error {
	if !allFinite(x) {
		return fmt.Errorf("%w: %s: the step produced a non-finite state %v", ErrOutOfDomain, what, slices.Clone(x))
	}
	return nil
}
