package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/plot"
)

func TestPendulumSmoke(t *testing.T) {
	data, spec, err := PendulumPreset("smoke")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sets, err := SimulatePendulum(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if got := sets[2].Episodes[0].Tags["initial_energy"]; got < 20*1.36-1e-6 || got > 40*1.36+1e-6 {
		t.Errorf("OOD initial energy %v outside [27.2, 54.4] J", got)
	}
	dir := t.TempDir()
	data3 := Datasets{Train: sets[0], ID: sets[1], OOD: sets[2]}
	rep, err := Run(ctx, spec, data3, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRolloutFigure(t, rep, spec, data3, dir)
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Models) != 2 {
		t.Fatalf("%d models in report.json", len(got.Models))
	}
	for _, m := range got.Models {
		for _, k := range []string{"ood_ar_mse", "id_ar_mse", "horizon", "params", "flops_per_step", "symplectic_residual_max", "train_seconds"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%v: report.json lacks %q", m["name"], k)
			}
		}
	}
	sym := rep.Models[0]
	if !(sym.SymplecticResidualMax <= 1e-13) {
		t.Errorf("ε_J max %v > 1e-13", sym.SymplecticResidualMax)
	}
	if sym.Params != 4524 || math.IsNaN(sym.OODARMSE) {
		t.Errorf("params %d, OOD MSE %v", sym.Params, sym.OODARMSE)
	}
	for _, f := range []string{"report.md", PlotTraining, PlotRollout, PlotBars, PlotHorizon, sym.File, rep.Models[1].File} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
}

// checkRolloutFigure checks the OOD rollout plot of a run: it shows the
// window of median CaLiSym error among the windows the report's AR MSE
// averages, says so, and names every model's error there.
func checkRolloutFigure(t *testing.T, rep *Report, spec Spec, data Datasets, dir string) {
	t.Helper()
	ctx := context.Background()
	f, err := rolloutFigure(ctx, rep, spec, data, dir)
	if err != nil || f == nil {
		t.Fatalf("rollout figure: %v, %v", f, err)
	}
	var names []string
	var roles []plot.Role
	for _, m := range f.Models {
		names, roles = append(names, m.Name), append(roles, m.Role)
	}
	if !slices.Equal(names, []string{"CaLiSym-GRB", "MLP", holdName}) || !slices.Equal(roles, []plot.Role{plot.GRB, plot.MLP, plot.Hold}) {
		t.Errorf("rollout models %q, roles %v", names, roles)
	}
	ws := trainer.EvalWindows(data.OOD, spec.Horizon, spec.EvalStride, spec.MaxEvalWindows)
	sv, err := trainer.OpenModel(filepath.Join(dir, rep.Models[0].File))
	if err != nil {
		t.Fatal(err)
	}
	errs, err := windowErrors(ctx, sv.Rollers, data.OOD, ws, spec.Horizon)
	if err != nil {
		t.Fatal(err)
	}
	// The per-window errors are the report's: their mean is its AR MSE.
	var mean float64
	for _, e := range errs {
		mean += e / float64(len(errs))
	}
	if got, want := mean, rep.Models[0].OODARMSE; math.Abs(got-want) > 1e-12*want {
		t.Errorf("mean of the window errors %v, the report's OOD AR MSE %v", got, want)
	}
	// The error of the window shown, from the plotted curves (all four
	// channels are shown), is the median.
	var sq float64
	n := 0
	for c := range f.Truth {
		for k := 1; k < len(f.T); k++ {
			e := f.Models[0].Channels[c][k] - f.Truth[c][k]
			sq += e * e
			n++
		}
	}
	shown := sq / float64(n)
	below, above := 0, 0
	for _, e := range errs {
		switch {
		case e < shown*(1-1e-12):
			below++
		case e > shown*(1+1e-12):
			above++
		}
	}
	if below > (len(errs)-1)/2 || above > len(errs)/2 {
		t.Errorf("shown window's CaLiSym error %v: %d windows below, %d above of %d; want the median", shown, below, above, len(errs))
	}
	caption := strings.Join(f.Caption, " ")
	for _, want := range []string{
		fmt.Sprintf("Window chosen by rule: the median CaLiSym-GRB error among the report's %d OOD windows (rank %d of %d)", len(ws), (len(ws)-1)/2+1, len(ws)),
		"AR MSE in this window (over all OOD windows): CaLiSym-GRB " + num(shown) + " (" + num(rep.Models[0].OODARMSE) + "), MLP ",
		", state held constant ",
	} {
		if !strings.Contains(caption, want) {
			t.Errorf("caption %q lacks %q", caption, want)
		}
	}
	if !strings.HasPrefix(f.Title, "double pendulum: OOD rollout of 100 steps (1.00 s) from ood-") || !strings.Contains(f.Title, ", t = ") {
		t.Errorf("title %q", f.Title)
	}
}

func TestMedianWindow(t *testing.T) {
	for _, tc := range []struct {
		errs        []float64
		index, rank int
	}{
		{[]float64{3}, 0, 1},
		{[]float64{5, 1, 3}, 2, 2},
		{[]float64{4, 1, 3, 2}, 3, 2},              // lower median
		{[]float64{2, math.Inf(1), 2, 1, 2}, 2, 3}, // equal errors rank in window order
		{[]float64{math.Inf(1), math.Inf(1), 1}, 0, 2},
	} {
		if i, r := medianWindow(tc.errs); i != tc.index || r != tc.rank {
			t.Errorf("medianWindow(%v) = %d, rank %d; want %d, rank %d", tc.errs, i, r, tc.index, tc.rank)
		}
	}
}

// cancelOn is a log that cancels a context once a line containing its
// text has been written.
type cancelOn struct {
	text   string
	n      int // lines left to see
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.text) {
		if c.n--; c.n == 0 {
			c.cancel()
		}
	}
	return len(p), nil
}

// TestInterruptedRunLeavesNoReport interrupts the smoke benchmark after
// its last model is evaluated, while the plots are drawn: the run fails
// and leaves neither report.json nor report.md (they used to be written
// before the plots, a report linking a missing rollout_ood.png); an
// uninterrupted run writes the plots and then both reports.
func TestInterruptedRunLeavesNoReport(t *testing.T) {
	data, spec, err := PendulumPreset("smoke")
	if err != nil {
		t.Fatal(err)
	}
	for i := range spec.Models {
		spec.Models[i].Train.Epochs = 1
	}
	sets, err := SimulatePendulum(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	ds := Datasets{Train: sets[0], ID: sets[1], OOD: sets[2]}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	log := &cancelOn{text: "OOD AR MSE", n: len(spec.Models), cancel: cancel}
	if _, err := Run(ctx, spec, ds, dir, log); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted run: error %v, want context.Canceled", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the run ended before its last model was evaluated")
	}
	for _, f := range []string{"report.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the interrupted run left %s (%v)", f, err)
		}
	}
}
