package trainer

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// TestPhasesSumToTotal trains on a dataset opened with its arrays on disk
// as 1 and 2 processes, with the validation loss, the selection by the AR
// MSE and checkpoints, and requires every process's Phases to count its
// optimiser steps, to time every phase the run has (the samples' and the
// sums' exchanges only with two processes, the checkpoints only on the
// first) and none it has not, and to sum to the total with a rest (Other)
// that is not negative: no phase is counted twice. It asserts no duration.
func TestPhasesSumToTotal(t *testing.T) {
	loaded := toyDataset(t, 4, 300, 2, 1, 17)
	dir := t.TempDir()
	if err := loaded.Save(dir); err != nil {
		t.Fatal(err)
	}
	const epochs, batch = 2, 300
	steps := epochs * ((len(loaded.UniqueTransitions()) + batch - 1) / batch)
	for _, procs := range []int{1, 2} {
		comms := newChanGroup(procs)
		phases := make([]Phases, procs)
		errs := make([]error, procs)
		ckpt := filepath.Join(t.TempDir(), "run.ckpt")
		var wg sync.WaitGroup
		for r := range procs {
			wg.Go(func() {
				// the selection loads the validation set: train opened
				ds, err := dataset.Open(dir)
				if err != nil {
					errs[r] = err
					return
				}
				val, err := dataset.Open(dir)
				if err != nil {
					errs[r] = err
					return
				}
				cfg := DefaultConfig()
				cfg.Epochs, cfg.BatchSize, cfg.Workers = epochs, batch, 2
				cfg.SelectHorizon, cfg.CheckpointPath, cfg.CheckpointEvery = 20, ckpt, 1
				cfg.Phases = &phases[r]
				if procs > 1 {
					cfg.Comm = comms[r]
				}
				_, errs[r] = Train(context.Background(), symplecticLearner(t, ds, predictor.KindGR, 5), ds, val, cfg)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		for r, p := range phases {
			t.Logf("%d processes, process %d: %s", procs, r, &p)
			if p.Steps != steps {
				t.Errorf("%d processes, process %d: %d steps counted, want %d", procs, r, p.Steps, steps)
			}
			var sum time.Duration
			for _, ph := range p.list() {
				sum += ph.d
				want := true
				switch ph.name {
				case "samples", "exchange":
					want = procs > 1
				case "checkpoint":
					want = r == 0
				case "other":
					if ph.d < 0 {
						t.Errorf("%d processes, process %d: other %v < 0: phases overlap", procs, r, ph.d)
					}
					continue
				}
				if (ph.d > 0) != want {
					t.Errorf("%d processes, process %d: %s %v, want it timed: %v", procs, r, ph.name, ph.d, want)
				}
				if !strings.Contains(p.String(), " "+ph.name+" ") {
					t.Errorf("%q does not report %s", p.String(), ph.name)
				}
			}
			if sum != p.Total || p.Total <= 0 {
				t.Errorf("%d processes, process %d: the phases sum to %v, total %v", procs, r, sum, p.Total)
			}
		}
	}
}

// TestPhasesSerialFraction: the serial fraction is computed as
// docs/training.md computes it from its table (18.4%, 1.69× at 2
// processes, 4.25× at 16), the exchanges left out, and train --timing's
// line (Phases.String) prints it.
func TestPhasesSerialFraction(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	p := Phases{Steps: 1, Shards: ms(127.2), Validation: ms(120.7), Selection: ms(40.8), Optimizer: ms(13.4), Reduce: ms(0.85), Other: ms(0.95)}
	p.Total = p.Shards + p.Validation + p.Selection + p.Optimizer + p.Reduce + p.Other
	if f := p.SerialFraction(); math.Abs(f-0.184) > 5e-4 {
		t.Errorf("f = %.4f, want 0.184", f)
	}
	q := p
	q.Exchange, q.Samples, q.Stop = ms(10), ms(5), ms(1)
	q.Total += q.Exchange + q.Samples + q.Stop
	if f, g := q.SerialFraction(), p.SerialFraction(); math.Abs(f-g) > 1e-12 {
		t.Errorf("with exchanges f = %.6f, want %.6f (the exchanges left out)", f, g)
	}
	if s := p.String(); !strings.Contains(s, "serial fraction f = 18.4%") || !strings.Contains(s, "1.69× at 2 processes, 4.25× at 16") {
		t.Errorf("String() = %q, want the serial fraction and Amdahl's speedups", s)
	}
	if f := (&Phases{}).SerialFraction(); f != 0 {
		t.Errorf("no time: f = %v", f)
	}
}
