package experiment

import (
	"math"
	"strings"
	"testing"
)

// TestStudyRowsWithoutGroups: a benchmark without evaluation groups (the
// Crazyflie, the pendulum) reports its ID-test and OOD sets by horizon as
// the groups "id_test" and "ood", read off each model's multi-horizon
// rows, with the state held constant, in the study's markdown and in the
// rows of study.json; a diverged seed is counted, not averaged.
func TestStudyRowsWithoutGroups(t *testing.T) {
	run := func(variant string, seed uint64, scale float64) StudyRun {
		mh := func(f float64) []HorizonRow {
			return []HorizonRow{{Horizon: 5, IDMSE: f, OODMSE: 2 * f}, {Horizon: 100, IDMSE: 10 * f, OODMSE: 20 * f}}
		}
		return StudyRun{Variant: variant, Seed: seed, Report: &Report{Models: []ModelReport{
			{Name: "CaLiSym-GR", Kind: "gr", MultiHorizon: mh(scale)},
			{Name: "MLP", Kind: "mlp", MultiHorizon: mh(3 * scale)},
		}}}
	}
	runs := []StudyRun{run("onestep", 1, 1), run("onestep", 2, 3), run("wide", 1, 0.5), run("wide", 2, math.NaN())}
	hold := []GroupResult{
		{Group: "id_test", Horizons: []int{5, 100}, MSE: []float64{7, 70}},
		{Group: "ood", Horizons: []int{5, 100}, MSE: []float64{9, 90}},
	}
	vs := []Variant{{Name: "onestep"}, {Name: "wide"}}
	groups := withSplitGroups(runs, hold, nil)
	if len(runs[0].Report.Models[0].Groups) != 0 || len(runs[0].Report.HoldGroups) != 0 {
		t.Fatal("withSplitGroups changed the runs it was given")
	}
	rows := StudyRows(groups, vs)
	want := []StudyRow{
		{"id_test", "calisym", "onestep", 5, 2, 1, 3, 2, 0},
		{"id_test", "calisym", "onestep", 100, 20, 10, 30, 2, 0},
		{"id_test", "mlp", "onestep", 5, 6, 3, 9, 2, 0},
		{"id_test", "mlp", "onestep", 100, 60, 30, 90, 2, 0},
		{"id_test", "hold", "onestep", 5, 7, 7, 7, 2, 0},
		{"id_test", "hold", "onestep", 100, 70, 70, 70, 2, 0},
		{"id_test", "calisym", "wide", 5, 0.5, 0.5, 0.5, 1, 1},
		{"id_test", "calisym", "wide", 100, 5, 5, 5, 1, 1},
		{"id_test", "mlp", "wide", 5, 1.5, 1.5, 1.5, 1, 1},
		{"id_test", "mlp", "wide", 100, 15, 15, 15, 1, 1},
		{"id_test", "hold", "wide", 5, 7, 7, 7, 2, 0},
		{"id_test", "hold", "wide", 100, 70, 70, 70, 2, 0},
	}
	if len(rows) != 2*len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), 2*len(want), rows)
	}
	for i, w := range want {
		if rows[i] != w {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], w)
		}
	}
	// the OOD group: twice the ID errors, the OOD hold
	if r := rows[len(want)]; r.Group != "ood" || r.Mean != 4 || r.Min != 2 || r.Max != 6 {
		t.Errorf("first OOD row %+v", r)
	}
	if r := rows[len(want)+4]; r.Model != "hold" || r.Mean != 9 {
		t.Errorf("OOD hold row %+v", r)
	}
	var b strings.Builder
	groupTable(&b, groups, vs)
	for _, line := range []string{
		"| group | variant | model | seeds | 5 | 100 |",
		"| id_test | onestep | CaLiSym-GR | 2 | 2 [1, 3] | 20 [10, 30] |",
		"| ood | onestep | MLP | 2 | 12 [6, 18] | 120 [60, 180] |",
		"| ood | | state held constant | | 9 | 90 |",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, b.String())
		}
	}
}
