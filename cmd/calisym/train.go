package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/outguard"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/predictor/kernel"
	"github.com/calisym/calisym/trainer"
)

func newSimCmd() *cobra.Command {
	var out, preset string
	var seed int64
	var withMCAP bool
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate the double-pendulum benchmark data (train, id, ood datasets)",
		Long: `sim integrates the controlled dissipative double pendulum of the paper
(DOP853, zero-order-hold sinusoidal torques, 100 Hz) and writes the train,
id and ood datasets (.npy arrays and meta.json) under --out.

With --mcap it also records every split as a ROS 2 MCAP log next to its
dataset (--out/train.mcap, …): sensor_msgs/JointState on /joint_states
(position q, velocity q̇, effort the torque) and std_msgs/Float64MultiArray
on /torque_command, stamped with the sample times. 'calisym convert
--params params/pendulum_sim.yaml' turns them back into the same windows.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, _, err := experiment.PendulumPreset(preset)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("seed") {
				data.Seed = seed
			}
			if err := data.Validate(); err != nil {
				return err
			}
			if err := outguard.CheckDir("--out", out, "sim"); err != nil {
				return fmt.Errorf("sim: %w", err)
			}
			for _, s := range data.Splits() {
				ds, trs, err := data.SimulateDataset(cmd.Context(), s)
				if err != nil {
					return err
				}
				dir := filepath.Join(out, ds.Split)
				if err := ds.Save(dir); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d episodes, %d windows -> %s\n", ds.Split, len(ds.Episodes), len(ds.Windows()), dir)
				if withMCAP {
					path := filepath.Join(out, ds.Split+".mcap")
					if err := experiment.WritePendulumMCAP(path, trs, nil); err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %d trajectories -> %s\n", ds.Split, len(trs), path)
				}
			}
			return outguard.Claim(out, "sim")
		},
	}
	cmd.Flags().StringVar(&out, "out", "out/pendulum-data", "output directory")
	cmd.Flags().StringVar(&preset, "preset", "default", fmt.Sprintf("data preset %v", experiment.PendulumPresetNames()))
	cmd.Flags().Int64Var(&seed, "seed", 1, "random seed of the simulation (splits use seed, seed+1, seed+2)")
	cmd.Flags().BoolVar(&withMCAP, "mcap", false, "also write each split as a ROS 2 MCAP log, --out/<split>.mcap")
	return cmd
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("bad integer list %q: %w", s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// trainOutputs refuses a model file or checkpoint that would overwrite or
// write into train's datasets, and a checkpoint that is the model file.
// A dataset named SHARDDIR/SPLIT that is not a folder is guarded by its
// SHARDDIR.
func trainOutputs(dataDir, valDir, ckpt, out string) error {
	var in []outguard.Path
	for _, d := range []outguard.Path{{Flag: "--data", Path: dataDir}, {Flag: "--val", Path: valDir}} {
		if d.Path == "" {
			continue
		}
		if fi, err := os.Stat(d.Path); err != nil || !fi.IsDir() {
			in = append(in, outguard.Path{Flag: d.Flag, Path: filepath.Dir(d.Path)})
		}
		in = append(in, d)
	}
	if err := outguard.Check(in, []outguard.Path{{Flag: "--checkpoint", Path: ckpt}, {Flag: "--out", Path: out}}); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

func newTrainCmd() *cobra.Command {
	var dataDir, valDir, kind, archPreset, hidden, out, ckpt string
	var layers, width int
	var resume bool
	cfg := trainer.DefaultConfig()
	w := trainer.LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Fc: 5}
	var timing bool
	var prog progressFlags
	var forecasterFor string
	var fitOpt trainer.ForecasterOptions
	var comm trainer.Comm // the MPI job's processes (nil: this one alone)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a CaLiSym model (gr, grb) or the MLP baseline on a dataset",
		Long: `train fits one model by one-step teacher forcing in FP64 on the windows of
--data and writes it to --out (.safetensors for CaLiSym, default
model.safetensors; .json for the MLP, default model.json).
With --forecaster MODEL it fits instead the learned port forecast of a
trained model (the node's forecast: learned): the next measured ports
of every step of the horizon regressed by ridge regression on the first
state and the first measured ports (a linear map per step; with
--forecaster-features F also F random tanh features of them, with
--forecaster-feedback on the state the rollout reaches instead), on
every window of --data, the penalty chosen by the model's AR MSE with
the forecaster in the loop on whole validation files, written to --out
(default MODEL.forecaster.json) bound to the model file, the dataset's
port map and layout; node, replay and eval refuse it with anything else.
--data and --val name a dataset directory, or a split of a sharded
conversion as DIR/SPLIT, where DIR holds the shards of 'convert --shard
i/N --out DIR': the split that 'convert --merge DIR' would write, the same
bits. Launched as N MPI processes, each reads and holds its 1/N of the
samples from the dataset's files, once, and receives the rest of each
batch's from the others. --timing prints where the epochs spent their
time per optimiser step.
With --checkpoint, a checkpoint is written every --checkpoint-every epochs;
--resume continues from it, on the same --data and with the same
settings: another dataset, or any setting that changes the result
(rates, batch, loss weights and units, architecture, seed, and --epochs
under the cosine schedule, whose length it is) is an error; the workers,
the processes and, under --schedule constant, --epochs may change.

Ctrl-C (SIGINT) or SIGTERM stops the run after the batch under way (and
the epoch's selection, if one is under way): with --checkpoint it saves
the run there, whatever --checkpoint-every, and prints the command that
resumes; the resumed run ends with the bits of an uninterrupted one.
Launched as several MPI processes (mpirun, srun), every process stops at
the same batch and the first saves the checkpoint; a second signal does
not cut the save short there (the launcher's own time limit ends the
job: Open MPI's mpirun waits about a second after Ctrl-C, more with
--mca odls_base_sigkill_timeout N; scancel waits Slurm's KillWait, 30 s
by default).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			progress, err := prog.writer(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if forecasterFor != "" {
				return fitForecaster(cmd, forecasterFor, dataDir, out, fitOpt)
			}
			if err := checkTrainFlags(cfg, w); err != nil {
				return err
			}
			if err := trainOutputs(dataDir, valDir, ckpt, out); err != nil {
				return err
			}
			// One of several processes leaves the arrays on disk and holds
			// its 1/N of the samples (trainer's rowStore).
			lazy := comm != nil && comm.Size() > 1
			train, err := readDataset(dataDir, lazy)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("model") && cmd.Flags().Changed("arch") {
				// --arch alone names the kind: --arch gr:18x66 trains a GR-SympNet.
				if a, _, err := predictor.ResolveArch(archPreset); err == nil {
					kind = string(a.Kind)
				}
			}
			ms := experiment.ModelSpec{Name: kind, Kind: kind, Loss: w, Train: cfg}
			switch kind {
			case "mlp":
				ms.Name = "MLP"
				if ms.Hidden, err = parseInts(hidden); err != nil {
					return err
				}
			case "gr", "grb":
				ms.Name = "CaLiSym-" + strings.ToUpper(kind)
				if ms.Arch, err = trainArch(archPreset, kind); err != nil {
					return err
				}
				if layers > 0 {
					ms.Arch.Layers = layers
				}
				if width > 0 {
					ms.Arch.Width = width
				}
			default:
				return fmt.Errorf("unknown --model %q (want gr, grb or mlp)", kind)
			}
			if out, err = modelOut(kind, out); err != nil {
				return err
			}
			if err := trainOutputs(dataDir, valDir, ckpt, out); err != nil {
				return err
			}
			if ckpt != "" {
				ms.Train.CheckpointPath = ckpt
				_, err := os.Stat(ckpt)
				switch {
				case err == nil && !resume:
					return fmt.Errorf("checkpoint %s exists: pass --resume to continue from it or remove it", ckpt)
				case errors.Is(err, fs.ErrNotExist) && resume:
					return fmt.Errorf("--resume: checkpoint %s does not exist, so there is no run to continue: check the path, or drop --resume to start afresh (the checkpoint is then written there)", ckpt)
				case err != nil && !errors.Is(err, fs.ErrNotExist):
					return fmt.Errorf("checkpoint: %w", err)
				}
			} else if resume {
				return errors.New("--resume needs --checkpoint")
			}
			ms.Train.Progress = progress
			// Over MPI, every process trains the same model; the first
			// shows progress and writes the model.
			ms.Train.Comm = comm
			first := comm == nil || comm.Rank() == 0
			if !first {
				ms.Train.Progress = nil
			}
			l, err := experiment.NewLearner(ms, train)
			if err != nil {
				return err
			}
			v := train
			if valDir != "" {
				if v, err = readDataset(valDir, lazy); err != nil {
					return err
				}
			}
			start := time.Now()
			ctx := cmd.Context()
			again := "Ctrl-C again quits at once"
			if comm != nil {
				// the launcher ends the job if the processes do not
				again = "every process stops at the same batch"
			}
			notice := "interrupted: stopping after the batch under way; nothing will be saved without --checkpoint (" + again + ")"
			if ckpt != "" {
				notice = "interrupted: stopping after the batch under way to save the checkpoint " + ckpt + " (" + again + ", without saving it)"
				if comm != nil {
					notice = "interrupted: stopping after the batch under way to save the checkpoint " + ckpt + " (" + again + ")"
				}
			}
			noticed := make(chan struct{})
			stopNotice := context.AfterFunc(ctx, func() {
				if first {
					fmt.Fprintln(cmd.ErrOrStderr(), "calisym train:", notice)
				}
				close(noticed)
			})
			if timing {
				ms.Train.Phases = &trainer.Phases{}
			}
			hist, err := trainer.Train(ctx, l, train, v, ms.Train)
			if !stopNotice() {
				<-noticed
			}
			if timing {
				who := ""
				if comm != nil {
					who = fmt.Sprintf(" (process %d of %d)", comm.Rank(), comm.Size())
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "calisym train: time%s: %s\n", who, ms.Train.Phases)
			}
			var ie *trainer.Interrupted
			if errors.As(err, &ie) {
				return interruptedError(cmd, err, ie, out)
			}
			if err != nil {
				return err
			}
			if !first {
				return nil
			}
			if err := saveLearner(l, out); err != nil {
				return err
			}
			last := hist.Epochs[len(hist.Epochs)-1]
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d params, final loss %.4g (val %.4g), %.1f s on the %s kernels -> %s\n",
				l.Name(), l.NumParams(), last.Loss, last.ValLoss, time.Since(start).Seconds(), kernel.Active(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "", "training dataset directory, or SHARDDIR/SPLIT: a split of the shards of convert --shard (required)")
	f.StringVar(&valDir, "val", "", "validation dataset directory or SHARDDIR/SPLIT (default: the training set)")
	f.StringVar(&kind, "model", "grb", "model: gr, grb or mlp")
	f.StringVar(&archPreset, "arch", "pendulum", "architecture of a gr/grb model: a preset ("+presetList()+") or "+predictor.ArchGrammar+"; without --model it sets the kind")
	f.IntVar(&layers, "layers", 0, "override the preset's layer count")
	f.IntVar(&width, "width", 0, "override the preset's ridge width")
	f.StringVar(&hidden, "hidden", "96,96", "MLP hidden widths")
	f.StringVar(&out, "out", "", "output model file (default model.safetensors, or model.json for --model mlp)")
	f.StringVar(&ckpt, "checkpoint", "", "checkpoint file")
	f.BoolVar(&resume, "resume", false, "resume from --checkpoint")
	f.IntVar(&cfg.CheckpointEvery, "checkpoint-every", 10, "epochs between checkpoints")
	f.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "epochs")
	f.IntVar(&cfg.BatchSize, "batch", cfg.BatchSize, "batch size")
	f.StringVar(&cfg.Optimizer, "optimizer", cfg.Optimizer, "adamw or muon")
	f.Float64Var(&cfg.LR, "lr", cfg.LR, "learning rate")
	f.Float64Var(&cfg.MuonLR, "muon-lr", 0, "Muon learning rate for matrices (0: --lr)")
	f.Float64Var(&cfg.WeightDecay, "wd", cfg.WeightDecay, "weight decay")
	f.Float64Var(&cfg.Clip, "clip", cfg.Clip, "gradient clipping (global norm)")
	f.StringVar(&cfg.Schedule, "schedule", cfg.Schedule, "learning-rate schedule: cosine or constant")
	f.IntVar(&cfg.AlphaHold, "alpha-hold", 0, "epochs of pure teacher forcing before the α ramp")
	f.IntVar(&cfg.AlphaRamp, "alpha-ramp", 0, "epochs of the α ramp")
	f.Float64Var(&cfg.AlphaFinal, "alpha-final", 1, "final teacher-forcing probability α (1: always teacher forcing)")
	f.IntVar(&cfg.RolloutSteps, "rollout-steps", 0, "multi-step training: train on rollouts of up to this many steps, gradients through every step (0 or 1: one-step teacher forcing)")
	f.IntVar(&cfg.RolloutFrom, "rollout-from", 0, "first epoch of multi-step training")
	f.IntVar(&cfg.RolloutRamp, "rollout-ramp", 0, "epochs over which the rollout length grows from 2 to --rollout-steps")
	f.IntVar(&cfg.RolloutBatch, "rollout-batch", 0, "rollout sequences per optimiser step (0: --batch / steps, at least 64)")
	f.IntVar(&cfg.SelectHorizon, "select-horizon", 0, "end with the epoch of lowest AR MSE at this horizon on --val (0: the last epoch)")
	f.IntVar(&cfg.SelectFrom, "select-from", 0, "first epoch --select-horizon may pick")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "goroutines (the result does not depend on them, nor on the MPI processes)")
	prog.add(f)
	f.BoolVar(&timing, "timing", false, "print on stderr, at the end, where the epochs spent their time per optimiser step (every process of an MPI job its own)")
	f.Float64Var(&w.Q, "w-q", w.Q, "loss weight of q")
	f.Float64Var(&w.P, "w-p", w.P, "loss weight of p")
	f.Float64Var(&w.Sec, "w-sec", w.Sec, "section loss weight")
	f.Float64Var(&w.Mu, "w-mu", w.Mu, "control port weight")
	f.Float64Var(&w.Fc, "w-fc", w.Fc, "contact port weight")
	f.Float64Var(&w.StepDecay, "rollout-decay", 0, "weigh step k of a multi-step loss by (k+1)^-decay (0: all steps alike)")
	f.Float64Var(&w.Units, "loss-units", 0, "state loss from normalised (0) towards physical units (1: the units of the reported AR MSE)")
	f.StringVar(&forecasterFor, "forecaster", "", "fit the port forecast of this model file instead (forecast: learned; see docs/live-prediction.md): the measured ports of every step regressed on the first state and ports, on --data; --out defaults to MODEL.forecaster.json")
	f.IntVar(&fitOpt.Features, "forecaster-features", 0, "with --forecaster: random tanh features of the regression (0: a linear policy, the default)")
	f.BoolVar(&fitOpt.Feedback, "forecaster-feedback", false, "with --forecaster: the ports of each step from the state the rollout reached, the first state and the first ports (state feedback) instead of from the first state and ports alone (open loop, the default)")
	_ = cmd.MarkFlagRequired("data")
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, finish, err := openComm(cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		comm = c
		err = run(cmd, args)
		if ie := (*trainer.Interrupted)(nil); comm != nil && errors.As(err, &ie) {
			// The launcher may end the job while its processes finish
			// (mpirun kills them a second after Ctrl-C): the first
			// process says now what was saved and how to resume, once.
			if comm.Rank() == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "calisym:", err)
			}
			err = &reportedError{err}
		}
		return finish(err)
	}
	return cmd
}

// checkTrainFlags reports a training flag outside its range, naming the
// flag, the range and the value, before any data are read.
func checkTrainFlags(cfg trainer.Config, w trainer.LossWeights) error {
	inf := math.Inf(1)
	checks := []error{
		intIn("epochs", cfg.Epochs, 1, -1, ""),
		intIn("batch", cfg.BatchSize, 1, -1, ""),
		intIn("checkpoint-every", cfg.CheckpointEvery, 0, -1, "0: only when the run ends or is interrupted"),
		floatAbove("lr", cfg.LR, 0),
		floatIn("muon-lr", cfg.MuonLR, 0, inf),
		floatIn("wd", cfg.WeightDecay, 0, inf),
		floatIn("clip", cfg.Clip, 0, inf),
		intIn("alpha-hold", cfg.AlphaHold, 0, -1, ""),
		intIn("alpha-ramp", cfg.AlphaRamp, 0, -1, ""),
		floatIn("alpha-final", cfg.AlphaFinal, 0, 1),
		intIn("rollout-steps", cfg.RolloutSteps, 0, -1, ""),
		intIn("rollout-from", cfg.RolloutFrom, 0, -1, ""),
		intIn("rollout-ramp", cfg.RolloutRamp, 0, -1, ""),
		intIn("rollout-batch", cfg.RolloutBatch, 0, -1, ""),
		intIn("select-horizon", cfg.SelectHorizon, 0, -1, ""),
		intIn("select-from", cfg.SelectFrom, 0, cfg.Epochs, fmt.Sprintf("the epoch must be one of the run's --epochs %d", cfg.Epochs)),
		floatIn("w-q", w.Q, 0, inf),
		floatIn("w-p", w.P, 0, inf),
		floatIn("w-sec", w.Sec, 0, inf),
		floatIn("w-mu", w.Mu, 0, inf),
		floatIn("w-fc", w.Fc, 0, inf),
		floatIn("rollout-decay", w.StepDecay, 0, inf),
		floatIn("loss-units", w.Units, 0, 1),
	}
	for _, err := range checks {
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	if cfg.SelectFrom > 0 && cfg.SelectHorizon == 0 {
		return fmt.Errorf("train: --select-from %d needs --select-horizon (the horizon whose validation AR MSE picks the epoch)", cfg.SelectFrom)
	}
	return nil
}

// modelOut returns the model file train writes for a model kind: out, or
// the kind's default name when out is empty. OpenModel reads an MLP by its
// content, but other tools go by the name, so an MLP must be .json and a
// CaLiSym model must not be.
func modelOut(kind, out string) (string, error) {
	isJSON := strings.HasSuffix(strings.ToLower(out), ".json")
	switch {
	case out == "" && kind == "mlp":
		return "model.json", nil
	case out == "":
		return "model.safetensors", nil
	case kind == "mlp" && !isJSON:
		return "", fmt.Errorf("--out %s: the MLP baseline is saved as JSON; name the file *.json (e.g. %s)", out, strings.TrimSuffix(out, filepath.Ext(out))+".json")
	case kind != "mlp" && isJSON:
		return "", fmt.Errorf("--out %s: a CaLiSym model is saved as safetensors; name the file *.safetensors (e.g. %s)", out, strings.TrimSuffix(out, filepath.Ext(out))+".safetensors")
	}
	return out, nil
}

// interruptedError says what an interrupted training run saved and how to
// resume it. err is Train's error, ie the *trainer.Interrupted in it; the
// result wraps err.
func interruptedError(cmd *cobra.Command, err error, ie *trainer.Interrupted, out string) error {
	notWritten := fmt.Sprintf("the model file %s is written only when training completes", out)
	var msg string
	switch {
	case ie.Checkpoint != "":
		msg = fmt.Sprintf("training interrupted %s: checkpoint %s holds the run there (%s). Resume with\n  %s",
			ie.Where(), ie.Checkpoint, notWritten, resumeCommand(cmd))
	case ie.Done == 0 && ie.Batches == 0:
		msg = fmt.Sprintf("training interrupted before its first epoch completed: nothing to save (%s); run the same command again to start afresh", notWritten)
	case cmd.Flags().Changed("checkpoint"):
		return fmt.Errorf("training interrupted %s, and saving the checkpoint failed (%s): %w", ie.Where(), notWritten, err)
	default:
		msg = fmt.Sprintf("training interrupted %s: nothing was saved (%s); to be able to resume an interrupted run, train with --checkpoint FILE",
			ie.Where(), notWritten)
	}
	return &explainedError{msg: msg, err: err}
}

// reportedError is an error the command has already reported: main
// exits non-zero without printing it again.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// explainedError replaces the message of an error for the user and keeps
// it for errors.Is and errors.As.
type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }

// resumeCommand is the command line that resumes the run cmd started: its
// flags as the user gave them, and --resume.
func resumeCommand(cmd *cobra.Command) string {
	args := []string{"calisym", cmd.Name()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name == "resume" {
			return
		}
		if f.Value.Type() == "bool" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
			return
		}
		args = append(args, "--"+f.Name, shellQuote(f.Value.String()))
	})
	return strings.Join(append(args, "--resume"), " ")
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// trainArch resolves --arch for a model of the given kind (gr or grb).
func trainArch(arch, kind string) (predictor.Arch, error) {
	a, _, err := predictor.ResolveArch(arch)
	if err != nil {
		return a, err
	}
	if string(a.Kind) != kind {
		var fit []string
		for _, name := range predictor.PresetNames() {
			if p, _ := predictor.LookupPreset(name); string(p.Arch.Kind) == kind {
				fit = append(fit, name)
			}
		}
		return a, fmt.Errorf("--arch %s is a %s architecture but --model is %s: leave out --model, or give a %s architecture (preset %s, or %s:LAYERSxWIDTH)",
			arch, a.Kind, kind, kind, strings.Join(fit, ", "), kind)
	}
	return a, nil
}

// presetList names the presets with their descriptions:
// "pendulum = grb:12x8:m2, quadrotor = gr:14x36, …".
func presetList() string {
	var s []string
	for _, name := range predictor.PresetNames() {
		p, _ := predictor.LookupPreset(name)
		d, _ := p.Arch.Description()
		s = append(s, name+" = "+d)
	}
	return strings.Join(s, ", ")
}

// saveLearner writes a trained model.
func saveLearner(l trainer.Learner, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	switch v := l.(type) {
	case *trainer.Symplectic:
		m := v.Model()
		m.Meta.Name = l.Name()
		m.Meta.Created = time.Now().UTC().Format(time.RFC3339)
		return m.Save(path)
	case *trainer.MLP:
		return v.Save(path)
	}
	return fmt.Errorf("cannot save %T", l)
}

func newEvalCmd() *cobra.Command {
	var modelPath, dataDir, horizons, force, wrench, fcKind, fcPath string
	var horizon, stride, maxWin int
	var twin float64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Autoregressive evaluation of a saved model on a dataset",
		Long: `eval rolls a saved model (CaLiSym .safetensors or MLP .json) out from the
windows of --data and prints its autoregressive MSE at --horizon and at
each of --horizons, beside the state held constant (x̂_k = x_0) on the
same windows: the reference every model has to beat.

The dataset must have the model's dimensions and, where both record them,
its coordinate and port names. Without --horizon and --horizons, horizons
longer than the dataset's episodes allow (window-stored data hold one
window per episode) are left out, with a note; given explicitly, they are
an error that names the longest horizon the data allow.

--force W,λ makes the model's rollouts offset-free, as the node's
force_estimate does: the mean of the model's last W one-step momentum
residuals before each window (from the samples before it in its log;
none at a log's start) is added to the predicted momenta, times λ^(k−1)
at step k.

--wrench W,z[,λ[,B]] makes them offset-free by an external wrench on a
floating base, as the node's wrench_estimate does: the model's one-step
residuals of the six base momenta over the last W samples before each
window, in a world frame, each component kept as far as its mean stands
out of its standard error over B blocks (gate z), translate the
predicted base momenta, times λ^(k−1) at step k (defaults λ 1, B 8).
Each sample the estimator is fed recomputes its statistics over the
window; each window start feeds it only the samples since the previous
one's in the same log (the same bits as feeding it the W samples afresh,
some W/stride times the work).
--force and --wrench exclude each other.

--forecast hold|learned scores what the live node publishes, beside the
logged ports: every window starts from its first sample's measured
ports and the port history of the samples before it in its log, and the
ports of each later step are the node's forecast: the first ports held
(hold), or the learned forecaster in the loop (learned: the next
measured ports from the predicted state, the first state and the first
ports; --forecaster FILE, default MODEL.forecaster.json, fitted by
'calisym train --forecaster MODEL'), the same predictions the node
would publish from that sample, bit for bit. The default, logged, rolls
out with the ports the robot actually applied (a planner's case).

--twin S asks how much of the error at each horizon errors of the
model's own one-step size explain: with the model standing in for the
exact dynamics, its rollouts with every predicted state perturbed by S
times its root mean square one-step residual on --data (per coordinate;
mean of seeds 1–3) are scored against its unperturbed rollouts, beside
the model against the logs (trainer.Twin). Where the twin's error comes
near the model's, errors of the model's one-step size, amplified by the
dynamics, make it; a lower error there needs a smaller one-step error.
The residual's lag-1 autocorrelation is printed too: near 1 it drifts
smoothly (a model error or a slow disturbance), and the twin is the
error such steps make; near 0 or below it is mostly the logs' noise,
which a rollout does not accumulate, and the twin overstates it (it
may come out above the model's own error).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, ds, err := openModelData(cmd, modelPath, dataDir)
			if err != nil {
				return err
			}
			hs, err := parseInts(horizons)
			if err != nil {
				return err
			}
			f := cmd.Flags()
			if horizon, hs, err = fitHorizons(ds, dataDir, horizon, f.Changed("horizon"), hs, f.Changed("horizons"), cmd.ErrOrStderr()); err != nil {
				return err
			}
			ctx := cmd.Context()
			opt := trainer.EvalOptions{Horizon: horizon, Stride: stride, MaxWindows: maxWin}
			hold, err := trainer.Evaluate(ctx, trainer.HoldRollers, ds, opt)
			if err != nil {
				return err
			}
			holdMulti, err := trainer.MultiHorizon(ctx, trainer.HoldRollers, ds, hs, opt)
			if err != nil {
				return err
			}
			if force != "" {
				if opt.Force, err = parseForce(force); err != nil {
					return fmt.Errorf("eval: --force: %w", err)
				}
			}
			if wrench != "" {
				if force != "" {
					return errors.New("eval: --force and --wrench: choose one")
				}
				if opt.Wrench, err = parseWrench(wrench); err != nil {
					return fmt.Errorf("eval: --wrench: %w", err)
				}
				if _, err := trainer.WrenchBase(ds.Coordinates); err != nil {
					return fmt.Errorf("eval: --wrench: %s: %w", dataDir, err)
				}
			}
			fc, err := evalForecast(fcKind, fcPath, modelPath, ds)
			if err != nil {
				return fmt.Errorf("eval: %w", err)
			}
			res, err := trainer.Evaluate(ctx, sv.Rollers, ds, opt)
			if err != nil {
				return err
			}
			multi, err := trainer.MultiHorizon(ctx, sv.Rollers, ds, hs, opt)
			if err != nil {
				return err
			}
			var live *liveEval
			if fc != nil {
				if live, err = evalLive(ctx, sv.Rollers, ds, opt, fc, hs); err != nil {
					return err
				}
			}
			var twinRep *twinReport
			if f.Changed("twin") {
				if !(twin > 0 && twin <= maxTwinScale) {
					return fmt.Errorf("eval: --twin %v: want a positive scale of the one-step residual up to %g (1: its size)", twin, maxTwinScale)
				}
				if opt.Force != nil || opt.Wrench != nil {
					return errors.New("eval: --twin scores the model's own rollouts: without --force or --wrench")
				}
				if twinRep, err = evalTwin(ctx, sv.Rollers, ds, opt, twin, append(slices.Clone(hs), horizon)); err != nil {
					return fmt.Errorf("eval: --twin: %w", err)
				}
			}
			res.PerStep, hold.PerStep = nil, nil
			for i := range multi {
				multi[i].PerFile, holdMulti[i].PerFile = nil, nil
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"model": modelPath, "kind": sv.Kind, "params": sv.Params, "data": dataDir, "force_estimate": opt.Force, "wrench_estimate": opt.Wrench,
					"ar_mse": res.MSE, "result": res, "multi_horizon": multi,
					"hold_ar_mse": hold.MSE, "hold": hold, "hold_multi_horizon": holdMulti, "twin": twinRep,
					"forecast": fcKind, "live": live})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s (%s, %d params) on %s: AR MSE %.4g at horizon %d over %d windows (q %.4g, p %.4g, diverged %d)\n",
				modelPath, sv.Kind, sv.Params, dataDir, res.MSE, res.Horizon, res.Windows, res.MSEQ, res.MSEP, res.Diverged)
			if opt.Force != nil {
				fmt.Fprintf(w, "rollouts offset-free (force estimate: %s)\n", opt.Force)
			}
			if opt.Wrench != nil {
				fmt.Fprintf(w, "rollouts offset-free (wrench estimate: %s)\n", opt.Wrench)
			}
			fmt.Fprintf(w, "state held constant (x̂_k = x_0, the reference to beat): AR MSE %.4g (q %.4g, p %.4g)\n", hold.MSE, hold.MSEQ, hold.MSEP)
			if b, ok := res.Split(trainer.BaseCoordinates(ds.Coordinates)); ok {
				hb, _ := hold.Split(trainer.BaseCoordinates(ds.Coordinates))
				fmt.Fprintf(w, "base: q %.4g, p %.4g; joints: q %.4g, p %.4g; the base holds %.1f%% of the squared error (held state: %.1f%%)\n",
					b.BaseQ, b.BaseP, b.JointQ, b.JointP, 100*b.BaseShare, 100*hb.BaseShare)
			}
			if len(res.PerFile) > 1 {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "file\twindows\tAR MSE\tq\tp\tstate held constant\t")
				for i, f := range res.PerFile {
					fmt.Fprintf(tw, "%s\t%d\t%.4g\t%.4g\t%.4g\t%.4g\t\n", f.File, f.Windows, f.MSE, f.MSEQ, f.MSEP, hold.PerFile[i].MSE)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if live != nil {
				fmt.Fprintf(w, "live (the node's forecast: %s): AR MSE %.4g at horizon %d (q %.4g, p %.4g, diverged %d); with the logged ports (a planner's case) %.4g\n",
					fcKind, live.Result.MSE, live.Result.Horizon, live.Result.MSEQ, live.Result.MSEP, live.Result.Diverged, res.MSE)
			}
			if len(multi) > 0 {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				if live != nil {
					fmt.Fprintf(tw, "horizon\tmodel, logged ports\tmodel, live (%s)\tstate held constant\t\n", fcKind)
				} else {
					fmt.Fprintln(tw, "horizon\tmodel\tstate held constant\t")
				}
				for i, r := range multi {
					if live != nil {
						fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t\n", r.Horizon, r.MSE, live.MultiHorizon[i].MSE, holdMulti[i].MSE)
						continue
					}
					fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t\n", r.Horizon, r.MSE, holdMulti[i].MSE)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if twinRep != nil {
				return twinRep.print(w, res, multi)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&modelPath, "model", "", "model file (.safetensors or MLP .json) (required)")
	f.StringVar(&dataDir, "data", "", "dataset directory (required)")
	f.IntVar(&horizon, "horizon", 200, "rollout horizon (steps; by default at most what the episodes allow)")
	f.StringVar(&horizons, "horizons", "5,10,25,50,100,200,400,800", "multi-horizon table (empty: none; by default those the episodes allow)")
	f.IntVar(&stride, "stride", 10, "spacing of rollout start points")
	f.IntVar(&maxWin, "max-windows", 0, "cap on rollout windows (0: all)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&force, "force", "", "offset-free rollouts: the force estimate's window and decay (\"10,0.9\"; empty: off)")
	f.StringVar(&wrench, "wrench", "", "offset-free rollouts of a floating base: "+wrenchFlagHelp+"; empty: off")
	f.StringVar(&fcKind, "forecast", forecast.KindLogged, "the ports over the horizon: logged (the log's, a planner's case), hold (the first ports held, the node's hold forecast) or learned (the forecaster in the loop, the node's learned forecast); hold and learned are printed beside the logged ports")
	f.StringVar(&fcPath, "forecaster", "", "with --forecast learned: the forecaster file (default MODEL.forecaster.json)")
	f.Float64Var(&twin, "twin", 0, "also score the model against itself with every step perturbed by this multiple of its one-step residual (1: its size; see above)")
	_ = cmd.MarkFlagRequired("model")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// parseForce reads a force estimate's "window,decay" ("10,0.9").
func parseForce(s string) (*predictor.ForceEstimate, error) {
	w, d, ok := strings.Cut(s, ",")
	if !ok {
		return nil, fmt.Errorf("%q: want window,decay (10,0.9)", s)
	}
	var fe predictor.ForceEstimate
	var err error
	if fe.Window, err = strconv.Atoi(strings.TrimSpace(w)); err != nil {
		return nil, fmt.Errorf("%q: window: %w", s, err)
	}
	if fe.Decay, err = strconv.ParseFloat(strings.TrimSpace(d), 64); err != nil {
		return nil, fmt.Errorf("%q: decay: %w", s, err)
	}
	if err := fe.Check(); err != nil {
		return nil, err
	}
	return &fe, nil
}

// fitHorizons fits eval's horizons to a dataset whose longest episode
// allows rollouts of at most its length − 1 steps. Default horizons that
// do not fit are shortened or left out, with a note on w; horizons the
// user gave that do not fit are an error naming what to pass instead.
func fitHorizons(ds *dataset.Dataset, dir string, horizon int, horizonSet bool, hs []int, horizonsSet bool, w io.Writer) (int, []int, error) {
	longest := 0
	for _, ep := range ds.Episodes {
		longest = max(longest, ep.Len)
	}
	maxH := longest - 1
	if maxH < 1 {
		return 0, nil, fmt.Errorf("dataset %s has no episode of 2 samples or more: nothing to roll out", dir)
	}
	why := fmt.Sprintf("the longest episode of %s has %d samples, so rollouts can be at most %d steps", dir, longest, maxH)
	if !slices.ContainsFunc(ds.Episodes, func(ep dataset.Episode) bool { return ep.Len != ds.WindowLen }) {
		why += fmt.Sprintf(" (the data are stored one window of %d samples per episode)", ds.WindowLen)
	}
	if horizon > maxH {
		if horizonSet {
			return 0, nil, fmt.Errorf("--horizon %d is too long: %s; pass --horizon %d or less", horizon, why, maxH)
		}
		fmt.Fprintf(w, "calisym eval: %s: evaluating at horizon %d instead of the default %d\n", why, maxH, horizon)
		horizon = maxH
	}
	var fit, long []int
	for _, h := range hs {
		if h > maxH {
			long = append(long, h)
		} else {
			fit = append(fit, h)
		}
	}
	if len(long) > 0 {
		if horizonsSet {
			pass := "--horizons " + joinInts(fit)
			if len(fit) == 0 {
				pass = fmt.Sprintf("horizons of at most %d steps, e.g. --horizons %d", maxH, maxH)
			}
			return 0, nil, fmt.Errorf("--horizons %s too long: %s; pass %s", joinInts(long), why, pass)
		}
		fmt.Fprintf(w, "calisym eval: %s: the multi-horizon table leaves out horizons %s\n", why, joinInts(long))
	}
	return horizon, fit, nil
}

// joinInts writes a list of integers as eval's flags take them.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// twinReport is eval --twin's result: the model's own rollouts with every
// step perturbed by Scale × its one-step residual Sigma, scored against
// its unperturbed ones (trainer.Twin, seeds 1–3), at each horizon.
type twinReport struct {
	Scale float64   `json:"scale"`
	Sigma []float64 `json:"sigma"`
	// Autocorr is NaN for a coordinate the model predicts exactly, null
	// in JSON.
	Autocorr nanNull     `json:"residual_autocorrelation"`
	Horizons []twinPoint `json:"multi_horizon"`
}

// nanNull is a list of numbers whose NaNs JSON writes as null (and reads
// back as NaN).
type nanNull []float64

// MarshalJSON implements json.Marshaler.
func (v nanNull) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(v))
	for i := range v {
		if !math.IsNaN(v[i]) {
			out[i] = &v[i]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *nanNull) UnmarshalJSON(b []byte) error {
	var in []*float64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*v = make(nanNull, len(in))
	for i, p := range in {
		(*v)[i] = math.NaN()
		if p != nil {
			(*v)[i] = *p
		}
	}
	return nil
}

// twinPoint is the twin's AR MSE at one horizon over the seeds.
type twinPoint struct {
	Horizon int     `json:"horizon"`
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
}

// evalTwin measures eval --twin on ds at the horizons hs (each once).
func evalTwin(ctx context.Context, rollers trainer.RollerFactory, ds *dataset.Dataset, opt trainer.EvalOptions, scale float64, hs []int) (*twinReport, error) {
	rep := &twinReport{Scale: scale}
	var err error
	if rep.Sigma, rep.Autocorr, err = trainer.OneStepResidual(ctx, rollers, ds); err != nil {
		return nil, err
	}
	sigma := make([]float64, len(rep.Sigma))
	for j, v := range rep.Sigma {
		sigma[j] = scale * v
	}
	slices.Sort(hs)
	for _, h := range slices.Compact(hs) {
		p := twinPoint{Horizon: h, Min: math.Inf(1), Max: math.Inf(-1)}
		rs, err := trainer.TwinSeeds(ctx, rollers, ds, trainer.TwinOptions{Horizon: h, Stride: opt.Stride, MaxWindows: opt.MaxWindows, Sigma: sigma, EveryStep: true}, []uint64{1, 2, 3}, cmp.Or(opt.Workers, 2))
		if err != nil {
			return nil, fmt.Errorf("horizon %d: %w", h, err)
		}
		for _, r := range rs {
			p.Mean += r.MSE / 3
			p.Min, p.Max = min(p.Min, r.MSE), max(p.Max, r.MSE)
		}
		rep.Horizons = append(rep.Horizons, p)
	}
	return rep, nil
}

// print writes the twin's table beside the model's errors against the
// logs (res at its horizon, multi at the others).
// maxTwinScale bounds eval --twin: perturbations a thousand times the
// one-step residual already swamp any model; far larger ones overflow
// (--twin 1e300 gave +Inf).
const maxTwinScale = 1000.0

func (t *twinReport) print(w io.Writer, res trainer.EvalResult, multi []trainer.EvalResult) error {
	fmt.Fprintf(w, "twin: the model as the exact dynamics, every step off by %g × its one-step residual σ = %.3g (lag-1 autocorrelation %.3f; near 1: a drifting error, near 0 or below: noise), against its own rollouts, mean [min, max] of seeds 1–3:\n", t.Scale, t.Sigma, t.Autocorr)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "horizon\tmodel\ttwin\t")
	for _, p := range t.Horizons {
		model := math.NaN()
		if p.Horizon == res.Horizon {
			model = res.MSE
		}
		for _, r := range multi {
			if r.Horizon == p.Horizon {
				model = r.MSE
			}
		}
		fmt.Fprintf(tw, "%d\t%.4g\t%.4g [%.4g, %.4g]\t\n", p.Horizon, model, p.Mean, p.Min, p.Max)
	}
	return tw.Flush()
}
