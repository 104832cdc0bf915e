package trainer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
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

// TestOpenModelChecksums flips one weight of a saved MLP and requires
// OpenModel to refuse it naming the checksum; a file written before
// checksums (testdata) opens with a warning, an intact one verified, and
// reformatting the JSON keeps it valid. An MLP written under a
// .safetensors name opens by its content.
func TestOpenModelChecksums(t *testing.T) {
	ds := toyDataset(t, 1, 30, 1, 0, 5)
	net, err := NewMLP(ds, []int{3}, LossWeights{Q: 1, P: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "model.safetensors") // what `train --model mlp` wrote without --out
	if err := net.Save(good); err != nil {
		t.Fatal(err)
	}
	sv, err := OpenModel(good)
	if err != nil || sv.Kind != "mlp" || !sv.ChecksumVerified || sv.Warning != "" || sv.Net == nil {
		t.Fatalf("an intact MLP file: %v, %+v", err, sv)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty := filepath.Join(dir, "pretty.json")
	if err := os.WriteFile(pretty, indented.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if sv, err := OpenModel(pretty); err != nil || !sv.ChecksumVerified {
		t.Errorf("the reformatted file: %v", err)
	}
	// Change one digit of the first weight.
	i := bytes.Index(raw, []byte(`"layers.0.bias":[`)) + len(`"layers.0.bias":[`) + 5
	if raw[i] < '0' || raw[i] > '9' {
		t.Fatalf("no digit to change at %d: %q", i, raw[i-5:i+5])
	}
	flipped := slices.Clone(raw)
	flipped[i] = '0' + (raw[i]-'0'+1)%10
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = OpenModel(bad)
	if !errors.Is(err, ErrMLPChecksum) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("a changed weight: %v, want a checksum error naming %s", err, bad)
	}
	if _, err := LoadMLP(bad); !errors.Is(err, ErrMLPChecksum) {
		t.Errorf("LoadMLP of a changed weight: %v", err)
	}
	old, err := OpenModel("testdata/mlp_no_checksum.json")
	if err != nil {
		t.Fatalf("an MLP file written before checksums: %v", err)
	}
	if old.ChecksumVerified || !strings.Contains(old.Warning, "no checksum") || old.Params != net.NumParams() {
		t.Errorf("an MLP file written before checksums: %+v", old)
	}
}

// TestCheckDatasetNames requires a model trained on other coordinate or
// port names than a dataset's to be refused, naming both lists, for either
// kind of model.
func TestCheckDatasetNames(t *testing.T) {
	ds := toyDataset(t, 2, 40, 2, 0, 23)
	ds.Coordinates, ds.Ports = []string{"q1", "q2"}, []string{"u1", "u2"}
	sym := symplecticLearner(t, ds, predictor.KindGR, 23)
	sym.Model().Meta.Coordinates, sym.Model().Meta.Ports = ds.Coordinates, ds.Ports
	net, err := NewMLP(ds, []int{4}, LossWeights{Q: 1, P: 1}, 23)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	symPath, mlpPath := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "mlp.json")
	if err := sym.Model().Save(symPath); err != nil {
		t.Fatal(err)
	}
	if err := net.Save(mlpPath); err != nil {
		t.Fatal(err)
	}
	other := *ds
	other.Coordinates = []string{"shoulder", "elbow"}
	otherPorts := *ds
	otherPorts.Ports = []string{"tau_shoulder", "tau_elbow"}
	unnamed := *ds
	unnamed.Coordinates, unnamed.Ports = nil, nil
	for _, path := range []string{symPath, mlpPath} {
		sv, err := OpenModel(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := sv.CheckDataset(ds, "same"); err != nil {
			t.Errorf("%s on its own data: %v", path, err)
		}
		if err := sv.CheckDataset(&unnamed, "unnamed"); err != nil {
			t.Errorf("%s on data without names: %v", path, err)
		}
		err = sv.CheckDataset(&other, "other")
		if !errors.Is(err, ErrModelData) || !strings.Contains(err.Error(), "[q1 q2]") || !strings.Contains(err.Error(), "[shoulder elbow]") {
			t.Errorf("%s on other coordinates: %v, want an error naming both lists", path, err)
		}
		err = sv.CheckDataset(&otherPorts, "other ports")
		if !errors.Is(err, ErrModelData) || !strings.Contains(err.Error(), "[u1 u2]") || !strings.Contains(err.Error(), "[tau_shoulder tau_elbow]") {
			t.Errorf("%s on other ports: %v, want an error naming both lists", path, err)
		}
	}
}

// TestMLPFileMeta: an MLP built for a dataset records its layout (the
// control/contact split), sampling period and port history, OpenModel
// reads them back, the checksum covers them (a changed dt is refused),
// and a file without them (SaveMLP, as files were written before) still
// opens verified with none.
func TestMLPFileMeta(t *testing.T) {
	ds := toyDataset(t, 1, 30, 3, 1, 6)
	ds.Dt = 0.0025
	ds.Ports = []string{"u", "mean4(u)", "mean4(c)", "c"}
	net, err := NewMLP(ds, []int{3}, LossWeights{Q: 1, P: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mlp.json")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	sv, err := OpenModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := (predictor.Layout{N: 2, NU: 3, NC: 1}); sv.Layout != want || sv.Dt != 0.0025 || sv.PortMean != 4 || !sv.ChecksumVerified {
		t.Errorf("opened layout %+v, dt %v, port_mean %d, verified %v; want %+v, 0.0025, 4, true", sv.Layout, sv.Dt, sv.PortMean, sv.ChecksumVerified, want)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"a changed dt", `"dt":0.0025`, `"dt":0.0035`, "checksum"},
		{"a changed n_c", `"n_c":1`, `"n_c":2`, "checksum"},
	} {
		if !bytes.Contains(raw, []byte(c.from)) {
			t.Fatalf("%s: %s not in the file", c.name, c.from)
		}
		bad := filepath.Join(dir, "bad.json")
		if err := os.WriteFile(bad, bytes.Replace(raw, []byte(c.from), []byte(c.to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenModel(bad); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	plain := filepath.Join(dir, "plain.json")
	if err := SaveMLP(plain, net.Net); err != nil {
		t.Fatal(err)
	}
	if sv, err := OpenModel(plain); err != nil || !sv.ChecksumVerified || sv.Layout != (predictor.Layout{}) || sv.Dt != 0 || sv.PortMean != 0 {
		t.Errorf("an MLP file without meta: %v, %+v", err, sv)
	}
}

// TestCheckDatasetPortHistory checks the refusal of a dataset converted
// with another port history than the model's (convert.history.port_mean):
// it said only "n_u=12 … n_u=6"; it says that port_mean differs, both
// values and the ports each side's history adds, for either kind of
// model. A layout that differs otherwise gets no such sentence.
func TestCheckDatasetPortHistory(t *testing.T) {
	names := func(prefix string, k int) []string {
		var out []string
		for i := 1; i <= k; i++ {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	means := func(m int, ports []string) []string {
		var out []string
		for _, p := range ports {
			out = append(out, fmt.Sprintf("mean%d(%s)", m, p))
		}
		return out
	}
	u, f := names("u", 6), names("f", 12)
	tau := names("tau", 18)
	for _, c := range []struct {
		name     string
		model    predictor.Layout
		m        int
		data     predictor.Layout
		ports    []string
		want     string // "" : no port-history sentence
		wantDims string
	}{
		{"model with a history, data without", predictor.Layout{N: 6, NU: 12}, 2, predictor.Layout{N: 6, NU: 6}, u,
			"convert.history.port_mean differs, 2 (n_u = 6 measured control ports + 6 means of the ports over the 2 samples before) for the model against 0 (no port history: n_u = 6 measured control ports) for the dataset: convert the data with the params the model was trained with (convert.history.port_mean: 2)", "n_u=12"},
		{"data without port names", predictor.Layout{N: 6, NU: 12}, 2, predictor.Layout{N: 6, NU: 6}, nil, "port_mean differs, 2 (", "n_u=6"},
		{"model without, data with a history", predictor.Layout{N: 6, NU: 6}, 0, predictor.Layout{N: 6, NU: 12}, append(slices.Clone(u), means(2, u)...),
			"port_mean differs, 0 (no port history: n_u = 6 measured control ports) for the model against 2 (n_u = 6 measured control ports + 6 means of the ports over the 2 samples before) for the dataset", "n_u=12"},
		{"contacts: the quadruped's history of 10", predictor.Layout{N: 18, NU: 48, NC: 12}, 10, predictor.Layout{N: 18, NU: 18, NC: 12}, append(slices.Clone(tau), f...),
			"10 (n_u = 18 measured control ports + 30 means of the ports over the 10 samples before) for the model against 0 (no port history: n_u = 18 measured control ports)", "n_u=48"},
		{"other controls, no history", predictor.Layout{N: 6, NU: 6}, 0, predictor.Layout{N: 6, NU: 4}, names("u", 4), "", "n_u=4"},
		{"another robot", predictor.Layout{N: 6, NU: 12}, 2, predictor.Layout{N: 2, NU: 2}, names("u", 2), "", "n=2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := &dataset.Dataset{Meta: dataset.Meta{N: c.data.N, NU: c.data.NU, NC: c.data.NC, Ports: c.ports}}
			for _, kind := range []string{"calisym", "mlp"} {
				sv := &SavedModel{Path: "m", StateDim: 2 * c.model.N, PortDim: c.model.NU + c.model.NC, Layout: c.model, PortMean: c.m}
				wantDims := c.wantDims
				if kind == "calisym" {
					sv.Model = &predictor.Model{Layout: c.model}
				} else {
					wantDims = fmt.Sprintf("%d and %d", 2*c.data.N, c.data.NU+c.data.NC)
				}
				err := sv.CheckDataset(ds, "d")
				if !errors.Is(err, ErrModelData) || !strings.Contains(err.Error(), wantDims) {
					t.Fatalf("%s: %v, want ErrModelData naming %q", kind, err, wantDims)
				}
				if got := strings.Contains(err.Error(), "port_mean"); c.want == "" && got || c.want != "" && !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v\nwant it to say %q", kind, err, c.want)
				}
			}
		})
	}
}
