package experiment

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/plot"
)

// PredictabilityOptions configures Predictability.
type PredictabilityOptions struct {
	// Seeds seed the perturbations (one Twin per seed; default 1, 2, 3).
	Seeds []uint64
	// Scales are the perturbations' sizes, in multiples of the physics'
	// one-step residual on the training windows (default 1, 0.3, 0.1).
	Scales []float64
	// Runs are run directories whose models' one-step errors are reported
	// beside the physics' (OneStepRow): calisym-*.safetensors and mlp.json.
	Runs []string
	// Workers evaluates the references and runs the seeds' twins side by
	// side (each twin on one goroutine, its perturbations in window
	// order); default 2.
	Workers int
}

// Predictability cases (PredictabilityRow.Case).
const (
	// CaseInitial: the physics fed the initial state perturbed, scored
	// against the physics from the logged initial state (Twin).
	CaseInitial = "initial"
	// CaseEveryStep: the physics with every predicted state perturbed
	// (Twin with EveryStep), scored against the physics.
	CaseEveryStep = "every_step"
	// CasePhysics: the physics against the logs, as the study scores it.
	CasePhysics = "physics"
	// CaseHold and CaseMean: the state held constant and the training
	// states' mean, against the logs.
	CaseHold = "hold"
	CaseMean = "mean"
)

// PredictabilityRow is the AR MSE of one case in one evaluation group at
// one horizon: over the seeds for the twins (mean, min, max), the one
// value for the references.
type PredictabilityRow struct {
	Group   string  `json:"group"`
	Case    string  `json:"case"`
	Scale   float64 `json:"scale,omitempty"`
	Horizon int     `json:"horizon"`
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Seeds   int     `json:"seeds"`
}

// OneStepRow is a model's one-step error (AR MSE at horizon 1, every
// sample) on one group: the floor of what the logs can tell apart.
type OneStepRow struct {
	Group string  `json:"group"`
	Model string  `json:"model"`
	MSE   float64 `json:"mse"`
	// PerCoord is the MSE of each state coordinate, q first.
	PerCoord []float64 `json:"per_coord,omitempty"`
}

// PredictabilityResult is Predictability's measurement.
type PredictabilityResult struct {
	System string `json:"system"`
	// Sigma is the perturbation of scale 1: each state coordinate's root
	// mean square one-step residual of the physics on the training windows.
	Sigma []float64 `json:"sigma"`
	// Autocorr is the lag-1 autocorrelation of that residual over
	// consecutive samples of the training logs, per coordinate: near 0
	// for white measurement noise (−0.5 for noise on the states alone),
	// near 1 for an error that drifts smoothly from step to step.
	Autocorr []float64           `json:"residual_autocorrelation"`
	OneStep  []OneStepRow        `json:"one_step"`
	Rows     []PredictabilityRow `json:"rows"`
}

// Predictability measures how far ahead the benchmark's motions can be
// predicted at all, with its identified pendulum model standing in for
// the true dynamics: at each of the study's horizons and on each
// evaluation group (id_test, ood and each OOD log), the Twin errors of
// that model under perturbations the size of its own one-step residual
// (times each scale), beside the physics, the held state and the training
// states' mean scored against the logs; and the one-step errors of the
// physics and of the given runs' models on the training, ID-test and OOD
// windows. Only for a benchmark with a pendulum model
// (RealBenchmark.Pendulum).
func Predictability(ctx context.Context, b *RealBenchmark, opt PredictabilityOptions) (*PredictabilityResult, error) {
	if b.Pendulum == nil {
		return nil, fmt.Errorf("experiment: predictability: %s has no identified pendulum model to stand in for its dynamics", b.System)
	}
	seeds, scales := opt.Seeds, opt.Scales
	if len(seeds) == 0 {
		seeds = []uint64{1, 2, 3}
	}
	if len(scales) == 0 {
		scales = []float64{1, 0.3, 0.1}
	}
	for _, s := range scales {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("experiment: predictability: scale %v (need a positive number)", s)
		}
	}
	workers := opt.Workers
	if workers < 1 {
		workers = 2
	}
	d := b.Data
	phys := PhysicsRollers(mechanics.PriorDOP853, *b.Pendulum, d.Train.Dt)
	res := &PredictabilityResult{System: b.System}
	one := func(model string, f trainer.RollerFactory) error {
		for _, s := range []struct {
			group string
			d     *dataset.Dataset
		}{{"train", d.Train}, {splitIDTest, d.ID}, {splitOOD, d.OOD}} {
			r, err := trainer.Evaluate(ctx, f, s.d, trainer.EvalOptions{Horizon: 1, Stride: 1, Workers: workers})
			if err != nil {
				return fmt.Errorf("experiment: predictability: one-step error of %s on %s: %w", model, s.group, err)
			}
			res.OneStep = append(res.OneStep, OneStepRow{Group: s.group, Model: model, MSE: r.MSE, PerCoord: r.PerCoord})
			if s.group == splitOOD && len(r.PerFile) > 1 {
				for _, fe := range r.PerFile {
					res.OneStep = append(res.OneStep, OneStepRow{Group: OODFileGroup(fe.File), Model: model, MSE: fe.MSE})
				}
			}
		}
		return nil
	}
	if err := one(CasePhysics, phys); err != nil {
		return nil, err
	}
	var err error
	if res.Sigma, res.Autocorr, err = trainer.OneStepResidual(ctx, phys, d.Train); err != nil {
		return nil, fmt.Errorf("experiment: predictability: %w", err)
	}
	for _, dir := range opt.Runs {
		names := runModelFiles(dir)
		if len(names) == 0 {
			return nil, fmt.Errorf("experiment: predictability: run directory %s holds no model (calisym-*.safetensors, mlp.json)", dir)
		}
		for _, name := range names {
			sv, err := trainer.OpenModel(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("experiment: predictability: %w", err)
			}
			if err := one(filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name))), sv.Rollers); err != nil {
				return nil, err
			}
		}
	}
	mu, err := trainer.StateMean(d.Train)
	if err != nil {
		return nil, fmt.Errorf("experiment: predictability: %w", err)
	}
	// rows adds a case's results over the seeds at horizon h: the
	// group's and each OOD log's.
	rows := func(group, c string, scale float64, h int, rs []trainer.EvalResult) {
		add := func(g string, v func(trainer.EvalResult) float64) {
			row := PredictabilityRow{Group: g, Case: c, Scale: scale, Horizon: h, Min: math.Inf(1), Max: math.Inf(-1), Seeds: len(rs)}
			for _, r := range rs {
				x := v(r)
				row.Mean += x / float64(len(rs))
				row.Min, row.Max = min(row.Min, x), max(row.Max, x)
			}
			if c == CasePhysics || c == CaseHold || c == CaseMean {
				row.Seeds = 0
			}
			res.Rows = append(res.Rows, row)
		}
		add(group, func(r trainer.EvalResult) float64 { return r.MSE })
		if group != splitOOD || len(rs[0].PerFile) < 2 {
			return
		}
		for i, fe := range rs[0].PerFile {
			add(OODFileGroup(fe.File), func(r trainer.EvalResult) float64 { return r.PerFile[i].MSE })
		}
	}
	for _, s := range []struct {
		group string
		d     *dataset.Dataset
	}{{splitIDTest, d.ID}, {splitOOD, d.OOD}} {
		for _, h := range b.Spec.Horizons {
			eo := trainer.EvalOptions{Horizon: h, Stride: b.Spec.EvalStride, Workers: workers}
			for _, ref := range []struct {
				c string
				f trainer.RollerFactory
			}{{CasePhysics, phys}, {CaseHold, trainer.HoldRollers}, {CaseMean, trainer.MeanRollers(mu)}} {
				r, err := trainer.Evaluate(ctx, ref.f, s.d, eo)
				if err != nil {
					return nil, fmt.Errorf("experiment: predictability: %s on %s at %d steps: %w", ref.c, s.group, h, err)
				}
				rows(s.group, ref.c, 0, h, []trainer.EvalResult{r})
			}
			for _, every := range []bool{false, true} {
				c := CaseInitial
				if every {
					c = CaseEveryStep
				}
				for _, sc := range scales {
					sigma := make([]float64, len(res.Sigma))
					for j, v := range res.Sigma {
						sigma[j] = sc * v
					}
					rs, err := trainer.TwinSeeds(ctx, phys, s.d, trainer.TwinOptions{Horizon: h, Stride: b.Spec.EvalStride, Sigma: sigma, EveryStep: every}, seeds, workers)
					if err != nil {
						return nil, fmt.Errorf("experiment: predictability: %s on %s at %d steps: %w", c, s.group, h, err)
					}
					rows(s.group, c, sc, h, rs)
				}
			}
		}
	}
	return res, nil
}

// runModelFiles lists the model files of a run directory that
// Predictability scores: CaLiSym's safetensors files and the MLP's JSON.
func runModelFiles(dir string) []string {
	var out []string
	for _, pat := range []string{"calisym-*.safetensors", "mlp.json"} {
		ms, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, m := range ms {
			out = append(out, filepath.Base(m))
		}
	}
	return out
}

// Markdown renders the result as tables: the one-step errors by model and
// group, then per evaluation group the AR MSE of every case by horizon
// (the twins' mean over the seeds, [min, max] at the longest horizon).
func (r *PredictabilityResult) Markdown() string {
	var sb strings.Builder
	var groups, models []string
	for _, o := range r.OneStep {
		if !slices.Contains(groups, o.Group) {
			groups = append(groups, o.Group)
		}
		if !slices.Contains(models, o.Model) {
			models = append(models, o.Model)
		}
	}
	fmt.Fprintf(&sb, "One-step error (AR MSE at 1 step, every sample; the physics' per coordinate on the training windows is the perturbation of scale 1, σ = %.3g; lag-1 autocorrelation of that residual %.3f):\n\n", r.Sigma, r.Autocorr)
	fmt.Fprintf(&sb, "| model | %s |\n|---|%s\n", strings.Join(groups, " | "), strings.Repeat("---:|", len(groups)))
	for _, m := range models {
		fmt.Fprintf(&sb, "| %s |", m)
		for _, g := range groups {
			i := slices.IndexFunc(r.OneStep, func(o OneStepRow) bool { return o.Model == m && o.Group == g })
			if i < 0 {
				sb.WriteString(" |")
				continue
			}
			fmt.Fprintf(&sb, " %.4g |", r.OneStep[i].MSE)
		}
		sb.WriteString("\n")
	}
	rg, hs := r.groupsHorizons()
	type key struct {
		c     string
		scale float64
	}
	for _, g := range rg {
		fmt.Fprintf(&sb, "\n%s, AR MSE by horizon:\n\n| case | scale |", g)
		for _, h := range hs {
			fmt.Fprintf(&sb, " %d |", h)
		}
		fmt.Fprintf(&sb, "\n|---|---:|%s\n", strings.Repeat("---:|", len(hs)))
		var keys []key
		for _, row := range r.Rows {
			if k := (key{row.Case, row.Scale}); row.Group == g && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			scale := ""
			if k.scale > 0 {
				scale = fmt.Sprintf("%g", k.scale)
			}
			fmt.Fprintf(&sb, "| %s | %s |", k.c, scale)
			for i, h := range hs {
				j := slices.IndexFunc(r.Rows, func(row PredictabilityRow) bool {
					return row.Group == g && row.Case == k.c && row.Scale == k.scale && row.Horizon == h
				})
				if j < 0 {
					sb.WriteString(" |")
					continue
				}
				row := r.Rows[j]
				if i == len(hs)-1 && row.Seeds > 1 {
					fmt.Fprintf(&sb, " %.4g [%.4g, %.4g] |", row.Mean, row.Min, row.Max)
				} else {
					fmt.Fprintf(&sb, " %.4g |", row.Mean)
				}
			}
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// Plots draws one figure per evaluation group into dir,
// predictability_<group>.png: each case's AR MSE by horizon (the twins'
// mean over the seeds with the least and the largest seed's as bars, the
// perturbation of the initial state dashed), the physics against the
// logs, the state held constant and the training states' mean. It
// returns the files written.
func (r *PredictabilityResult) Plots(dir string) ([]string, error) {
	groups, hs := r.groupsHorizons()
	if len(hs) < 2 {
		return nil, fmt.Errorf("experiment: predictability: rows at horizons %v: a curve by horizon needs two", hs)
	}
	var paths []string
	for _, g := range groups {
		var series []plot.Series
		index := map[string]int{}
		for _, row := range r.Rows {
			if row.Group != g {
				continue
			}
			name, role, model, dashed := "", plot.Other, "", false
			switch row.Case {
			case CasePhysics:
				name, role, dashed = "identified physics model against the logs", plot.Physics, true
			case CaseHold:
				name, role = "state held constant", plot.Hold
			case CaseMean:
				name, model, dashed = "training states' mean", "mean", true
			case CaseInitial:
				name, model, dashed = fmt.Sprintf("exact dynamics, initial state off by %gσ", row.Scale), fmt.Sprintf("%g", row.Scale), true
			default:
				name, model = fmt.Sprintf("exact dynamics, every step off by %gσ", row.Scale), fmt.Sprintf("%g", row.Scale)
			}
			i, ok := index[name]
			if !ok {
				i = len(series)
				index[name] = i
				s := plot.Series{Name: name, Role: role, Model: model, Dashed: dashed, Values: make([]float64, len(hs))}
				if row.Seeds > 1 {
					s.Lo, s.Hi = make([]float64, len(hs)), make([]float64, len(hs))
				}
				for k := range s.Values {
					s.Values[k] = math.NaN()
				}
				series = append(series, s)
			}
			s := &series[i]
			k := slices.Index(hs, row.Horizon)
			s.Values[k] = row.Mean
			if s.Lo != nil {
				s.Lo[k], s.Hi[k] = row.Min, row.Max
			}
		}
		path := filepath.Join(dir, "predictability_"+g+".png")
		title := fmt.Sprintf("%s, %s: how far ahead it can be predicted (σ: the physics' one-step residual; seeds' range as bars)", r.System, g)
		if err := plot.HorizonCurve(path, title, plot.MixedUnits, hs, series); err != nil {
			return paths, fmt.Errorf("experiment: %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// groupsHorizons returns the groups of the rows in the order they first
// appear and their horizons, ascending.
func (r *PredictabilityResult) groupsHorizons() ([]string, []int) {
	var groups []string
	var hs []int
	for _, row := range r.Rows {
		if !slices.Contains(groups, row.Group) {
			groups = append(groups, row.Group)
		}
		if !slices.Contains(hs, row.Horizon) {
			hs = append(hs, row.Horizon)
		}
	}
	slices.Sort(hs)
	return groups, hs
}
