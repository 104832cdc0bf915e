package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/mlp"
)

// TestReferenceInputShapes: the numpy reference checks the shape of every
// rollout input and names the wrong array, its shape, the one wanted and
// the case file, for a SympNet and the MLP. A port array of width 1 was
// broadcast to every port silently, and a wrong x0 gave a raw numpy
// broadcast error naming the model.
func TestReferenceInputShapes(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	sym := writePresetModels(t, dir)[0] // the pendulum: 2n = 4, n_u = 2
	mlpPath := filepath.Join(dir, "mlp.json")
	if err := trainer.SaveMLP(mlpPath, mlp.New(mlp.Config{StateDim: 4, PortDim: 2, Hidden: []int{3}}, rand.New(rand.NewPCG(1, 2)))); err != nil {
		t.Fatal(err)
	}
	if sym.stateDim != 4 || sym.portDim != 2 {
		t.Fatalf("the first preset is not the pendulum: %+v", sym)
	}
	writeJSON := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	x0 := [][]float64{{0.1, 0.2, 0.3, 0.4}}
	for _, c := range []struct {
		name string
		x0   any
		port any
		want string
	}{
		{"ports of width 1", x0, [][][]float64{{{0.5}, {0.5}}}, "ports has shape (1, 2, 1), want (1, H, 2)"},
		{"x0 of width 3", [][]float64{{0.1, 0.2, 0.3}}, [][][]float64{{{0.5, 0.5}}}, "x0 has shape (1, 3), want (N, 4)"},
		{"ports of another batch", x0, [][][]float64{{{0.5, 0.5}}, {{0.5, 0.5}}}, "ports has shape (2, 1, 2), want (1, H, 2)"},
	} {
		cs := writeJSON(strings.ReplaceAll(c.name, " ", "-")+".json", map[string]any{"x0": c.x0, "ports": c.port})
		for _, model := range []string{sym.path, mlpPath} {
			res, stderr, err := runReference(t, py, model, cs)
			if err == nil || len(res) != 1 || !strings.Contains(res[0].Error, c.want) || !strings.Contains(res[0].Error, cs) {
				t.Errorf("%s, %s: exit %v, result %+v (stderr %q); want an error naming %s and %q", c.name, filepath.Base(model), err, res, stderr, cs, c.want)
			}
		}
	}
	// a right case still rolls out
	ok := writeJSON("ok.json", map[string]any{"x0": x0, "ports": [][][]float64{{{0.5, 0.5}, {0.1, 0.2}}}})
	res, stderr, err := runReference(t, py, sym.path, ok, mlpPath, ok)
	if err != nil || len(res) != 2 || len(res[0].States) != 1 || len(res[0].States[0]) != 2 || len(res[1].States[0][1]) != 4 {
		t.Errorf("a right case: %v, %+v (stderr %q)", err, res, stderr)
	}
}

// TestReferenceInstalls installs the numpy reference as the README says,
// `pip install ./python`, offline (--no-index) into a virtual environment
// that sees the system's numpy, and imports it from another directory:
// `import calisym_ref` failed outside python/.
func TestReferenceInstalls(t *testing.T) {
	py := python(t)
	if err := exec.Command(py, "-c", "import venv, ensurepip").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s has no venv/ensurepip (scripts/test.sh installs python3-venv): %v", py, err)
		}
		t.Skipf("%s has no venv/ensurepip (apt-get install python3-venv): %v", py, err)
	}
	dir := t.TempDir()
	env := filepath.Join(dir, "venv")
	if out, err := exec.Command(py, "-m", "venv", "--system-site-packages", env).CombinedOutput(); err != nil {
		t.Fatalf("venv: %v\n%s", err, out)
	}
	before := listDir(t, filepath.Join(fixtures.Root(), "python"))
	pip := exec.Command(filepath.Join(env, "bin", "pip"), "install", "--no-index", "--no-cache-dir", "./python")
	pip.Dir = fixtures.Root()
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install --no-index ./python: %v\n%s", err, out)
	}
	model := writePresetModels(t, dir)[0].path
	script := `import sys, numpy as np, calisym_ref
m = calisym_ref.load(sys.argv[1])
s = m.rollout(np.zeros((1, m.state_dim)), np.zeros((1, 3, m.port_dim)))
print(calisym_ref.__file__, s.shape)`
	cmd := exec.Command(filepath.Join(env, "bin", "python"), "-c", script, model)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), filepath.Join(env, "lib")) || !strings.Contains(string(out), "(1, 3, 4)") {
		t.Errorf("import calisym_ref from the installed package: %v\n%s", err, out)
	}
	// the build left nothing in the source tree
	if after := listDir(t, filepath.Join(fixtures.Root(), "python")); !slices.Equal(before, after) {
		t.Errorf("pip install ./python changed python/: %v, then %v", before, after)
	}
}

// listDir returns the names in a directory.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestReferencePortInputs: the numpy reference's model_ports checks the
// plan's width, port_means the history's (a history of another width was
// reshaped silently, or failed with a bare reshape error), and step names
// its own arrays (x, e) and shapes, not a rollout's (x0, ports); right
// inputs still work.
func TestReferencePortInputs(t *testing.T) {
	py := python(t)
	model := writePresetModels(t, t.TempDir())[0] // the pendulum: 2n = 4, n_u = 2, no port history
	script := `import sys, json, numpy as np
sys.path.insert(0, sys.argv[2])
import calisym_ref as r
m = r.load(sys.argv[1])
def err(f):
    try:
        f()
        return ""
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
print(json.dumps({
    "plan": err(lambda: r.model_ports(m, np.zeros((3, 3)))),
    "history": err(lambda: r.port_means(np.zeros((3, 2)), np.zeros((2, 3)), 2)),
    "history flat": err(lambda: r.port_means(np.zeros((3, 2)), np.zeros(3), 2)),
    "step": err(lambda: m.step(np.zeros((1, 4)), np.zeros((1, 3)))),
    "ok": err(lambda: (r.model_ports(m, np.zeros((3, 2))), r.port_means(np.zeros((3, 2)), np.zeros((2, 2)), 2),
                       r.port_means(np.zeros((3, 2)), np.zeros(2), 2), m.step(np.zeros(4), np.zeros(2)))),
}))`
	out, err := exec.Command(py, "-c", script, model.path, filepath.Join(fixtures.Root(), "python")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for k, want := range map[string]string{
		"plan":         "InputError: plan has shape (3, 3), want (H, 2)",
		"history":      "InputError: history has shape (2, 3), want (K, 2)",
		"history flat": "InputError: history has shape (3,), want (K, 2)",
		"step":         "InputError: e has shape (1, 3), want (1, 2)",
		"ok":           "",
	} {
		if g := got[k]; (want == "" && g != "") || !strings.HasPrefix(g, want) {
			t.Errorf("%s: %q, want %q", k, g, want)
		}
	}
}
