package trainer

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/predictor"
)

// LossWeights are the weights of the one-step objective (paper Eq. 27–30,
// Appendix D): configuration and momentum errors, the section penalty on the
// lifted fibres before re-embedding, and the port terms that keep μ_u and λ_c
// on the measured ports. Each term is a mean over its coordinates, computed in
// normalised units.
type LossWeights struct {
	Q   float64 `json:"w_q" mapstructure:"w_q"`
	P   float64 `json:"w_p" mapstructure:"w_p"`
	Sec float64 `json:"w_sec" mapstructure:"w_sec"`
	Mu  float64 `json:"w_mu" mapstructure:"w_mu"`
	Fc  float64 `json:"w_fc" mapstructure:"w_fc"`
	// Units moves the state terms from normalised towards physical units:
	// within q and within p, channel i's squared error is weighed by
	// s_i^(2·Units) / mean_j s_j^(2·Units), s the channel's standard
	// deviation. 0 (the paper) weighs normalised channels equally; 1 makes
	// each term the mean squared error in physical units (up to a constant
	// factor), the units of the autoregressive MSE reported.
	Units float64 `json:"units,omitempty" mapstructure:"units"`
	// StepDecay weighs the steps of a K-step loss (Batch.K > 1): step k
	// (from 0) by (k+1)^−StepDecay, normalised to sum 1. 0 weighs every
	// step alike; larger values keep the first steps, and so the short
	// horizons, in view while K grows.
	StepDecay float64 `json:"step_decay,omitempty" mapstructure:"step_decay"`
}

// Check reports a weight that is negative or not a finite number, and
// Units outside [0, 1], naming the field (as the params and reports do).
func (w LossWeights) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"w_q", w.Q}, {"w_p", w.P}, {"w_sec", w.Sec}, {"w_mu", w.Mu}, {"w_fc", w.Fc}, {"step_decay", w.StepDecay}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("trainer: loss weight %s %v: want a finite number of at least 0", f.name, f.v)
		}
	}
	if !(w.Units >= 0 && w.Units <= 1) {
		return fmt.Errorf("trainer: loss units %v: want a number from 0 (normalised) to 1 (physical units)", w.Units)
	}
	return nil
}

// lossWeights returns the loss weights of the learners this package makes
// (false for another learner).
func lossWeights(l Learner) (LossWeights, bool) {
	switch v := l.(type) {
	case *Symplectic:
		return v.W, true
	case *Composed:
		return lossWeights(v.Inner)
	case *MLP:
		return v.W, true
	}
	return LossWeights{}, false
}

// channelFactors returns the per-channel factors of the state terms for
// scales s of one group (q or p): s_i^(2u) / mean_j s_j^(2u), all exactly
// 1 for u = 0.
func channelFactors(s []float64, u float64) []float64 {
	f := make([]float64, len(s))
	if u == 0 {
		for i := range f {
			f[i] = 1
		}
		return f
	}
	var mean float64
	for i, v := range s {
		f[i] = math.Pow(v*v, u)
		mean += f[i]
	}
	mean /= float64(len(s))
	for i := range f {
		f[i] /= mean
	}
	return f
}

// Batch is a set of one-step transitions in physical units: states X, ports
// E and next states XNext, row major, with one weight per transition.
//
// With K > 1 a row is a sequence of K autoregressive steps instead: X holds
// its initial state, E its K ports e_0 … e_{K−1} (N×K×(n_u+n_c)) and XNext
// the K measured states x_1 … x_K (N×K×2n) that the rollout from X under E
// is compared with; the row's loss is the mean of its K one-step losses.
type Batch struct {
	N     int
	K     int       // steps per row (0 or 1: one-step transitions)
	X     []float64 // N×2n
	E     []float64 // N×(n_u+n_c), or N×K×(n_u+n_c)
	XNext []float64 // N×2n, or N×K×2n
	W     []float64 // N
}

// Steps returns the number of autoregressive steps of a row (at least 1).
func (b Batch) Steps() int { return max(b.K, 1) }

// Learner is a trainable one-step model with the Markovian interface
// (x_t, e_t) → x_{t+1}: the lifted symplectic model or the MLP baseline.
// Its parameters form one flat vector, which changes only through
// SetParams; SetParams also refreshes whatever the model derives from it.
type Learner interface {
	// Name identifies the model in reports.
	Name() string
	// NumParams returns the length of the parameter vector.
	NumParams() int
	// Params returns a copy of the parameter vector.
	Params() []float64
	// SetParams copies theta (NumParams values) into the model.
	SetParams(theta []float64) error
	// ParamBlocks describes the blocks of the parameter vector for the
	// optimiser.
	ParamBlocks() []predictor.ParamBlock
	// NewWorker returns a worker for batches of up to capacity rows.
	NewWorker(capacity int) Worker
}

// Worker evaluates the loss of batches; each goroutine uses its own.
type Worker interface {
	// LossGrad returns Σ_k w_k ℓ_k over the batch, adds its gradient with
	// respect to the parameters into grad, and, if pred is non-nil, writes
	// the one-step predictions (N×2n, physical units) into pred. For a
	// batch of K-step sequences (Batch.K > 1) ℓ_k is the mean one-step loss
	// along the rollout, its gradient flows through every step (back-
	// propagation through the rollout), and pred must be nil.
	LossGrad(b Batch, grad, pred []float64) float64
}

// Symplectic adapts a predictor model, through its training handle, to the
// Learner interface. The model's normalisation must be set from the
// training data before training.
type Symplectic struct {
	T *predictor.Trainable
	W LossWeights
}

// Model returns the model being trained.
func (s *Symplectic) Model() *predictor.Model { return s.T.Model() }

// Name implements Learner.
func (s *Symplectic) Name() string { return "CaLiSym-" + string(s.Model().Arch.Kind) }

// NumParams implements Learner.
func (s *Symplectic) NumParams() int { return s.Model().NumParams() }

// Params implements Learner.
func (s *Symplectic) Params() []float64 { return s.T.Params() }

// SetParams implements Learner.
func (s *Symplectic) SetParams(theta []float64) error {
	if err := s.T.SetParams(theta); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// ParamBlocks implements Learner.
func (s *Symplectic) ParamBlocks() []predictor.ParamBlock { return s.T.ParamBlocks() }

// NewWorker implements Learner.
func (s *Symplectic) NewWorker(capacity int) Worker {
	m := s.Model()
	l := m.Layout
	d2, n := l.Dim(), l.N
	w := &sympWorker{s: s, capacity: capacity, tapes: []*predictor.Tape{s.T.NewTape(capacity)},
		z: make([]float64, capacity*d2), zbar: make([]float64, capacity*d2),
		xn: make([]float64, l.StateDim()), en: make([]float64, l.PortDim())}
	fq := channelFactors(m.Norm.Scale[:n], s.W.Units)
	fp := channelFactors(m.Norm.Scale[n:2*n], s.W.Units)
	cq, cp := 2*s.W.Q/float64(n), 2*s.W.P/float64(n)
	w.cq, w.cp = make([]float64, n), make([]float64, n)
	for i := range n {
		w.cq[i], w.cp[i] = cq*fq[i], cp*fp[i]
	}
	return w
}

type sympWorker struct {
	s        *Symplectic
	capacity int
	// tapes[k] records step k of a rollout (one for one-step batches).
	tapes   []*predictor.Tape
	z, zbar []float64
	xn, en  []float64
	cq, cp  []float64 // per-channel weights of the state terms (×2/n)
	// the K-step path's buffers (K × capacity rows), grown on first use
	zs, zbs []float64
	// behind a prior: each step's physical input state (K × capacity
	// rows) and one row's prior output and adjoint
	xp, py, pl []float64
}

// embedRow writes the normalised section of (x, e), both physical, into z.
func (w *sympWorker) embedRow(z, x, e []float64) {
	nz := w.s.Model().Norm
	for i := range w.xn {
		w.xn[i] = (x[i] - nz.Mu[i]) / nz.Scale[i]
	}
	w.sectionRow(z, e)
}

// sectionRow writes σ_e(w.xn) into z: the normalised state in w.xn, the
// physical ports e normalised.
func (w *sympWorker) sectionRow(z, e []float64) {
	m := w.s.Model()
	l, nz := m.Layout, m.Norm
	n := l.N
	for i := range w.en {
		w.en[i] = (e[i] - nz.Mu[2*n+i]) / nz.Scale[2*n+i]
	}
	l.Section(z, w.xn, w.en)
}

// stepLoss returns the one-step loss of the map's output z against the
// measured next state xnext and the ports e (both physical), and writes its
// gradient with respect to z, times c, into zb (every entry written).
func (w *sympWorker) stepLoss(z, zb, xnext, e []float64, c float64) float64 {
	m := w.s.Model()
	l, nz := m.Layout, m.Norm
	n, d := l.N, l.D()
	wt := w.s.W
	csec := 2 * wt.Sec / float64(d)
	var cmu, cfc float64
	if l.NU > 0 {
		cmu = 2 * wt.Mu / float64(l.NU)
	}
	if l.NC > 0 {
		cfc = 2 * wt.Fc / float64(l.NC)
	}
	clear(zb)
	var lr float64
	// physical state: q at Q[0:n], p at P[n:2n]
	for i := range n {
		rq := z[i] - (xnext[i]-nz.Mu[i])/nz.Scale[i]
		rp := z[d+n+i] - (xnext[n+i]-nz.Mu[n+i])/nz.Scale[n+i]
		lr += w.cq[i]/2*rq*rq + w.cp[i]/2*rp*rp
		zb[i] = c * w.cq[i] * rq
		zb[d+n+i] = c * w.cp[i] * rp
	}
	// fibres r, y, λ_u, π_c
	for k := range d {
		fi, _ := l.FibreIndex(k)
		v := z[fi]
		lr += csec / 2 * v * v
		zb[fi] = c * csec * v
	}
	// ports: μ_u (P block) and λ_c (Q block) stay on the measured port
	for i := range l.NU {
		j := 2*n + i
		rv := z[d+j] - (e[i]-nz.Mu[j])/nz.Scale[j]
		lr += cmu / 2 * rv * rv
		zb[d+j] = c * cmu * rv
	}
	for i := range l.NC {
		j := 2*n + l.NU + i
		rv := z[j] - (e[l.NU+i]-nz.Mu[j])/nz.Scale[j]
		lr += cfc / 2 * rv * rv
		zb[j] = c * cfc * rv
	}
	return lr
}

// LossGrad implements Worker.
func (w *sympWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	if b.N == 0 {
		return 0
	}
	if b.K > 1 {
		return w.lossGradSeq(b, grad)
	}
	m := w.s.Model()
	l := m.Layout
	n, d := l.N, l.D()
	d2, nx, ne := 2*d, l.StateDim(), l.PortDim()
	nz := m.Norm
	for r := range b.N {
		w.embedRow(w.z[r*d2:(r+1)*d2], b.X[r*nx:(r+1)*nx], b.E[r*ne:(r+1)*ne])
	}
	w.s.T.Forward(w.tapes[0], w.z, b.N)
	var total float64
	for r := range b.N {
		z := w.z[r*d2 : (r+1)*d2]
		total += b.W[r] * w.stepLoss(z, w.zbar[r*d2:(r+1)*d2], b.XNext[r*nx:(r+1)*nx], b.E[r*ne:(r+1)*ne], b.W[r])
		if pred != nil {
			p := pred[r*nx : (r+1)*nx]
			for i := range n {
				p[i] = z[i]*nz.Scale[i] + nz.Mu[i]
				p[n+i] = z[d+n+i]*nz.Scale[n+i] + nz.Mu[n+i]
			}
		}
	}
	w.s.T.Backward(w.tapes[0], w.zbar[:b.N*d2], grad)
	return total
}
