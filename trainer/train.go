package trainer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/calisym/calisym/dataset"
)

// Config controls a training run. The zero value is not usable: start from
// DefaultConfig.
type Config struct {
	Epochs      int     `json:"epochs"`
	BatchSize   int     `json:"batch_size"`
	Optimizer   string  `json:"optimizer"` // "adamw" or "muon"
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	// MuonLR is Muon's learning rate for matrix parameters (0: LR).
	MuonLR float64 `json:"muon_lr,omitempty"`
	Clip   float64 `json:"clip"`
	// Schedule is "constant" or "cosine" (with WarmupEpochs of linear warm-up).
	Schedule     string  `json:"schedule"`
	WarmupEpochs int     `json:"warmup_epochs"`
	MinLRFactor  float64 `json:"min_lr_factor"`
	// AlphaHold, AlphaRamp and AlphaFinal set the teacher-forcing schedule:
	// α = 1 for AlphaHold epochs, then a linear ramp to AlphaFinal over
	// AlphaRamp epochs. α = 1 throughout trains on unique transitions.
	AlphaHold  int     `json:"alpha_hold"`
	AlphaRamp  int     `json:"alpha_ramp"`
	AlphaFinal float64 `json:"alpha_final"`
	Seed       uint64  `json:"seed"`
	// Workers is the number of goroutines. The result does not depend on
	// it: a batch is cut into shards by its size alone (Shards) and their
	// sums are reduced in one fixed order.
	Workers int `json:"workers"`
	// Comm, if set, trains data-parallel over several processes, each
	// computing its share of every batch's shards (identical results to
	// one process). Only rank 0 writes checkpoints.
	Comm Comm `json:"-"`
	// RolloutSteps, RolloutFrom, RolloutRamp and RolloutBatch set multi-step
	// training: from epoch RolloutFrom on, an epoch trains on sequences of
	// K autoregressive steps of the rollout (Batch.K), K growing linearly
	// from 2 to RolloutSteps over RolloutRamp epochs (the curriculum),
	// RolloutBatch sequences a step (0: BatchSize/K, at least 2·ShardRows);
	// each window is cut into sequences from an offset that moves by one
	// sample an epoch. RolloutSteps ≤ 1 trains one step throughout.
	RolloutSteps int `json:"rollout_steps,omitempty"`
	RolloutFrom  int `json:"rollout_from,omitempty"`
	RolloutRamp  int `json:"rollout_ramp,omitempty"`
	RolloutBatch int `json:"rollout_batch,omitempty"`
	// SelectHorizon, if positive, scores every epoch from SelectFrom on by
	// the autoregressive MSE at this horizon on the validation set (one
	// rollout per SelectHorizon samples of each episode, from its first)
	// and ends the run with the parameters of the best epoch, instead of
	// the last (History.BestEpoch).
	SelectHorizon int `json:"select_horizon,omitempty"`
	SelectFrom    int `json:"select_from,omitempty"`
	// CheckpointEvery writes a checkpoint to CheckpointPath every N epochs (0: never).
	CheckpointEvery int    `json:"checkpoint_every"`
	CheckpointPath  string `json:"checkpoint_path,omitempty"`
	// Progress receives a progress bar (nil: silent).
	Progress io.Writer `json:"-"`
	// OnEpoch, if set, is called after every epoch.
	OnEpoch func(EpochStats) `json:"-"`
	// Phases, if set, receives where this process's epochs spent their
	// time, added to what it holds.
	Phases *Phases `json:"-"`
	// OnResume, if set, is called when the run resumes from the checkpoint
	// at CheckpointPath, with the epochs it holds and their training time
	// [s], before the first epoch.
	OnResume func(epoch int, seconds float64) `json:"-"`
}

// DefaultConfig returns the paper's double-pendulum settings (Appendix D).
func DefaultConfig() Config {
	return Config{Epochs: 500, BatchSize: 1024, Optimizer: "adamw", LR: 5e-3, WeightDecay: 2e-4,
		Clip: 100, Schedule: "cosine", WarmupEpochs: 2, MinLRFactor: 0.01, AlphaFinal: 1, Seed: 1, Workers: 2}
}

// EpochStats is the record of one epoch.
type EpochStats struct {
	Epoch int     `json:"epoch"`
	Loss  float64 `json:"loss"`
	// ValLoss is the one-step loss on the validation set (NaN when none).
	ValLoss     float64 `json:"val_loss"`
	LR          float64 `json:"lr"`
	Alpha       float64 `json:"alpha"`
	GradNorm    float64 `json:"grad_norm"`
	Seconds     float64 `json:"seconds"`
	Transitions int     `json:"transitions"`
	// K is the number of rollout steps a training sequence had (0: one).
	K int `json:"k,omitempty"`
	// ValARMSE is the validation AR MSE at Config.SelectHorizon (0: not
	// scored).
	ValARMSE float64 `json:"val_ar_mse,omitempty"`
}

// History is the record of a training run.
type History struct {
	Epochs  []EpochStats `json:"epochs"`
	Seconds float64      `json:"seconds"`
	// BestEpoch is the epoch whose parameters the run ended with under
	// Config.SelectHorizon (0: the last), BestARMSE its validation AR MSE
	// and BestTheta its parameters (kept in checkpoints, so that a resumed
	// run selects as an uninterrupted one).
	BestEpoch int       `json:"best_epoch,omitempty"`
	BestARMSE float64   `json:"best_ar_mse,omitempty"`
	BestTheta []float64 `json:"-"`
}

func (c *Config) validate() error {
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("trainer: epochs %d: want at least 1 (a run of no epochs trains nothing)", c.Epochs)
	case c.BatchSize < 1:
		return fmt.Errorf("trainer: batch size %d: want at least 1", c.BatchSize)
	case !(c.LR > 0):
		return fmt.Errorf("trainer: learning rate %v", c.LR)
	case c.Optimizer != "adamw" && c.Optimizer != "muon":
		return fmt.Errorf("trainer: unknown optimizer %q (want adamw or muon)", c.Optimizer)
	case c.Schedule != "constant" && c.Schedule != "cosine":
		return fmt.Errorf("trainer: unknown schedule %q (want constant or cosine)", c.Schedule)
	case c.RolloutSteps < 0 || c.RolloutFrom < 0 || c.RolloutRamp < 0 || c.RolloutBatch < 0 || c.SelectHorizon < 0:
		return fmt.Errorf("trainer: negative rollout (steps %d, from %d, ramp %d, batch %d) or selection horizon %d",
			c.RolloutSteps, c.RolloutFrom, c.RolloutRamp, c.RolloutBatch, c.SelectHorizon)
	case c.AlphaFinal < 0 || c.AlphaFinal > 1:
		return fmt.Errorf("trainer: final teacher-forcing α %v outside [0, 1]", c.AlphaFinal)
	}
	return nil
}

// lrAt returns the learning-rate factor of an epoch.
func (c *Config) lrAt(epoch int) float64 {
	if c.Schedule == "constant" {
		return 1
	}
	if epoch < c.WarmupEpochs {
		return float64(epoch+1) / float64(c.WarmupEpochs+1)
	}
	span := max(c.Epochs-c.WarmupEpochs, 1)
	t := float64(epoch-c.WarmupEpochs) / float64(span)
	return c.MinLRFactor + (1-c.MinLRFactor)*0.5*(1+math.Cos(math.Pi*t))
}

// settings lists the settings that decide a run's result: the model's
// architecture and loss, the optimiser, its rates and schedule (with the
// number of epochs when the schedule depends on it: cosine), the batch,
// the teacher forcing, the multi-step training, the selection (with the
// validation data it scores on) and the seed. A checkpoint records them
// and a resume with other settings is an error; the workers, the MPI
// processes, the checkpointing and, under the constant schedule, the
// number of epochs may change (the result does not depend on them).
func (c *Config) settings(l Learner, valFP string) []string {
	s := []string{
		fmt.Sprintf("optimizer %s", c.Optimizer),
		fmt.Sprintf("lr %g", c.LR),
		fmt.Sprintf("muon lr %g", c.MuonLR),
		fmt.Sprintf("weight decay %g", c.WeightDecay),
		fmt.Sprintf("clip %g", c.Clip),
		fmt.Sprintf("batch %d", c.BatchSize),
		fmt.Sprintf("%s schedule (warm-up %d, floor %g)", c.Schedule, c.WarmupEpochs, c.MinLRFactor),
		fmt.Sprintf("α 1 for %d then to %g over %d epochs", c.AlphaHold, c.AlphaFinal, c.AlphaRamp),
		fmt.Sprintf("seed %d", c.Seed),
	}
	if c.Schedule != "constant" {
		s = append(s, fmt.Sprintf("%d epochs (the %s schedule's length)", c.Epochs, c.Schedule))
	}
	if c.RolloutSteps > 1 {
		s = append(s, fmt.Sprintf("%d-step rollouts from epoch %d (ramp %d, %d sequences a batch)", c.RolloutSteps, c.RolloutFrom, c.RolloutRamp, c.RolloutBatch))
	}
	if c.SelectHorizon > 0 {
		s = append(s, fmt.Sprintf("best validation AR MSE at %d steps from epoch %d", c.SelectHorizon, c.SelectFrom),
			"validation data "+valFP)
	}
	s = append(s, learnerSettings(l)...)
	if w, ok := lossWeights(l); ok {
		s = append(s, fmt.Sprintf("loss weights q %g, p %g, section %g, control %g, contact %g", w.Q, w.P, w.Sec, w.Mu, w.Fc),
			fmt.Sprintf("loss units %g", w.Units), fmt.Sprintf("rollout decay %g", w.StepDecay))
	}
	return s
}

// learnerSettings describes the model of l: its architecture or hidden
// layers, and a composed model's physics prior after them.
func learnerSettings(l Learner) []string {
	switch v := l.(type) {
	case *Symplectic:
		return []string{fmt.Sprintf("architecture %+v", v.Model().Arch)}
	case *Composed:
		return append(learnerSettings(v.Inner), "physics prior "+v.priorJSON())
	case *MLP:
		return []string{fmt.Sprintf("hidden layers %v", v.Net.Config().Hidden)}
	}
	return nil
}

// joinSettings writes settings as a checkpoint records them.
func joinSettings(s []string) string { return strings.Join(s, "; ") }

// settingsDiff describes how the settings a checkpoint recorded (old, as
// joinSettings wrote them) differ from a run's (new): "checkpoint: A; B —
// this run: C; D", each side named once.
func settingsDiff(old string, new []string) string {
	was := strings.Split(old, "; ")
	var gone, added []string
	for _, w := range was {
		if !slices.Contains(new, w) {
			gone = append(gone, w)
		}
	}
	for _, n := range new {
		if !slices.Contains(was, n) {
			added = append(added, n)
		}
	}
	var d []string
	if len(gone) > 0 {
		d = append(d, "checkpoint: "+strings.Join(gone, "; "))
	}
	if len(added) > 0 {
		d = append(d, "this run: "+strings.Join(added, "; "))
	}
	return strings.Join(d, " — ")
}

// alphaAt returns the teacher-forcing probability of an epoch.
func (c *Config) alphaAt(epoch int) float64 {
	if epoch < c.AlphaHold || c.AlphaFinal == 1 {
		return 1
	}
	if c.AlphaRamp <= 0 {
		return c.AlphaFinal
	}
	t := math.Min(float64(epoch-c.AlphaHold)/float64(c.AlphaRamp), 1)
	return 1 + t*(c.AlphaFinal-1)
}

// ErrDiverged reports a non-finite loss or gradient.
var ErrDiverged = errors.New("trainer: training diverged")

// Interrupted is the error Train returns when its context is cancelled. The
// context is checked before every batch (over several processes, which
// agree on it, every process stops at the same batch; scheduled sampling
// stops between window groups), and the epoch's selection by the AR MSE
// completes; the learner then holds the parameters after Done epochs and
// Batches batches of the next. It unwraps to the context's error.
type Interrupted struct {
	// Done is the number of epochs completed (resumed ones included), of
	// Epochs planned.
	Done, Epochs int
	// Batches is the number of batches done of epoch Done+1 (0: the run
	// stopped between two epochs).
	Batches int
	// Checkpoint is the file that holds the run where it stopped, from
	// which Train resumes ("" when none does: no Config.CheckpointPath, or
	// no batch done).
	Checkpoint string
	// Err is the context's error.
	Err error
}

// Where describes the point the run stopped at: "after epoch 2 of 10" or
// "after epoch 2 of 10 and 5 batches of epoch 3".
func (e *Interrupted) Where() string {
	s := fmt.Sprintf("after epoch %d of %d", e.Done, e.Epochs)
	if e.Batches > 0 {
		s += fmt.Sprintf(" and %d batches of epoch %d", e.Batches, e.Done+1)
	}
	return s
}

// Error implements error.
func (e *Interrupted) Error() string {
	s := fmt.Sprintf("trainer: training interrupted %s (%v)", e.Where(), e.Err)
	if e.Checkpoint != "" && e.Batches == 0 {
		s += fmt.Sprintf("; checkpoint %s holds epoch %d", e.Checkpoint, e.Done)
	} else if e.Checkpoint != "" {
		s += fmt.Sprintf("; checkpoint %s holds the run there", e.Checkpoint)
	}
	return s
}

// point is a place in a run: batches done of epoch (from 0).
type point struct{ epoch, batches int }

// stopRequest is the error with which a batch callback stops an epoch
// when the run is interrupted: part is what the epoch had done.
type stopRequest struct {
	part  EpochPart
	cause error
}

func (s *stopRequest) Error() string { return "trainer: stopping: " + s.cause.Error() }

func (s *stopRequest) Unwrap() error { return s.cause }

// Unwrap returns the context's error.
func (e *Interrupted) Unwrap() error { return e.Err }

// Train fits the learner on the training set. val, if non-nil, is scored
// every epoch by its one-step loss. With Config.CheckpointPath set, training
// resumes from an existing checkpoint there, which must have been written
// training the same model on the same data with the same settings
// (ErrCheckpoint otherwise). A cancelled context stops the run after the
// batch under way (every process at the same one) with an *Interrupted
// error; with Config.CheckpointPath set, Train first writes the checkpoint
// of that point, whatever CheckpointEvery, from which a resumed run ends
// as an uninterrupted one, bit for bit.
// train and val may be opened with their arrays on disk (dataset.Open):
// a process then reads and holds its 1/N of the samples once (all of them
// without a Comm) and receives the rest of each batch's from the others
// (rowStore), with the same result, K-step epochs included; the
// selection by the AR MSE loads the validation arrays it rolls out.
// A run that diverges (ErrDiverged: a non-finite loss or gradient, which
// is also what a composed model's worker returns when its physics prior
// cannot step) returns the error and its history with the learner at the
// selected epoch's parameters where Config.SelectHorizon had chosen one.
func Train(ctx context.Context, l Learner, train, val *dataset.Dataset, cfg Config) (*History, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if c, ok := l.(interface{ CheckConfig(Config) error }); ok {
		if err := c.CheckConfig(cfg); err != nil {
			return nil, err
		}
	}
	if w, ok := lossWeights(l); ok {
		if err := w.Check(); err != nil {
			return nil, err
		}
	}
	if err := train.Validate(); err != nil {
		return nil, err
	}
	if err := checkSelection(val, &cfg); err != nil {
		return nil, err
	}
	// A dataset opened with its arrays on disk (one process of several
	// holding part of it) is held a range of samples a process, except where
	// the selection's rollouts (Evaluate) read every episode: they load the
	// arrays.
	if cfg.SelectHorizon > 0 {
		if err := val.LoadArrays(); err != nil {
			return nil, err
		}
	}
	nx, ne := train.StateDim(), train.PortDim()
	workers := cfg.Workers
	if workers <= 0 {
		workers = 2
	}
	tb := newTransitionBatches(train)
	// the samples a process holds serve the K-step sequences too
	tb.rows.reach = max(1, cfg.RolloutSteps)
	if len(tb.trans) == 0 {
		return nil, fmt.Errorf("trainer: the training set has no windows of length %d", train.WindowLen)
	}
	opt, err := newOptimizer(l, cfg)
	if err != nil {
		return nil, err
	}
	pl, err := newPool(l, workers, cfg.BatchSize, 1, nx, ne, cfg.Comm)
	if err != nil {
		return nil, err
	}
	ph := cfg.Phases
	pl.ph = ph
	grad := make([]float64, l.NumParams())
	sched := newSchedule(len(tb.trans), pl)
	writer := cfg.Comm == nil || cfg.Comm.Rank() == 0 // writes checkpoints
	hist := &History{}
	// saved: the point the checkpoint file holds (epoch −1: none)
	start, saved := 0, point{epoch: -1}
	var resumed EpochPart // the part of epoch start done before a resume
	var fp DataFingerprint
	var set []string // the settings a checkpoint records
	if cfg.CheckpointPath != "" || cfg.Comm != nil {
		if fp, err = Fingerprint(train); err != nil {
			return nil, err
		}
		valFP := fp
		if cfg.SelectHorizon > 0 && val != train {
			if valFP, err = Fingerprint(val); err != nil {
				return nil, err
			}
		}
		set = cfg.settings(l, valFP.String())
	}
	if cfg.CheckpointPath != "" {
		if ck, err := LoadCheckpoint(cfg.CheckpointPath); err == nil {
			if err := ck.restore(cfg.CheckpointPath, cfg.Epochs, l, opt, fp, set); err != nil {
				return nil, err
			}
			start, saved, resumed = ck.Epoch, point{ck.Epoch, ck.Part.Batches}, ck.Part
			hist = &ck.History
			if cfg.OnResume != nil {
				cfg.OnResume(ck.Epoch, ck.History.Seconds)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	// interrupted stops the run after part.Batches batches of epoch
	// (counted from 0; none: at the epoch's start), every process at the
	// same point, and saves the checkpoint there.
	interrupted := func(epoch int, part EpochPart, cause error) error {
		ie := &Interrupted{Done: epoch, Batches: part.Batches, Epochs: cfg.Epochs, Err: cause}
		at := point{epoch, part.Batches}
		var saveErr error
		if cfg.CheckpointPath != "" && (epoch > 0 || part.Batches > 0) && saved != at && writer {
			if saveErr = saveCheckpoint(cfg.CheckpointPath, epoch, part, l, opt, hist, fp, joinSettings(set)); saveErr == nil {
				saved = at
			}
		}
		ok := saved == at
		if cfg.Comm != nil && cfg.CheckpointPath != "" {
			// the others learn whether the first process saved it (and
			// return only once it has)
			var err error
			if ok, err = agreeSaved(cfg.Comm, ok); err != nil {
				return errors.Join(ie, err)
			}
		}
		if ok {
			ie.Checkpoint = cfg.CheckpointPath
		}
		if saveErr != nil {
			return errors.Join(ie, saveErr)
		}
		return ie
	}
	if err := agree(cfg.Comm, l, fp, joinSettings(set)); err != nil {
		return nil, err
	}
	var vb *transitionBatches
	var vsched *schedule
	if val != nil {
		vb = newTransitionBatches(val)
		vsched = newSchedule(len(vb.trans), pl)
		vsched.ph = nil // the validation pass is timed as a whole
		if val == train {
			// one store serves both passes
			vb.rows = tb.rows
		}
	}
	// cur is the pool of the epoch under way: pl, or seq's for K-step epochs
	cur := pl
	seq := newSeqPools(l, workers, &cfg, nx, ne)
	bar := newProgress(cfg.Progress, l.Name(), cfg.Epochs, start)
	if ph != nil {
		// the epochs' time, whichever way the run ends
		defer func(t0 time.Time) { ph.Total += time.Since(t0); ph.finish() }(time.Now())
	}
	for epoch := start; epoch < cfg.Epochs; epoch++ {
		t0 := time.Now()
		cause, err := stopped(ctx, cfg.Comm)
		if ph != nil {
			ph.Stop += time.Since(t0)
		}
		if err != nil {
			return hist, err
		} else if cause != nil {
			part := EpochPart{}
			if epoch == start {
				part = resumed
			}
			return hist, interrupted(epoch, part, cause)
		}
		te := time.Now()
		lr := cfg.LR * cfg.lrAt(epoch)
		alpha := cfg.alphaAt(epoch)
		// part sums the epoch's batches; skip of them were done before a
		// resume (their sums restored), and are passed over
		var part, skip EpochPart
		if epoch == start {
			part, skip = resumed, resumed
		}
		// stopEvery: the batches between two points the run may stop at
		// (scheduled sampling carries predictions from one step of a
		// window group to the next: it stops between groups)
		stopEvery := 1
		if cfg.kAt(epoch) <= 1 && alpha < 1 {
			stopEvery = train.WindowLen - 1
		}
		done := 0
		step := func(fill shardFill, rows int) error {
			if done < skip.Batches {
				done++
				return nil
			}
			// every process stops at the same batch when one is interrupted
			if done > 0 && done%stopEvery == 0 {
				t0 := time.Now()
				cause, err := stopped(ctx, cfg.Comm)
				if ph != nil {
					ph.Stop += time.Since(t0)
				}
				if err != nil {
					return err
				} else if cause != nil {
					part.Seconds = skip.Seconds + time.Since(te).Seconds()
					return &stopRequest{part: part, cause: cause}
				}
			}
			loss, w, err := cur.run(fill, grad, false)
			if err != nil {
				return err
			}
			t0 := time.Now()
			for i := range grad {
				grad[i] /= w
			}
			gn, err := opt.step(grad, lr, cfg.Clip)
			if err != nil {
				return err
			}
			if ph != nil {
				ph.Optimizer += time.Since(t0)
				ph.Steps++
			}
			if math.IsNaN(loss) || math.IsNaN(gn) || math.IsInf(gn, 0) {
				return fmt.Errorf("%w at epoch %d (loss %v, gradient norm %v)", ErrDiverged, epoch, loss, gn)
			}
			done++
			part.Batches = done
			part.SumLoss += loss
			part.SumW += w
			part.GradNorm += gn
			part.Transitions += rows
			bar.tick(epoch, part.SumLoss/part.SumW, float64(part.Transitions-skip.Transitions)/time.Since(te).Seconds())
			return nil
		}
		cur = pl
		if k := cfg.kAt(epoch); k > 1 {
			if cur, err = seq.pool(k); err == nil {
				err = rolloutEpoch(tb.rows, cur, k, cfg.Seed, epoch, step)
			}
		} else if alpha >= 1 {
			err = tb.epoch(sched, cfg.Seed, epoch, step)
		} else {
			err = scheduledEpoch(tb.rows, pl, alpha, cfg.Seed, epoch, step)
		}
		if sr := (*stopRequest)(nil); errors.As(err, &sr) {
			return hist, interrupted(epoch, sr.part, sr.cause)
		} else if err != nil {
			return hist, keepBest(l, hist, err)
		}
		sumLoss, sumW, gnorm, steps, count := part.SumLoss, part.SumW, part.GradNorm, part.Batches, part.Transitions
		es := EpochStats{Epoch: epoch + 1, Loss: sumLoss / sumW, LR: lr, Alpha: alpha, GradNorm: gnorm / float64(max(steps, 1)),
			Seconds: skip.Seconds + time.Since(te).Seconds(), Transitions: count, ValLoss: math.NaN(), K: max(cfg.kAt(epoch), 1)}
		if es.K == 1 {
			es.K = 0
		}
		if vb != nil {
			t0 := time.Now()
			if es.ValLoss, err = datasetLoss(pl, vb, vsched); err != nil {
				return hist, err
			}
			if ph != nil {
				ph.Validation += time.Since(t0)
			}
		}
		// the selection completes an epoch: an interruption during it
		// stops the run at the start of the next
		if err := selectEpoch(context.WithoutCancel(ctx), l, val, &cfg, epoch, hist, &es); err != nil {
			return hist, err
		}
		hist.Epochs = append(hist.Epochs, es)
		hist.Seconds += es.Seconds
		bar.epochDone(es)
		if cfg.OnEpoch != nil {
			cfg.OnEpoch(es)
		}
		if cfg.CheckpointPath != "" && cfg.CheckpointEvery > 0 && ((epoch+1)%cfg.CheckpointEvery == 0 || epoch+1 == cfg.Epochs) && writer {
			t0 := time.Now()
			if err := saveCheckpoint(cfg.CheckpointPath, epoch+1, EpochPart{}, l, opt, hist, fp, joinSettings(set)); err != nil {
				return hist, err
			}
			if ph != nil {
				ph.Checkpoint += time.Since(t0)
			}
			saved = point{epoch + 1, 0}
		}
	}
	bar.finish()
	if hist.BestTheta != nil {
		if err := l.SetParams(hist.BestTheta); err != nil {
			return hist, err
		}
	}
	return hist, nil
}

// keepBest leaves the learner at the selected epoch's parameters when
// training diverged (err wraps ErrDiverged) after a selection had chosen
// one, as a completed run ends; it returns err.
func keepBest(l Learner, hist *History, err error) error {
	if errors.Is(err, ErrDiverged) && hist != nil && hist.BestTheta != nil {
		if e := l.SetParams(hist.BestTheta); e != nil {
			return errors.Join(err, e)
		}
	}
	return err
}

// datasetLoss returns the weighted mean one-step loss over all unique
// transitions, batch by batch as training cuts them (in order).
func datasetLoss(pl *pool, tb *transitionBatches, sc *schedule) (float64, error) {
	var sum, w float64
	err := tb.epoch(sc, 0, -1, func(fill shardFill, _ int) error {
		l, bw, err := pl.run(fill, nil, true)
		sum += l
		w += bw
		return err
	})
	return sum / w, err
}

// scheduledEpoch runs one epoch of scheduled sampling: windows are processed
// in groups of the batch size (dealt to the shards as transitions are, see
// schedule), step by step through the window, one optimiser step per time
// step on the group's transitions (the batch size of teacher forcing); each
// window's input is the measured state with probability α and the model's
// own previous prediction otherwise, drawn in row order from the epoch's
// stream before the step. The gradient is one-step (predictions enter as
// constants). The samples come from rs, which gathers each step's from
// the processes that hold them when the arrays are on disk.
func scheduledEpoch(rs *rowStore, pl *pool, alpha float64, seed uint64, epoch int, step func(shardFill, int) error) error {
	ds := rs.ds
	ws := ds.Windows()
	sc := newSchedule(len(ws), pl)
	sc.orderShard(seed, epoch, 0)
	nx, ne := ds.StateDim(), ds.PortDim()
	L := ds.WindowLen
	if err := rs.hold(pl.comm, 1); err != nil {
		return err
	}
	pred := make([]float64, pl.batch*nx)
	measured := make([]bool, pl.batch)
	for g := range sc.batches() {
		n := sc.batchRows(g)
		for k := 0; k < L-1; k++ {
			for r := range n {
				measured[r] = k == 0 || sc.rng.Float64() < alpha
			}
			// the samples of step k of the group's windows
			err := sc.gather(rs, g, func(i int) (int, int, int) { return ws[i].Episode, ws[i].Start + k, ws[i].Start + k + 2 })
			if err != nil {
				return err
			}
			fill := func(s int, b *Batch) []float64 {
				lo, hi := sc.shardRows(g, s)
				b.N = hi - lo
				for i, wi := range sc.items(g, s) {
					w, r := ws[wi], lo+i
					t := w.Start + k
					if measured[r] {
						copy(b.X[i*nx:(i+1)*nx], rs.state(w.Episode, t))
					} else {
						copy(b.X[i*nx:(i+1)*nx], pred[r*nx:(r+1)*nx])
					}
					copy(b.XNext[i*nx:(i+1)*nx], rs.state(w.Episode, t+1))
					copy(b.E[i*ne:(i+1)*ne], rs.port(w.Episode, t))
					b.W[i] = 1
				}
				// the step also writes this step's predictions: the next inputs
				return pred[lo*nx : hi*nx]
			}
			if err := step(fill, n); err != nil {
				return err
			}
		}
	}
	return nil
}
