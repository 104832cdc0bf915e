package experiment

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
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
	rep, err := Run(ctx, spec, Datasets{Train: sets[0], ID: sets[1], OOD: sets[2]}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
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
