package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// TestShardTree checks the reduction tree: cover of a range is a set of
// disjoint nodes that tile it, each a node of the tree.
func TestShardTree(t *testing.T) {
	for _, c := range []struct {
		shards int
		want   [][2]int // the children of the root
	}{{1, nil}, {2, [][2]int{{0, 1}, {1, 2}}}, {6, [][2]int{{0, 4}, {4, 6}}}, {7, [][2]int{{0, 4}, {4, 7}}}, {8, [][2]int{{0, 4}, {4, 8}}}, {64, [][2]int{{0, 32}, {32, 64}}}} {
		root := span{0, c.shards}
		if c.want != nil {
			l, r := root.split()
			if got := [][2]int{{l.lo, l.hi}, {r.lo, r.hi}}; !reflect.DeepEqual(got, c.want) {
				t.Errorf("%d shards: root splits into %v, want %v", c.shards, got, c.want)
			}
		}
		nodes := map[span]bool{}
		var walk func(n span)
		walk = func(n span) {
			nodes[n] = true
			if !n.leaf() {
				l, r := n.split()
				walk(l)
				walk(r)
			}
		}
		walk(root)
		for lo := 0; lo <= c.shards; lo++ {
			for hi := lo; hi <= c.shards; hi++ {
				next := lo
				for _, n := range cover(root, lo, hi) {
					if !nodes[n] || n.lo != next {
						t.Fatalf("%d shards: cover of [%d, %d) = %v is no tiling by tree nodes", c.shards, lo, hi, cover(root, lo, hi))
					}
					next = n.hi
				}
				if next != hi {
					t.Fatalf("%d shards: cover of [%d, %d) = %v stops at %d", c.shards, lo, hi, cover(root, lo, hi), next)
				}
			}
		}
	}
	for _, c := range [][3]int{{1, 1, 1}, {128, 1, 128}, {129, 2, 65}, {256, 2, 128}, {1024, 8, 128}, {2048, 16, 128}, {520, 5, 104}} {
		if s, r := Shards(c[0]); s != c[1] || r != c[2] {
			t.Errorf("Shards(%d) = %d, %d; want %d, %d", c[0], s, r, c[1], c[2])
		}
	}
}

// chanComm joins goroutines as the processes of a run: Allgather over
// shared memory, as MPI would.
type chanComm struct {
	rank int
	g    *chanGroup
}

type chanGroup struct {
	size  int
	mu    sync.Mutex
	cond  *sync.Cond
	round int
	in    [][]float64
	got   int
	left  int
	out   []float64
	// fail makes Allgather fail from this round on (0: never).
	fail int
	// calls counts Allgather calls of rank 0.
	calls  int
	broken bool
}

func newChanGroup(size int) []Comm {
	g := &chanGroup{size: size, in: make([][]float64, size)}
	g.cond = sync.NewCond(&g.mu)
	cs := make([]Comm, size)
	for r := range cs {
		cs[r] = &chanComm{rank: r, g: g}
	}
	return cs
}

func (c *chanComm) Rank() int { return c.rank }
func (c *chanComm) Size() int { return c.g.size }

func (c *chanComm) Allgather(send []float64, counts []int, recv []float64) error {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.left > 0 && !g.broken { // the previous round is still being read
		g.cond.Wait()
	}
	round := g.round
	if c.rank == 0 {
		g.calls++
		if g.fail > 0 && g.calls >= g.fail {
			// as MPI_Abort would, fail every process's exchange
			g.broken = true
			g.cond.Broadcast()
		}
	}
	if g.broken {
		return errors.New("simulated failure of a process")
	}
	if len(send) != counts[c.rank] {
		return fmt.Errorf("rank %d sends %d values, counts say %d", c.rank, len(send), counts[c.rank])
	}
	g.in[c.rank] = send
	g.got++
	if g.got == g.size {
		g.out = g.out[:0]
		for _, s := range g.in {
			g.out = append(g.out, s...)
		}
		g.got, g.left = 0, g.size
		g.round++
		g.cond.Broadcast()
	}
	for g.round == round && !g.broken {
		g.cond.Wait()
	}
	if g.broken {
		return errors.New("simulated failure of a process")
	}
	if len(recv) != len(g.out) {
		return fmt.Errorf("rank %d receives %d values, %d gathered", c.rank, len(recv), len(g.out))
	}
	copy(recv, g.out)
	g.left--
	if g.left == 0 {
		g.cond.Broadcast()
	}
	return nil
}

// layoutRun is the outcome of one training run: its parameters and its
// history without the wall times.
type layoutRun struct {
	theta []float64
	hist  []EpochStats
}

// runLayout trains as procs processes of workers goroutines each (0: one
// process, no Comm) on ds, and fails the test unless every process ends
// with the same bits.
func runLayout(t *testing.T, ds *dataset.Dataset, newL func() Learner, cfg Config, procs, workers int) layoutRun {
	t.Helper()
	run, err := runOpened(func() *dataset.Dataset { return ds }, func(*dataset.Dataset) Learner { return newL() }, cfg, max(procs, 1), workers)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func stripTimes(h *History) []EpochStats {
	out := slices.Clone(h.Epochs)
	for i := range out {
		out[i].Seconds = 0
		// NaN ≠ NaN for reflect.DeepEqual; every layout must give the same
		if math.IsNaN(out[i].ValLoss) {
			out[i].ValLoss = -1
		}
	}
	return out
}

// sameRun reports the first difference of two runs, bit for bit.
func sameRun(a, b layoutRun) string {
	if len(a.theta) != len(b.theta) || len(a.hist) != len(b.hist) {
		return fmt.Sprintf("%d parameters and %d epochs against %d and %d", len(a.theta), len(a.hist), len(b.theta), len(b.hist))
	}
	for i := range a.theta {
		if math.IsNaN(a.theta[i]) {
			return fmt.Sprintf("θ[%d] is NaN", i)
		}
		if math.Float64bits(a.theta[i]) != math.Float64bits(b.theta[i]) {
			return fmt.Sprintf("θ[%d] = %v against %v", i, a.theta[i], b.theta[i])
		}
	}
	for i := range a.hist {
		if a.hist[i] != b.hist[i] {
			return fmt.Sprintf("epoch %d: %+v against %+v", i+1, a.hist[i], b.hist[i])
		}
	}
	return ""
}

// TestLayoutIndependent trains the same models with 1, 2, 3 and 7
// goroutines, and as 2 and 3 processes (joined by an in-memory Comm) of
// 1 and 2 goroutines each, and requires the same bits: parameters, every
// epoch's losses, validation loss and gradient norm. It covers teacher
// forcing, scheduled sampling and K-step rollouts, AdamW and Muon, GR and
// the MLP.
func TestLayoutIndependent(t *testing.T) {
	ds := toyDataset(t, 6, 400, 2, 1, 31)
	mlpL := func() Learner {
		m, err := NewMLP(ds, []int{9, 7}, LossWeights{Q: 10, P: 5}, 5)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	grL := func() Learner { return symplecticLearner(t, ds, predictor.KindGR, 7) }
	for _, c := range []struct {
		name  string
		newL  func() Learner
		opt   string
		batch int
		alpha bool
		k     int // rollout steps from the second epoch (0: one-step)
	}{
		{"gr-muon", grL, "muon", 700, false, 0},
		{"gr-adamw-scheduled", grL, "adamw", 520, true, 0},
		{"mlp-adamw", mlpL, "adamw", 600, false, 0},
		{"gr-rollout", grL, "adamw", 520, false, 3},
		{"mlp-rollout", mlpL, "adamw", 520, false, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.LR = 3, c.batch, c.opt, 3e-3
			if c.alpha {
				cfg.AlphaHold, cfg.AlphaRamp, cfg.AlphaFinal = 1, 1, 0.5
			}
			if c.k > 0 {
				cfg.RolloutSteps, cfg.RolloutFrom, cfg.RolloutBatch = c.k, 1, 400
			}
			ref := runLayout(t, ds, c.newL, cfg, 0, 1)
			for _, layout := range [][2]int{{0, 2}, {0, 3}, {0, 7}, {2, 1}, {3, 2}, {3, 1}} {
				got := runLayout(t, ds, c.newL, cfg, layout[0], layout[1])
				if d := sameRun(ref, got); d != "" {
					t.Errorf("%d processes × %d goroutines differ from 1 goroutine: %s", max(layout[0], 1), layout[1], d)
				}
			}
			if s, _ := Shards(c.batch); s < 4 {
				t.Fatalf("batch %d has %d shards: too few to test the layouts", c.batch, s)
			}
			last := ref.hist[len(ref.hist)-1]
			if c.k > 0 && last.K != c.k {
				t.Fatalf("the last epoch trained %d-step rollouts, want %d", last.K, c.k)
			}
			t.Logf("%d shards of a batch; loss %.6g, val %.6g after %d epochs", func() int { s, _ := Shards(c.batch); return s }(), last.Loss, last.ValLoss, len(ref.hist))
		})
	}
}

// TestResumeOtherLayout checkpoints a run of 3 goroutines after 2 epochs,
// resumes it as 2 processes of 2 goroutines and then with 1 goroutine, and
// requires the parameters and history of an uninterrupted 7-goroutine run.
func TestResumeOtherLayout(t *testing.T) {
	ds := toyDataset(t, 3, 300, 2, 0, 33)
	newL := func() Learner { return symplecticLearner(t, ds, predictor.KindGR, 9) }
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.Schedule = 5, 300, "muon", "constant"
	ref := runLayout(t, ds, newL, cfg, 0, 7)
	c := cfg
	c.CheckpointPath, c.CheckpointEvery = filepath.Join(t.TempDir(), "run.ckpt"), 1
	c.Epochs = 2
	runLayout(t, ds, newL, c, 0, 3)
	c.Epochs = 4
	runLayout(t, ds, newL, c, 2, 2)
	c.Epochs = 5
	got := runLayout(t, ds, newL, c, 0, 1)
	if d := sameRun(ref, got); d != "" {
		t.Errorf("resumed with other layouts: %s", d)
	}
}

// TestProcessesDisagree requires a run whose processes hold other data or
// another model to fail on every process, naming the process, and a
// failed exchange to fail the run rather than train on.
func TestProcessesDisagree(t *testing.T) {
	ds := toyDataset(t, 2, 60, 2, 0, 35)
	other := toyDataset(t, 2, 60, 2, 0, 36)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Workers = 2, 64, 1
	for _, c := range []struct {
		name string
		data func(r int) *dataset.Dataset
		seed func(r int) uint64
		fail int
		want string
	}{
		{"data", func(r int) *dataset.Dataset { return map[bool]*dataset.Dataset{true: ds, false: other}[r != 2] }, func(int) uint64 { return 1 }, 0, "process 2 has other training data"},
		{"model", func(int) *dataset.Dataset { return ds }, func(r int) uint64 { return uint64(1 + r/2) }, 0, "process 2 has other model parameters"},
		{"exchange", func(int) *dataset.Dataset { return ds }, func(int) uint64 { return 1 }, 3, "simulated failure"},
	} {
		t.Run(c.name, func(t *testing.T) {
			comms := newChanGroup(3)
			comms[0].(*chanComm).g.fail = c.fail
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for r := range 3 {
				wg.Go(func() {
					cc := cfg
					cc.Comm = comms[r]
					d := c.data(r)
					_, errs[r] = Train(context.Background(), symplecticLearner(t, d, predictor.KindGR, c.seed(r)), d, nil, cc)
				})
			}
			wg.Wait()
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("process %d: error %v, want one that says %q", r, err, c.want)
				}
			}
		})
	}
}

// TestEvaluateLayoutIndependent requires the same evaluation, bit for bit,
// with 1, 2, 3 and 7 goroutines, over more than one block of windows.
func TestEvaluateLayoutIndependent(t *testing.T) {
	ds := toyDataset(t, 3, 200, 2, 1, 37)
	s := symplecticLearner(t, ds, predictor.KindGR, 11)
	var ref EvalResult
	for _, w := range []int{1, 2, 3, 7} {
		res, err := Evaluate(context.Background(), s.Rollers(), ds, EvalOptions{Horizon: 30, Stride: 1, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if res.Windows <= evalBlock {
			t.Fatalf("%d windows: too few to test the blocks", res.Windows)
		}
		if w == 1 {
			ref = res
			continue
		}
		if !reflect.DeepEqual(res, ref) {
			t.Errorf("%d goroutines: MSE %.17g (per step %v), 1 goroutine %.17g", w, res.MSE, res.PerStep[:3], ref.MSE)
		}
	}
}

// TestTwoShardsAreTwoWorkers requires a batch of two shards (batch sizes
// 129 to 256) to give the bits of the split of two workers before shards:
// rows [0, ⌈N/2⌉) and the rest, each by one LossGrad, their gradients and
// losses added, for full and partial batches.
func TestTwoShardsAreTwoWorkers(t *testing.T) {
	ds := toyDataset(t, 2, 200, 2, 1, 39)
	s := symplecticLearner(t, ds, predictor.KindGR, 13)
	nx, ne := ds.StateDim(), ds.PortDim()
	full := fullBatch(ds)
	for _, n := range []int{256, 201, 130} {
		pl, err := newPool(s, 3, 256, 1, nx, ne, nil)
		if err != nil {
			t.Fatal(err)
		}
		if pl.shards != 2 {
			t.Fatalf("batch 256 has %d shards", pl.shards)
		}
		sc := newSchedule(n, pl)
		sc.orderShard(0, -1, 0)
		fill := func(sh int, b *Batch) []float64 {
			lo, hi := sc.shardRows(0, sh)
			b.N = hi - lo
			copy(b.X, full.X[lo*nx:hi*nx])
			copy(b.XNext, full.XNext[lo*nx:hi*nx])
			copy(b.E, full.E[lo*ne:hi*ne])
			copy(b.W, full.W[lo:hi])
			return nil
		}
		grad := make([]float64, s.NumParams())
		loss, _, err := pl.run(fill, grad, false)
		if err != nil {
			t.Fatal(err)
		}
		half := (n + 1) / 2
		g0, g1 := make([]float64, s.NumParams()), make([]float64, s.NumParams())
		w := s.NewWorker(half)
		l0 := w.LossGrad(Batch{N: half, X: full.X[:half*nx], E: full.E[:half*ne], XNext: full.XNext[:half*nx], W: full.W[:half]}, g0, nil)
		l1 := w.LossGrad(Batch{N: n - half, X: full.X[half*nx : n*nx], E: full.E[half*ne : n*ne], XNext: full.XNext[half*nx : n*nx], W: full.W[half:n]}, g1, nil)
		if loss != l0+l1 {
			t.Errorf("%d rows: loss %v, two workers %v", n, loss, l0+l1)
		}
		for i := range grad {
			if grad[i] != g0[i]+g1[i] {
				t.Fatalf("%d rows: ∂θ[%d] = %v, two workers %v", n, i, grad[i], g0[i]+g1[i])
			}
		}
	}
}
