package experiment

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/plot"
)

// history returns epochs 1…n whose rollout steps are k(epoch).
func history(n int, k func(epoch int) int) []trainer.EpochStats {
	var h []trainer.EpochStats
	for e := 1; e <= n; e++ {
		h = append(h, trainer.EpochStats{Epoch: e, Loss: 1 / float64(e), ValLoss: 2 / float64(e), K: k(e)})
	}
	return h
}

// TestTrainingTitle: the training-curve figure of a run that trains
// multi-step from some epoch does not call its losses one-step, and marks
// the epoch where its training loss changes meaning (as the Crazyflie's
// does from epoch 6); a one-step run's title says one-step.
func TestTrainingTitle(t *testing.T) {
	one := func(int) int { return 1 }
	ramp := func(e int) int {
		if e < 6 {
			return 1
		}
		return min(e-4, 8)
	}
	for _, tc := range []struct {
		name   string
		models []ModelReport
		marks  []float64
	}{
		{"one-step", []ModelReport{{Name: "CaLiSym-GR", History: history(20, one)}, {Name: "MLP", History: history(20, one)}}, nil},
		{"multi-step from epoch 6", []ModelReport{{Name: "CaLiSym-GR", History: history(20, ramp)}, {Name: "MLP", History: history(20, ramp)}}, []float64{5.5}},
		{"two switches", []ModelReport{{Name: "CaLiSym-GR", History: history(20, ramp)}, {Name: "MLP", History: history(20, func(e int) int { return 1 + e/10 })}}, []float64{5.5, 9.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, marks := trainingTitle("Crazyflie", tc.models)
			if len(marks) != len(tc.marks) {
				t.Fatalf("marks %+v, want at epochs %v", marks, tc.marks)
			}
			for i, m := range marks {
				if m.Epoch != tc.marks[i] || !strings.Contains(m.Label, "multi-step from epoch") {
					t.Errorf("mark %+v, want one at %g", m, tc.marks[i])
				}
			}
			if multi := len(tc.marks) > 0; multi == (title == "Crazyflie: one-step loss") || multi && !strings.Contains(title, "rollouts of up to 8 steps") {
				t.Errorf("title %q", title)
			}
		})
	}
}

// TestSeedSeries: a study curve is the mean over the seeds, with the
// least and the largest seed's value as its spread, which the study plot
// draws as error bars; a run's study (StudyRows of its runs) and a
// study.json draw the same curves; a seed that diverged is left out of
// the mean and named in the legend.
func TestSeedSeries(t *testing.T) {
	g := func(vals ...float64) []GroupResult {
		return []GroupResult{{Group: "id_test", Horizons: []int{5, 10}, MSE: vals}}
	}
	var runs []StudyRun
	for i, v := range [][3]float64{{1, 0.5, 1}, {2, 0.25, 2}, {6, 0.75, math.Inf(1)}} {
		runs = append(runs, StudyRun{Variant: "default", Seed: uint64(i + 1), Report: &Report{
			HoldGroups: g(7, 8),
			Models: []ModelReport{{Name: "CaLiSym-GR", Kind: "gr", Groups: g(v[0], v[1])},
				{Name: "MLP", Kind: "mlp", Groups: g(2*v[0], v[2])}},
		}})
	}
	rows := StudyRows(runs, []Variant{{Name: "default"}})
	hs, series := studySeries(rows, "id_test", []string{"default"})
	if !slices.Equal(hs, []int{5, 10}) || len(series) != 3 {
		t.Fatalf("horizons %v, %d series, want [5 10] and 3", hs, len(series))
	}
	for _, c := range []struct {
		name         string
		dashed       bool
		mean, lo, hi []float64
		role         plot.Role
	}{
		{"default CaLiSym", false, []float64{3, 0.5}, []float64{1, 0.25}, []float64{6, 0.75}, plot.Other},
		// one seed's MLP diverged at 10 steps
		{"default MLP (seeds that diverged, left out: 1)", true, []float64{6, 1.5}, []float64{2, 1}, []float64{12, 2}, plot.Other},
		{"state held constant", false, []float64{7, 8}, nil, nil, plot.Hold},
	} {
		i := slices.IndexFunc(series, func(s plot.Series) bool { return s.Name == c.name })
		if i < 0 {
			t.Errorf("no series %q in %+v", c.name, series)
			continue
		}
		s := series[i]
		same := func(a, b []float64) bool {
			return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
		}
		if s.Dashed != c.dashed || s.Role != c.role || !same(s.Values, c.mean) || !same(s.Lo, c.lo) || !same(s.Hi, c.hi) {
			t.Errorf("%q: %+v, want mean %v [%v, %v], dashed %v", c.name, s, c.mean, c.lo, c.hi, c.dashed)
		}
	}
	dir := t.TempDir()
	if err := studyPlots(runs, []Variant{{Name: "default"}}, "test", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "study_id_test.png")); err != nil {
		t.Error(err)
	}
}

// TestReadStudyRows: a study.json reads back as the rows StudyRows wrote,
// and a row with a missing or unknown field, a mean outside [min, max], a
// value out of range or a duplicate is refused, naming the row and the
// field.
func TestReadStudyRows(t *testing.T) {
	ok := `{"group":"id_test","model":"calisym","variant":"default","horizon":5,"mean":2,"min":1,"max":3,"seeds":3}`
	rows, err := ReadStudyRows([]byte("[" + ok + "]"))
	if err != nil || len(rows) != 1 || rows[0] != (StudyRow{Group: "id_test", Model: "calisym", Variant: "default", Horizon: 5, Mean: 2, Min: 1, Max: 3, Seeds: 3}) {
		t.Fatalf("%+v, %v", rows, err)
	}
	for _, c := range []struct{ name, json, want string }{
		{"no mean", `[{"group":"id_test","model":"calisym","variant":"default","horizon":5,"min":1,"max":3,"seeds":3}]`, `row 1: no "mean"`},
		{"no seeds", "[" + ok + `,{"group":"id_test","model":"mlp","variant":"default","horizon":5,"mean":2,"min":1,"max":3}]`, `row 2: no "seeds"`},
		{"mean above max", `[{"group":"id_test","model":"calisym","variant":"default","horizon":5,"mean":4,"min":1,"max":3,"seeds":3}]`, "row 1: id_test default calisym at horizon 5: mean 4 outside [min 1, max 3]"},
		{"mean below min", `[{"group":"id_test","model":"calisym","variant":"default","horizon":5,"mean":0.5,"min":1,"max":3,"seeds":3}]`, "mean 0.5 outside [min 1, max 3]"},
		{"unknown field", `[{"group":"id_test","model":"calisym","variant":"default","horizon":5,"mean":2,"min":1,"max":3,"seeds":3,"maen":2}]`, `unknown field "maen"`},
		{"model", strings.Replace("["+ok+"]", `"calisym"`, `"gru"`, 1), `row 1: model "gru": one of calisym, mlp, hold`},
		{"group", strings.Replace("["+ok+"]", `"id_test"`, `"../x"`, 1), `row 1: group "../x"`},
		{"horizon", strings.Replace("["+ok+"]", `"horizon":5`, `"horizon":0`, 1), "row 1: horizon 0: must be ≥ 1"},
		{"seeds", strings.Replace("["+ok+"]", `"seeds":3`, `"seeds":0`, 1), "row 1: seeds 0: must be ≥ 1"},
		{"duplicate", "[" + ok + "," + ok + "]", "row 2: id_test default calisym at horizon 5 again (row 1)"},
		{"empty", "[]", "no rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadStudyRows([]byte(c.json))
			if !errors.Is(err, ErrStudyRows) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

// TestStudyPlotsSelect: StudyPlots draws a figure per group, only the
// groups and variants asked for, and refuses a variant or group in no row
// and a group asked for that has no model of the variants drawn.
func TestStudyPlotsSelect(t *testing.T) {
	var rows []StudyRow
	for _, g := range []string{"id_test", "ood"} {
		for _, v := range []string{"default", "onestep"} {
			for _, m := range []string{"calisym", "mlp", "hold"} {
				for _, h := range []int{5, 10} {
					rows = append(rows, StudyRow{Group: g, Model: m, Variant: v, Horizon: h, Mean: float64(h), Min: float64(h) / 2, Max: float64(h) * 2, Seeds: 3})
				}
			}
		}
	}
	// a group of its own variant
	for _, h := range []int{5, 10} {
		rows = append(rows, StudyRow{Group: "payload_dev", Model: "calisym", Variant: "default+force", Horizon: h, Mean: float64(h), Min: float64(h), Max: float64(h), Seeds: 3})
	}
	flat := append(slices.Clone(rows), StudyRow{Group: "flat", Model: "mlp", Variant: "default", Horizon: 5, Mean: 1, Min: 1, Max: 1, Seeds: 1},
		StudyRow{Group: "flat", Model: "mlp", Variant: "default", Horizon: 10, Mean: 1, Min: 1, Max: 1, Seeds: 1})
	one := append(slices.Clone(rows), StudyRow{Group: "single", Model: "mlp", Variant: "default", Horizon: 5, Mean: 1, Min: 1, Max: 1, Seeds: 1})
	for _, c := range []struct {
		name             string
		rows             []StudyRow
		variants, groups []string
		want             []string
		err              string
	}{
		{"all", rows, nil, nil, []string{"study_id_test.png", "study_ood.png", "study_payload_dev.png"}, ""},
		{"variants", rows, []string{"onestep"}, nil, []string{"study_id_test.png", "study_ood.png"}, ""},
		{"group", rows, []string{"onestep", "default"}, []string{"ood"}, []string{"study_ood.png"}, ""},
		{"unknown variant", rows, []string{"select"}, nil, nil, `variant "select" is in no row`},
		{"unknown group", rows, nil, []string{"ood_rough"}, nil, `group "ood_rough" is in no row`},
		{"group without the variants", rows, []string{"default"}, []string{"payload_dev"}, nil, `group "payload_dev" has no model of the variants default`},
		{"flat", flat, nil, []string{"flat"}, nil, `group "flat": every value drawn is 1`},
		{"one horizon", one, nil, []string{"single"}, nil, `group "single" has rows at horizon [5] only`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := StudyPlots(c.rows, "test", dir, c.variants, c.groups)
			if c.err != "" {
				if !errors.Is(err, ErrStudyRows) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range paths {
				got = append(got, filepath.Base(p))
			}
			ents, _ := os.ReadDir(dir)
			if !slices.Equal(got, c.want) || len(ents) != len(c.want) {
				t.Errorf("wrote %v (%d files), want %v", got, len(ents), c.want)
			}
		})
	}
}

// TestStudySeriesPhysicsPerVariant: a study's figure draws the identified
// physics model once where every variant's is the same, and once per
// distinct curve, named after its variant, where a variant's physics runs
// on other ports (the quadrotor prior's lagged wrench).
func TestStudySeriesPhysicsPerVariant(t *testing.T) {
	rows := func(lagged float64) []StudyRow {
		var out []StudyRow
		for _, v := range []string{"prior", "prior-lag", "plain"} {
			for _, h := range []int{5, 10} {
				out = append(out, StudyRow{Group: "ood", Model: "calisym", Variant: v, Horizon: h, Mean: 1, Min: 1, Max: 1, Seeds: 3},
					StudyRow{Group: "ood", Model: "hold", Variant: v, Horizon: h, Mean: 9, Min: 9, Max: 9, Seeds: 3})
				if v != "plain" {
					p := float64(h)
					if v == "prior-lag" {
						p *= lagged
					}
					out = append(out, StudyRow{Group: "ood", Model: "physics", Variant: v, Horizon: h, Mean: p, Min: p, Max: p, Seeds: 3})
				}
			}
		}
		return out
	}
	for _, c := range []struct {
		lagged float64
		want   []string
	}{
		{1, []string{"identified physics model"}},
		{0.9, []string{"identified physics model (prior)", "identified physics model (prior-lag)"}},
	} {
		_, series := studySeries(rows(c.lagged), "ood", []string{"prior", "prior-lag", "plain"})
		var got []string
		for _, s := range series {
			if strings.HasPrefix(s.Name, "identified physics") {
				got = append(got, s.Name)
			}
		}
		if !slices.Equal(got, c.want) || series[len(series)-1].Name != "state held constant" || len(series) != 3+len(c.want)+1 {
			t.Errorf("lagged physics ×%g: physics curves %q, series %d", c.lagged, got, len(series))
		}
	}
}
