package optim

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Optimizer updates a fixed list of tensors in place from their gradients.
type Optimizer interface {
	// Step applies one update from the gradients currently held in the
	// tensors' Grad views. Every configured learning rate is multiplied by
	// lrScale (the output of a Schedule; 1 for a constant rate).
	Step(lrScale float64)
	// Tensors returns the tensors the optimiser updates.
	Tensors() []Tensor
	// Steps returns the number of steps taken so far.
	Steps() int
	// State returns a deep copy of the optimiser state for checkpoints.
	State() State
	// SetState restores a state returned by State; the result is
	// bit-identical to the optimiser that produced it.
	SetState(State) error
}

// State is the serialisable state of an optimiser: its kind, the step
// counter and one buffer per tensor and moment, keyed "<tensor>.<buffer>"
// with buffer one of exp_avg, exp_avg_sq (AdamW) or momentum_buffer (Muon).
// It has the same fields as trainer.OptimState and encodes losslessly with
// encoding/gob (or JSON, which round-trips float64 exactly in Go).
type State struct {
	Kind    string
	Step    int
	Buffers map[string][]float64
}

// Clone returns a deep copy of s.
func (s State) Clone() State {
	c := State{Kind: s.Kind, Step: s.Step, Buffers: make(map[string][]float64, len(s.Buffers))}
	for k, v := range s.Buffers {
		c.Buffers[k] = slices.Clone(v)
	}
	return c
}

// Buffer names used in State keys.
const (
	bufExpAvg   = "exp_avg"
	bufExpAvgSq = "exp_avg_sq"
	bufMomentum = "momentum_buffer"
)

// restore copies the buffers of s named in want (key → destination) after
// checking the kind, the key set and the lengths.
func restore(s State, kind string, want map[string][]float64) error {
	if s.Kind != kind {
		return fmt.Errorf("%w: state of kind %q, optimiser is %q", ErrState, s.Kind, kind)
	}
	if s.Step < 0 {
		return fmt.Errorf("%w: negative step counter %d", ErrState, s.Step)
	}
	if len(s.Buffers) != len(want) {
		return fmt.Errorf("%w: %d buffers, want %d", ErrState, len(s.Buffers), len(want))
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		src, ok := s.Buffers[k]
		if !ok {
			return fmt.Errorf("%w: missing buffer %q", ErrState, k)
		}
		if len(src) != len(want[k]) {
			return fmt.Errorf("%w: buffer %q has %d values, want %d", ErrState, k, len(src), len(want[k]))
		}
	}
	for k, dst := range want {
		copy(dst, s.Buffers[k])
	}
	return nil
}

// AdamWConfig holds the hyperparameters of AdamW. The zero value of Beta1,
// Beta2 and Eps selects torch's defaults (0.9, 0.999, 1e-8).
type AdamWConfig struct {
	LR          float64 `json:"lr"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
}

func (c AdamWConfig) withDefaults() AdamWConfig {
	if c.Beta1 == 0 {
		c.Beta1 = 0.9
	}
	if c.Beta2 == 0 {
		c.Beta2 = 0.999
	}
	if c.Eps == 0 {
		c.Eps = 1e-8
	}
	return c
}

func (c AdamWConfig) validate() error {
	switch {
	case !(c.LR >= 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("optim: AdamW learning rate %v must be finite and ≥ 0", c.LR)
	case !(c.Beta1 >= 0 && c.Beta1 < 1) || !(c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("optim: AdamW betas (%v, %v) must lie in [0, 1)", c.Beta1, c.Beta2)
	case !(c.Eps > 0):
		return fmt.Errorf("optim: AdamW eps %v must be > 0", c.Eps)
	case !(c.WeightDecay >= 0):
		return fmt.Errorf("optim: AdamW weight decay %v must be ≥ 0", c.WeightDecay)
	}
	return nil
}

// adamBlock is the AdamW state of one tensor.
type adamBlock struct {
	t    Tensor
	m, v []float64
}

// step applies one torch.optim.AdamW update with step number k ≥ 1:
//
//	p ← p·(1 − lr·wd)
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	p ← p − (lr/(1−β1^k)) · (m / (√v/√(1−β2^k) + eps))
func (b *adamBlock) step(c AdamWConfig, lr float64, k int) {
	decay := 1 - lr*c.WeightDecay
	bc1 := 1 - math.Pow(c.Beta1, float64(k))
	bc2 := math.Sqrt(1 - math.Pow(c.Beta2, float64(k)))
	stepSize := lr / bc1
	p, g, m, v := b.t.Data, b.t.Grad[:len(b.t.Data)], b.m[:len(b.t.Data)], b.v[:len(b.t.Data)]
	for i := range p {
		p[i] *= decay
		m[i] += (g[i] - m[i]) * (1 - c.Beta1)
		v[i] = v[i]*c.Beta2 + (1-c.Beta2)*g[i]*g[i]
		p[i] -= stepSize * (m[i] / (math.Sqrt(v[i])/bc2 + c.Eps))
	}
}

// AdamW is torch.optim.AdamW (amsgrad off, decoupled weight decay) over a
// list of tensors. Construct it with NewAdamW.
type AdamW struct {
	cfg    AdamWConfig
	ts     []Tensor
	blocks []adamBlock
	step   int
}

// NewAdamW returns an AdamW optimiser over ts with zeroed moments.
func NewAdamW(ts []Tensor, cfg AdamWConfig) (*AdamW, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := checkTensors(ts); err != nil {
		return nil, err
	}
	o := &AdamW{cfg: cfg, ts: slices.Clone(ts)}
	for _, t := range ts {
		o.blocks = append(o.blocks, adamBlock{t: t, m: make([]float64, t.Size()), v: make([]float64, t.Size())})
	}
	return o, nil
}

// Config returns the hyperparameters (with defaults filled in).
func (o *AdamW) Config() AdamWConfig { return o.cfg }

// Step implements Optimizer.
func (o *AdamW) Step(lrScale float64) {
	o.step++
	lr := o.cfg.LR * lrScale
	for i := range o.blocks {
		o.blocks[i].step(o.cfg, lr, o.step)
	}
}

// Tensors implements Optimizer.
func (o *AdamW) Tensors() []Tensor { return o.ts }

// Steps implements Optimizer.
func (o *AdamW) Steps() int { return o.step }

// KindAdamW is the State.Kind of AdamW.
const KindAdamW = "adamw"

// State implements Optimizer.
func (o *AdamW) State() State {
	s := State{Kind: KindAdamW, Step: o.step, Buffers: make(map[string][]float64, 2*len(o.blocks))}
	for _, b := range o.blocks {
		s.Buffers[b.t.Name+"."+bufExpAvg] = slices.Clone(b.m)
		s.Buffers[b.t.Name+"."+bufExpAvgSq] = slices.Clone(b.v)
	}
	return s
}

// SetState implements Optimizer.
func (o *AdamW) SetState(s State) error {
	want := make(map[string][]float64, 2*len(o.blocks))
	for _, b := range o.blocks {
		want[b.t.Name+"."+bufExpAvg] = b.m
		want[b.t.Name+"."+bufExpAvgSq] = b.v
	}
	if err := restore(s, KindAdamW, want); err != nil {
		return err
	}
	o.step = s.Step
	return nil
}
