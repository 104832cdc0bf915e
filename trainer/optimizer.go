package trainer

import (
	"fmt"

	"github.com/calisym/calisym/trainer/optim"
)

// optimizer is what the training loop needs from an optimiser.
type optimizer interface {
	// step applies one update from the averaged gradient (clipped to clip by
	// global norm first) at learning rate lr, hands the new parameters to
	// the learner and returns the gradient norm before clipping.
	step(grad []float64, lr, clip float64) (float64, error)
	// setParams replaces the parameters of the optimiser and the learner
	// (restoring a checkpoint).
	setParams(theta []float64) error
	state() OptimState
	setState(OptimState) error
}

// OptimState is the serialisable state of an optimiser.
type OptimState struct {
	Kind    string
	Step    int
	Buffers map[string][]float64
}

// boundOptimizer drives an optim.Optimizer over a copy of a learner's
// parameters, theta, which every step updates in place and hands to the
// learner; the loop's averaged gradient is copied into the bound gradient
// buffer.
type boundOptimizer struct {
	l           Learner
	opt         optim.Optimizer
	ts          []optim.Tensor
	theta, grad []float64
	base        float64 // the configured learning rate: Step takes lr/base
}

// newOptimizer builds the optimiser cfg names over the parameters of l.
func newOptimizer(l Learner, cfg Config) (optimizer, error) {
	theta := l.Params()
	grad := make([]float64, len(theta))
	ts, err := optim.Bind(theta, grad, l.ParamBlocks())
	if err != nil {
		return nil, fmt.Errorf("trainer: %s parameters: %w", l.Name(), err)
	}
	adam := optim.AdamWConfig{LR: cfg.LR, WeightDecay: cfg.WeightDecay}
	var o optim.Optimizer
	switch cfg.Optimizer {
	case "adamw":
		o, err = optim.NewAdamW(ts, adam)
	case "muon":
		mlr := cfg.MuonLR
		if mlr == 0 {
			mlr = cfg.LR
		}
		o, err = optim.NewMuon(ts, optim.MuonConfig{LR: mlr, WeightDecay: cfg.WeightDecay, Adam: adam})
	default:
		err = fmt.Errorf("unknown optimizer %q (want adamw or muon)", cfg.Optimizer)
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	return &boundOptimizer{l: l, opt: o, ts: ts, theta: theta, grad: grad, base: cfg.LR}, nil
}

func (b *boundOptimizer) step(grad []float64, lr, clip float64) (float64, error) {
	copy(b.grad, grad)
	gn := optim.ClipGradNorm(b.ts, clip)
	b.opt.Step(lr / b.base)
	return gn, b.l.SetParams(b.theta)
}

func (b *boundOptimizer) setParams(theta []float64) error {
	if len(theta) != len(b.theta) {
		return fmt.Errorf("trainer: %d parameters given, %s has %d", len(theta), b.l.Name(), len(b.theta))
	}
	copy(b.theta, theta)
	return b.l.SetParams(b.theta)
}

func (b *boundOptimizer) state() OptimState {
	s := b.opt.State()
	return OptimState{Kind: s.Kind, Step: s.Step, Buffers: s.Buffers}
}

func (b *boundOptimizer) setState(s OptimState) error {
	if err := b.opt.SetState(optim.State{Kind: s.Kind, Step: s.Step, Buffers: s.Buffers}); err != nil {
		return fmt.Errorf("trainer: optimiser state: %w", err)
	}
	return nil
}
