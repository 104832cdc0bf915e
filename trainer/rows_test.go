package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// TestProcessesHoldTheirSamples opens a saved dataset (arrays on disk) as
// each of 1, 2 and 3 processes and runs epochs of teacher forcing, the
// in-order validation pass and scheduled sampling: every shard a process
// computes gathers the rows the loaded dataset gives (a sample it does
// not hold would panic), and a process holds the share of the samples its
// shards reach: with a share f of the shards, a sample that c of the
// epoch's items need is held with probability 1 − (1 − f)^c (c = 2 for
// a shuffled transition, 1 for the in-order validation, the windows
// that overlap a sample for scheduled sampling).
func TestProcessesHoldTheirSamples(t *testing.T) {
	loaded := toyDataset(t, 5, 700, 2, 1, 41)
	dir := t.TempDir()
	if err := loaded.Save(dir); err != nil {
		t.Fatal(err)
	}
	l := symplecticLearner(t, loaded, predictor.KindGR, 3)
	nx, ne := loaded.StateDim(), loaded.PortDim()
	for _, c := range []struct {
		name  string
		epoch int // −1: in order (validation)
		sched bool
		c     float64 // the items that need a sample
		k     int     // K-step sequences (> 1)
	}{{"teacher forcing", 3, false, 2, 0}, {"validation", -1, false, 1, 0}, {"scheduled sampling", 2, true, float64(loaded.WindowLen / loaded.Stride), 0},
		// a sample is in the sequences of L/S windows, and in two of a
		// window's at a sequence's end: (K+1)/K of them
		{"4-step rollouts", 5, false, float64(loaded.WindowLen/loaded.Stride) * 5 / 4, 4}} {
		t.Run(c.name, func(t *testing.T) {
			held := map[int]int{}
			frac := map[int]float64{} // the largest share of the shards
			for _, procs := range []int{1, 2, 3} {
				comms := newChanGroup(procs)
				for r := range procs {
					ds, err := dataset.Open(dir)
					if err != nil {
						t.Fatal(err)
					}
					var comm Comm
					if procs > 1 {
						comm = comms[r]
					}
					pl, err := newPool(l, 2, 1000, max(c.k, 1), nx, ne, comm)
					if err != nil {
						t.Fatal(err)
					}
					ref, tb := newTransitionBatches(loaded), newTransitionBatches(ds)
					got, want := newSeqBatch(pl.rows, c.k, nx, ne), newSeqBatch(pl.rows, c.k, nx, ne)
					rows := 0
					check := func(fill, refFill shardFill) {
						for s := pl.lo; s < pl.hi; s++ {
							fill(s, &got)
							refFill(s, &want)
							if got.N != want.N {
								t.Fatalf("%d processes, process %d, shard %d: %d rows, want %d", procs, r, s, got.N, want.N)
							}
							arrays := [][2][]float64{{got.X, want.X}, {got.XNext, want.XNext}, {got.E, want.E}, {got.W, want.W}}
							if c.sched {
								// the inputs are measured or predicted as the
								// epoch's draws and predictions say
								arrays = arrays[1:]
							}
							for _, p := range arrays {
								for i := range p[1][:got.N*len(p[1])/len(want.W)] {
									if math.Float64bits(p[0][i]) != math.Float64bits(p[1][i]) {
										t.Fatalf("%d processes, process %d, shard %d: value %d is %v, want %v", procs, r, s, i, p[0][i], p[1][i])
									}
								}
							}
							rows += got.N
						}
					}
					if c.k > 1 {
						var fills []shardFill
						err := rolloutEpoch(newRowStore(loaded), pl, c.k, 9, c.epoch, func(f shardFill, _ int) error { fills = append(fills, f); return nil })
						if err != nil {
							t.Fatal(err)
						}
						k := 0
						err = rolloutEpoch(tb.rows, pl, c.k, 9, c.epoch, func(f shardFill, _ int) error { check(f, fills[k]); k++; return nil })
						if err != nil {
							t.Fatal(err)
						}
					} else if c.sched {
						// the two runs of the epoch in step, batch by batch
						var fills []shardFill
						err := scheduledEpoch(newRowStore(loaded), pl, 0.5, 9, c.epoch, func(f shardFill, _ int) error { fills = append(fills, f); return nil })
						if err != nil {
							t.Fatal(err)
						}
						k := 0
						err = scheduledEpoch(tb.rows, pl, 0.5, 9, c.epoch, func(f shardFill, _ int) error { check(f, fills[k]); k++; return nil })
						if err != nil {
							t.Fatal(err)
						}
					} else {
						var fills []shardFill
						if err := ref.epoch(newSchedule(len(ref.trans), pl), 9, c.epoch, func(f shardFill, _ int) error { fills = append(fills, f); return nil }); err != nil {
							t.Fatal(err)
						}
						k := 0
						if err := tb.epoch(newSchedule(len(tb.trans), pl), 9, c.epoch, func(f shardFill, _ int) error { check(f, fills[k]); k++; return nil }); err != nil {
							t.Fatal(err)
						}
					}
					if rows == 0 {
						t.Fatalf("%d processes, process %d computed no row", procs, r)
					}
					held[procs] = max(held[procs], len(tb.rows.x)/nx)
					frac[procs] = max(frac[procs], float64(pl.hi-pl.lo)/float64(pl.shards))
				}
			}
			all := float64(loaded.Samples())
			t.Logf("samples held by the largest process of 1, 2, 3: %d, %d, %d of %v", held[1], held[2], held[3], all)
			for n := 1; n <= 3; n++ {
				share := 1 - math.Pow(1-frac[n], c.c)
				if got := float64(held[n]) / all; got > share+0.05 || (n == 1 && c.epoch >= 0 && got < 0.9) {
					t.Errorf("a process of %d holds %.1f%% of the samples, want at most %.1f%%", n, 100*got, 100*share)
				}
			}
		})
	}
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
