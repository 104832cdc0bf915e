package optim

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/calisym/calisym/predictor/kernel"
)

// Quintic Newton–Schulz coefficients of Keller Jordan's Muon.
const (
	nsA = 3.4445
	nsB = -4.7750
	nsC = 2.0315
	// nsEps guards the Frobenius normalisation as in the reference.
	nsEps = 1e-7
)

// nsWork holds the scratch matrices of one Newton–Schulz orthogonalisation
// of matrices with at most maxRC rows·cols and maxSmall² Gram entries.
type nsWork struct {
	x, xn, a, b []float64
}

func (w *nsWork) grow(rows, cols int) {
	r := min(rows, cols)
	n := rows * cols
	if cap(w.x) < n {
		w.x = make([]float64, n)
		w.xn = make([]float64, n)
	}
	if cap(w.a) < r*r {
		w.a = make([]float64, r*r)
		w.b = make([]float64, r*r)
	}
}

// NewtonSchulz writes into dst (rows×cols, row-major) the approximate
// orthogonalisation of g (rows×cols) by the quintic Newton–Schulz
// iteration of Muon, in FP64:
//
//	X ← G/(‖G‖_F + 1e-7)  (transposed first if rows > cols)
//	repeat steps times:  A = X·Xᵀ,  B = b·A + c·A·A,  X ← a·X + B·X
//
// with (a, b, c) = (3.4445, −4.7750, 2.0315). The result is ≈ U·S'·Vᵀ where
// G = U·S·Vᵀ and the singular values S' lie roughly in [0.68, 1.13] after 5
// steps. dst may alias g. It panics if the lengths do not match rows·cols.
func NewtonSchulz(dst, g []float64, rows, cols, steps int) {
	var w nsWork
	newtonSchulz(&w, dst, g, rows, cols, steps)
}

func newtonSchulz(w *nsWork, dst, g []float64, rows, cols, steps int) {
	if rows <= 0 || cols <= 0 || len(g) != rows*cols || len(dst) != rows*cols {
		panic(fmt.Sprintf("optim: NewtonSchulz: %d×%d with len(g)=%d, len(dst)=%d", rows, cols, len(g), len(dst)))
	}
	w.grow(rows, cols)
	// Work on X (r×c) with r ≤ c.
	r, c := rows, cols
	tr := rows > cols
	n := rows * cols
	x, xn := w.x[:n], w.xn[:n]
	if tr {
		r, c = cols, rows
		for i := range rows {
			for j := range cols {
				x[j*rows+i] = g[i*cols+j]
			}
		}
	} else {
		copy(x, g)
	}
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	inv := 1 / (math.Sqrt(ss) + nsEps)
	for i := range x {
		x[i] *= inv
	}
	a, b := w.a[:r*r], w.b[:r*r]
	for range steps {
		kernel.Gemm(false, true, r, r, c, 1, x, c, x, c, 0, a, r)
		kernel.Gemm(false, false, r, r, r, nsC, a, r, a, r, 0, b, r)
		for i := range b {
			b[i] += nsB * a[i]
		}
		for i := range x {
			xn[i] = nsA * x[i]
		}
		kernel.Gemm(false, false, r, c, r, 1, b, r, x, c, 1, xn, c)
		x, xn = xn, x
	}
	if tr {
		// x is cols×rows; write its transpose. x never aliases dst here.
		for i := range rows {
			for j := range cols {
				dst[i*cols+j] = x[j*rows+i]
			}
		}
		return
	}
	copy(dst, x)
}

// MuonConfig holds the hyperparameters of Muon. Matrices use LR, Momentum,
// Nesterov, NSSteps and WeightDecay; vectors and NoMuon tensors use the
// AdamW configuration Adam. The zero value of the other fields selects the
// reference: NSSteps = 0 means 5 steps, Momentum = 0 means 0.95 (pass a
// tiny positive value for effectively no momentum), and Nesterov momentum
// is on unless NoNesterov is set.
type MuonConfig struct {
	LR          float64     `json:"lr"`
	Momentum    float64     `json:"momentum"`
	NoNesterov  bool        `json:"no_nesterov,omitempty"`
	NSSteps     int         `json:"ns_steps"`
	WeightDecay float64     `json:"weight_decay"`
	Adam        AdamWConfig `json:"adam"`
}

// muonBlock is the momentum state of one matrix.
type muonBlock struct {
	t   Tensor
	buf []float64
}

// Muon is Keller Jordan's Muon optimiser in FP64. For every matrix tensor
// (Rows > 1, Cols > 1, not NoMuon), with gradient g, momentum μ and
// learning rate lr:
//
//	buf ← μ·buf + g
//	u   ← g + μ·buf  (Nesterov, the default)  or  buf  (NoNesterov)
//	O   ← NewtonSchulz(u)
//	p   ← p·(1 − lr·wd) − lr·√max(1, Rows/Cols)·O
//
// Every other tensor is updated by AdamW with MuonConfig.Adam. Construct it
// with NewMuon.
type Muon struct {
	cfg  MuonConfig
	ts   []Tensor
	mats []muonBlock
	adam []adamBlock
	step int
	// work and update are the scratch of each of the goroutines that
	// orthogonalise the matrices in parallel (each matrix is independent,
	// so the result does not depend on their number).
	work   []nsWork
	update [][]float64
}

// KindMuon is the State.Kind of Muon.
const KindMuon = "muon"

// NewMuon returns a Muon optimiser over ts with zeroed buffers.
func NewMuon(ts []Tensor, cfg MuonConfig) (*Muon, error) {
	if cfg.NSSteps == 0 {
		cfg.NSSteps = 5
	}
	if cfg.Momentum == 0 {
		cfg.Momentum = 0.95
	}
	cfg.Adam = cfg.Adam.withDefaults()
	switch {
	case !(cfg.LR >= 0) || math.IsInf(cfg.LR, 0):
		return nil, fmt.Errorf("optim: Muon learning rate %v must be finite and ≥ 0", cfg.LR)
	case !(cfg.Momentum >= 0 && cfg.Momentum < 1):
		return nil, fmt.Errorf("optim: Muon momentum %v must lie in [0, 1)", cfg.Momentum)
	case cfg.NSSteps < 0:
		return nil, fmt.Errorf("optim: Muon Newton–Schulz steps %d must be ≥ 0", cfg.NSSteps)
	case !(cfg.WeightDecay >= 0):
		return nil, fmt.Errorf("optim: Muon weight decay %v must be ≥ 0", cfg.WeightDecay)
	}
	if err := cfg.Adam.validate(); err != nil {
		return nil, fmt.Errorf("optim: Muon fallback: %w", err)
	}
	if err := checkTensors(ts); err != nil {
		return nil, err
	}
	o := &Muon{cfg: cfg, ts: slices.Clone(ts)}
	maxN := 0
	for _, t := range ts {
		if t.IsMatrix() && !t.NoMuon {
			o.mats = append(o.mats, muonBlock{t: t, buf: make([]float64, t.Size())})
			maxN = max(maxN, t.Size())
			continue
		}
		o.adam = append(o.adam, adamBlock{t: t, m: make([]float64, t.Size()), v: make([]float64, t.Size())})
	}
	nw := max(1, min(runtime.GOMAXPROCS(0), len(o.mats)))
	o.work = make([]nsWork, nw)
	o.update = make([][]float64, nw)
	for i := range nw {
		for _, b := range o.mats {
			o.work[i].grow(b.t.Rows, b.t.Cols)
		}
		o.update[i] = make([]float64, maxN)
	}
	return o, nil
}

// Config returns the hyperparameters (with defaults filled in).
func (o *Muon) Config() MuonConfig { return o.cfg }

// Step implements Optimizer. Both MuonConfig.LR and MuonConfig.Adam.LR are
// multiplied by lrScale.
func (o *Muon) Step(lrScale float64) {
	o.step++
	lr := o.cfg.LR * lrScale
	// NewMuon made at most one worker per matrix.
	nw := len(o.work)
	if nw == 1 {
		for i := range o.mats {
			o.muonStep(i, 0, lr)
		}
	} else {
		var wg sync.WaitGroup
		for w := range nw {
			wg.Go(func() {
				for i := w; i < len(o.mats); i += nw {
					o.muonStep(i, w, lr)
				}
			})
		}
		wg.Wait()
	}
	alr := o.cfg.Adam.LR * lrScale
	for i := range o.adam {
		o.adam[i].step(o.cfg.Adam, alr, o.step)
	}
}

// muonStep updates matrix m with the scratch of worker w.
func (o *Muon) muonStep(m, w int, lr float64) {
	b := o.mats[m]
	mu := o.cfg.Momentum
	g, buf := b.t.Grad, b.buf[:len(b.t.Grad)]
	u := o.update[w][:len(g)]
	for i := range g {
		buf[i] = mu*buf[i] + g[i]
		if !o.cfg.NoNesterov {
			u[i] = g[i] + mu*buf[i]
		} else {
			u[i] = buf[i]
		}
	}
	newtonSchulz(&o.work[w], u, u, b.t.Rows, b.t.Cols, o.cfg.NSSteps)
	decay := 1 - lr*o.cfg.WeightDecay
	scale := lr * math.Sqrt(max(1, float64(b.t.Rows)/float64(b.t.Cols)))
	p := b.t.Data[:len(u)]
	for i := range p {
		p[i] = p[i]*decay - scale*u[i]
	}
}

// Tensors implements Optimizer.
func (o *Muon) Tensors() []Tensor { return o.ts }

// Steps implements Optimizer.
func (o *Muon) Steps() int { return o.step }

// State implements Optimizer.
func (o *Muon) State() State {
	s := State{Kind: KindMuon, Step: o.step, Buffers: make(map[string][]float64, len(o.mats)+2*len(o.adam))}
	for _, b := range o.mats {
		s.Buffers[b.t.Name+"."+bufMomentum] = slices.Clone(b.buf)
	}
	for _, b := range o.adam {
		s.Buffers[b.t.Name+"."+bufExpAvg] = slices.Clone(b.m)
		s.Buffers[b.t.Name+"."+bufExpAvgSq] = slices.Clone(b.v)
	}
	return s
}

// SetState implements Optimizer.
func (o *Muon) SetState(s State) error {
	want := make(map[string][]float64, len(o.mats)+2*len(o.adam))
	for _, b := range o.mats {
		want[b.t.Name+"."+bufMomentum] = b.buf
	}
	for _, b := range o.adam {
		want[b.t.Name+"."+bufExpAvg] = b.m
		want[b.t.Name+"."+bufExpAvgSq] = b.v
	}
	if err := restore(s, KindMuon, want); err != nil {
		return err
	}
	o.step = s.Step
	return nil
}
