package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/calisym/calisym/trainer"
)

// offsetPass is one evaluation of a study's saved models with an
// offset-free estimate: the runs of variant v come again as
// "<v>+<suffix>".
type offsetPass struct {
	suffix, about string
	off           trainer.EvalOptions // Force or Wrench
}

// offsetPasses returns the study's offset-free passes, one per setting
// of offsets (each with its Force or its Wrench set), in their order. A
// pass is named "force" or "wrench" when it is the only one of its kind,
// else by its settings: "force(10,0.9)", "wrench(400,3,1,8)".
func offsetPasses(offsets []trainer.EvalOptions) ([]offsetPass, error) {
	var forces, wrenches int
	for _, o := range offsets {
		switch {
		case (o.Force == nil) == (o.Wrench == nil):
			return nil, fmt.Errorf("experiment: an offset-free pass needs a force or a wrench estimate, not %s", map[bool]string{true: "both", false: "neither"}[o.Force != nil])
		case o.Force != nil:
			forces++
		default:
			wrenches++
		}
	}
	var out []offsetPass
	seen := map[string]bool{}
	for _, o := range offsets {
		var p offsetPass
		if o.Force != nil {
			p = offsetPass{suffix: "force", about: fmt.Sprintf("rollouts offset-free (force estimate: %s)", o.Force), off: trainer.EvalOptions{Force: o.Force}}
			if forces > 1 {
				p.suffix = fmt.Sprintf("force(%d,%g)", o.Force.Window, o.Force.Decay)
			}
		} else {
			w := o.Wrench
			p = offsetPass{suffix: "wrench", about: fmt.Sprintf("rollouts offset-free (wrench estimate: %s)", w), off: trainer.EvalOptions{Wrench: w}}
			if wrenches > 1 {
				p.suffix = fmt.Sprintf("wrench(%d,%g,%g,%d)", w.Window, w.Gate, w.Decay, w.Blocks)
			}
		}
		if seen[p.suffix] {
			return nil, fmt.Errorf("experiment: the offset-free pass %q is given twice", p.suffix)
		}
		seen[p.suffix] = true
		out = append(out, p)
	}
	return out, nil
}

// offsetRuns evaluates the saved models of every run on the groups with
// each pass's offset-free rollouts (a benchmark without evaluation groups:
// on its ID-test and OOD sets at each horizon, the rows its study reports)
// and returns the runs and variants with, after each variant's, one
// "<variant>+<suffix>" run per pass (a copy of the report whose models
// carry the new errors).
func (b *RealBenchmark) offsetRuns(ctx context.Context, runs []StudyRun, variants []Variant, passes []offsetPass, log io.Writer) ([]StudyRun, []Variant, error) {
	var outRuns []StudyRun
	var outVars []Variant
	for _, v := range variants {
		outVars = append(outVars, v)
		data, err := b.data(ctx, b.withDefaultData(v))
		if err != nil {
			return nil, nil, err
		}
		for _, r := range runs {
			if r.Variant == v.Name {
				outRuns = append(outRuns, r)
			}
		}
		for _, p := range passes {
			fv := Variant{Name: v.Name + "+" + p.suffix, About: fmt.Sprintf("the models of %s, %s", v.Name, p.about)}
			outVars = append(outVars, fv)
			for _, r := range runs {
				if r.Variant != v.Name {
					continue
				}
				rep := *r.Report
				rep.Models = slices.Clone(r.Report.Models)
				for i := range rep.Models {
					m := &rep.Models[i]
					saved, err := trainer.OpenModel(filepath.Join(r.Dir, m.File))
					if err != nil {
						return nil, nil, fmt.Errorf("experiment: %s seed %d: %w", v.Name, r.Seed, err)
					}
					if len(data.Groups) == 0 {
						// a benchmark without evaluation groups reports
						// its ID-test and OOD sets by horizon
						// (withSplitGroups): those rows, offset-free
						o := p.off
						o.Horizon, o.Stride, o.MaxWindows = b.Spec.Horizon, b.Spec.EvalStride, b.Spec.MaxEvalWindows
						rows, oodErrs := multiHorizonRows(ctx, saved.Rollers, data, b.Spec.Horizons, o)
						// the rows leave a horizon that fails NaN; one that
						// fails at the headline horizon is an error
						var err error
						if i := slices.Index(b.Spec.Horizons, o.Horizon); i >= 0 {
							err = oodErrs[i]
						} else {
							_, err = trainer.Evaluate(ctx, saved.Rollers, data.OOD, o)
						}
						if err != nil {
							return nil, nil, fmt.Errorf("experiment: %s seed %d: %w", fv.Name, r.Seed, err)
						}
						m.MultiHorizon = rows
						continue
					}
					if m.Groups, err = EvalGroupsWith(ctx, saved.Rollers, data.Groups, b.Spec.Horizons, p.off); err != nil {
						return nil, nil, fmt.Errorf("experiment: %s seed %d: %w", fv.Name, r.Seed, err)
					}
				}
				fmt.Fprintf(log, "study: %s seed %d: %s\n", v.Name, r.Seed, p.about)
				outRuns = append(outRuns, StudyRun{Variant: fv.Name, Seed: r.Seed, Dir: r.Dir, Report: &rep})
			}
		}
	}
	return outRuns, outVars, nil
}
