package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/calisym/calisym/dataset"
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

// Composed is a learned one-step model behind a physics prior: each step
// predicts x' = M(Φ₀(x, u), u), Φ₀ one step of an identified rigid-body
// model (a mechanics.Prior: the double pendulum's PendulumPrior, the
// quadrotor's QuadrotorPrior) and M the learned map (Inner): CaLiSym
// (*Symplectic), which starts near the identity, so the composed model
// starts as the physics and learns its correction, or the MLP baseline
// (*MLP, NewComposedMLP), the "physics + residual" hybrid. With a
// symplectic prior (the frictionless implicit midpoint) and CaLiSym the
// composed state map is symplectic for fixed ports, as a composition of
// symplectic maps.
//
// One-step training computes the prior's states Φ₀(x_t, e_t) for each
// batch's inputs and fits the learned map to x_{t+1} from them, by its own
// loss. Multi-step training (Config.RolloutSteps > 1) rolls the composed
// map out and back-propagates through Φ₀ by its adjoint, so it needs a
// prior with one (mechanics.HasAdjoint: the quadrotor's and the
// pendulum's implicit-midpoint kinds); with any other Train refuses it
// (CheckConfig).
type Composed struct {
	// Inner is the learned map, a *Symplectic or an *MLP (NewComposed).
	Inner Learner
	// Prior is the physics step; each worker and roller uses a clone.
	Prior mechanics.Prior
}

// NewComposed puts prior in front of inner, a *Symplectic or an *MLP, and
// records it in the model's file: a symplectic model's metadata
// (provenance PriorKey), an MLP's meta (MLPMeta.Prior). The model must
// step the prior's state (4 values for a double pendulum, 12 for a
// quadrotor), its ports starting with the prior's (the joint torques, the
// body wrench), sampled at the prior's step.
func NewComposed(inner Learner, prior mechanics.Prior) (*Composed, error) {
	if prior == nil {
		return nil, fmt.Errorf("trainer: a composed model needs a prior")
	}
	nx, ne, dt, err := innerDims(inner)
	if err != nil {
		return nil, err
	}
	spec := prior.Spec()
	if err := priorFits(spec, nx, ne); err != nil {
		return nil, err
	}
	if dt > 0 && math.Abs(dt-spec.Dt) > 1e-12*dt {
		return nil, fmt.Errorf("trainer: the prior's step %g s is not the model's sampling period %g s", spec.Dt, dt)
	}
	switch v := inner.(type) {
	case *Symplectic:
		js, err := json.Marshal(spec)
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		m := v.Model()
		if m.Meta.Provenance == nil {
			m.Meta.Provenance = map[string]string{}
		}
		m.Meta.Provenance[PriorKey] = string(js)
	case *MLP:
		if v.Meta == nil {
			return nil, fmt.Errorf("trainer: an MLP behind a prior needs its meta (layout and dt, NewMLP) to record the prior in its file")
		}
		v.Meta.Prior = &spec
	}
	return &Composed{Inner: inner, Prior: prior}, nil
}

// priorFits is spec.Fits as the trainer's error.
func priorFits(spec mechanics.PriorSpec, nx, ne int) error {
	if err := spec.Fits(nx, ne); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// innerDims returns the state and port dimensions and the sampling period
// (0: not recorded) of a learned map a composed model can wrap.
func innerDims(l Learner) (nx, ne int, dt float64, err error) {
	switch v := l.(type) {
	case *Symplectic:
		m := v.Model()
		return m.Layout.StateDim(), m.Layout.PortDim(), m.Meta.Dt, nil
	case *MLP:
		c := v.Net.Config()
		if v.Meta != nil {
			dt = v.Meta.Dt
		}
		return c.StateDim, c.PortDim, dt, nil
	case nil:
		return 0, 0, 0, fmt.Errorf("trainer: a composed model needs a learned map")
	}
	return 0, 0, 0, fmt.Errorf("trainer: %s cannot sit behind a physics prior (a CaLiSym model or the MLP baseline can)", l.Name())
}

// NewComposedMLP builds the MLP baseline (NewMLP: the same widths, loss
// weights and initial parameters for the seed) behind prior, the
// "physics + residual" hybrid x' = MLP(Φ₀(x, u), u). Its normalisation is
// computed as NewMLP's, from the pairs it maps, which are here
// (Φ₀(x_t, e_t), e_t) → x_{t+1}: the scale of its output is that of the
// correction the prior leaves (x_{t+1} − Φ₀(x_t, e_t)).
func NewComposedMLP(ds *dataset.Dataset, hidden []int, w LossWeights, seed uint64, prior mechanics.Prior) (*Composed, error) {
	if prior == nil {
		return nil, fmt.Errorf("trainer: a composed model needs a prior")
	}
	if err := priorFits(prior.Spec(), ds.StateDim(), ds.PortDim()); err != nil {
		return nil, err
	}
	m, err := newMLP(ds, hidden, w, seed, prior)
	if err != nil {
		return nil, err
	}
	return NewComposed(m, prior)
}

// Model returns the learned map's model when it is a CaLiSym model
// (Inner a *Symplectic), the file it saves recording the prior; nil for
// the MLP.
func (c *Composed) Model() *predictor.Model {
	if s, ok := c.Inner.(*Symplectic); ok {
		return s.Model()
	}
	return nil
}

// Name implements Learner.
func (c *Composed) Name() string { return c.Inner.Name() + "+" + string(c.Prior.Spec().Kind) }

// NumParams implements Learner: the learned map's (the prior has none).
func (c *Composed) NumParams() int { return c.Inner.NumParams() }

// Params implements Learner.
func (c *Composed) Params() []float64 { return c.Inner.Params() }

// SetParams implements Learner.
func (c *Composed) SetParams(theta []float64) error { return c.Inner.SetParams(theta) }

// ParamBlocks implements Learner.
func (c *Composed) ParamBlocks() []predictor.ParamBlock { return c.Inner.ParamBlocks() }

// CheckConfig refuses the training configurations the composed model
// cannot train: multi-step rollouts (Config.RolloutSteps > 1) through a
// prior without an adjoint (mechanics.HasAdjoint: the pendulum's DOP853
// kinds).
func (c *Composed) CheckConfig(cfg Config) error {
	if cfg.RolloutSteps > 1 && !mechanics.HasAdjoint(c.Prior) {
		return fmt.Errorf("trainer: %s: multi-step training (rollout_steps %d) through a physics prior needs the prior's tangent map, which the %s prior does not have: train one-step (rollout_steps 0 or 1), or use an implicit-midpoint kind", c.Name(), cfg.RolloutSteps, c.Prior.Spec().Kind)
	}
	return nil
}

// priorJSON is the prior's record in the model file (PriorKey).
func (c *Composed) priorJSON() string {
	js, err := json.Marshal(c.Prior.Spec())
	if err != nil {
		return fmt.Sprintf("%+v", c.Prior.Spec())
	}
	return string(js)
}

// NewWorker implements Learner: the inner model's worker on the prior's
// states; for multi-step batches the inner worker rolls the composed map
// out through the prior and its adjoint (priorSeqWorker).
func (c *Composed) NewWorker(capacity int) Worker {
	nx, ne, _, _ := innerDims(c.Inner)
	return &composedWorker{inner: c.Inner.NewWorker(capacity), prior: c.Prior.Clone(), nx: nx,
		ne: ne, xt: make([]float64, capacity*nx)}
}

type composedWorker struct {
	inner  Worker
	prior  mechanics.Prior
	nx, ne int
	xt     []float64
}

// priorSeqWorker is a worker that trains K-step sequences through a
// prior: its rollout is x̂_{k+1} = M(Φ₀(x̂_k, e_k), e_k), back-propagated
// through Φ₀ by its adjoint.
type priorSeqWorker interface {
	lossGradSeqPrior(b Batch, grad []float64, prior mechanics.TangentPrior) float64
}

// LossGrad implements Worker. A multi-step batch through a prior without
// an adjoint (refused by CheckConfig before training) or a prior step that
// fails returns NaN, which stops training as a non-finite loss.
func (w *composedWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	if b.K > 1 {
		tp, ok := w.prior.(mechanics.TangentPrior)
		sw, ok2 := w.inner.(priorSeqWorker)
		if !ok || !ok2 || !tp.HasAdjoint() {
			return math.NaN()
		}
		return sw.lossGradSeqPrior(b, grad, tp)
	}
	xt := w.xt[:b.N*w.nx]
	if err := applyPrior(w.prior, b.X[:b.N*w.nx], b.E, b.N, w.nx, w.ne, xt); err != nil {
		return math.NaN()
	}
	b.X = xt
	return w.inner.LossGrad(b, grad, pred)
}

// applyPrior writes Φ₀(x_r, e_r) for rows r of x into out.
func applyPrior(p mechanics.Prior, x, e []float64, rows, nx, ne int, out []float64) error {
	for r := range rows {
		if err := p.StepTo(out[r*nx:(r+1)*nx], x[r*nx:(r+1)*nx], e[r*ne:(r+1)*ne]); err != nil {
			return err
		}
	}
	return nil
}

// Rollers returns a factory of composed rollers over the learned map's
// rollers (made when the factory is called, so with the parameters of
// that moment): x̂_{k+1} = M(Φ₀(x̂_k, e_k), e_k).
func (c *Composed) Rollers() RollerFactory {
	rl, ok := c.Inner.(rollerLearner)
	if !ok {
		return func() (Roller, error) {
			return nil, fmt.Errorf("trainer: %s cannot be rolled out", c.Inner.Name())
		}
	}
	_, ne, _, _ := innerDims(c.Inner)
	return composeRollers(rl.Rollers(), c.Prior, ne)
}

// ComposedRollers returns a factory of rollers that apply prior, then the
// compiled model m, at every step: x̂_{k+1} = m(Φ₀(x̂_k, e_k), e_k)
// (mechanics.ComposedStepper, which the live node uses too). Each roller
// owns a clone of the prior and allocates nothing per step.
func ComposedRollers(m *predictor.Model, prior mechanics.Prior) RollerFactory {
	if err := priorFits(prior.Spec(), m.Layout.StateDim(), m.Layout.PortDim()); err != nil {
		return func() (Roller, error) { return nil, err }
	}
	return composeRollers(planRollers(m), prior, m.Layout.PortDim())
}

// composeRollers returns a factory of rollers that apply prior, then a
// roller of inner (a one-step model of the prior's state and ne ports a
// step), at every step (mechanics.ComposedStepper). Each roller owns a
// clone of the prior and its own inner roller, and allocates nothing per
// step when the inner roller does not.
func composeRollers(inner RollerFactory, prior mechanics.Prior, ne int) RollerFactory {
	return func() (Roller, error) {
		in, err := inner()
		if err != nil {
			return nil, err
		}
		r, err := mechanics.NewComposedStepper(prior.Clone(), in, ne)
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		return r, nil
	}
}
