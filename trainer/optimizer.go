package trainer

import (
	"fmt"

	"github.com/calisym/calisym/trainer/optim"
)

// optimizer is what the training loop needs from an optimiser.
type optimizer interface {
	// step applies one update from the averaged gradient (clipped to clip by
	// global norm first) at learning rate lr and returns the gradient norm
	// before clipping.
	step(grad []float64, lr, clip float64) float64
	state() OptimState
	setState(OptimState) error
}

// OptimState is the serialisable state of an optimiser.
type OptimState struct {
	Kind    string
	Step    int
	Buffers map[string][]float64
}

// boundOptimizer drives an optim.Optimizer over a learner's parameters; the
// loop's averaged gradient is copied into the bound gradient buffer.
type boundOptimizer struct {
	opt  optim.Optimizer
	ts   []optim.Tensor
	grad []float64
	base float64 // the configured learning rate: Step takes lr/base
}

// newOptimizer builds the optimiser cfg names over the parameters of l.
func newOptimizer(l Learner, cfg Config) (optimizer, error) {
	theta := l.Theta()
	grad := make([]float64, len(theta))
	var shapes []optim.Shape
	for _, t := range l.Tensors() {
		shapes = append(shapes, optim.Shape{Name: t.Name, Rows: t.Rows, Cols: t.Cols, Offset: t.Offset})
	}
	ts, err := optim.Bind(theta, grad, shapes)
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
	return &boundOptimizer{opt: o, ts: ts, grad: grad, base: cfg.LR}, nil
}

func (b *boundOptimizer) step(grad []float64, lr, clip float64) float64 {
	copy(b.grad, grad)
	gn := optim.ClipGradNorm(b.ts, clip)
	b.opt.Step(lr / b.base)
	return gn
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
