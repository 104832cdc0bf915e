package experiment

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/trainer"
)

// StudyRow is one number of a study: the AR MSE of one model (or of the
// state held constant) of one variant on one evaluation group at one
// horizon, as the mean, minimum and maximum over the variant's seeds. A
// study's rows are its study.json, committed for each system as
// docs/results/<system>_study.json.
type StudyRow struct {
	// Group is the evaluation group as the study's tables name it
	// ("id_test", "ood", "ood_pushes", …).
	Group string `json:"group"`
	// Model is "calisym" (a GR or GRB SympNet), "mlp", "hold" (the
	// state held constant, the same for every variant) or "physics" (the
	// identified physics model alone, the same for every variant; the
	// real double pendulum only).
	Model string `json:"model"`
	// Forecast is how the rollouts got the ports over the horizon: empty
	// for the logged ports (a planner's case, every row before the live
	// rows existed), "hold" or "learned" for the live node's forecast in
	// the loop (ModelReport.Live; CaLiSym only).
	Forecast string  `json:"forecast,omitempty"`
	Variant  string  `json:"variant"`
	Horizon  int     `json:"horizon"`
	Mean     float64 `json:"mean"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Seeds    int     `json:"seeds"`
	// Diverged counts the seeds whose error is not finite (left out of
	// Mean, Min, Max and Seeds); a row with no finite seed is left out.
	Diverged int `json:"diverged,omitempty"`
}

// studyModel names a model kind in a study's rows.
func studyModel(kind string) string {
	if kind == "mlp" {
		return "mlp"
	}
	return "calisym"
}

// StudyRows returns the rows of a study whose runs carry evaluation
// groups (withSplitGroups gives a benchmark without them its ID-test
// and OOD sets as groups): for every group, variant, model and horizon,
// in the order of the tables, then the state held constant of that
// variant's group. A non-finite error (a diverged run) is left out of
// the row's mean, minimum and maximum and its seeds.
func StudyRows(runs []StudyRun, variants []Variant) []StudyRow {
	if len(runs) == 0 || runs[0].Report == nil || len(runs[0].Report.HoldGroups) == 0 {
		return nil
	}
	hold := runs[0].Report.HoldGroups
	hs := hold[0].Horizons
	var rows []StudyRow
	for _, hg := range hold {
		for _, v := range variants {
			sms := groupSeeds(runs, v.Name, hg.Group, hs)
			seeds := 0
			for _, sm := range sms {
				seeds = max(seeds, sm.Seeds)
				for i, h := range hs {
					r := StudyRow{Group: hg.Group, Model: studyModel(sm.Kind), Variant: v.Name, Horizon: h}
					r.Mean, r.Min, r.Max, r.Seeds = stats(sm.Vals[i])
					if r.Diverged = len(sm.Vals[i]) - r.Seeds; r.Seeds > 0 {
						rows = append(rows, r)
					}
				}
			}
			for _, kind := range liveKinds(runs, v.Name) {
				for _, sm := range liveSeeds(runs, v.Name, kind, hg.Group, hs) {
					for i, h := range hs {
						r := StudyRow{Group: hg.Group, Model: studyModel(sm.Kind), Forecast: kind, Variant: v.Name, Horizon: h}
						r.Mean, r.Min, r.Max, r.Seeds = stats(sm.Vals[i])
						if r.Diverged = len(sm.Vals[i]) - r.Seeds; r.Seeds > 0 {
							rows = append(rows, r)
						}
					}
				}
			}
			if len(sms) == 0 {
				continue
			}
			for _, h := range hs {
				x := hg.At(h)
				if math.IsNaN(x) || math.IsInf(x, 0) {
					continue
				}
				rows = append(rows, StudyRow{Group: hg.Group, Model: "hold", Variant: v.Name, Horizon: h, Mean: x, Min: x, Max: x, Seeds: seeds})
			}
			if pg, ok := variantGroup(runs, v.Name, hg.Group); ok {
				for _, h := range hs {
					x := pg.At(h)
					if math.IsNaN(x) || math.IsInf(x, 0) {
						continue
					}
					rows = append(rows, StudyRow{Group: hg.Group, Model: "physics", Variant: v.Name, Horizon: h, Mean: x, Min: x, Max: x, Seeds: seeds})
				}
			}
		}
	}
	return rows
}

// liveKinds returns the forecasts of the live rows of a variant's runs,
// in the order they first appear.
func liveKinds(runs []StudyRun, variant string) []string {
	var kinds []string
	for _, r := range runs {
		if r.Variant != variant || r.Report == nil {
			continue
		}
		for _, m := range r.Report.Models {
			for _, l := range m.Live {
				if !slices.Contains(kinds, l.Forecast) {
					kinds = append(kinds, l.Forecast)
				}
			}
		}
	}
	return kinds
}

// liveSeeds is groupSeeds for the live rows of one forecast.
func liveSeeds(runs []StudyRun, variant, kind, group string, hs []int) []seedModel {
	return variantSeeds(runs, variant, func(m ModelReport) ([]float64, bool) {
		li := slices.IndexFunc(m.Live, func(l LiveResult) bool { return l.Forecast == kind })
		if li < 0 {
			return nil, false
		}
		gs := m.Live[li].Groups
		gi := slices.IndexFunc(gs, func(g GroupResult) bool { return g.Group == group })
		if gi < 0 {
			return nil, false
		}
		vals := make([]float64, len(hs))
		for j, h := range hs {
			vals[j] = gs[gi].At(h)
		}
		return vals, true
	})
}

// variantGroup returns the physics model's result on the named group
// for the variant (Report.PhysicsGroups of the variant's first run).
func variantGroup(runs []StudyRun, variant, group string) (GroupResult, bool) {
	for _, r := range runs {
		if r.Variant != variant || r.Report == nil {
			continue
		}
		for _, g := range r.Report.PhysicsGroups {
			if g.Group == group {
				return g, true
			}
		}
		return GroupResult{}, false
	}
	return GroupResult{}, false
}

// stats returns the mean, minimum and maximum of the finite values and
// their count (NaN for none).
func stats(vs []float64) (mean, lo, hi float64, n int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		mean, lo, hi, n = mean+v, min(lo, v), max(hi, v), n+1
	}
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 0
	}
	return mean / float64(n), lo, hi, n
}

// splitHold evaluates the state held constant on the benchmark's ID-test
// and OOD sets at every horizon of its table, as Run evaluates the
// models' multi-horizon rows: the groups "id_test" and "ood" (and one per
// OOD log) of a benchmark without evaluation groups.
func (b *RealBenchmark) splitHold(ctx context.Context) ([]GroupResult, error) {
	return b.splitEval(ctx, b.Data, "state held constant", trainer.HoldRollers)
}

// PhysicsRollers makes rollers of the identified double-pendulum model
// alone (mechanics.PendulumPrior of the given kind, the measured torques
// held over each step of dt): a predictor without learning, evaluated like
// the models.
func PhysicsRollers(kind mechanics.PriorKind, pp mechanics.PendulumParams, dt float64) trainer.RollerFactory {
	return func() (trainer.Roller, error) { return mechanics.NewPendulumPrior(kind, pp, dt) }
}

// variantPhysics evaluates the physics model alone as splitHold evaluates
// the state held constant, on the variant's data (its ports: the voltage,
// the port history): the identified pendulum model (with its friction,
// integrated by DOP853 at tolerances 1e-10: PhysicsRollers of
// mechanics.PriorDOP853), or the quadrotor's rigid-body model
// (mechanics.QuadrotorPrior under the body wrench of the motor commands,
// from the port the variant's prior reads it at, ModelSpec.PriorWrenchPort);
// nil for a benchmark without one (RealBenchmark.Pendulum,
// RealBenchmark.Quadrotor).
func (b *RealBenchmark) variantPhysics(ctx context.Context, v Variant) ([]GroupResult, error) {
	if b.Quadrotor == nil && b.Pendulum == nil {
		return nil, nil
	}
	d, err := b.data(ctx, b.withDefaultData(v))
	if err != nil {
		return nil, err
	}
	var rollers trainer.RollerFactory
	key := physicsKey{ood: d.OOD}
	if b.Pendulum != nil {
		rollers = PhysicsRollers(mechanics.PriorDOP853, *b.Pendulum, d.ID.Dt)
	} else {
		qp := *b.Quadrotor
		ms := slices.Clone(b.Spec.Models)
		b.applyModels(v, ms, b.Spec)
		for _, m := range ms {
			if m.Prior == mechanics.PriorQuadrotorRK4 {
				qp.WrenchPort = m.PriorWrenchPort
				break
			}
		}
		if d.ID.NU < qp.WrenchPort+6 {
			return nil, fmt.Errorf("experiment: variant %s: the quadrotor prior reads the wrench at ports %d…%d, the data have %d", v.Name, qp.WrenchPort, qp.WrenchPort+5, d.ID.NU)
		}
		dt := d.ID.Dt
		rollers = func() (trainer.Roller, error) { return mechanics.NewQuadrotorPrior(qp, dt) }
		key.port = qp.WrenchPort
	}
	if g, ok := b.physics[key]; ok {
		return g, nil
	}
	g, err := b.splitEval(ctx, d, "identified physics model", rollers)
	if err != nil {
		return nil, err
	}
	if b.physics == nil {
		b.physics = map[physicsKey][]GroupResult{}
	}
	b.physics[key] = g
	return g, nil
}

// splitEval evaluates the rollers on the ID-test and OOD sets of d at
// every horizon of the table: the groups "id_test" and "ood", then one
// group per OOD log (oodFileGroups).
func (b *RealBenchmark) splitEval(ctx context.Context, d Datasets, what string, rollers trainer.RollerFactory) ([]GroupResult, error) {
	var out []GroupResult
	var perFile [][]trainer.FileError
	for _, name := range []string{splitIDTest, splitOOD} {
		g := GroupResult{Group: name, Horizons: slices.Clone(b.Spec.Horizons)}
		set := d.ID
		if name == splitOOD {
			set = d.OOD
		}
		for _, h := range b.Spec.Horizons {
			r, err := trainer.Evaluate(ctx, rollers, set, trainer.EvalOptions{Horizon: h, Stride: b.Spec.EvalStride, MaxWindows: b.Spec.MaxEvalWindows, Workers: b.opts.Workers})
			if err != nil {
				return nil, fmt.Errorf("experiment: %s: %s at horizon %d: %w", name, what, h, err)
			}
			g.MSE = append(g.MSE, r.MSE)
			g.Windows = r.Windows
			if name == splitOOD {
				perFile = append(perFile, r.PerFile)
			}
		}
		out = append(out, g)
	}
	return append(out, oodFileGroups(b.Spec.Horizons, perFile)...), nil
}

// oodFileGroups turns the OOD error split by log at each horizon
// (perFile[i] at horizons[i], trainer.EvalResult.PerFile) into one group
// per log, named "ood_" and the log's base name without its extension
// (OODFileGroup), in the order of the logs at the first horizon. A log
// missing at a horizon (all its windows shorter) has no value there.
func oodFileGroups(horizons []int, perFile [][]trainer.FileError) []GroupResult {
	if len(perFile) != len(horizons) || len(perFile) == 0 {
		return nil
	}
	var out []GroupResult
	for _, f := range perFile[0] {
		g := GroupResult{Group: OODFileGroup(f.File), Windows: f.Windows}
		for i, h := range horizons {
			j := slices.IndexFunc(perFile[i], func(e trainer.FileError) bool { return e.File == f.File })
			if j < 0 || perFile[i][j].Windows == 0 {
				continue
			}
			g.Horizons, g.MSE = append(g.Horizons, h), append(g.MSE, perFile[i][j].MSE)
		}
		out = append(out, g)
	}
	return out
}

// OODFileGroup names the evaluation group of one OOD log in a study's
// tables and rows: "ood_" and the log's base name without its extension
// ("ood_20230629-154220" for double_pendulum_hw/trajectories/20230629-154220.csv).
func OODFileGroup(file string) string {
	base := filepath.Base(file)
	return "ood_" + strings.TrimSuffix(base, filepath.Ext(base))
}

// withSplitGroups returns runs whose reports carry no evaluation groups
// as copies whose models have the groups "id_test", "ood" and one per OOD
// log read off their multi-horizon rows, hold as the state held constant
// on them and physics[variant] (none: no such row) as the physics model
// alone that the variant's models sit behind, on the variant's data
// (RealBenchmark.variantPhysics); runs with groups are returned as they
// are.
func withSplitGroups(runs []StudyRun, hold []GroupResult, physics map[string][]GroupResult) []StudyRun {
	out := slices.Clone(runs)
	for i, r := range out {
		if r.Report == nil || len(r.Report.HoldGroups) > 0 {
			continue
		}
		rep := *r.Report
		rep.HoldGroups, rep.PhysicsGroups = hold, physics[r.Variant]
		rep.Models = slices.Clone(r.Report.Models)
		for j := range rep.Models {
			m := &rep.Models[j]
			id := GroupResult{Group: splitIDTest}
			ood := GroupResult{Group: splitOOD}
			for _, row := range m.MultiHorizon {
				id.Horizons, id.MSE = append(id.Horizons, row.Horizon), append(id.MSE, row.IDMSE)
				ood.Horizons, ood.MSE = append(ood.Horizons, row.Horizon), append(ood.MSE, row.OODMSE)
			}
			var perFile [][]trainer.FileError
			var hs []int
			for _, row := range m.MultiHorizon {
				if row.OODPerFile != nil {
					hs, perFile = append(hs, row.Horizon), append(perFile, row.OODPerFile)
				}
			}
			m.Groups = append([]GroupResult{id, ood}, oodFileGroups(hs, perFile)...)
		}
		out[i].Report = &rep
	}
	return out
}

// groupTable writes the study's table by evaluation group: per group,
// variant and model, the AR MSE at every horizon as the mean [min, max]
// over the seeds, and the state held constant.
func groupTable(b *strings.Builder, runs []StudyRun, variants []Variant) {
	hold := runs[0].Report.HoldGroups
	hs := hold[0].Horizons
	b.WriteString("\n| group | variant | model | seeds |")
	for _, h := range hs {
		fmt.Fprintf(b, " %d |", h)
	}
	b.WriteString("\n|---|---|---|---:|")
	for range hs {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, hg := range hold {
		for _, v := range variants {
			for _, sm := range groupSeeds(runs, v.Name, hg.Group, hs) {
				fmt.Fprintf(b, "| %s | %s | %s | %d |", hg.Group, v.Name, sm.Name, sm.Seeds)
				for _, vs := range sm.Vals {
					b.WriteString(" " + meanRange(vs) + " |")
				}
				b.WriteString("\n")
			}
		}
		fmt.Fprintf(b, "| %s | | state held constant | |", hg.Group)
		for _, h := range hs {
			fmt.Fprintf(b, " %s |", num(hg.At(h)))
		}
		b.WriteString("\n")
		for _, v := range variants {
			pg, ok := variantGroup(runs, v.Name, hg.Group)
			if !ok {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | identified physics model | |", hg.Group, v.Name)
			for _, h := range hs {
				fmt.Fprintf(b, " %s |", num(pg.At(h)))
			}
			b.WriteString("\n")
		}
	}
}
