package trainer

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
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
