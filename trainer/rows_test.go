package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/predictor"
)

// TestProcessesHoldTheirSamples opens a saved dataset (arrays on disk) as
// each of 1, 2 and 3 processes, joined by an in-memory Comm and run at
// once, and runs an epoch of teacher forcing, the in-order validation
// pass, scheduled sampling and 4-step rollouts: every shard a process
// computes gathers the rows the loaded dataset gives, bit for bit (a
// sample neither held nor gathered would panic), and a process holds each
// sample of its range once, however many windows share it: at most
// ⌈T/N⌉ + K of the T samples (its range and the K after it that the spans
// starting in it reach), the processes together at most T + (N−1)·K and
// every sample. The datasets: a toy one (windows of 20 every 5 samples)
// and two real runs of the double pendulum converted as
// params/double_pendulum_hw.yaml converts them (windows of 100 every 10:
// a sample lies in up to 10 windows; reading each process's shards' own
// samples, as before, held 75% of them at N = 2).
func TestProcessesHoldTheirSamples(t *testing.T) {
	for _, d := range []struct {
		name string
		ds   func(t *testing.T) *dataset.Dataset
	}{
		{"toy", func(t *testing.T) *dataset.Dataset { return toyDataset(t, 5, 700, 2, 1, 41) }},
		{"double pendulum", pendulumRuns},
	} {
		t.Run(d.name, func(t *testing.T) {
			loaded := d.ds(t)
			dir := t.TempDir()
			if err := loaded.Save(dir); err != nil {
				t.Fatal(err)
			}
			l := symplecticLearner(t, loaded, predictor.KindGR, 3)
			all := loaded.Samples()
			for _, c := range []struct {
				name  string
				epoch int // −1: in order (validation)
				sched bool
				k     int // K-step sequences (> 1)
			}{{"teacher forcing", 3, false, 0}, {"validation", -1, false, 0}, {"scheduled sampling", 2, true, 0}, {"4-step rollouts", 5, false, 4}} {
				t.Run(c.name, func(t *testing.T) {
					reach := max(c.k, 1)
					for _, procs := range []int{1, 2, 3} {
						comms := newChanGroup(procs)
						held := make([]int, procs)
						errs := make([]error, procs)
						var wg sync.WaitGroup
						for r := range procs {
							wg.Go(func() {
								var comm Comm
								if procs > 1 {
									comm = comms[r]
								}
								held[r], errs[r] = holdEpoch(dir, loaded, l, comm, c.epoch, c.sched, c.k)
							})
						}
						wg.Wait()
						if err := errors.Join(errs...); err != nil {
							t.Fatalf("%d processes: %v", procs, err)
						}
						sum := 0
						for r, h := range held {
							sum += h
							if limit := (all+procs-1)/procs + reach; h > limit {
								t.Errorf("process %d of %d holds %d of %d samples (%.1f%%), want at most ⌈T/N⌉ + %d = %d", r, procs, h, all, 100*float64(h)/float64(all), reach, limit)
							}
						}
						if sum < all || sum > all+(procs-1)*reach {
							t.Errorf("%d processes hold %d samples together, want %d to %d", procs, sum, all, all+(procs-1)*reach)
						}
						t.Logf("%d processes hold %v of %d samples", procs, held, all)
					}
				})
			}
		})
	}
}

// pendulumRuns converts two runs of the real double pendulum, as
// params/double_pendulum_hw.yaml does, into one split.
func pendulumRuns(t *testing.T) *dataset.Dataset {
	var runs []string
	for _, f := range []string{"20230629-143339.csv", "20230629-143524.csv"} {
		fixtures.Path(t, "double_pendulum_hw", "trajectories", f)
		runs = append(runs, "double_pendulum_hw/trajectories/"+f)
	}
	s, err := convert.LoadSpec(filepath.Join(fixtures.Root(), "params", "double_pendulum_hw.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s.Inputs, s.Split = runs, convert.SplitSpec{Default: "id"}
	res, err := convert.Convert(context.Background(), s, convert.Options{DataRoot: fixtures.DataDir()})
	if err != nil {
		t.Fatal(err)
	}
	ds := res.Splits["id"]
	if ds == nil || len(ds.Episodes) != 2 || ds.WindowLen/ds.Stride < 2 {
		t.Fatalf("converted %+v, want two episodes of overlapping windows", ds)
	}
	return ds
}

// holdEpoch runs one epoch (of teacher forcing, the validation pass,
// scheduled sampling or K-step rollouts) as the process of comm on the
// dataset saved in dir, opened with its arrays on disk, checks every row
// its shards gather against loaded's, and returns the samples it held.
func holdEpoch(dir string, loaded *dataset.Dataset, l Learner, comm Comm, epoch int, sched bool, k int) (int, error) {
	ds, err := dataset.Open(dir)
	if err != nil {
		return 0, err
	}
	nx, ne := loaded.StateDim(), loaded.PortDim()
	pl, err := newPool(l, 1, 1000, max(k, 1), nx, ne, comm)
	if err != nil {
		return 0, err
	}
	ref, tb := newTransitionBatches(loaded), newTransitionBatches(ds)
	got, want := newSeqBatch(pl.rows, k, nx, ne), newSeqBatch(pl.rows, k, nx, ne)
	rows := 0
	var bad error
	check := func(fill, refFill shardFill) {
		for s := pl.lo; s < pl.hi && bad == nil; s++ {
			fill(s, &got)
			refFill(s, &want)
			if got.N != want.N {
				bad = fmt.Errorf("shard %d: %d rows, want %d", s, got.N, want.N)
				return
			}
			arrays := [][2][]float64{{got.X, want.X}, {got.XNext, want.XNext}, {got.E, want.E}, {got.W, want.W}}
			if sched {
				// the inputs are measured or predicted as the epoch's
				// draws and predictions say
				arrays = arrays[1:]
			}
			for _, p := range arrays {
				for i := range p[1][:got.N*len(p[1])/len(want.W)] {
					if math.Float64bits(p[0][i]) != math.Float64bits(p[1][i]) {
						bad = fmt.Errorf("shard %d: value %d is %v, want %v", s, i, p[0][i], p[1][i])
						return
					}
				}
			}
			rows += got.N
		}
	}
	// the epoch on the loaded dataset, then on the opened one in step,
	// batch by batch
	var fills []shardFill
	keep := func(f shardFill, _ int) error { fills = append(fills, f); return nil }
	n := 0
	compare := func(f shardFill, _ int) error { check(f, fills[n]); n++; return bad }
	switch {
	case k > 1:
		if err = rolloutEpoch(ref.rows, pl, k, 9, epoch, keep); err == nil {
			err = rolloutEpoch(tb.rows, pl, k, 9, epoch, compare)
		}
	case sched:
		if err = scheduledEpoch(ref.rows, pl, 0.5, 9, epoch, keep); err == nil {
			err = scheduledEpoch(tb.rows, pl, 0.5, 9, epoch, compare)
		}
	default:
		if err = ref.epoch(newSchedule(len(ref.trans), pl), 9, epoch, keep); err == nil {
			err = tb.epoch(newSchedule(len(tb.trans), pl), 9, epoch, compare)
		}
	}
	if err != nil {
		return 0, err
	}
	if rows == 0 {
		return 0, fmt.Errorf("process %d computed no row", pl.lo)
	}
	return len(tb.rows.x) / nx, nil
}

// TestOpenedDataLayoutIndependent trains on a dataset opened with its
// arrays on disk as 1, 2 and 3 processes (each opening its own) and
// requires the bits of one process on the loaded dataset: parameters and
// every epoch's losses, validation loss and gradient norm, for teacher
// forcing (AdamW, Muon), scheduled sampling, K-step rollouts and the MLP
// (which load the arrays), with a checkpoint and a resume on another
// number of processes.
func TestOpenedDataLayoutIndependent(t *testing.T) {
	loaded := toyDataset(t, 6, 400, 2, 1, 31)
	dir := t.TempDir()
	if err := loaded.Save(dir); err != nil {
		t.Fatal(err)
	}
	open := func() *dataset.Dataset {
		ds, err := dataset.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	gr := func(ds *dataset.Dataset) Learner { return symplecticLearner(t, ds, predictor.KindGR, 7) }
	mlp := func(ds *dataset.Dataset) Learner {
		m, err := NewMLP(ds, []int{9, 7}, LossWeights{Q: 10, P: 5}, 5)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, c := range []struct {
		name   string
		newL   func(*dataset.Dataset) Learner
		opt    string
		alpha  bool
		k      int
		resume bool
	}{
		{"gr-muon", gr, "muon", false, 0, true},
		{"gr-adamw-scheduled", gr, "adamw", true, 0, false},
		{"gr-rollout", gr, "adamw", false, 3, false},
		{"mlp-adamw", mlp, "adamw", false, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.LR = 3, 520, c.opt, 3e-3
			if c.alpha {
				cfg.AlphaHold, cfg.AlphaRamp, cfg.AlphaFinal = 1, 1, 0.5
			}
			if c.resume {
				// a run of 2 epochs resumed to 3 is the run of 3
				cfg.Schedule = "constant"
			}
			if c.k > 0 {
				cfg.RolloutSteps, cfg.RolloutFrom, cfg.RolloutBatch = c.k, 1, 400
			}
			ref := runLayout(t, loaded, func() Learner { return c.newL(loaded) }, cfg, 0, 1)
			for _, procs := range []int{1, 2, 3} {
				got, err := runOpened(open, c.newL, cfg, procs, 2)
				if err != nil {
					t.Fatal(err)
				}
				if d := sameRun(ref, got); d != "" {
					t.Errorf("%d processes on the opened dataset differ from one on the loaded: %s", procs, d)
				}
			}
			if !c.resume {
				return
			}
			rc := cfg
			rc.CheckpointPath, rc.CheckpointEvery, rc.Epochs = filepath.Join(t.TempDir(), "run.ckpt"), 1, 2
			if _, err := runOpened(open, c.newL, rc, 3, 1); err != nil {
				t.Fatal(err)
			}
			rc.Epochs = cfg.Epochs
			got, err := runOpened(open, c.newL, rc, 2, 2)
			if err != nil {
				t.Fatal(err)
			}
			if d := sameRun(ref, got); d != "" {
				t.Errorf("3 processes resumed as 2 differ from one uninterrupted process: %s", d)
			}
		})
	}
}

// runOpened trains as procs processes (joined by an in-memory Comm; one:
// none), each on the dataset open returns to it, also its validation set,
// and reports an error unless every process ends with the same bits.
func runOpened(open func() *dataset.Dataset, newL func(*dataset.Dataset) Learner, cfg Config, procs, workers int) (layoutRun, error) {
	cfg.Workers = workers
	comms := newChanGroup(procs)
	runs := make([]layoutRun, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for r := range procs {
		wg.Go(func() {
			c := cfg
			if procs > 1 {
				c.Comm = comms[r]
			}
			ds := open()
			l := newL(ds)
			h, err := Train(context.Background(), l, ds, ds, c)
			errs[r] = err
			if err == nil {
				runs[r] = layoutRun{l.Params(), stripTimes(h)}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return layoutRun{}, err
	}
	for r := 1; r < procs; r++ {
		if d := sameRun(runs[0], runs[r]); d != "" {
			return layoutRun{}, fmt.Errorf("%d processes: process %d differs from process 0: %s", procs, r, d)
		}
	}
	return runs[0], nil
}
