package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/internal/fixtures"
)

// TestForecastReference: the numpy reference (python/calisym_ref.py
// forecast) reads a direct forecaster file and forecasts the ports the Go
// policy forecasts, from the same start, at every step (beyond the
// policy's steps too), to 1e-12 relative; it refuses a state-feedback
// forecaster, which needs the rollout's states.
func TestForecastReference(t *testing.T) {
	py := python(t)
	const n, nm, steps, H = 3, 4, 5, 8
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func(k int, s, off float64) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = off + s*rng.NormFloat64()
		}
		return v
	}
	ni := forecast.DirectInputs(n, nm)
	pol := forecast.NewDirect(n, nm, steps, 6, 3, vec(ni, 1, 0), vec(ni, 0.1, 2), vec(nm, 1, 0), vec(nm, 0.1, 3))
	if err := pol.SetWeights(vec(len(pol.W), 0.5, 0)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bind := forecast.Binding{ModelSHA256: "ab", N: n, NU: nm, NC: 0, Dt: 0.01}
	direct := filepath.Join(dir, "direct.forecaster.json")
	if err := (&forecast.File{Binding: bind, Policy: pol}).Save(direct); err != nil {
		t.Fatal(err)
	}
	feedback := filepath.Join(dir, "feedback.forecaster.json")
	fb := forecast.NewLearned(n, nm, 0, 1, vec(forecast.Inputs(n, nm), 0, 0), vec(forecast.Inputs(n, nm), 0, 1), vec(nm, 0, 0), vec(nm, 0, 1))
	if err := (&forecast.File{Binding: bind, Policy: fb}).Save(feedback); err != nil {
		t.Fatal(err)
	}
	x0, m0 := vec(2*n, 1, 0), vec(nm, 1, 0)
	caseJS, err := json.Marshal(map[string]any{"x0": x0, "m0": m0, "horizon": H})
	if err != nil {
		t.Fatal(err)
	}
	casePath := filepath.Join(dir, "case.json")
	if err := os.WriteFile(casePath, caseJS, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(fixtures.Root(), "python", "calisym_ref.py"), "forecast", direct, casePath, feedback, casePath)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res []struct {
		Ports [][]float64 `json:"ports"`
		Error string      `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res) != 2 {
		t.Fatalf("reference output %q (%v, exit %v): %s", out.String(), err, runErr, errb.String())
	}
	if runErr == nil || !strings.Contains(res[1].Error, "state-feedback") {
		t.Errorf("the feedback forecaster: exit %v, %q", runErr, res[1].Error)
	}
	loaded, err := forecast.Load(direct)
	if err != nil {
		t.Fatal(err)
	}
	p := loaded.Policy
	p.Begin(x0, m0)
	want := make([]float64, nm)
	if len(res[0].Ports) != H {
		t.Fatalf("%d steps of ports, want %d", len(res[0].Ports), H)
	}
	for k := range H {
		copy(want, m0)
		if k > 0 {
			p.Next(k, x0, nil, want)
		}
		for i, w := range want {
			if got := res[0].Ports[k][i]; math.Abs(got-w) > 1e-12*math.Max(1, math.Abs(w)) {
				t.Fatalf("step %d port %d: numpy %v, Go %v", k, i, got, w)
			}
		}
	}
}
