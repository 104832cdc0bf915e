package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/predictor"
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
			return nil
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

func newTrainCmd() *cobra.Command {
	var dataDir, valDir, kind, archPreset, hidden, out, ckpt string
	var layers, width int
	var resume bool
	cfg := trainer.DefaultConfig()
	w := trainer.LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Fc: 5}
	var quiet bool
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a CaLiSym model (gr, grb) or the MLP baseline on a dataset",
		Long: `train fits one model by one-step teacher forcing in FP64 on the windows of
--data and writes it to --out (.safetensors for CaLiSym, .json for the MLP).
With --checkpoint, a checkpoint is written every --checkpoint-every epochs;
--resume continues from it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			train, err := loadDataset(dataDir)
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
			if ckpt != "" {
				ms.Train.CheckpointPath = ckpt
				if _, err := os.Stat(ckpt); err == nil && !resume {
					return fmt.Errorf("checkpoint %s exists: pass --resume to continue from it or remove it", ckpt)
				}
			} else if resume {
				return errors.New("--resume needs --checkpoint")
			}
			if !quiet {
				ms.Train.Progress = cmd.ErrOrStderr()
			}
			l, err := experiment.NewLearner(ms, train)
			if err != nil {
				return err
			}
			v := train
			if valDir != "" {
				if v, err = loadDataset(valDir); err != nil {
					return err
				}
			}
			start := time.Now()
			hist, err := trainer.Train(cmd.Context(), l, train, v, ms.Train)
			if err != nil {
				return err
			}
			if err := saveLearner(l, out); err != nil {
				return err
			}
			last := hist.Epochs[len(hist.Epochs)-1]
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d params, final loss %.4g (val %.4g), %.1f s -> %s\n",
				l.Name(), l.NumParams(), last.Loss, last.ValLoss, time.Since(start).Seconds(), out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "", "training dataset directory (required)")
	f.StringVar(&valDir, "val", "", "validation dataset directory (default: the training set)")
	f.StringVar(&kind, "model", "grb", "model: gr, grb or mlp")
	f.StringVar(&archPreset, "arch", "pendulum", "architecture of a gr/grb model: a preset ("+presetList()+") or "+predictor.ArchGrammar+"; without --model it sets the kind")
	f.IntVar(&layers, "layers", 0, "override the preset's layer count")
	f.IntVar(&width, "width", 0, "override the preset's ridge width")
	f.StringVar(&hidden, "hidden", "96,96", "MLP hidden widths")
	f.StringVar(&out, "out", "model.safetensors", "output model file")
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
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "random seed")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "goroutines")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	f.Float64Var(&w.Q, "w-q", w.Q, "loss weight of q")
	f.Float64Var(&w.P, "w-p", w.P, "loss weight of p")
	f.Float64Var(&w.Sec, "w-sec", w.Sec, "section loss weight")
	f.Float64Var(&w.Mu, "w-mu", w.Mu, "control port weight")
	f.Float64Var(&w.Fc, "w-fc", w.Fc, "contact port weight")
	_ = cmd.MarkFlagRequired("data")
	return cmd
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
		return trainer.SaveMLP(path, v.Net)
	}
	return fmt.Errorf("cannot save %T", l)
}

func newEvalCmd() *cobra.Command {
	var modelPath, dataDir, horizons string
	var horizon, stride, maxWin int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Autoregressive evaluation of a saved model on a dataset",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := trainer.OpenModel(modelPath)
			if err != nil {
				return err
			}
			ds, err := loadDataset(dataDir)
			if err != nil {
				return err
			}
			if err := sv.CheckDataset(ds, dataDir); err != nil {
				return err
			}
			opt := trainer.EvalOptions{Horizon: horizon, Stride: stride, MaxWindows: maxWin}
			res, err := trainer.Evaluate(cmd.Context(), sv.Rollers, ds, opt)
			if err != nil {
				return err
			}
			hs, err := parseInts(horizons)
			if err != nil {
				return err
			}
			multi, err := trainer.MultiHorizon(cmd.Context(), sv.Rollers, ds, hs, opt)
			if err != nil {
				return err
			}
			res.PerStep = nil
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"model": modelPath, "kind": sv.Kind, "params": sv.Params, "data": dataDir,
					"ar_mse": res.MSE, "result": res, "multi_horizon": multi})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s (%s, %d params) on %s: AR MSE %.4g at horizon %d over %d windows (q %.4g, p %.4g, diverged %d)\n",
				modelPath, sv.Kind, sv.Params, dataDir, res.MSE, res.Horizon, res.Windows, res.MSEQ, res.MSEP, res.Diverged)
			for _, r := range multi {
				fmt.Fprintf(w, "  horizon %4d: %.4g\n", r.Horizon, r.MSE)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&modelPath, "model", "", "model file (.safetensors or MLP .json) (required)")
	f.StringVar(&dataDir, "data", "", "dataset directory (required)")
	f.IntVar(&horizon, "horizon", 200, "rollout horizon (steps)")
	f.StringVar(&horizons, "horizons", "5,10,25,50,100,200,400,800", "multi-horizon table (empty: none)")
	f.IntVar(&stride, "stride", 10, "spacing of rollout start points")
	f.IntVar(&maxWin, "max-windows", 0, "cap on rollout windows (0: all)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("model")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}
