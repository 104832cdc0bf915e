package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/trainer"
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
		{"id_test", "calisym", "", "onestep", 5, 2, 1, 3, 2, 0},
		{"id_test", "calisym", "", "onestep", 100, 20, 10, 30, 2, 0},
		{"id_test", "mlp", "", "onestep", 5, 6, 3, 9, 2, 0},
		{"id_test", "mlp", "", "onestep", 100, 60, 30, 90, 2, 0},
		{"id_test", "hold", "", "onestep", 5, 7, 7, 7, 2, 0},
		{"id_test", "hold", "", "onestep", 100, 70, 70, 70, 2, 0},
		{"id_test", "calisym", "", "wide", 5, 0.5, 0.5, 0.5, 1, 1},
		{"id_test", "calisym", "", "wide", 100, 5, 5, 5, 1, 1},
		{"id_test", "mlp", "", "wide", 5, 1.5, 1.5, 1.5, 1, 1},
		{"id_test", "mlp", "", "wide", 100, 15, 15, 15, 1, 1},
		{"id_test", "hold", "", "wide", 5, 7, 7, 7, 2, 0},
		{"id_test", "hold", "", "wide", 100, 70, 70, 70, 2, 0},
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

// TestStudyRowsPerOODFile: each OOD log is a group of its own
// ("ood_<log>"), read off the models' multi-horizon rows split by log and
// off the state held constant split the same way; a seed run before the
// split (no per-log errors) is left out of those groups, not counted as
// diverged, and still counts in "ood".
func TestStudyRowsPerOODFile(t *testing.T) {
	pf := func(a, b float64) []trainer.FileError {
		return []trainer.FileError{
			{File: "double_pendulum_hw/trajectories/20230629-143601.csv", Windows: 8, MSE: a},
			{File: "double_pendulum_hw/trajectories/20230629-154220.csv", Windows: 4, MSE: b},
		}
	}
	run := func(seed uint64, f float64, split bool) StudyRun {
		mh := []HorizonRow{{Horizon: 5, IDMSE: f, OODMSE: 2 * f}, {Horizon: 100, IDMSE: 10 * f, OODMSE: 20 * f}}
		if split {
			mh[0].OODPerFile, mh[1].OODPerFile = pf(f, 3*f), pf(10*f, 30*f)
		}
		return StudyRun{Variant: "v", Seed: seed, Report: &Report{Models: []ModelReport{{Name: "CaLiSym-GRB", Kind: "grb", MultiHorizon: mh}}}}
	}
	runs := []StudyRun{run(1, 1, true), run(2, 3, true), run(3, 5, false)}
	hold := append([]GroupResult{
		{Group: "id_test", Horizons: []int{5, 100}, MSE: []float64{7, 70}},
		{Group: "ood", Horizons: []int{5, 100}, MSE: []float64{9, 90}},
	}, oodFileGroups([]int{5, 100}, [][]trainer.FileError{pf(4, 6), pf(40, 60)})...)
	if len(hold) != 4 || hold[2].Group != "ood_20230629-143601" || hold[3].Group != "ood_20230629-154220" {
		t.Fatalf("the hold's groups %+v", hold)
	}
	rows := StudyRows(withSplitGroups(runs, hold, nil), []Variant{{Name: "v"}})
	got := map[string]StudyRow{}
	for _, r := range rows {
		got[fmt.Sprintf("%s/%s/%d", r.Group, r.Model, r.Horizon)] = r
	}
	for key, w := range map[string]StudyRow{
		"ood/calisym/100":                 {Group: "ood", Model: "calisym", Variant: "v", Horizon: 100, Mean: 60, Min: 20, Max: 100, Seeds: 3},
		"ood_20230629-143601/calisym/5":   {Group: "ood_20230629-143601", Model: "calisym", Variant: "v", Horizon: 5, Mean: 2, Min: 1, Max: 3, Seeds: 2},
		"ood_20230629-154220/calisym/100": {Group: "ood_20230629-154220", Model: "calisym", Variant: "v", Horizon: 100, Mean: 60, Min: 30, Max: 90, Seeds: 2},
		"ood_20230629-154220/hold/100":    {Group: "ood_20230629-154220", Model: "hold", Variant: "v", Horizon: 100, Mean: 60, Min: 60, Max: 60, Seeds: 2},
	} {
		if got[key] != w {
			t.Errorf("%s: %+v, want %+v", key, got[key], w)
		}
	}
	if len(rows) != 4*2*2 {
		t.Errorf("%d rows, want 16 (4 groups, CaLiSym and the hold, 2 horizons)", len(rows))
	}
	// a log missing at a horizon has no value there
	if g := oodFileGroups([]int{5, 100}, [][]trainer.FileError{pf(1, 2), pf(3, 4)[:1]}); len(g) != 2 || len(g[1].Horizons) != 1 || g[1].Horizons[0] != 5 {
		t.Errorf("a log without windows at 100 steps: %+v", g)
	}
	for file, want := range map[string]string{
		"double_pendulum_hw/trajectories/20230629-154220.csv": "ood_20230629-154220",
		"crazyflie/test/melon_run2":                           "ood_melon_run2",
		"/data/flight.v2.mcap":                                "ood_flight.v2",
	} {
		if got := OODFileGroup(file); got != want {
			t.Errorf("OODFileGroup(%q) = %q, want %q", file, got, want)
		}
	}
}

// TestReportNonFinite: a report with non-finite values wherever a
// diverged model leaves them (its errors, an epoch's validation AR MSE, a
// group's and a file's error, the per-coordinate error) is written as
// JSON with those values null and everything else kept, and the report
// itself is not changed.
func TestReportNonFinite(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	rep := &Report{System: "s", Extra: map[string]string{"k": "v"}, Models: []ModelReport{{
		Name: "MLP", Kind: "mlp", OODARMSE: inf, IDARMSE: 0.5,
		OOD:          trainer.EvalResult{MSE: inf, PerCoord: []float64{1, nan}, PerFile: []trainer.FileError{{File: "f", MSE: inf}}},
		MultiHorizon: []HorizonRow{{Horizon: 5, IDMSE: 0.1, OODMSE: nan, OODPerFile: []trainer.FileError{{File: "f", MSE: inf}}}},
		History:      []trainer.EpochStats{{Epoch: 1, Loss: 0.2, ValARMSE: inf}},
		Groups:       []GroupResult{{Group: "g", Horizons: []int{5}, MSE: []float64{inf}}},
	}}, HoldGroups: []GroupResult{{Group: "g", Horizons: []int{5}, MSE: []float64{nan}}}}
	dir := t.TempDir()
	if err := writeReport(context.Background(), rep, Markdown(rep), dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Error  string `json:"error"`
		Models []struct {
			OODARMSE *float64 `json:"ood_ar_mse"`
			IDARMSE  *float64 `json:"id_ar_mse"`
			OOD      struct {
				PerCoord []*float64 `json:"per_coord"`
			} `json:"ood"`
			History []struct {
				Loss     *float64 `json:"loss"`
				ValARMSE *float64 `json:"val_ar_mse"`
			} `json:"history"`
			MultiHorizon []struct {
				OODPerFile []struct {
					MSE *float64 `json:"mse"`
				} `json:"ood_per_file"`
			} `json:"multi_horizon"`
		} `json:"models"`
	}
	if err := json.Unmarshal(raw, &g); err != nil || g.Error != "" || len(g.Models) != 1 {
		t.Fatalf("report.json %s: %v", raw, err)
	}
	m := g.Models[0]
	if m.OODARMSE != nil || m.IDARMSE == nil || *m.IDARMSE != 0.5 || m.OOD.PerCoord[0] == nil || m.OOD.PerCoord[1] != nil ||
		m.History[0].ValARMSE != nil || m.History[0].Loss == nil || m.MultiHorizon[0].OODPerFile[0].MSE != nil {
		t.Errorf("report.json: %s", raw)
	}
	if !math.IsInf(rep.Models[0].History[0].ValARMSE, 1) || !math.IsNaN(rep.HoldGroups[0].MSE[0]) || !math.IsNaN(rep.Models[0].OOD.PerCoord[1]) {
		t.Error("writing the report changed it")
	}
	// read back: the nulls are NaN, never zero (a perfect score)
	back, err := ReadReport(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	bm := back.Models[0]
	for name, v := range map[string]float64{"OOD AR MSE": bm.OODARMSE, "OOD MSE": bm.OOD.MSE, "per_coord[1]": bm.OOD.PerCoord[1],
		"per_file": bm.OOD.PerFile[0].MSE, "OOD at 5": bm.MultiHorizon[0].OODMSE, "ood_per_file": bm.MultiHorizon[0].OODPerFile[0].MSE,
		"val_ar_mse": bm.History[0].ValARMSE, "group": bm.Groups[0].MSE[0], "hold group": back.HoldGroups[0].MSE[0]} {
		if !math.IsNaN(v) {
			t.Errorf("%s read back as %v, want NaN", name, v)
		}
	}
	if bm.IDARMSE != 0.5 || bm.OOD.PerCoord[0] != 1 || bm.MultiHorizon[0].IDMSE != 0.1 || bm.History[0].Loss != 0.2 || back.Extra["k"] != "v" {
		t.Errorf("finite values read back as %+v", bm)
	}
	// a report that could not be written is refused, not read as empty
	if err := os.WriteFile(filepath.Join(dir, "report.json"), []byte(`{"error": "json: unsupported value: +Inf"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readReport(dir); err == nil || !strings.Contains(err.Error(), "remove its directory") {
		t.Errorf("a failed report: %v", err)
	}
}
