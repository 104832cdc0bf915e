package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/outguard"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/mpc"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/plot"
)

// mpcPreset sizes the MPC example.
type mpcPreset struct {
	trajectories int // training trajectories of 10 s
	epochs       int
	layers       int // GRB layers (0: the pendulum preset's 12)
	steps        int // closed-loop control steps
	iters        int // iLQR iterations per control step
	trueModel    bool
}

var mpcPresets = map[string]mpcPreset{
	"smoke":   {trajectories: 16, epochs: 6, layers: 4, steps: 60, iters: 3, trueModel: false},
	"default": {trajectories: 80, epochs: 60, steps: 100, iters: 5, trueModel: true},
}

// mpcDt is the sample and control period of the example [s].
const mpcDt = 0.05

// mpcTarget is the set angle (q1, q2) [rad] the controller holds.
var mpcTarget = [2]float64{0.4, -0.2}

// mpcRun is one closed loop in the report.
type mpcRun struct {
	Model string `json:"model"`
	// RMSAngleError is the RMS of q − q* over the whole run, FinalRMS over
	// its last second (the steady state) [rad].
	RMSAngleError float64 `json:"rms_angle_error_rad"`
	FinalRMS      float64 `json:"final_rms_angle_error_rad"`
	// SolveMs are the mean and largest wall time of one control step's
	// solve [ms], SolveCPUMeanMs the mean CPU time of the thread that
	// solved it (other work on the machine left out); Iterations the mean
	// iLQR iterations.
	SolveMeanMs    float64 `json:"solve_mean_ms"`
	SolveMaxMs     float64 `json:"solve_max_ms"`
	SolveCPUMeanMs float64 `json:"solve_cpu_mean_ms"`
	Iterations     float64 `json:"iterations_mean"`

	trace *mpc.Trace
}

// mpcReport is what `calisym mpc` writes to report.json.
type mpcReport struct {
	Preset       string     `json:"preset"`
	Model        string     `json:"model_file"`
	Dt           float64    `json:"dt_s"`
	Horizon      int        `json:"horizon_steps"`
	Target       [2]float64 `json:"target_q_rad"`
	Steps        int        `json:"control_steps"`
	Runs         []mpcRun   `json:"runs"`
	Uncontrolled float64    `json:"uncontrolled_rms_angle_error_rad"`
}

func newMPCCmd() *cobra.Command {
	var out, preset, modelPath string
	var horizon, steps int
	var quiet bool
	cmd := &cobra.Command{
		Use:   "mpc",
		Short: "Model-predictive control of the simulated double pendulum with a learned model's Jacobians",
		Long: `mpc drives the simulated double pendulum (the demo's, with its true dynamics
and damping, DOP853) from rest to the set angle q* = (0.4, -0.2) rad and
holds it there, with an iLQR controller that re-plans every 50 ms over a
short horizon using a learned GRB model's rollout Jacobians. Without
--model it first simulates training data (low energies, random sinusoidal
torques, 20 Hz) and trains the model. With the default preset it also runs
the same controller on the true model (the simulator differentiated by
central differences) for comparison. It writes report.json, trace.csv
and mpc.png into --out.

Presets: smoke (seconds, for tests), default (a few minutes).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ps, ok := mpcPresets[preset]
			if !ok {
				return fmt.Errorf("mpc: unknown preset %q (known: smoke, default)", preset)
			}
			if err := intIn("steps", steps, 0, -1, "0: the preset's"); err != nil {
				return fmt.Errorf("mpc: %w", err)
			}
			if steps > 0 {
				ps.steps = steps
			}
			if horizon < 1 {
				return fmt.Errorf("mpc: --horizon %d must be at least 1", horizon)
			}
			var m *predictor.Model
			if modelPath != "" {
				sv, err := openModel(cmd, modelPath)
				if err != nil {
					return fmt.Errorf("mpc: --model: %w", err)
				}
				if sv.Model == nil {
					return fmt.Errorf("mpc: --model %s is a %s model: mpc needs a GR or GRB model (.safetensors), whose rollout Jacobians the iLQR controller uses", modelPath, strings.ToUpper(sv.Kind))
				}
				if sv.Prior != nil {
					return fmt.Errorf("mpc: --model %s: %w: the iLQR controller needs the rollout Jacobians of the composed model, which include the prior's", modelPath, trainer.ErrPriorUnsupported)
				}
				m = sv.Model
			}
			if err := outguard.CheckDir("--out", out, "mpc"); err != nil {
				return fmt.Errorf("mpc: %w", err)
			}
			log := io.Discard
			if !quiet {
				log = cmd.ErrOrStderr()
			}
			rep, err := runMPCExample(cmd.Context(), ps, preset, m, modelPath, out, horizon, log)
			if err != nil {
				return err
			}
			if err := outguard.Claim(out, "mpc"); err != nil {
				return fmt.Errorf("mpc: %w", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "double pendulum from rest to q* = (%.1f, %.1f) rad, %d steps of %.0f ms, iLQR horizon %d (%.1f s)\n",
				rep.Target[0], rep.Target[1], rep.Steps, 1000*rep.Dt, rep.Horizon, float64(rep.Horizon)*rep.Dt)
			fmt.Fprintf(w, "%-22s %14s %16s %20s %13s %6s\n", "controller model", "RMS |q-q*|", "last 1 s RMS", "solve ms/step: wall", "thread CPU", "iters")
			for _, r := range rep.Runs {
				fmt.Fprintf(w, "%-22s %10.4f rad %12.4f rad %8.2f (max %5.1f) %13.2f %6.1f\n", r.Model, r.RMSAngleError, r.FinalRMS, r.SolveMeanMs, r.SolveMaxMs, r.SolveCPUMeanMs, r.Iterations)
			}
			fmt.Fprintf(w, "%-22s %10.4f rad\n", "no control", rep.Uncontrolled)
			fmt.Fprintf(w, "report: %s\n", filepath.Join(out, "report.json"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "out/mpc", "output directory")
	f.StringVar(&preset, "preset", "default", "smoke or default")
	f.StringVar(&modelPath, "model", "", "a GR/GRB model of the pendulum at 20 Hz (default: simulate data and train one)")
	f.IntVar(&horizon, "horizon", 20, "iLQR horizon in steps")
	f.IntVar(&steps, "steps", 0, "control steps (0: the preset's)")
	f.BoolVar(&quiet, "quiet", false, "no progress")
	return cmd
}

// mpcSim is the simulator configuration of the example: the demo's
// pendulum sampled at 20 Hz.
func mpcSim() mechanics.SimConfig {
	sim := mechanics.DefaultSimConfig()
	sim.Dt = mpcDt
	sim.Steps = 200
	sim.EnergyMin, sim.EnergyMax = 0, 8
	sim.QRange = 1.2
	return sim
}

// trainMPCModel simulates low-energy training data and trains a GRB model.
func trainMPCModel(ctx context.Context, ps mpcPreset, path string, log io.Writer) (*predictor.Model, error) {
	sim := mpcSim()
	sim.Seed = 11
	trs, err := mechanics.Simulate(ctx, sim, ps.trajectories)
	if err != nil {
		return nil, err
	}
	train, err := experiment.PendulumDataset(trs, sim.Dt, 20, 2, "train", map[string]string{"simulator": "calisym mpc"})
	if err != nil {
		return nil, err
	}
	pre, err := predictor.LookupPreset("pendulum")
	if err != nil {
		return nil, err
	}
	if ps.layers > 0 {
		pre.Arch.Layers = ps.layers
	}
	cfg := trainer.DefaultConfig()
	cfg.Epochs, cfg.BatchSize, cfg.Workers = ps.epochs, 256, 2
	spec := experiment.ModelSpec{Name: "CaLiSym-GRB", Kind: "grb", Arch: pre.Arch,
		Loss: trainer.LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5}, Train: cfg}
	l, err := experiment.NewLearner(spec, train)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(log, "training a GRB model (%d layers) on %d simulated trajectories of 10 s at 20 Hz for %d epochs\n", pre.Arch.Layers, ps.trajectories, ps.epochs)
	if _, err := trainer.Train(ctx, l, train, train, cfg); err != nil {
		return nil, fmt.Errorf("mpc: training: %w", err)
	}
	m := l.(*trainer.Symplectic).Model()
	if err := m.Save(path); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "trained in %.1f s -> %s\n", time.Since(start).Seconds(), path)
	return m, nil
}

// runMPCExample trains the model (m nil) or uses m, read from modelPath,
// and runs the closed loops.
func runMPCExample(ctx context.Context, ps mpcPreset, preset string, m *predictor.Model, modelPath, out string, horizon int, log io.Writer) (*mpcReport, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("mpc: %w", err)
	}
	if m == nil {
		modelPath = filepath.Join(out, "model.safetensors")
		var err error
		if m, err = trainMPCModel(ctx, ps, modelPath, log); err != nil {
			return nil, err
		}
	}
	if l := m.Layout; l.N != 2 || l.NU != 2 || l.NC != 0 {
		return nil, fmt.Errorf("mpc: %s is not a double-pendulum model (n=%d, n_u=%d, n_c=%d; want 2, 2, 0)", modelPath, l.N, l.NU, l.NC)
	}
	if dt := m.Meta.Dt; dt != 0 && math.Abs(dt-mpcDt) > 1e-12 {
		return nil, fmt.Errorf("mpc: %s was trained at %g s, the controller runs at %g s", modelPath, dt, mpcDt)
	}
	plan, err := m.Compile()
	if err != nil {
		return nil, err
	}
	sim := mpcSim()
	plant, err := mpc.NewPendulumModel(sim)
	if err != nil {
		return nil, err
	}
	pp := sim.Params
	grav := pp.PotentialGradient(mpcTarget)
	cost := mpc.Cost{
		Target: []float64{mpcTarget[0], mpcTarget[1], 0, 0},
		Q:      []float64{10, 10, 0.1, 0.1},
		Qf:     []float64{50, 50, 1, 1},
		R:      []float64{1e-3, 1e-3},
		ULo:    []float64{-15, -15}, UHi: []float64{15, 15},
	}
	rep := &mpcReport{Preset: preset, Model: modelPath, Dt: mpcDt, Horizon: horizon, Target: mpcTarget, Steps: ps.steps}
	x0 := []float64{0, 0, 0, 0}
	type ctl struct {
		name  string
		model predictor.Linearizer
	}
	ctls := []ctl{{"learned GRB", plan.NewLinearizer()}}
	if ps.trueModel {
		tm, err := mpc.NewPendulumModel(sim)
		if err != nil {
			return nil, err
		}
		ctls = append(ctls, ctl{"true dynamics (FD)", tm})
	}
	for _, c := range ctls {
		ilqr, err := mpc.NewILQR(c.model, horizon, cost)
		if err != nil {
			return nil, err
		}
		// Warm start: the gravity torque of the target.
		for k := range horizon {
			copy(ilqr.Plan()[2*k:], grav[:])
		}
		fmt.Fprintf(log, "closed loop with the %s model: %d steps\n", c.name, ps.steps)
		tr, err := mpc.Run(ctx, ilqr, plant, x0, ps.steps, ps.iters)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, summarise(c.name, tr))
	}
	// The reference: no torque at all.
	free := &mpc.Trace{X: [][]float64{x0}}
	x := slices.Clone(x0)
	for range ps.steps {
		next := make([]float64, 4)
		if err := plant.Step(x, []float64{0, 0}, next); err != nil {
			return nil, err
		}
		free.X = append(free.X, next)
		x = next
	}
	rep.Uncontrolled = summarise("none", free).RMSAngleError
	if err := writeMPCOutputs(out, rep, grav); err != nil {
		return nil, err
	}
	return rep, nil
}

// summarise computes a run's tracking error and solve times.
func summarise(name string, tr *mpc.Trace) mpcRun {
	r := mpcRun{Model: name, trace: tr}
	last := max(1, int(math.Round(1/mpcDt)))
	n := len(tr.X) - 1
	var sum, sumLast float64
	for k := 1; k <= n; k++ {
		e0, e1 := tr.X[k][0]-mpcTarget[0], tr.X[k][1]-mpcTarget[1]
		e := e0*e0 + e1*e1
		sum += e
		if k > n-last {
			sumLast += e
		}
	}
	r.RMSAngleError = math.Sqrt(sum / float64(2*n))
	r.FinalRMS = math.Sqrt(sumLast / float64(2*min(last, n)))
	if len(tr.SolveTime) > 0 {
		var tot time.Duration
		for i, d := range tr.SolveTime {
			tot += d
			r.SolveMaxMs = math.Max(r.SolveMaxMs, float64(d.Microseconds())/1000)
			r.Iterations += float64(tr.Iterations[i])
		}
		r.SolveMeanMs = float64(tot.Microseconds()) / 1000 / float64(len(tr.SolveTime))
		var cpu time.Duration
		for _, d := range tr.SolveCPU {
			cpu += d
		}
		r.SolveCPUMeanMs = float64(cpu.Microseconds()) / 1000 / float64(len(tr.SolveTime))
		r.Iterations /= float64(len(tr.SolveTime))
	}
	return r
}

// writeMPCOutputs writes report.json, trace.csv and mpc.png.
func writeMPCOutputs(out string, rep *mpcReport, grav [2]float64) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("mpc: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "report.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("mpc: %w", err)
	}
	csv := []byte("controller,t_s,q1,q2,p1,p2,u1,u2\n")
	for _, r := range rep.Runs {
		for k, x := range r.trace.X {
			u := []float64{math.NaN(), math.NaN()}
			if k < len(r.trace.U) {
				u = r.trace.U[k]
			}
			csv = fmt.Appendf(csv, "%s,%.3f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r.Model, float64(k)*mpcDt, x[0], x[1], x[2], x[3], u[0], u[1])
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(out, "trace.csv"), csv); err != nil {
		return fmt.Errorf("mpc: %w", err)
	}
	return plot.Rollout(filepath.Join(out, "mpc.png"), mpcFigure(rep, grav))
}

// mpcFigure is mpc.png: the angles of every run from t = 0 (the state at
// rest) to the end, and the torques, each drawn from the time it is
// applied, beside the target and the gravity torque that holds it.
func mpcFigure(rep *mpcReport, grav [2]float64) plot.RolloutFigure {
	n := rep.Steps
	fig := plot.RolloutFigure{
		Title: fmt.Sprintf("iLQR on the simulated double pendulum: from rest to q* = (%.1f, %.1f) rad", mpcTarget[0], mpcTarget[1]),
		Caption: []string{fmt.Sprintf("Horizon %d steps of %.0f ms, re-planned every step. Black (truth): the target angle and the gravity torque that holds it. "+
			"Angles from the state at rest (t = 0); each torque is drawn at the time it is applied, for one step.", rep.Horizon, 1000*mpcDt)},
		Labels: []string{"q1 [rad]", "q2 [rad]", "u1 [N·m]", "u2 [N·m]"},
	}
	for k := range n + 1 {
		fig.T = append(fig.T, float64(k)*mpcDt)
	}
	fig.Truth = [][]float64{constant(n+1, mpcTarget[0]), constant(n+1, mpcTarget[1]), constant(n+1, grav[0]), constant(n+1, grav[1])}
	roles := []plot.Role{plot.GRB, plot.Other}
	for i, r := range rep.Runs {
		ch := make([][]float64, 4)
		for k := range n + 1 {
			ch[0] = append(ch[0], r.trace.X[k][0])
			ch[1] = append(ch[1], r.trace.X[k][1])
			u := [2]float64{math.NaN(), math.NaN()} // none after the last step
			if k < n {
				u = [2]float64{r.trace.U[k][0], r.trace.U[k][1]}
			}
			ch[2] = append(ch[2], u[0])
			ch[3] = append(ch[3], u[1])
		}
		fig.Models = append(fig.Models, plot.Prediction{Name: "MPC on " + r.Model, Role: roles[min(i, 1)], Channels: ch})
	}
	return fig
}

func constant(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
