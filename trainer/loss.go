package trainer

import (
	"fmt"

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
}

// Batch is a set of one-step transitions in physical units: states X, ports
// E and next states XNext, row major, with one weight per transition.
type Batch struct {
	N     int
	X     []float64 // N×2n
	E     []float64 // N×(n_u+n_c)
	XNext []float64 // N×2n
	W     []float64 // N
}

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
	// the one-step predictions (N×2n, physical units) into pred.
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
	l := s.Model().Layout
	d2 := l.Dim()
	return &sympWorker{s: s, tape: s.T.NewTape(capacity),
		z: make([]float64, capacity*d2), zbar: make([]float64, capacity*d2),
		xn: make([]float64, l.StateDim()), en: make([]float64, l.PortDim())}
}

type sympWorker struct {
	s       *Symplectic
	tape    *predictor.Tape
	z, zbar []float64
	xn, en  []float64
}

// LossGrad implements Worker.
func (w *sympWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	if b.N == 0 {
		return 0
	}
	m := w.s.Model()
	l := m.Layout
	n, d := l.N, l.D()
	d2, nx, ne := 2*d, l.StateDim(), l.PortDim()
	nz := m.Norm
	for r := range b.N {
		x, e := b.X[r*nx:(r+1)*nx], b.E[r*ne:(r+1)*ne]
		for i := range nx {
			w.xn[i] = (x[i] - nz.Mu[i]) / nz.Scale[i]
		}
		for i := range ne {
			w.en[i] = (e[i] - nz.Mu[2*n+i]) / nz.Scale[2*n+i]
		}
		l.Section(w.z[r*d2:(r+1)*d2], w.xn, w.en)
	}
	w.s.T.Forward(w.tape, w.z, b.N)
	wt := w.s.W
	cq, cp := 2*wt.Q/float64(n), 2*wt.P/float64(n)
	csec := 2 * wt.Sec / float64(d)
	var cmu, cfc float64
	if l.NU > 0 {
		cmu = 2 * wt.Mu / float64(l.NU)
	}
	if l.NC > 0 {
		cfc = 2 * wt.Fc / float64(l.NC)
	}
	var total float64
	for r := range b.N {
		z := w.z[r*d2 : (r+1)*d2]
		zb := w.zbar[r*d2 : (r+1)*d2]
		xnext := b.XNext[r*nx : (r+1)*nx]
		e := b.E[r*ne : (r+1)*ne]
		wr := b.W[r]
		var lr float64
		// physical state: q at Q[0:n], p at P[n:2n]
		for i := range n {
			rq := z[i] - (xnext[i]-nz.Mu[i])/nz.Scale[i]
			rp := z[d+n+i] - (xnext[n+i]-nz.Mu[n+i])/nz.Scale[n+i]
			lr += cq/2*rq*rq + cp/2*rp*rp
			zb[i] = wr * cq * rq
			zb[d+n+i] = wr * cp * rp
		}
		// fibres r, y, λ_u, π_c
		for k := range d {
			fi, _ := l.FibreIndex(k)
			v := z[fi]
			lr += csec / 2 * v * v
			zb[fi] = wr * csec * v
		}
		// ports: μ_u (P block) and λ_c (Q block) stay on the measured port
		for i := range l.NU {
			j := 2*n + i
			rv := z[d+j] - (e[i]-nz.Mu[j])/nz.Scale[j]
			lr += cmu / 2 * rv * rv
			zb[d+j] = wr * cmu * rv
		}
		for i := range l.NC {
			j := 2*n + l.NU + i
			rv := z[j] - (e[l.NU+i]-nz.Mu[j])/nz.Scale[j]
			lr += cfc / 2 * rv * rv
			zb[j] = wr * cfc * rv
		}
		total += wr * lr
		if pred != nil {
			p := pred[r*nx : (r+1)*nx]
			for i := range n {
				p[i] = z[i]*nz.Scale[i] + nz.Mu[i]
				p[n+i] = z[d+n+i]*nz.Scale[n+i] + nz.Mu[n+i]
			}
		}
	}
	w.s.T.Backward(w.tape, w.zbar[:b.N*d2], grad)
	return total
}
