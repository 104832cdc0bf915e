package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
)

// PriorKey is the provenance key (predictor.Metadata.Provenance) under which
// a composed model's file records its physics prior, as the JSON of a
// mechanics.PriorSpec. A file with it is a composed model: OpenModel rolls
// it out with the prior, and what cannot apply the prior (the ROS 2 node,
// the ONNX export) refuses it (ErrPriorUnsupported).
const PriorKey = mechanics.PriorProvenanceKey

// ErrPriorUnsupported reports a composed model (with a physics prior) given
// to something that can only run the learned map alone.
var ErrPriorUnsupported = errors.New("trainer: the model has a physics prior (provenance " + PriorKey + ") that this path cannot apply")

// ModelPrior returns the physics prior a model's metadata records (nil,
// nil: none).
func ModelPrior(m *predictor.Model) (*mechanics.PriorSpec, error) {
	s, ok := m.Meta.Provenance[PriorKey]
	if !ok {
		return nil, nil
	}
	ps, err := mechanics.ParsePriorSpec([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("trainer: model provenance %s: %w", PriorKey, err)
	}
	return ps, nil
}

// Composed is a lifted symplectic model behind a physics prior: each step
// predicts x' = CaLiSym(Φ₀(x, u), u), Φ₀ one step of an identified
// rigid-body model (mechanics.PendulumPrior) and CaLiSym the learned map,
// which starts near the identity, so the composed model starts as the
// physics and learns its correction. With a symplectic prior (the
// frictionless implicit midpoint) the composed state map is symplectic for
// fixed ports, as a composition of symplectic maps.
//
// Training is one-step only: the prior's states Φ₀(x_t, e_t) are computed
// for each batch's inputs and the learned map is fitted to x_{t+1} from
// them; multi-step training would need Φ₀'s tangent map in the
// backpropagation through the rollout, which this type does not provide,
// so Train refuses Config.RolloutSteps > 1 (CheckConfig).
type Composed struct {
	*Symplectic
	// Prior is the physics step; each worker and roller uses a clone.
	Prior *mechanics.PendulumPrior
}

// NewComposed puts prior in front of s and records it in the model's
// metadata (PriorKey), so that the saved file describes the composition.
// The model must be a double pendulum's: n = 2, its ports starting with
// the two joint torques.
func NewComposed(s *Symplectic, prior *mechanics.PendulumPrior) (*Composed, error) {
	m := s.Model()
	if m.Layout.N != 2 || m.Layout.PortDim() < 2 {
		return nil, fmt.Errorf("trainer: a pendulum prior needs n = 2 and at least 2 ports (the torques), the model has n = %d and %d ports", m.Layout.N, m.Layout.PortDim())
	}
	if m.Meta.Dt > 0 && math.Abs(m.Meta.Dt-prior.Dt) > 1e-12*m.Meta.Dt {
		return nil, fmt.Errorf("trainer: the prior's step %g s is not the model's sampling period %g s", prior.Dt, m.Meta.Dt)
	}
	js, err := json.Marshal(prior.Spec())
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	if m.Meta.Provenance == nil {
		m.Meta.Provenance = map[string]string{}
	}
	m.Meta.Provenance[PriorKey] = string(js)
	return &Composed{Symplectic: s, Prior: prior}, nil
}

// Name implements Learner.
func (c *Composed) Name() string { return c.Symplectic.Name() + "+" + string(c.Prior.Kind) }

// CheckConfig refuses the training configurations the composed model
// cannot train: multi-step rollouts (Config.RolloutSteps > 1).
func (c *Composed) CheckConfig(cfg Config) error {
	if cfg.RolloutSteps > 1 {
		return fmt.Errorf("trainer: %s: multi-step training (rollout_steps %d) through a physics prior needs the prior's tangent map, which is not implemented: train one-step (rollout_steps 0 or 1)", c.Name(), cfg.RolloutSteps)
	}
	return nil
}

// NewWorker implements Learner: the inner model's worker on the prior's
// states.
func (c *Composed) NewWorker(capacity int) Worker {
	nx := c.Model().Layout.StateDim()
	return &composedWorker{inner: c.Symplectic.NewWorker(capacity), prior: c.Prior.Clone(), nx: nx,
		ne: c.Model().Layout.PortDim(), xt: make([]float64, capacity*nx)}
}

type composedWorker struct {
	inner  Worker
	prior  *mechanics.PendulumPrior
	nx, ne int
	xt     []float64
}

// LossGrad implements Worker. A multi-step batch (refused by CheckConfig
// before training) or a prior step that fails returns NaN, which stops
// training as a non-finite loss.
func (w *composedWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	if b.K > 1 {
		return math.NaN()
	}
	xt := w.xt[:b.N*w.nx]
	if err := applyPrior(w.prior, b.X[:b.N*w.nx], b.E, b.N, w.nx, w.ne, xt); err != nil {
		return math.NaN()
	}
	b.X = xt
	return w.inner.LossGrad(b, grad, pred)
}

// applyPrior writes Φ₀(x_r, e_r) for rows r of x into out.
func applyPrior(p *mechanics.PendulumPrior, x, e []float64, rows, nx, ne int, out []float64) error {
	for r := range rows {
		xr := x[r*nx : (r+1)*nx]
		er := e[r*ne : (r+1)*ne]
		y, err := p.Step([4]float64{xr[0], xr[1], xr[2], xr[3]}, [2]float64{er[0], er[1]})
		if err != nil {
			return err
		}
		copy(out[r*nx:(r+1)*nx], y[:])
	}
	return nil
}

// Rollers returns a factory of composed rollers (ComposedRollers) over the
// model compiled when the factory is called.
func (c *Composed) Rollers() RollerFactory { return ComposedRollers(c.Model(), c.Prior) }

// ComposedRollers returns a factory of rollers that apply prior, then the
// compiled model m, at every step: x̂_{k+1} = m(Φ₀(x̂_k, e_k), e_k)
// (mechanics.ComposedStepper, which the live node uses too). Each roller
// owns a clone of the prior and allocates nothing per step.
func ComposedRollers(m *predictor.Model, prior *mechanics.PendulumPrior) RollerFactory {
	return func() (Roller, error) {
		if m.Layout.StateDim() != 4 {
			return nil, fmt.Errorf("trainer: a pendulum prior needs n = 2, the model has n = %d", m.Layout.N)
		}
		p, err := m.Compile()
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		r, err := mechanics.NewComposedStepper(prior.Clone(), p.NewRoller(), m.Layout.PortDim())
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		return r, nil
	}
}
