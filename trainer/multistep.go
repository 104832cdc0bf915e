package trainer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
)

// This file holds the K-step path of the workers: the loss of a row of a
// Batch with K > 1 is the mean one-step loss along the gauge-fixed rollout
// from its initial state under its measured ports, x̂_{k+1} = Π Φ σ_{e_k}(x̂_k),
// and its gradient is back-propagated through every step: through the map
// (Trainable.Backward, which also returns the adjoint of the map's input),
// the projection Π and the section σ that re-embeds x̂_{k+1} with the next
// measured ports (the fibres restart at zero, so only q and p carry an
// adjoint from one step to the next).

// lossGradSeq is LossGrad for a batch of K-step sequences.
func (w *sympWorker) lossGradSeq(b Batch, grad []float64) float64 {
	return w.lossGradSeqPrior(b, grad, nil)
}

// lossGradSeqPrior is lossGradSeq of the map behind a physics prior (nil:
// none): each step's input is σ_{e_k}(Φ₀(x̂_k, e_k)), in physical units
// through the prior, and the adjoint of step k's input state reaches step
// k−1's output through the prior's adjoint. A prior step or adjoint that
// fails returns NaN.
func (w *sympWorker) lossGradSeqPrior(b Batch, grad []float64, prior mechanics.TangentPrior) float64 {
	m := w.s.Model()
	l, nz := m.Layout, m.Norm
	n, d := l.N, l.D()
	d2, nx, ne := 2*d, l.StateDim(), l.PortDim()
	K, N := b.K, b.N
	w.growSeq(K)
	if prior != nil && len(w.xp) < K*w.capacity*nx {
		w.xp = make([]float64, K*w.capacity*nx)
		w.py, w.pl = make([]float64, nx), make([]float64, nx)
	}
	norm := stepNorm(K, w.s.W.StepDecay)
	var total float64
	// forward: step k's input rows in zs[k], its output in place
	for k := range K {
		z := w.zs[k*w.capacity*d2 : (k*w.capacity+N)*d2]
		for r := range N {
			zr := z[r*d2 : (r+1)*d2]
			e := b.E[(r*K+k)*ne : (r*K+k+1)*ne]
			if prior != nil {
				// x̂_k in physical units, then σ_{e_k}(Φ₀(x̂_k, e_k))
				xk := w.xp[(k*w.capacity+r)*nx : (k*w.capacity+r+1)*nx]
				if k == 0 {
					copy(xk, b.X[r*nx:(r+1)*nx])
				} else {
					l.Project(w.xn, w.zs[((k-1)*w.capacity+r)*d2:((k-1)*w.capacity+r+1)*d2])
					for i := range nx {
						xk[i] = w.xn[i]*nz.Scale[i] + nz.Mu[i]
					}
				}
				if err := prior.StepTo(w.py, xk, e); err != nil {
					return math.NaN()
				}
				w.embedRow(zr, w.py, e)
				continue
			}
			if k == 0 {
				w.embedRow(zr, b.X[r*nx:(r+1)*nx], e)
				continue
			}
			// σ_{e_k}(Π z_{k−1}): the state stays normalised
			prev := w.zs[((k-1)*w.capacity+r)*d2 : ((k-1)*w.capacity+r+1)*d2]
			l.Project(w.xn, prev)
			w.sectionRow(zr, e)
		}
		w.s.T.Forward(w.tapes[k], z, N)
		zb := w.zbs[k*w.capacity*d2 : (k*w.capacity+N)*d2]
		c := stepWeight(k, w.s.W.StepDecay) / norm
		for r := range N {
			wr := b.W[r]
			total += wr * c * w.stepLoss(z[r*d2:(r+1)*d2], zb[r*d2:(r+1)*d2],
				b.XNext[(r*K+k)*nx:(r*K+k+1)*nx], b.E[(r*K+k)*ne:(r*K+k+1)*ne], wr*c)
		}
	}
	// backward: the adjoint of step k's input state feeds step k−1's output
	for k := K - 1; k >= 0; k-- {
		zb := w.zbs[k*w.capacity*d2 : (k*w.capacity+N)*d2]
		w.s.T.Backward(w.tapes[k], zb, grad)
		if k == 0 {
			break
		}
		prev := w.zbs[(k-1)*w.capacity*d2 : ((k-1)*w.capacity+N)*d2]
		for r := range N {
			in, out := zb[r*d2:(r+1)*d2], prev[r*d2:(r+1)*d2]
			if prior != nil {
				// normalised adjoint → physical (÷ scale), through Φ₀'s
				// adjoint, back to normalised (× scale)
				for i := range n {
					w.pl[i] = in[i] / nz.Scale[i]
					w.pl[n+i] = in[d+n+i] / nz.Scale[n+i]
				}
				xk := w.xp[(k*w.capacity+r)*nx : (k*w.capacity+r+1)*nx]
				if err := prior.Adjoint(w.py, xk, b.E[(r*K+k)*ne:(r*K+k+1)*ne], w.pl); err != nil {
					return math.NaN()
				}
				for i := range n {
					out[i] += w.py[i] * nz.Scale[i]
					out[d+n+i] += w.py[n+i] * nz.Scale[n+i]
				}
				continue
			}
			for i := range n {
				out[i] += in[i]         // q: Q[0:n]
				out[d+n+i] += in[d+n+i] // p: P[n:2n]
			}
		}
	}
	return total
}

// growSeq makes room for K steps of capacity rows.
func (w *sympWorker) growSeq(K int) {
	d2 := w.s.Model().Layout.Dim()
	for len(w.tapes) < K {
		w.tapes = append(w.tapes, w.s.T.NewTape(w.capacity))
	}
	if len(w.zs) < K*w.capacity*d2 {
		w.zs = make([]float64, K*w.capacity*d2)
		w.zbs = make([]float64, K*w.capacity*d2)
	}
}

// lossGradSeq is LossGrad for a batch of K-step sequences: the MLP's
// rollout x̂_{k+1} = x̂_k + s·f(x̂_k, e_k) in physical units, its loss the
// mean of the K weighted squared errors, back-propagated through every step.
func (w *mlpWorker) lossGradSeq(b Batch, grad []float64) float64 {
	return w.lossGradSeqPrior(b, grad, nil)
}

// lossGradSeqPrior is lossGradSeq of the MLP behind a physics prior (nil:
// none): x̂_{k+1} = y_k + s·f(y_k, e_k) with y_k = Φ₀(x̂_k, e_k), the
// adjoint of y_k taken back to x̂_k by the prior's adjoint. A prior step or
// adjoint that fails returns NaN.
func (w *mlpWorker) lossGradSeqPrior(b Batch, grad []float64, prior mechanics.TangentPrior) float64 {
	nx := len(w.cw)
	ne := w.ne
	K, N := b.K, b.N
	w.growSeq(K)
	norm := stepNorm(K, w.m.W.StepDecay)
	rows := w.capacity * nx
	if prior != nil && len(w.ys) < K*rows {
		w.ys = make([]float64, K*rows)
		w.pl = make([]float64, nx)
	}
	copy(w.xs[:N*nx], b.X[:N*nx])
	var total float64
	for k := range K {
		ek := w.ek[:N*ne]
		for r := range N {
			copy(ek[r*ne:(r+1)*ne], b.E[(r*K+k)*ne:(r*K+k+1)*ne])
		}
		in := w.xs[k*rows : k*rows+N*nx]
		if prior != nil {
			y := w.ys[k*rows : k*rows+N*nx]
			if err := applyPrior(prior, in, ek, N, nx, ne, y); err != nil {
				return math.NaN()
			}
			in = y
		}
		w.m.Net.Forward(w.ws[k], in, ek, N, w.xs[(k+1)*rows:(k+1)*rows+N*nx])
	}
	// backward: dPred of step k is its loss's gradient plus the adjoint of
	// step k+1's input
	dp := w.dPred[:N*nx]
	dx := w.dx[:N*nx]
	clear(dx)
	for k := K - 1; k >= 0; k-- {
		p := w.xs[(k+1)*rows : (k+1)*rows+N*nx]
		c := stepWeight(k, w.m.W.StepDecay) / norm
		for r := range N {
			wr := b.W[r] * c
			t := b.XNext[(r*K+k)*nx : (r*K+k+1)*nx]
			for j := range nx {
				e := p[r*nx+j] - t[j]
				total += wr * w.cw[j] * e * e
				dp[r*nx+j] = 2*wr*w.cw[j]*e + dx[r*nx+j]
			}
		}
		if k == 0 {
			w.m.Net.Backward(w.ws[k], dp, grad, nil)
			break
		}
		w.m.Net.Backward(w.ws[k], dp, grad, dx)
		if prior == nil {
			continue
		}
		// dx is the adjoint of y_k: through Φ₀'s adjoint to x̂_k's
		for r := range N {
			dr := dx[r*nx : (r+1)*nx]
			copy(w.pl, dr)
			if err := prior.Adjoint(dr, w.xs[k*rows+r*nx:k*rows+(r+1)*nx], b.E[(r*K+k)*ne:(r*K+k+1)*ne], w.pl); err != nil {
				return math.NaN()
			}
		}
	}
	return total
}

// growSeq makes room for K steps of capacity rows.
func (w *mlpWorker) growSeq(K int) {
	nx, ne := len(w.cw), w.ne
	for len(w.ws) < K {
		w.ws = append(w.ws, w.m.Net.NewWorkspace(w.capacity))
	}
	if len(w.xs) < (K+1)*w.capacity*nx {
		w.xs = make([]float64, (K+1)*w.capacity*nx)
	}
	if len(w.ek) < w.capacity*ne {
		w.ek = make([]float64, w.capacity*ne)
		w.dx = make([]float64, w.capacity*nx)
	}
}

// kAt returns the number of rollout steps of an epoch's training
// sequences (1: one-step training).
func (c *Config) kAt(epoch int) int {
	if c.RolloutSteps <= 1 || epoch < c.RolloutFrom {
		return 1
	}
	if c.RolloutRamp <= 0 || c.RolloutSteps == 2 {
		return c.RolloutSteps
	}
	t := math.Min(float64(epoch-c.RolloutFrom)/float64(c.RolloutRamp), 1)
	return 2 + int(math.Round(t*float64(c.RolloutSteps-2)))
}

// seqPools holds one pool per number of rollout steps, made on first use.
type seqPools struct {
	l           Learner
	workers, nx int
	ne          int
	cfg         *Config
	pools       map[int]*pool
}

func newSeqPools(l Learner, workers int, cfg *Config, nx, ne int) *seqPools {
	return &seqPools{l: l, workers: workers, nx: nx, ne: ne, cfg: cfg, pools: map[int]*pool{}}
}

// pool returns the pool of K-step sequences: RolloutBatch sequences a
// batch, cut into shards by that number alone, each shard's batch with
// room for K steps of its rows.
func (sp *seqPools) pool(K int) (*pool, error) {
	if p, ok := sp.pools[K]; ok {
		return p, nil
	}
	batch := sp.cfg.RolloutBatch
	if batch <= 0 {
		batch = max(sp.cfg.BatchSize/K, 2*ShardRows)
	}
	p, err := newPool(sp.l, sp.workers, batch, K, sp.nx, sp.ne, sp.cfg.Comm)
	if err != nil {
		return nil, err
	}
	p.ph = sp.cfg.Phases
	sp.pools[K] = p
	return p, nil
}

// seqStart is a training sequence: K steps of an episode from sample T.
type seqStart struct{ Episode, T int }

// rolloutEpoch runs one epoch of K-step training: every window of the
// dataset is cut into sequences of K steps from sample epoch mod K of the
// window on, dealt to the shards of the batches by a schedule (as
// transitions are), one optimiser step per batch. step receives the
// batch's transitions (its sequences times K). The samples come from rs,
// which gathers each batch's from the processes that hold them when the
// arrays are on disk.
func rolloutEpoch(rs *rowStore, pl *pool, K int, seed uint64, epoch int, step func(shardFill, int) error) error {
	ds := rs.ds
	var seqs []seqStart
	off := epoch % K
	for _, w := range ds.Windows() {
		for t := w.Start + off; t+K <= w.Start+ds.WindowLen-1; t += K {
			seqs = append(seqs, seqStart{w.Episode, t})
		}
	}
	if len(seqs) == 0 {
		return fmt.Errorf("trainer: windows of %d samples hold no sequence of %d steps", ds.WindowLen, K)
	}
	nx, ne := ds.StateDim(), ds.PortDim()
	span := func(i int) (int, int, int) { return seqs[i].Episode, seqs[i].T, seqs[i].T + K + 1 }
	fill := func(b *Batch, items []int) {
		b.N, b.K = len(items), K
		for r, i := range items {
			sq := seqs[i]
			copy(b.X[r*nx:(r+1)*nx], rs.state(sq.Episode, sq.T))
			for k := range K {
				copy(b.E[(r*K+k)*ne:(r*K+k+1)*ne], rs.port(sq.Episode, sq.T+k))
				copy(b.XNext[(r*K+k)*nx:(r*K+k+1)*nx], rs.state(sq.Episode, sq.T+1+k))
			}
			b.W[r] = 1
		}
	}
	return newSchedule(len(seqs), pl).pass(rs, K, seed, epoch, span, fill, K, step)
}

// rollerLearner is a learner that can be rolled out (Symplectic, MLP).
type rollerLearner interface {
	Rollers() RollerFactory
}

// selectEpoch scores an epoch by the validation AR MSE at SelectHorizon
// and keeps its parameters in hist when they are the best so far.
func selectEpoch(ctx context.Context, l Learner, val *dataset.Dataset, cfg *Config, epoch int, hist *History, es *EpochStats) error {
	if cfg.SelectHorizon <= 0 || val == nil || epoch+1 < cfg.SelectFrom {
		return nil
	}
	rl, ok := l.(rollerLearner)
	if !ok {
		return fmt.Errorf("trainer: %s cannot be rolled out for selection by the AR MSE", l.Name())
	}
	if cfg.Phases != nil {
		defer func(t0 time.Time) { cfg.Phases.Selection += time.Since(t0) }(time.Now())
	}
	r, err := Evaluate(ctx, rl.Rollers(), val, EvalOptions{Horizon: cfg.SelectHorizon, Stride: cfg.SelectHorizon, Workers: cfg.Workers})
	if err != nil {
		return fmt.Errorf("trainer: selection at epoch %d: %w", epoch+1, err)
	}
	es.ValARMSE = r.MSE
	if hist.BestEpoch == 0 || r.MSE < hist.BestARMSE {
		hist.BestEpoch, hist.BestARMSE = epoch+1, r.MSE
		hist.BestTheta = l.Params()
	}
	return nil
}

// checkSelection reports a selection horizon the validation set cannot
// score (before any epoch is spent).
func checkSelection(val *dataset.Dataset, cfg *Config) error {
	if cfg.SelectHorizon <= 0 {
		return nil
	}
	if val == nil {
		return fmt.Errorf("trainer: selection by the AR MSE at %d steps needs a validation set", cfg.SelectHorizon)
	}
	if len(EvalWindows(val, cfg.SelectHorizon, cfg.SelectHorizon, 0)) == 0 {
		return fmt.Errorf("trainer: selection by the AR MSE at %d steps: no validation episode has %d samples", cfg.SelectHorizon, cfg.SelectHorizon+1)
	}
	return nil
}

// stepWeight is the unnormalised weight of step k (from 0) of a K-step
// loss: (k+1)^−decay, 1 for every step when decay is 0.
func stepWeight(k int, decay float64) float64 {
	if decay == 0 {
		return 1
	}
	return math.Pow(float64(k+1), -decay)
}

// stepNorm is the sum of the K steps' weights: the loss of a sequence is
// the weighted mean of its one-step losses.
func stepNorm(K int, decay float64) float64 {
	if decay == 0 {
		return float64(K)
	}
	var s float64
	for k := range K {
		s += stepWeight(k, decay)
	}
	return s
}
