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
	"sync/atomic"
	"testing"

	"github.com/calisym/calisym/predictor"
)

// TestResumeSettingsFingerprint: a checkpoint records every setting that
// changes the result. Resuming a cosine-schedule run with another number
// of epochs (the schedule's length), other loss units, another step decay
// or another loss weight is refused naming what differs (each gave a run
// equal to neither); under the constant schedule, more epochs resume to
// the bits of the longer uninterrupted run, and fewer epochs than the
// checkpoint holds are refused.
func TestResumeSettingsFingerprint(t *testing.T) {
	ds := toyDataset(t, 2, 60, 2, 0, 21)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Workers, cfg.CheckpointEvery = 2, 32, 1, 1
	cfg.CheckpointPath = filepath.Join(t.TempDir(), "run.ckpt")
	if _, err := Train(context.Background(), symplecticLearner(t, ds, predictor.KindGR, 3), ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*Config, *Symplectic)
		want string
	}{
		{"epochs", func(c *Config, _ *Symplectic) { c.Epochs = 4 }, "4 epochs (the cosine schedule's length)"},
		{"loss units", func(_ *Config, l *Symplectic) { l.W.Units = 1 }, "loss units 1"},
		{"rollout decay", func(_ *Config, l *Symplectic) { l.W.StepDecay = 0.5 }, "rollout decay 0.5"},
		{"w_q", func(_ *Config, l *Symplectic) { l.W.Q = 1 }, "loss weights q 1,"},
	} {
		c2 := cfg
		l := symplecticLearner(t, ds, predictor.KindGR, 3)
		c.edit(&c2, l)
		_, err := Train(context.Background(), l, ds, nil, c2)
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "this run: "+c.want) {
			t.Errorf("resume with other %s: %v, want a checkpoint error naming %q", c.name, err, c.want)
		}
	}

	// the constant schedule: 2 epochs, then resumed to 4
	cfg.Schedule = "constant"
	cfg.CheckpointPath = filepath.Join(t.TempDir(), "constant.ckpt")
	ref := symplecticLearner(t, ds, predictor.KindGR, 3)
	long := cfg
	long.Epochs, long.CheckpointPath = 4, ""
	if _, err := Train(context.Background(), ref, ds, nil, long); err != nil {
		t.Fatal(err)
	}
	if _, err := Train(context.Background(), symplecticLearner(t, ds, predictor.KindGR, 3), ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	resumed := symplecticLearner(t, ds, predictor.KindGR, 3)
	c4 := cfg
	c4.Epochs = 4
	if _, err := Train(context.Background(), resumed, ds, nil, c4); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(resumed.Params(), ref.Params()) {
		t.Error("constant schedule: 2 epochs resumed to 4 differ from 4 uninterrupted")
	}
	c1 := cfg
	c1.Epochs = 1
	_, err := Train(context.Background(), symplecticLearner(t, ds, predictor.KindGR, 3), ds, nil, c1)
	if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "holds 4 epochs, more than this run's 1") {
		t.Errorf("resume with fewer epochs than the checkpoint holds: %v", err)
	}
}

// TestBadLossWeights: a NaN or out-of-range loss setting is an error that
// names it, before training (NaN units reported "training diverged").
func TestBadLossWeights(t *testing.T) {
	ds := toyDataset(t, 2, 40, 2, 0, 22)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Workers = 1, 32, 1
	for _, c := range []struct {
		edit func(*LossWeights)
		want string
	}{
		{func(w *LossWeights) { w.Units = math.NaN() }, "loss units NaN"},
		{func(w *LossWeights) { w.Units = 2 }, "loss units 2"},
		{func(w *LossWeights) { w.StepDecay = math.NaN() }, "step_decay NaN"},
		{func(w *LossWeights) { w.Q = -1 }, "w_q -1"},
	} {
		l := symplecticLearner(t, ds, predictor.KindGR, 4)
		c.edit(&l.W)
		_, err := Train(context.Background(), l, ds, nil, cfg)
		if err == nil || errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", l.W, err, c.want)
		}
	}
}

// cancelLearner cancels a run from inside it: at its at-th LossGrad call
// (a batch under way) or at its rollersAt-th Rollers call (the selection
// of an epoch), as a Ctrl-C arriving then does.
type cancelLearner struct {
	*Symplectic
	calls, at          *atomic.Int64
	rollers, rollersAt int
	cancel             func()
}

func (c *cancelLearner) NewWorker(n int) Worker { return cancelWorker{c.Symplectic.NewWorker(n), c} }

func (c *cancelLearner) Rollers() RollerFactory {
	c.rollers++
	if c.rollers == c.rollersAt && c.cancel != nil {
		c.cancel()
	}
	return c.Symplectic.Rollers()
}

type cancelWorker struct {
	Worker
	c *cancelLearner
}

func (w cancelWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	if n := w.c.calls.Add(1); n == w.c.at.Load() && w.c.cancel != nil {
		w.c.cancel()
	}
	return w.Worker.LossGrad(b, grad, pred)
}

// withoutSeconds returns a history's epochs with their wall times zeroed.
func withoutSeconds(h *History) []EpochStats {
	var out []EpochStats
	for _, e := range h.Epochs {
		e.Seconds = 0
		out = append(out, e)
	}
	return out
}

// TestInterruptWithinEpoch cancels runs in the middle of an epoch and
// during an epoch's selection by the AR MSE: the run stops at the next
// batch (scheduled sampling: between window groups), saves a checkpoint
// of that point, and the resumed run ends with the uninterrupted run's
// parameters and history bit for bit, the selection's best epoch
// included. A Ctrl-C during the selection failed with "selection at
// epoch 2: context canceled" and saved nothing; a run stopped only at the
// end of an epoch, which MPI launchers do not wait for.
func TestInterruptWithinEpoch(t *testing.T) {
	ds := toyDataset(t, 2, 60, 2, 0, 23)
	val := toyDataset(t, 1, 60, 2, 0, 24)
	base := DefaultConfig()
	base.Epochs, base.BatchSize, base.Workers, base.CheckpointEvery = 3, 32, 2, 10
	for _, c := range []struct {
		name      string
		edit      func(*Config)
		at        int64 // LossGrad call that cancels (0: none)
		rollersAt int   // Rollers call that cancels (0: none)
		every     int   // the batches a stop falls on are a multiple of it
	}{
		{"one-step", func(*Config) {}, 7, 0, 1},
		{"K-step", func(c *Config) { c.RolloutSteps, c.RolloutFrom, c.RolloutBatch = 3, 1, 8 }, 30, 0, 1},
		{"scheduled", func(c *Config) { c.BatchSize, c.AlphaFinal = 8, 0.5 }, 90, 0, 19},
		{"selection", func(c *Config) { c.SelectHorizon = 10 }, 0, 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			c.edit(&cfg)
			learner := func(cancel func(), at int64, rollersAt int) *cancelLearner {
				l := &cancelLearner{Symplectic: symplecticLearner(t, ds, predictor.KindGR, 5), calls: new(atomic.Int64), at: new(atomic.Int64), rollersAt: rollersAt, cancel: cancel}
				l.at.Store(at)
				return l
			}
			ref := learner(nil, 0, 0)
			refHist, err := Train(context.Background(), ref, ds, val, cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.CheckpointPath = filepath.Join(t.TempDir(), "run.ckpt")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err = Train(ctx, learner(cancel, c.at, c.rollersAt), ds, val, cfg)
			var ie *Interrupted
			if !errors.As(err, &ie) || ie.Checkpoint != cfg.CheckpointPath {
				t.Fatalf("interrupted run: %v, want an *Interrupted naming the checkpoint", err)
			}
			if c.rollersAt > 0 {
				if ie.Done != c.rollersAt || ie.Batches != 0 {
					t.Errorf("interrupted during the selection of epoch %d: stopped %s, want after that epoch", c.rollersAt, ie.Where())
				}
			} else if ie.Batches == 0 || ie.Batches%c.every != 0 {
				t.Errorf("interrupted within an epoch: stopped %s, want within the epoch at a multiple of %d batches", ie.Where(), c.every)
			}
			ck, err := LoadCheckpoint(cfg.CheckpointPath)
			if err != nil || ck.Epoch != ie.Done || ck.Part.Batches != ie.Batches {
				t.Fatalf("checkpoint %+v, %v, want the point %s", ck, err, ie.Where())
			}
			resumed := learner(nil, 0, 0)
			hist, err := Train(context.Background(), resumed, ds, val, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(resumed.Params(), ref.Params()) {
				t.Error("the resumed run's parameters differ from the uninterrupted run's")
			}
			if got, want := withoutSeconds(hist), withoutSeconds(refHist); !reflect.DeepEqual(fmt.Sprint(got), fmt.Sprint(want)) {
				t.Errorf("history resumed %+v\nuninterrupted %+v", got, want)
			}
			if hist.BestEpoch != refHist.BestEpoch || hist.BestARMSE != refHist.BestARMSE {
				t.Errorf("best epoch %d (%v) resumed, %d (%v) uninterrupted", hist.BestEpoch, hist.BestARMSE, refHist.BestEpoch, refHist.BestARMSE)
			}
		})
	}
}

// signalDuringGather is process 0 of 2 whose context is cancelled while
// it exchanges the stop flags, after it sent its own (0), as a signal
// arriving then is; the other process sent 0 too.
type signalDuringGather struct{ cancel func() }

func (signalDuringGather) Rank() int { return 0 }
func (signalDuringGather) Size() int { return 2 }
func (s signalDuringGather) Allgather(send []float64, _ []int, recv []float64) error {
	s.cancel()
	clear(recv)
	return nil
}

// TestStopAgreement: whether a process stops rests on the flags the
// processes exchanged, not on its context after the exchange: a signal
// arriving during the exchange counts at the next one. Before, this
// process stopped while the other went on, and the two then waited in
// different collectives (MPI_ERR_TRUNCATE).
func TestStopAgreement(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cause, err := stopped(ctx, signalDuringGather{cancel})
	if err != nil || cause != nil {
		t.Errorf("signal during the exchange: cause %v, err %v; want to go on, as the other process does", cause, err)
	}
	cause, err = stopped(ctx, signalDuringGather{cancel})
	if err != nil || !errors.Is(cause, context.Canceled) {
		t.Errorf("the next exchange: cause %v, err %v; want to stop", cause, err)
	}
}

// TestSettingsDiff: a resume refusal names each side once, the
// checkpoint's settings then this run's.
func TestSettingsDiff(t *testing.T) {
	for _, c := range []struct {
		old  string
		new  []string
		want string
	}{
		{"a 1; b 2; c 3", []string{"a 1", "b 5", "c 6"}, "checkpoint: b 2; c 3 — this run: b 5; c 6"},
		{"a 1", []string{"a 1", "d 4", "e 5"}, "this run: d 4; e 5"},
		{"a 1; f 6", []string{"a 1"}, "checkpoint: f 6"},
	} {
		if got := settingsDiff(c.old, c.new); got != c.want {
			t.Errorf("settingsDiff(%q, %q) = %q, want %q", c.old, c.new, got, c.want)
		}
	}
}
