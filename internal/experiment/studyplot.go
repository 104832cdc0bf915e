package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/calisym/calisym/trainer/plot"
)

// ErrStudyRows reports a study's rows (a study.json) that cannot be read
// or drawn: a missing or unknown field, a value out of its range, a
// duplicate row, or a selection that names nothing in them.
var ErrStudyRows = errors.New("bad study rows")

// studyRowJSON is a StudyRow as decoded, its fields pointers so that a
// missing one is told from a zero.
type studyRowJSON struct {
	Group    *string  `json:"group"`
	Model    *string  `json:"model"`
	Forecast string   `json:"forecast"`
	Variant  *string  `json:"variant"`
	Horizon  *int     `json:"horizon"`
	Mean     *float64 `json:"mean"`
	Min      *float64 `json:"min"`
	Max      *float64 `json:"max"`
	Seeds    *int     `json:"seeds"`
	Diverged int      `json:"diverged"`
}

// studyGroupName is what a group may be called: it names a file,
// study_<group>.png.
var studyGroupName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ReadStudyRows decodes a study's rows as StudyRows writes them (a
// study.json, docs/results/<system>_study.json) and checks each: every
// field present (diverged and forecast may be left out) and no other,
// forecast "", "hold" or "learned" (a live row: calisym only), model "calisym",
// "mlp", "hold" or "physics", a group usable in a file name, a non-empty variant,
// horizon ≥ 1, seeds ≥ 1, diverged ≥ 0, 0 ≤ min ≤ mean ≤ max, and no two
// rows of the same group, model, variant and horizon. An error wraps
// ErrStudyRows and names the row (1-based) and the field.
func ReadStudyRows(data []byte) ([]StudyRow, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw []studyRowJSON
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStudyRows, err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no rows", ErrStudyRows)
	}
	rows := make([]StudyRow, 0, len(raw))
	seen := map[StudyRow]int{}
	for i, r := range raw {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: row %d: %s", ErrStudyRows, i+1, fmt.Sprintf(format, a...))
		}
		for _, f := range []struct {
			name    string
			present bool
		}{{"group", r.Group != nil}, {"model", r.Model != nil}, {"variant", r.Variant != nil}, {"horizon", r.Horizon != nil},
			{"mean", r.Mean != nil}, {"min", r.Min != nil}, {"max", r.Max != nil}, {"seeds", r.Seeds != nil}} {
			if !f.present {
				return nil, bad("no %q (every row has group, model, variant, horizon, mean, min, max and seeds)", f.name)
			}
		}
		row := StudyRow{Group: *r.Group, Model: *r.Model, Forecast: r.Forecast, Variant: *r.Variant, Horizon: *r.Horizon,
			Mean: *r.Mean, Min: *r.Min, Max: *r.Max, Seeds: *r.Seeds, Diverged: r.Diverged}
		switch {
		case !studyGroupName.MatchString(row.Group):
			return nil, bad("group %q: letters, digits, '_' and '-' only (it names study_<group>.png)", row.Group)
		case row.Model != "calisym" && row.Model != "mlp" && row.Model != "hold" && row.Model != "physics":
			return nil, bad("model %q: one of calisym, mlp, hold, physics", row.Model)
		case row.Forecast != "" && row.Forecast != "hold" && row.Forecast != "learned":
			return nil, bad("forecast %q: empty (the logged ports), hold or learned", row.Forecast)
		case row.Forecast != "" && row.Model != "calisym":
			return nil, bad("forecast %q for model %s: live rows are CaLiSym's", row.Forecast, row.Model)
		case strings.TrimSpace(row.Variant) == "":
			return nil, bad("variant is empty")
		case row.Horizon < 1:
			return nil, bad("horizon %d: must be ≥ 1", row.Horizon)
		case row.Seeds < 1:
			return nil, bad("seeds %d: must be ≥ 1", row.Seeds)
		case row.Diverged < 0:
			return nil, bad("diverged %d: must be ≥ 0", row.Diverged)
		case row.Min < 0:
			return nil, bad("min %g: an AR MSE is ≥ 0", row.Min)
		case row.Mean < row.Min || row.Mean > row.Max:
			return nil, bad("%s %s %s at horizon %d: mean %g outside [min %g, max %g]", row.Group, row.Variant, row.Model, row.Horizon, row.Mean, row.Min, row.Max)
		}
		key := StudyRow{Group: row.Group, Model: row.Model, Forecast: row.Forecast, Variant: row.Variant, Horizon: row.Horizon}
		if j, dup := seen[key]; dup {
			return nil, bad("%s %s %s at horizon %d again (row %d)", row.Group, row.Variant, row.Model, row.Horizon, j)
		}
		seen[key] = i + 1
		rows = append(rows, row)
	}
	return rows, nil
}

// RealSystemTitle returns the title a real-robot system's figures carry
// ("ANYmal D, SIMULATED (MuJoCo; not a real robot)").
func RealSystemTitle(system string) (string, error) {
	sys, ok := realSystems()[system]
	if !ok {
		return "", fmt.Errorf("experiment: unknown real-robot system %q (known: %s)", system, strings.Join(RealSystemNames(), ", "))
	}
	return sys.title, nil
}

// StudyPlots draws outDir/study_<group>.png for every group of a study's
// rows (StudyRows, ReadStudyRows), in the order they first appear: the
// mean AR MSE over the seeds against the horizon, one colour per variant,
// CaLiSym solid and the MLP dashed, error bars from the least to the
// largest seed's error, and the state held constant dotted. system titles
// the figures. variants, when given, are the variants drawn, in that
// order (default: all, in the order they first appear); groups, when
// given, the groups drawn. A group with no model of the variants drawn is
// left out unless groups names it (an error then, as is a variant or
// group that is in no row, a group with rows at one horizon only and one
// whose values are all the same).
// It returns the files written.
func StudyPlots(rows []StudyRow, system, outDir string, variants, groups []string) ([]string, error) {
	// the figures show the logged ports' rows; the live rows are tables
	rows = slices.DeleteFunc(slices.Clone(rows), func(r StudyRow) bool { return r.Forecast != "" })
	allGroups, allVariants := firstSeen(rows, func(r StudyRow) string { return r.Group }), firstSeen(rows, func(r StudyRow) string { return r.Variant })
	for _, v := range variants {
		if !slices.Contains(allVariants, v) {
			return nil, fmt.Errorf("%w: variant %q is in no row (the rows have %s)", ErrStudyRows, v, strings.Join(allVariants, ", "))
		}
	}
	for _, g := range groups {
		if !slices.Contains(allGroups, g) {
			return nil, fmt.Errorf("%w: group %q is in no row (the rows have %s)", ErrStudyRows, g, strings.Join(allGroups, ", "))
		}
	}
	if len(variants) == 0 {
		variants = allVariants
	}
	explicit := len(groups) > 0
	if !explicit {
		groups = allGroups
	}
	var paths []string
	for _, g := range groups {
		hs, series := studySeries(rows, g, variants)
		if len(series) == 0 || series[0].Role == plot.Hold {
			if explicit {
				return paths, fmt.Errorf("%w: group %q has no model of the variants %s", ErrStudyRows, g, strings.Join(variants, ", "))
			}
			continue
		}
		if len(hs) < 2 {
			return paths, fmt.Errorf("%w: group %q has rows at horizon %v only: a curve by horizon needs two", ErrStudyRows, g, hs)
		}
		if lo, hi := seriesRange(series); !(lo < hi) {
			// gonum's log axis widens an empty range by ±1, below zero
			return paths, fmt.Errorf("%w: group %q: every value drawn is %g: no range for the log axis", ErrStudyRows, g, lo)
		}
		title := fmt.Sprintf("%s, %s: AR MSE by horizon, mean over seeds, bars from the least to the largest seed's (CaLiSym solid, MLP dashed)", system, g)
		path := filepath.Join(outDir, "study_"+g+".png")
		if err := plot.HorizonCurve(path, title, plot.MixedUnits, hs, series); err != nil {
			return paths, fmt.Errorf("experiment: %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// seriesRange returns the least and the largest positive finite value of
// the series (means and spreads).
func seriesRange(series []plot.Series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, vs := range [][]float64{s.Values, s.Lo, s.Hi} {
			for _, v := range vs {
				if v > 0 && !math.IsInf(v, 0) {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
		}
	}
	return lo, hi
}

// firstSeen returns the distinct keys of rows in the order they first
// appear.
func firstSeen(rows []StudyRow, key func(StudyRow) string) []string {
	var out []string
	for _, r := range rows {
		if k := key(r); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// studyModelLabels names the models of a study's rows in the figures'
// legends.
var studyModelLabels = map[string]string{"calisym": "CaLiSym", "mlp": "MLP"}

// studySeries returns the horizons of group (every horizon of its rows
// of the variants, ascending) and its curves: for every variant in
// order, each model's mean over the seeds with the least and the largest
// seed's error as the spread (NaN at a horizon with no row), named
// "<variant> <model>" (with the most seeds that diverged at a horizon,
// where any did, which the mean leaves out), then the identified physics
// model (once for each distinct curve: a variant whose physics runs on
// other ports, such as the quadrotor prior's lagged wrench, gets its own,
// named after the variant) and last the state held constant of the first
// variant that has it.
func studySeries(rows []StudyRow, group string, variants []string) ([]int, []plot.Series) {
	var hs []int
	for _, r := range rows {
		if r.Group == group && slices.Contains(variants, r.Variant) && !slices.Contains(hs, r.Horizon) {
			hs = append(hs, r.Horizon)
		}
	}
	slices.Sort(hs)
	nan := func() []float64 {
		v := make([]float64, len(hs))
		for i := range v {
			v[i] = math.NaN()
		}
		return v
	}
	var series []plot.Series
	var hold *plot.Series
	var physics []plot.Series
	for _, v := range variants {
		var models []string
		for _, r := range rows {
			if r.Group == group && r.Variant == v && !slices.Contains(models, r.Model) {
				models = append(models, r.Model)
			}
		}
		for _, m := range models {
			if m == "hold" && hold != nil {
				continue
			}
			s := plot.Series{Name: v + " " + studyModelLabels[m], Role: plot.Other, Model: v, Dashed: m == "mlp",
				Values: nan(), Lo: nan(), Hi: nan()}
			diverged := 0
			for _, r := range rows {
				if r.Group != group || r.Variant != v || r.Model != m {
					continue
				}
				i := slices.Index(hs, r.Horizon)
				s.Values[i], s.Lo[i], s.Hi[i] = r.Mean, r.Min, r.Max
				diverged = max(diverged, r.Diverged)
			}
			if m == "hold" {
				hold = &plot.Series{Name: "state held constant", Role: plot.Hold, Values: s.Values}
				continue
			}
			if m == "physics" {
				if !slices.ContainsFunc(physics, func(p plot.Series) bool { return sameValues(p.Values, s.Values) }) {
					physics = append(physics, plot.Series{Name: "identified physics model", Role: plot.Physics, Model: v, Dashed: true, Values: s.Values})
				}
				continue
			}
			if diverged > 0 {
				s.Name += fmt.Sprintf(" (seeds that diverged, left out: %d)", diverged)
			}
			series = append(series, s)
		}
	}
	for i := range physics {
		if len(physics) > 1 {
			// a curve of its own per variant: the first keeps the
			// physics' colour, the others take their variant's
			physics[i].Name += " (" + physics[i].Model + ")"
			if i > 0 {
				physics[i].Role = plot.Other
			}
		}
		series = append(series, physics[i])
	}
	if hold != nil {
		series = append(series, *hold)
	}
	return hs, series
}

// sameValues reports whether two curves hold the same values (NaN where
// both have none).
func sameValues(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}
