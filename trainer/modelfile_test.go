package trainer

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/calisym/calisym/predictor"
)

// TestOpenModel saves a symplectic model and an MLP, opens both with
// OpenModel and requires the same rollouts; a dataset of other dimensions
// is rejected.
func TestOpenModel(t *testing.T) {
	ds := toyDataset(t, 2, 40, 2, 0, 21)
	other := toyDataset(t, 2, 40, 1, 0, 22)
	sym := symplecticLearner(t, ds, predictor.KindGRB, 21)
	net, err := NewMLP(ds, []int{6}, LossWeights{Q: 1, P: 1}, 21)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	symPath, mlpPath := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "mlp.json")
	if err := sym.Model().Save(symPath); err != nil {
		t.Fatal(err)
	}
	if err := SaveMLP(mlpPath, net.Net); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, kind string
		params     int
		want       RollerFactory
	}{
		{symPath, "grb", sym.NumParams(), sym.Rollers()},
		{mlpPath, "mlp", net.NumParams(), net.Rollers()},
	}
	x0, ports := ds.Episodes[0].X[:ds.StateDim()], ds.Episodes[0].E[:10*ds.PortDim()]
	for _, c := range cases {
		sv, err := OpenModel(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if sv.Kind != c.kind || sv.Params != c.params || sv.StateDim != ds.StateDim() || sv.PortDim != ds.PortDim() {
			t.Errorf("%s: opened as %+v", c.path, sv)
		}
		if (sv.Model != nil) != (c.kind != "mlp") {
			t.Errorf("%s: Model set: %v", c.path, sv.Model != nil)
		}
		if err := sv.CheckDataset(ds, "toy"); err != nil {
			t.Errorf("%s: %v", c.path, err)
		}
		if err := sv.CheckDataset(other, "other"); err == nil {
			t.Errorf("%s: a dataset with other ports passed the check", c.path)
		}
		got, want := make([]float64, 10*ds.StateDim()), make([]float64, 10*ds.StateDim())
		for _, r := range []struct {
			f   RollerFactory
			out []float64
		}{{sv.Rollers, got}, {c.want, want}} {
			roller, err := r.f()
			if err != nil {
				t.Fatal(err)
			}
			if err := roller.Rollout(x0, ports, 10, r.out); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the opened model rolls out differently", c.path)
		}
	}
	if _, err := OpenModel(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing MLP file opened")
	}
}
