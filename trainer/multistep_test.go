package trainer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// seqBatch cuts every episode of ds into sequences of K steps from sample 0.
func seqBatch(ds *dataset.Dataset, K int) Batch {
	nx, ne := ds.StateDim(), ds.PortDim()
	var b Batch
	b.K = K
	for _, ep := range ds.Episodes {
		for t := 0; t+K < ep.Len; t += K {
			b.X = append(b.X, ep.X[t*nx:(t+1)*nx]...)
			b.E = append(b.E, ep.E[t*ne:(t+K)*ne]...)
			b.XNext = append(b.XNext, ep.X[(t+1)*nx:(t+1+K)*nx]...)
			b.W = append(b.W, 1+0.1*float64(b.N%3))
			b.N++
		}
	}
	return b
}

// TestSeqGradientFiniteDifference checks the gradient of the K-step loss
// (back-propagation through the gauge-fixed rollout: map, projection,
// re-embedding) against central differences for GR, GRB and the MLP, with
// loss weights in normalised and in physical units.
func TestSeqGradientFiniteDifference(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 10, P: 5, Units: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	grb := symplecticLearner(t, ds, predictor.KindGRB, 2)
	grb.W.Units, grb.W.StepDecay = 0.5, 1
	mlpL.W.StepDecay = 0.7
	cases := []struct {
		name string
		l    Learner
		K    int
		// h is the relative finite-difference step: GRB's cubic spline
		// ridge has jumps in its third derivative at the knots, which a
		// K-step rollout crosses within larger steps (the differences
		// then converge only linearly in h, to the analytic value).
		h float64
	}{
		{"gr K=4", symplecticLearner(t, ds, predictor.KindGR, 1), 4, 1e-4},
		{"gr K=2", symplecticLearner(t, ds, predictor.KindGR, 5), 2, 1e-4},
		{"grb K=3 units 0.5", grb, 3, 1e-6},
		{"mlp K=5 units 1", mlpL, 5, 1e-4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLossGradFD(t, c.l, seqBatch(ds, c.K), c.h)
		})
	}
}

// TestSeqLossIsRolloutError checks the K-step forward pass against the
// inference rollout: with only the state terms, in physical units, the
// K-step loss is the weighted mean squared error of the compiled model's
// (or the MLP's) rollout from each sequence's first state.
func TestSeqLossIsRolloutError(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	const K = 6
	b := seqBatch(ds, K)
	sym := symplecticLearner(t, ds, predictor.KindGR, 1)
	sym.W = LossWeights{Q: 1, P: 1, Units: 1}
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 1, P: 1, Units: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	nx, n := ds.StateDim(), ds.N
	for _, c := range []struct {
		name    string
		l       Learner
		rollers RollerFactory
		scale   []float64
	}{
		{"gr", sym, sym.Rollers(), sym.Model().Norm.Scale[:nx]},
		{"mlp", mlpL, mlpL.Rollers(), mlpL.Net.Norm().SX},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.l.NewWorker(b.N).LossGrad(b, make([]float64, c.l.NumParams()), nil)
			want := seqRolloutError(t, b, c.rollers, c.scale, n)
			if rel := math.Abs(got-want) / want; rel > 1e-12 {
				t.Errorf("K-step loss %.15g, rollout error %.15g (rel %.1e)", got, want, rel)
			}
		})
	}
}

// seqRolloutError is the K-step loss with only the state terms in
// physical units, computed from the inference rollout: the weighted mean
// squared error of rollers' rollout from each sequence's first state, each
// coordinate's squared error weighed by 1/n over its group's (q or p)
// mean variance scale².
func seqRolloutError(t *testing.T, b Batch, rollers RollerFactory, scale []float64, n int) float64 {
	t.Helper()
	nx, K := 2*n, b.K
	ne := len(b.E) / (b.N * K)
	var mq, mp float64
	for i := range n {
		mq += scale[i] * scale[i] / float64(n)
		mp += scale[n+i] * scale[n+i] / float64(n)
	}
	r, err := rollers()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, K*nx)
	var want float64
	for row := range b.N {
		if err := r.Rollout(b.X[row*nx:(row+1)*nx], b.E[row*K*ne:(row+1)*K*ne], K, out); err != nil {
			t.Fatal(err)
		}
		for s := range K {
			for j := range nx {
				e := out[s*nx+j] - b.XNext[(row*K+s)*nx+j]
				m := mq
				if j >= n {
					m = mp
				}
				want += b.W[row] / float64(K) / float64(n) / m * e * e
			}
		}
	}
	return want
}

// TestSeqAllocationFree checks that a K-step loss and gradient allocate
// nothing once the worker has grown its buffers.
func TestSeqAllocationFree(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	b := seqBatch(ds, 4)
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 1, P: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Learner{symplecticLearner(t, ds, predictor.KindGR, 1), mlpL} {
		w := l.NewWorker(b.N)
		grad := make([]float64, l.NumParams())
		w.LossGrad(b, grad, nil)
		if a := testing.AllocsPerRun(5, func() { w.LossGrad(b, grad, nil) }); a != 0 {
			t.Errorf("%s: %v allocations per K-step batch", l.Name(), a)
		}
	}
}

// TestRolloutTraining trains with a K-step curriculum and selection by the
// validation AR MSE: the curriculum's K per epoch, the rollout error falls,
// the run ends on the best epoch's parameters, the result does not depend
// on the number of workers, and a resumed run continues bit for bit.
func TestRolloutTraining(t *testing.T) {
	ds := toyDataset(t, 6, 60, 2, 1, 11)
	val := toyDataset(t, 2, 60, 2, 1, 12)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.LR = 8, 64, "adamw", 5e-3
	cfg.RolloutSteps, cfg.RolloutFrom, cfg.RolloutRamp, cfg.RolloutBatch = 6, 2, 4, 16
	cfg.SelectHorizon, cfg.SelectFrom = 20, 2
	// run trains with workers goroutines, stopping after stop epochs (0:
	// to the end)
	run := func(workers int, ckpt string, stop int) (*History, []float64) {
		t.Helper()
		s := symplecticLearner(t, ds, predictor.KindGR, 4)
		s.T.Init(rand.New(rand.NewPCG(4, 4)), 1)
		c := cfg
		c.Workers, c.CheckpointPath = workers, ckpt
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c.OnEpoch = func(e EpochStats) {
			if e.Epoch == stop {
				cancel()
			}
		}
		h, err := Train(ctx, s, ds, val, c)
		if ie := (*Interrupted)(nil); err != nil && !(stop > 0 && errors.As(err, &ie)) {
			t.Fatal(err)
		}
		return h, s.Params()
	}
	h, theta := run(2, "", 0)
	wantK := []int{0, 0, 2, 3, 4, 5, 6, 6}
	var best, bestEpoch = math.Inf(1), 0
	for i, e := range h.Epochs {
		if e.K != wantK[i] {
			t.Errorf("epoch %d: K = %d, want %d", e.Epoch, e.K, wantK[i])
		}
		if i+1 >= cfg.SelectFrom && e.ValARMSE < best {
			best, bestEpoch = e.ValARMSE, e.Epoch
		}
		if (i+1 < cfg.SelectFrom) != (e.ValARMSE == 0) {
			t.Errorf("epoch %d: validation AR MSE %v", e.Epoch, e.ValARMSE)
		}
	}
	if h.BestEpoch != bestEpoch || h.BestARMSE != best {
		t.Errorf("best epoch %d (%.4g), want %d (%.4g)", h.BestEpoch, h.BestARMSE, bestEpoch, best)
	}
	// the last two epochs train at K = 6: the 6-step loss falls
	if n := len(h.Epochs); !(h.Epochs[n-1].Loss < h.Epochs[n-2].Loss) {
		t.Errorf("6-step training loss did not fall: %v", h.Epochs[n-2:])
	}
	// the final parameters are the best epoch's: their AR MSE is the best
	s := symplecticLearner(t, ds, predictor.KindGR, 4)
	if err := s.SetParams(theta); err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(context.Background(), s.Rollers(), val, EvalOptions{Horizon: cfg.SelectHorizon, Stride: cfg.SelectHorizon})
	if err != nil {
		t.Fatal(err)
	}
	if r.MSE != best {
		t.Errorf("final parameters' AR MSE %.15g, best epoch's %.15g", r.MSE, best)
	}
	for _, workers := range []int{1, 3} {
		_, th := run(workers, "", 0)
		if !slices.Equal(th, theta) {
			t.Errorf("%d workers: other parameters than 2 workers", workers)
		}
	}
	// interrupted after 5 epochs (K ramping, best kept in the checkpoint), resumed
	ckpt := filepath.Join(t.TempDir(), "run.ckpt")
	run(2, ckpt, 5)
	h2, th := run(2, ckpt, 0)
	if !slices.Equal(th, theta) || h2.BestEpoch != h.BestEpoch {
		t.Errorf("resumed run: best epoch %d (want %d), parameters equal: %v", h2.BestEpoch, h.BestEpoch, slices.Equal(th, theta))
	}
}

// TestBadRolloutSettings checks the errors of settings that cannot train.
func TestBadRolloutSettings(t *testing.T) {
	ds := toyDataset(t, 2, 30, 2, 1, 11)
	for _, c := range []struct {
		name string
		set  func(*Config)
		val  *dataset.Dataset
		want string
	}{
		{"negative steps", func(c *Config) { c.RolloutSteps = -1 }, nil, "negative rollout"},
		{"selection without validation", func(c *Config) { c.SelectHorizon = 10 }, nil, "needs a validation set"},
		{"selection beyond the episodes", func(c *Config) { c.SelectHorizon = 40 }, ds, "no validation episode has 41 samples"},
		{"sequences longer than the windows", func(c *Config) { c.RolloutSteps = 25 }, nil, "hold no sequence of 25 steps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := symplecticLearner(t, ds, predictor.KindGR, 4)
			cfg := DefaultConfig()
			cfg.Epochs, cfg.BatchSize = 2, 16
			c.set(&cfg)
			_, err := Train(context.Background(), s, ds, c.val, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// lateNaN is a learner whose loss turns non-finite once on is set, as a
// run that diverges late does.
type lateNaN struct {
	*Symplectic
	on *atomic.Bool
}

func (n *lateNaN) NewWorker(c int) Worker { return lateNaNWorker{n.Symplectic.NewWorker(c), n.on} }

type lateNaNWorker struct {
	Worker
	on *atomic.Bool
}

func (w lateNaNWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	l := w.Worker.LossGrad(b, grad, pred)
	if w.on.Load() {
		return math.NaN()
	}
	return l
}

// TestDivergedKeepsBest: a run with a selection that diverges after some
// epochs returns ErrDiverged naming the epoch and leaves the learner at
// the selected epoch's parameters, not the diverged ones.
func TestDivergedKeepsBest(t *testing.T) {
	ds := toyDataset(t, 6, 60, 2, 1, 11)
	val := toyDataset(t, 2, 60, 2, 1, 12)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.LR = 8, 64, "adamw", 5e-3
	cfg.SelectHorizon, cfg.SelectFrom = 20, 2
	s := symplecticLearner(t, ds, predictor.KindGR, 4)
	s.T.Init(rand.New(rand.NewPCG(4, 4)), 1)
	var on atomic.Bool
	l := &lateNaN{s, &on}
	cfg.OnEpoch = func(e EpochStats) {
		if e.Epoch == 4 {
			on.Store(true)
		}
	}
	h, err := Train(context.Background(), l, ds, val, cfg)
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "epoch 4") {
		t.Fatalf("got %v, want ErrDiverged at epoch 4 (the fifth)", err)
	}
	if h == nil || len(h.Epochs) != 4 || h.BestEpoch < 2 || h.BestEpoch > 4 || h.BestTheta == nil {
		t.Fatalf("history %+v", h)
	}
	if !slices.Equal(s.Params(), h.BestTheta) {
		t.Error("the learner is not at the selected epoch's parameters")
	}
	r, err := Evaluate(context.Background(), s.Rollers(), val, EvalOptions{Horizon: cfg.SelectHorizon, Stride: cfg.SelectHorizon})
	if err != nil || r.MSE != h.BestARMSE {
		t.Errorf("the kept parameters' AR MSE %v (%v), the selected epoch's %v", r.MSE, err, h.BestARMSE)
	}
}
