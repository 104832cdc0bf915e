package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// toyDataset builds a small dataset of a damped, driven oscillator pair in
// (q, p) with control ports, so every loss term is exercised.
func toyDataset(t testing.TB, episodes, length int, nu, nc int, seed uint64) *dataset.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	const n = 2
	ds := &dataset.Dataset{Meta: dataset.Meta{FormatVersion: 1, N: n, NU: nu, NC: nc, Dt: 0.01, WindowLen: 20, Stride: 5}}
	nx, ne := 2*n, nu+nc
	off := 0
	for e := range episodes {
		x := make([]float64, length*nx)
		u := make([]float64, length*ne)
		q := [n]float64{rng.NormFloat64(), rng.NormFloat64()}
		p := [n]float64{rng.NormFloat64(), rng.NormFloat64()}
		for k := range length {
			for i := range ne {
				u[k*ne+i] = math.Sin(0.05*float64(k)+float64(i)+float64(e)) + 0.1*rng.NormFloat64()
			}
			for i := range n {
				x[k*nx+i], x[k*nx+n+i] = q[i], p[i]
			}
			for i := range n {
				f := 0.0
				if i < ne {
					f = u[k*ne+i]
				}
				p[i] += 0.05 * (-math.Sin(q[i]) - 0.1*p[i] + f)
				q[i] += 0.05 * p[i]
			}
		}
		ds.Episodes = append(ds.Episodes, dataset.Episode{Name: "toy", Len: length, Offset: off, X: x, E: u})
		off += length
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	return ds
}

func symplecticLearner(t testing.TB, ds *dataset.Dataset, kind predictor.Kind, seed uint64) *Symplectic {
	t.Helper()
	l := predictor.Layout{N: ds.N, NU: ds.NU, NC: ds.NC}
	a := predictor.Arch{Kind: kind, Layers: 3, Width: 5, StepSize: 1}
	if kind == predictor.KindGRB {
		a.RidgeDim, a.Spline = 2, predictor.Spline{Intervals: 6, Lo: -3, Hi: 3}
	}
	m, err := predictor.New(l, a, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tr := predictor.NewTrainable(m)
	// larger ridge outputs than the near-identity initialisation, so the
	// nonlinear terms matter in the gradient check
	tr.Init(rand.New(rand.NewPCG(seed, 2)), 3)
	st, err := Stats(ds)
	if err != nil {
		t.Fatal(err)
	}
	m.Norm = st.Normalization(l)
	return &Symplectic{T: tr, W: LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Fc: 3}}
}

func fullBatch(ds *dataset.Dataset) Batch {
	tb := newTransitionBatches(ds)
	b := newBatch(len(tb.trans), tb.nx, tb.ne)
	tb.fill(&b, tb.order(nil))
	return b
}

// TestLossGradientFiniteDifference checks the full one-step loss gradient
// (analytic backward passes through loss, projection, map, normalisation)
// against central differences for GR, GRB and the MLP.
func TestLossGradientFiniteDifference(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 10, P: 5}, 4)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		l    Learner
	}{
		{"gr", symplecticLearner(t, ds, predictor.KindGR, 1)},
		{"grb", symplecticLearner(t, ds, predictor.KindGRB, 2)},
		{"mlp", mlpL},
	}
	b := fullBatch(ds)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLossGradFD(t, c.l, b, 1e-4)
		})
	}
}

// checkLossGradFD compares the gradient of l's loss over b with fourth-order
// central differences at 60 random parameters (relative step h), each to
// 1e-6 relative to the larger of the difference and 1e-3 of the largest
// gradient entry.
func checkLossGradFD(t *testing.T, l Learner, b Batch, h float64) {
	t.Helper()
	w := l.NewWorker(b.N)
	theta := l.Params()
	grad := make([]float64, len(theta))
	w.LossGrad(b, grad, nil)
	scratch := make([]float64, len(theta))
	loss := func() float64 {
		if err := l.SetParams(theta); err != nil {
			t.Fatal(err)
		}
		return w.LossGrad(b, scratch, nil)
	}
	var gmax float64
	for _, g := range grad {
		gmax = max(gmax, math.Abs(g))
	}
	rng := rand.New(rand.NewPCG(9, 9))
	worst := 0.0
	for range 60 {
		i := rng.IntN(len(theta))
		hi := h * math.Max(1, math.Abs(theta[i]))
		orig := theta[i]
		f := func(s float64) float64 { theta[i] = orig + s*hi; return loss() }
		fd := (-f(2) + 8*f(1) - 8*f(-1) + f(-2)) / (12 * hi)
		theta[i] = orig
		if err := l.SetParams(theta); err != nil {
			t.Fatal(err)
		}
		rel := math.Abs(fd-grad[i]) / math.Max(math.Abs(fd), 1e-3*gmax)
		worst = max(worst, rel)
		if rel > 1e-6 {
			t.Errorf("θ[%d]: analytic %.12g, finite differences %.12g (rel %.2e)", i, grad[i], fd, rel)
		}
	}
	t.Logf("worst relative error %.2e over 60 parameters", worst)
}

// TestUniqueTransitionsEqualWindows checks that the weighted loss over unique
// transitions equals the loss summed over every (overlapping) window.
func TestUniqueTransitionsEqualWindows(t *testing.T) {
	ds := toyDataset(t, 3, 57, 2, 0, 5)
	s := symplecticLearner(t, ds, predictor.KindGRB, 3)
	nx, ne := ds.StateDim(), ds.PortDim()
	// windows, transition by transition, weight 1 each
	var wb Batch
	for _, win := range ds.Windows() {
		ep := &ds.Episodes[win.Episode]
		for k := range ds.WindowLen - 1 {
			t0 := win.Start + k
			wb.X = append(wb.X, ep.X[t0*nx:(t0+1)*nx]...)
			wb.XNext = append(wb.XNext, ep.X[(t0+1)*nx:(t0+2)*nx]...)
			wb.E = append(wb.E, ep.E[t0*ne:(t0+1)*ne]...)
			wb.W = append(wb.W, 1)
			wb.N++
		}
	}
	ub := fullBatch(ds)
	if ub.N*2 > wb.N {
		t.Fatalf("expected the windows to repeat transitions: %d unique, %d in windows", ub.N, wb.N)
	}
	lw := s.NewWorker(wb.N).LossGrad(wb, make([]float64, s.NumParams()), nil)
	lu := s.NewWorker(ub.N).LossGrad(ub, make([]float64, s.NumParams()), nil)
	var sw, su float64
	for _, v := range ub.W[:ub.N] {
		su += v
	}
	sw = float64(wb.N)
	if su != sw {
		t.Fatalf("total weight %v of unique transitions, %v transitions in windows", su, sw)
	}
	if rel := math.Abs(lw/sw-lu/su) / (lw / sw); rel > 1e-12 {
		t.Errorf("mean loss over windows %.17g, over unique transitions %.17g (rel %.2e)", lw/sw, lu/su, rel)
	}
	t.Logf("%d unique transitions stand for %d window transitions; mean loss %.15g", ub.N, wb.N, lu/su)
}

// TestTrainingReducesLoss trains tiny models for a few epochs and requires
// the one-step loss to fall by at least a factor of 5.
func TestTrainingReducesLoss(t *testing.T) {
	ds := toyDataset(t, 4, 200, 2, 0, 11)
	for _, opt := range []string{"adamw", "muon"} {
		t.Run(opt, func(t *testing.T) {
			s := symplecticLearner(t, ds, predictor.KindGR, 4)
			s.T.Init(rand.New(rand.NewPCG(4, 4)), 1)
			cfg := DefaultConfig()
			cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.LR = 30, 64, opt, 5e-3
			if opt == "muon" {
				cfg.MuonLR = 0.02
			}
			h, err := Train(context.Background(), s, ds, nil, cfg)
			if err != nil {
				t.Fatal(err)
			}
			first, last := h.Epochs[0].Loss, h.Epochs[len(h.Epochs)-1].Loss
			t.Logf("%s: loss %.4g → %.4g", opt, first, last)
			if !(last < first/5) {
				t.Errorf("loss %.4g → %.4g: less than a factor 5", first, last)
			}
		})
	}
}

// TestCheckpointResume interrupts a run, resumes it from the checkpoint and
// requires the same parameters as an uninterrupted run, and OnResume to
// report the epochs the checkpoint held.
func TestCheckpointResume(t *testing.T) {
	ds := toyDataset(t, 2, 80, 2, 0, 12)
	cfg := DefaultConfig()
	// the constant schedule: a run of 2 epochs resumed to 4 is the run of 4
	cfg.Epochs, cfg.BatchSize, cfg.Workers, cfg.Schedule = 4, 32, 1, "constant"
	ref := symplecticLearner(t, ds, predictor.KindGR, 6)
	if _, err := Train(context.Background(), ref, ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.ckpt")
	c2 := cfg
	c2.CheckpointPath, c2.CheckpointEvery, c2.Epochs = path, 1, 2
	a := symplecticLearner(t, ds, predictor.KindGR, 6)
	if _, err := Train(context.Background(), a, ds, nil, c2); err != nil {
		t.Fatal(err)
	}
	c2.Epochs = 4
	resumedAt := -1
	c2.OnResume = func(epoch int, _ float64) { resumedAt = epoch }
	b := symplecticLearner(t, ds, predictor.KindGR, 6)
	h, err := Train(context.Background(), b, ds, nil, c2)
	if err != nil {
		t.Fatal(err)
	}
	if resumedAt != 2 {
		t.Errorf("OnResume reported epoch %d, want 2", resumedAt)
	}
	if len(h.Epochs) != 4 {
		t.Errorf("resumed history has %d epochs", len(h.Epochs))
	}
	got := b.Params()
	for i, v := range ref.Params() {
		if got[i] != v {
			t.Fatalf("θ[%d] = %v after resume, %v uninterrupted", i, got[i], v)
		}
	}
}

// TestCheckpointOtherData requires resuming a checkpoint on other training
// data to fail naming what differs: other values of the same shape, other
// coordinate names, and another layout of the same parameter count.
func TestCheckpointOtherData(t *testing.T) {
	ds := toyDataset(t, 2, 50, 2, 0, 14)
	ds.Coordinates, ds.Ports = []string{"q1", "q2"}, []string{"u1", "u2"}
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Workers, cfg.CheckpointEvery, cfg.Schedule = 1, 32, 1, 1, "constant"
	cfg.CheckpointPath = filepath.Join(t.TempDir(), "run.ckpt")
	if _, err := Train(context.Background(), symplecticLearner(t, ds, predictor.KindGR, 8), ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	values := toyDataset(t, 2, 50, 2, 0, 15)
	values.Coordinates, values.Ports = ds.Coordinates, ds.Ports
	names := *ds
	names.Coordinates = []string{"shoulder", "elbow"}
	contact := toyDataset(t, 2, 50, 0, 2, 14) // n_c = 2 instead of n_u = 2: the same parameter count
	cfg.Epochs = 2
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		want []string
	}{
		{"other values", values, []string{"other values", "sha256"}},
		{"other coordinates", &names, []string{"[q1 q2]", "[shoulder elbow]"}},
		{"other layout", contact, []string{"n_u=2, n_c=0", "n_u=0, n_c=2"}},
	} {
		l := symplecticLearner(t, c.ds, predictor.KindGR, 8)
		if l.NumParams() != symplecticLearner(t, ds, predictor.KindGR, 8).NumParams() {
			t.Fatalf("%s: another parameter count", c.name)
		}
		_, err := Train(context.Background(), l, c.ds, nil, cfg)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), cfg.CheckpointPath) || !strings.Contains(err.Error(), "other data") {
			t.Errorf("%s: %v, want a checkpoint error naming the file and other data", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", c.name, err, w)
			}
		}
	}
	if _, err := Train(context.Background(), symplecticLearner(t, ds, predictor.KindGR, 8), ds, nil, cfg); err != nil {
		t.Errorf("resuming on the same data: %v", err)
	}
}

// TestInterruptSavesCheckpoint cancels a run after its second epoch, with
// checkpoints due only every 10 epochs: Train returns an *Interrupted
// naming the checkpoint it wrote of epoch 2, and resuming from it gives
// the parameters of an uninterrupted run bit for bit. Without a checkpoint
// path the error says that none holds the run.
func TestInterruptSavesCheckpoint(t *testing.T) {
	ds := toyDataset(t, 2, 60, 2, 0, 16)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Workers = 4, 32, 1
	ref := symplecticLearner(t, ds, predictor.KindGR, 9)
	if _, err := Train(context.Background(), ref, ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(t.TempDir(), "run.ckpt"), ""} {
		c := cfg
		c.CheckpointPath, c.CheckpointEvery = path, 10
		ctx, cancel := context.WithCancel(context.Background())
		c.OnEpoch = func(es EpochStats) {
			if es.Epoch == 2 {
				cancel()
			}
		}
		_, err := Train(ctx, symplecticLearner(t, ds, predictor.KindGR, 9), ds, nil, c)
		cancel()
		var ie *Interrupted
		if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || ie.Done != 2 || ie.Epochs != 4 || ie.Checkpoint != path {
			t.Fatalf("checkpoint %q: error %v (%+v), want an interruption after epoch 2 of 4", path, err, ie)
		}
		if path == "" {
			if strings.Contains(err.Error(), "checkpoint") {
				t.Errorf("no checkpoint, yet the error names one: %v", err)
			}
			continue
		}
		if !strings.Contains(err.Error(), path+" holds epoch 2") {
			t.Errorf("the error does not say what was saved: %v", err)
		}
		ck, err := LoadCheckpoint(path)
		if err != nil || ck.Epoch != 2 || len(ck.History.Epochs) != 2 {
			t.Fatalf("the checkpoint after the interruption: %v, %+v", err, ck)
		}
		c.OnEpoch = nil
		b := symplecticLearner(t, ds, predictor.KindGR, 9)
		if _, err := Train(context.Background(), b, ds, nil, c); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.Params(), ref.Params()) {
			t.Error("resuming after the interruption does not give the uninterrupted run's parameters")
		}
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	ds := toyDataset(t, 2, 50, 2, 0, 13)
	s := symplecticLearner(t, ds, predictor.KindGR, 7)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize = 1, 32
	ck := filepath.Join(dir, "c.ckpt")
	cfg.CheckpointPath, cfg.CheckpointEvery = ck, 1
	if _, err := Train(context.Background(), s, ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(ck, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("corrupt checkpoint", func(t *testing.T) {
		cfg.Epochs = 2
		_, err := Train(context.Background(), s, ds, nil, cfg)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), ck) || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("got %v, want a checksum error naming %s", err, ck)
		}
	})
	t.Run("truncated checkpoint", func(t *testing.T) {
		if err := os.WriteFile(ck, raw[:10], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCheckpoint(ck)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), ck) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("checkpoint of another model", func(t *testing.T) {
		os.Remove(ck)
		c := cfg
		c.Epochs = 1
		if _, err := Train(context.Background(), s, ds, nil, c); err != nil {
			t.Fatal(err)
		}
		other := symplecticLearner(t, ds, predictor.KindGRB, 7)
		c.Epochs = 2
		_, err := Train(context.Background(), other, ds, nil, c)
		if !errors.Is(err, ErrCheckpoint) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("NaN in data", func(t *testing.T) {
		bad := toyDataset(t, 2, 50, 2, 0, 13)
		bad.Episodes[1].X[17] = math.NaN()
		_, err := Train(context.Background(), s, bad, nil, DefaultConfig())
		if !errors.Is(err, dataset.ErrDataset) || !strings.Contains(err.Error(), "NaN") || !strings.Contains(err.Error(), "sample 4") {
			t.Errorf("got %v", err)
		}
		p := filepath.Join(dir, "nan")
		bad.Episodes[1].X[17] = 1
		if err := bad.Save(p); err != nil {
			t.Fatal(err)
		}
		// corrupt x.npy on disk: a NaN where a value was
		x, r, c, err := dataset.LoadNpy(filepath.Join(p, "x.npy"))
		if err != nil {
			t.Fatal(err)
		}
		x[70] = math.NaN()
		if err := dataset.SaveNpy(filepath.Join(p, "x.npy"), x, r, c); err != nil {
			t.Fatal(err)
		}
		_, err = dataset.Load(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("loading a dataset with NaN: %v", err)
		}
	})
	t.Run("diverging", func(t *testing.T) {
		c := DefaultConfig()
		c.Epochs, c.BatchSize = 3, 16
		d := &nanLearner{symplecticLearner(t, ds, predictor.KindGR, 8)}
		_, err := Train(context.Background(), d, ds, nil, c)
		if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "epoch 0") {
			t.Errorf("got %v, want ErrDiverged naming the epoch", err)
		}
	})
}

// nanLearner's loss turns non-finite, as a diverging run's does.
type nanLearner struct{ *Symplectic }

func (n *nanLearner) NewWorker(c int) Worker { return nanWorker{n.Symplectic.NewWorker(c)} }

type nanWorker struct{ Worker }

func (w nanWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	w.Worker.LossGrad(b, grad, pred)
	return math.NaN()
}

// TestScheduledEpoch checks scheduled sampling step by step: every window
// transition is trained on once per epoch, in batches of up to batchSize
// windows at the same offset, each shard of a batch holding its own rows;
// the targets and ports are always measured; with α = 1 the inputs are
// measured too, with α = 0 every input after a window's first is the
// previous step's prediction of the same row of the same shard.
func TestScheduledEpoch(t *testing.T) {
	ds := toyDataset(t, 3, 60, 2, 0, 21)
	windows := len(ds.Windows())
	nx, ne := ds.StateDim(), ds.PortDim()
	L := ds.WindowLen
	l := symplecticLearner(t, ds, predictor.KindGR, 1)
	for _, c := range []struct {
		alpha float64
		batch int
	}{{1, 4}, {0, 4}, {0, 1000}, {0.5, 3}, {0.5, 70}} {
		t.Run(fmt.Sprintf("alpha=%v/batch=%d", c.alpha, c.batch), func(t *testing.T) {
			pl, err := newPool(l, 1, c.batch, 1, nx, ne, nil)
			if err != nil {
				t.Fatal(err)
			}
			var transitions, steps, fromPred, measured int
			last := make([]Batch, pl.shards)
			lastPred := make([][]float64, pl.shards)
			step := func(fill shardFill, rows int) error {
				n := 0
				for s := range pl.shards {
					b := newBatch(pl.rows, nx, ne)
					pred := fill(s, &b)
					n += b.N
					for r := range b.N {
						x, next := b.X[r*nx:(r+1)*nx], b.XNext[r*nx:(r+1)*nx]
						// Find the transition whose target this is: targets are
						// always measured.
						ep, k := findState(ds, next)
						if ep < 0 || k == 0 {
							t.Fatalf("target %v is no measured state", next)
						}
						e := ds.Episodes[ep]
						if !slices.Equal(b.E[r*ne:(r+1)*ne], e.E[(k-1)*ne:k*ne]) {
							t.Fatalf("ports of row %d are not the measured ones", r)
						}
						switch {
						case slices.Equal(x, e.X[(k-1)*nx:k*nx]):
							measured++
						case lastPred[s] != nil && r < last[s].N && slices.Equal(x, lastPred[s][r*nx:(r+1)*nx]):
							fromPred++
						default:
							t.Fatalf("input %v of row %d of shard %d is neither measured nor predicted", x, r, s)
						}
					}
					// The "model": prediction = input + 1.
					for i := range b.N * nx {
						pred[i] = b.X[i] + 1
					}
					last[s], lastPred[s] = b, slices.Clone(pred)
				}
				if n != rows || n > c.batch {
					t.Fatalf("batch of %d rows (%d announced), batch size %d", n, rows, c.batch)
				}
				transitions += n
				steps++
				return nil
			}
			if err := scheduledEpoch(newRowStore(ds), pl, c.alpha, 1, 0, step); err != nil {
				t.Fatal(err)
			}
			if transitions != windows*(L-1) {
				t.Errorf("%d transitions, want %d windows × %d", transitions, windows, L-1)
			}
			groups := (windows + min(c.batch, windows) - 1) / min(c.batch, windows)
			if steps != groups*(L-1) {
				t.Errorf("%d optimiser steps, want %d", steps, groups*(L-1))
			}
			switch c.alpha {
			case 1:
				if fromPred != 0 {
					t.Errorf("α = 1 fed %d predictions", fromPred)
				}
			case 0:
				if measured != windows || fromPred != windows*(L-2) {
					t.Errorf("α = 0: %d measured inputs (want %d, the first of each window), %d predicted", measured, windows, fromPred)
				}
			default:
				if fromPred == 0 || measured <= windows {
					t.Errorf("α = %v: %d measured, %d predicted inputs", c.alpha, measured, fromPred)
				}
			}
		})
	}
}

// findState returns the episode and index of the measured state x.
func findState(ds *dataset.Dataset, x []float64) (int, int) {
	nx := ds.StateDim()
	for e, ep := range ds.Episodes {
		for k := range ep.Len {
			if slices.Equal(ep.X[k*nx:(k+1)*nx], x) {
				return e, k
			}
		}
	}
	return -1, -1
}

// TestTrainingWithAlphaSchedule trains through the teacher-forcing ramp:
// α follows the schedule epoch by epoch and the one-step validation loss
// (teacher-forced, so comparable across epochs where the training loss,
// fed the model's own predictions, is not) still falls.
func TestTrainingWithAlphaSchedule(t *testing.T) {
	ds := toyDataset(t, 4, 200, 2, 0, 11)
	s := symplecticLearner(t, ds, predictor.KindGR, 4)
	s.T.Init(rand.New(rand.NewPCG(4, 4)), 1)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.LR = 12, 16, 5e-3
	cfg.AlphaHold, cfg.AlphaRamp, cfg.AlphaFinal = 4, 4, 0.5
	h, err := Train(context.Background(), s, ds, ds, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1, 1, 1, 1, 0.875, 0.75, 0.625, 0.5, 0.5, 0.5, 0.5}
	for i, e := range h.Epochs {
		if math.Abs(e.Alpha-want[i]) > 1e-12 {
			t.Errorf("epoch %d: α %v, want %v", i+1, e.Alpha, want[i])
		}
	}
	first, last := h.Epochs[0].ValLoss, h.Epochs[len(h.Epochs)-1].ValLoss
	t.Logf("validation loss %.4g → %.4g", first, last)
	if !(last < first/3) {
		t.Errorf("validation loss %.4g → %.4g: less than a factor 3", first, last)
	}
}

// TestProgressResumed requires a resumed run's bar to count only the
// epochs left (its time estimate then comes from this run's pace) and its
// description to name the epoch of the whole run and the resume.
func TestProgressResumed(t *testing.T) {
	for _, c := range []struct {
		epochs, start int
		want          string
	}{
		{10, 0, "GR epoch 1/10 loss 1.000e-01 5 tr/s"},
		{500, 250, "GR epoch 251/500 (resumed after 250) loss 1.000e-01 5 tr/s"},
	} {
		var out strings.Builder
		p := newProgressMode(&out, true, "GR", c.epochs, c.start)
		if got := p.bar.GetMax(); got != c.epochs-c.start {
			t.Errorf("resumed after %d of %d: the bar counts %d epochs", c.start, c.epochs, got)
		}
		if got := p.describe(c.start, "loss 1.000e-01 5 tr/s"); got != c.want {
			t.Errorf("description %q, want %q", got, c.want)
		}
		if q := newProgress(nil, "GR", c.epochs, c.start); q.bar != nil {
			t.Error("a bar without a writer")
		}
	}
}
