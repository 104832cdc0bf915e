package mechanics

import (
	"errors"
	"fmt"
)

// ErrNoAdjoint reports a prior step whose adjoint is not available: the
// DOP853 kinds of the pendulum prior (an adaptive integrator's tangent
// map is not implemented), which multi-step training cannot go through.
var ErrNoAdjoint = errors.New("mechanics: the prior has no adjoint")

// HasAdjoint implements TangentPrior: the implicit-midpoint kinds have
// an adjoint, the DOP853 kinds none.
func (p *PendulumPrior) HasAdjoint() bool {
	return p.Kind == PriorMidpoint || p.Kind == PriorMidpointFriction
}

// FrictionJacobian returns FrictionStep(x, s) and its Jacobian with
// respect to x, by the implicit function theorem on the backward-Euler
// equation r = p' + s F(A(q) p') − p = 0 at fixed q: with
// D = diag(F'(v')), v' = A p' and B = I + s D A,
//
//	∂p'/∂p = B⁻¹,  ∂p'/∂q2 = B⁻¹ s D A M' v'  (∂p'/∂q1 = 0),
//
// and q unchanged.
func (pp *PendulumParams) FrictionJacobian(x [4]float64, s float64) ([4]float64, [4][4]float64, error) {
	var jac [4][4]float64
	y, err := pp.FrictionStep(x, s)
	if err != nil {
		return y, jac, err
	}
	q := [2]float64{x[0], x[1]}
	a := pp.InverseMassMatrix(q)
	v := mul2(a, [2]float64{y[2], y[3]})
	b := [2]float64{pp.B1, pp.B2}
	cf := [2]float64{pp.Cf1, pp.Cf2}
	var d [2]float64
	for i := range 2 {
		d[i] = b[i] + cf[i]*CoulombSharpness/(1+CoulombSharpness*CoulombSharpness*v[i]*v[i])
	}
	bi := inv2([2][2]float64{{1 + s*d[0]*a[0][0], s * d[0] * a[0][1]}, {s * d[1] * a[1][0], 1 + s*d[1]*a[1][1]}})
	amv := mul2(a, mul2(pp.MassMatrixDerivative(q), v))
	dq2 := mul2(bi, [2]float64{s * d[0] * amv[0], s * d[1] * amv[1]})
	jac[0][0], jac[1][1] = 1, 1
	jac[2][1], jac[3][1] = dq2[0], dq2[1]
	jac[2][2], jac[2][3], jac[3][2], jac[3][3] = bi[0][0], bi[0][1], bi[1][0], bi[1][1]
	return y, jac, nil
}

// Jacobian returns Φ₀(x, τ) and its Jacobian ∂Φ₀/∂x for the implicit
// midpoint kinds: MidpointJacobian, between the two friction half steps'
// FrictionJacobian for PriorMidpointFriction. The DOP853 kinds return
// ErrNoAdjoint.
func (p *PendulumPrior) Jacobian(x [4]float64, tau [2]float64) ([4]float64, [4][4]float64, error) {
	switch p.Kind {
	case PriorMidpoint:
		return p.Params.MidpointJacobian(x, tau, p.Dt)
	case PriorMidpointFriction:
		y1, j1, err := p.Params.FrictionJacobian(x, p.Dt/2)
		if err != nil {
			return x, j1, err
		}
		y2, j2, err := p.noFric.MidpointJacobian(y1, tau, p.Dt)
		if err != nil {
			return x, j2, err
		}
		y3, j3, err := p.Params.FrictionJacobian(y2, p.Dt/2)
		if err != nil {
			return x, j3, err
		}
		return y3, mul4(j3, mul4(j2, j1)), nil
	}
	return x, [4][4]float64{}, fmt.Errorf("%w: kind %s", ErrNoAdjoint, p.Kind)
}

// Adjoint implements TangentPrior for the implicit-midpoint kinds: out =
// (∂Φ₀/∂x)ᵀ λ at (x, e), e's first two values the torques. The DOP853
// kinds return ErrNoAdjoint (HasAdjoint). It does not allocate.
func (p *PendulumPrior) Adjoint(out, x, e, lambda []float64) error {
	if len(x) < 4 || len(out) < 4 || len(lambda) < 4 || len(e) < 2 {
		return fmt.Errorf("mechanics: pendulum prior adjoint: state %d, output %d, λ %d and %d port values, want 4, 4, 4 and the 2 torques", len(x), len(out), len(lambda), len(e))
	}
	_, jac, err := p.Jacobian([4]float64(x[:4]), [2]float64{e[0], e[1]})
	if err != nil {
		return err
	}
	for j := range 4 {
		var s float64
		for i := range 4 {
			s += jac[i][j] * lambda[i]
		}
		out[j] = s
	}
	return nil
}

// mul4 returns a·b.
func mul4(a, b [4][4]float64) [4][4]float64 {
	var c [4][4]float64
	for i := range 4 {
		for k := range 4 {
			for j := range 4 {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return c
}
