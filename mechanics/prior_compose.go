package mechanics

import "fmt"

// Stepper is an autoregressive one-step model: from x0 (the state) under
// ports (horizon rows of port values) it writes x̂_1 … x̂_H into out. It is
// predictor.Stepper's method set, declared here so that mechanics does
// not import the predictor: predictor.Roller is one.
type Stepper interface {
	Rollout(x0, ports []float64, horizon int, out []float64) error
}

// ComposedStepper rolls out a learned one-step model behind a pendulum
// prior, the composed model of trainer.Composed: each step predicts
//
//	x̂_{k+1} = M(Φ₀(x̂_k, e_k), e_k),
//
// Φ₀ the prior's step (PendulumPrior.Step) under the first two ports (the
// torques) and M one step of the inner model under all of them. The
// training's rollers (trainer.ComposedRollers) and the live node
// (nodes/node) predict through it. It allocates nothing per step and is not
// safe for concurrent use (nor is its prior or, as a rule, its inner model).
type ComposedStepper struct {
	prior *PendulumPrior
	inner Stepper
	ne    int
	xt    [4]float64 // the prior's state of the current step
}

// NewComposedStepper puts prior in front of inner, a model of the
// pendulum's 4 states (q1, q2, p1, p2) and ne ≥ 2 port values a step, the
// torques τ1, τ2 first. The stepper uses prior and inner themselves: give
// each stepper its own (PendulumPrior.Clone).
func NewComposedStepper(prior *PendulumPrior, inner Stepper, ne int) (*ComposedStepper, error) {
	if prior == nil || inner == nil {
		return nil, fmt.Errorf("mechanics: composed stepper needs a prior and a model")
	}
	if ne < 2 {
		return nil, fmt.Errorf("mechanics: composed stepper: a pendulum prior needs at least 2 ports a step (the torques τ1, τ2), the model has %d", ne)
	}
	return &ComposedStepper{prior: prior, inner: inner, ne: ne}, nil
}

// Prior returns the stepper's prior.
func (c *ComposedStepper) Prior() *PendulumPrior { return c.prior }

// Rollout implements Stepper: from x0 (4 values) under ports (horizon × ne
// values) it writes x̂_1 … x̂_H (horizon × 4 values) into out. A prior step
// that fails (PendulumPrior.Step) is reported with its step number.
func (c *ComposedStepper) Rollout(x0, ports []float64, horizon int, out []float64) error {
	const nx = 4
	ne := c.ne
	switch {
	case len(x0) < nx:
		return fmt.Errorf("mechanics: composed rollout: initial state has %d values, need %d", len(x0), nx)
	case len(ports) < horizon*ne:
		return fmt.Errorf("mechanics: composed rollout: ports have %d values, need %d×%d", len(ports), horizon, ne)
	case len(out) < horizon*nx:
		return fmt.Errorf("mechanics: composed rollout: output has room for %d values, need %d×%d", len(out), horizon, nx)
	}
	x := [4]float64{x0[0], x0[1], x0[2], x0[3]}
	for k := range horizon {
		e := ports[k*ne : (k+1)*ne]
		y, err := c.prior.Step(x, [2]float64{e[0], e[1]})
		if err != nil {
			return fmt.Errorf("mechanics: composed rollout, step %d: %w", k+1, err)
		}
		c.xt = y
		o := out[k*nx : (k+1)*nx]
		if err := c.inner.Rollout(c.xt[:], e, 1, o); err != nil {
			return err
		}
		x = [4]float64{o[0], o[1], o[2], o[3]}
	}
	return nil
}
