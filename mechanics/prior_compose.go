package mechanics

import "fmt"

// Stepper is an autoregressive one-step model: from x0 (the state) under
// ports (horizon rows of port values) it writes x̂_1 … x̂_H into out. It is
// predictor.Stepper's method set, declared here so that mechanics does
// not import the predictor: predictor.Roller is one.
type Stepper interface {
	Rollout(x0, ports []float64, horizon int, out []float64) error
}

// ComposedStepper rolls out a learned one-step model behind a physics
// prior, the composed model of trainer.Composed: each step predicts
//
//	x̂_{k+1} = M(Φ₀(x̂_k, e_k), e_k),
//
// Φ₀ the prior's step (Prior.StepTo) under its leading ports (a
// pendulum's torques, a quadrotor's body wrench) and M one step of the
// inner model under all of them. The training's rollers
// (trainer.ComposedRollers) and the live node (nodes/node) predict through
// it. It allocates nothing per step and is not safe for concurrent use
// (nor is its prior or, as a rule, its inner model).
type ComposedStepper struct {
	prior Prior
	inner Stepper
	ne    int
	xt    []float64 // the prior's state of the current step
	x     []float64 // the current state
}

// NewComposedStepper puts prior in front of inner, a model of the prior's
// StateDim state values and ne ≥ prior.PortDim() port values a step, the
// prior's ports first. The stepper uses prior and inner themselves: give
// each stepper its own (Prior.Clone).
func NewComposedStepper(prior Prior, inner Stepper, ne int) (*ComposedStepper, error) {
	if prior == nil || inner == nil {
		return nil, fmt.Errorf("mechanics: composed stepper needs a prior and a model")
	}
	if ne < prior.PortDim() {
		return nil, fmt.Errorf("mechanics: composed stepper: the %s prior needs at least %d ports a step, the model has %d", prior.Spec().Kind, prior.PortDim(), ne)
	}
	nx := prior.StateDim()
	return &ComposedStepper{prior: prior, inner: inner, ne: ne, xt: make([]float64, nx), x: make([]float64, nx)}, nil
}

// Prior returns the stepper's prior.
func (c *ComposedStepper) Prior() Prior { return c.prior }

// Rollout implements Stepper: from x0 (StateDim values) under ports
// (horizon × ne values) it writes x̂_1 … x̂_H (horizon × StateDim values)
// into out. A prior step that fails is reported with its step number.
func (c *ComposedStepper) Rollout(x0, ports []float64, horizon int, out []float64) error {
	nx := len(c.xt)
	ne := c.ne
	switch {
	case len(x0) < nx:
		return fmt.Errorf("mechanics: composed rollout: initial state has %d values, need %d", len(x0), nx)
	case len(ports) < horizon*ne:
		return fmt.Errorf("mechanics: composed rollout: ports have %d values, need %d×%d", len(ports), horizon, ne)
	case len(out) < horizon*nx:
		return fmt.Errorf("mechanics: composed rollout: output has room for %d values, need %d×%d", len(out), horizon, nx)
	}
	copy(c.x, x0[:nx])
	for k := range horizon {
		e := ports[k*ne : (k+1)*ne]
		if err := c.prior.StepTo(c.xt, c.x, e); err != nil {
			return fmt.Errorf("mechanics: composed rollout, step %d: %w", k+1, err)
		}
		o := out[k*nx : (k+1)*nx]
		if err := c.inner.Rollout(c.xt, e, 1, o); err != nil {
			return err
		}
		copy(c.x, o)
	}
	return nil
}
