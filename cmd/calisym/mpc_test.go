package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mpc"
	"github.com/calisym/calisym/trainer/plot"
)

// planningPage is the page whose `go run ./cmd/calisym mpc` command
// TestMPCReadme runs.
const planningPage = "docs/planning.md"

// readmeMPCCommand returns the arguments of the `go run ./cmd/calisym mpc`
// command of planningPage.
func readmeMPCCommand(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), planningPage))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "go run ./cmd/calisym mpc"); ok {
			return append([]string{"mpc"}, strings.Fields(rest)...)
		}
	}
	t.Fatalf("%s has no `go run ./cmd/calisym mpc` command", planningPage)
	return nil
}

// TestMPCReadme runs the MPC command of planningPage at smoke size (--preset
// smoke, the output in a temporary directory): it simulates data, trains
// a small GRB model and drives the simulated pendulum to the target with
// iLQR on the model's Jacobians. The steady-state angle error must be
// below 0.05 rad and the RMS error below half of the uncontrolled one, and
// the report, trace and plot must be written.
func TestMPCReadme(t *testing.T) {
	args := readmeMPCCommand(t)
	out := t.TempDir()
	for i := range args {
		if i > 0 && args[i-1] == "--out" {
			args[i] = out
		}
	}
	args = append(args, "--preset", "smoke", "--quiet")
	stdout, _, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("calisym %s: %v\n%s", strings.Join(args, " "), err, stdout)
	}
	var rep mpcReport
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Model != "learned GRB" {
		t.Fatalf("runs %+v, want the learned model's", rep.Runs)
	}
	r := rep.Runs[0]
	if !(r.FinalRMS < 0.05) {
		t.Errorf("steady-state RMS angle error %.4g rad, want < 0.05", r.FinalRMS)
	}
	if !(r.RMSAngleError < 0.5*rep.Uncontrolled) {
		t.Errorf("RMS angle error %.4g rad, want below half the uncontrolled %.4g", r.RMSAngleError, rep.Uncontrolled)
	}
	if !(r.SolveMeanMs > 0) || !(r.Iterations >= 1) {
		t.Errorf("solve time %v ms, %v iterations", r.SolveMeanMs, r.Iterations)
	}
	// The solve time is given as wall time and as the solving thread's CPU
	// time, which a single thread cannot make exceed the wall time.
	if !(r.SolveCPUMeanMs > 0) || r.SolveCPUMeanMs > r.SolveMeanMs*1.01+0.01 {
		t.Errorf("solve: %v ms of thread CPU time against %v ms of wall time", r.SolveCPUMeanMs, r.SolveMeanMs)
	}
	// The page prints the command's table header as the command writes it.
	header := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "controller model") {
			header = l
		}
	}
	if !strings.Contains(header, "wall") || !strings.Contains(header, "thread CPU") {
		t.Errorf("the summary's header does not name the measures of the solve time: %q", header)
	}
	page, err := os.ReadFile(filepath.Join(fixtures.Root(), planningPage))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), header+"\n") {
		t.Errorf("%s does not print the summary's header %q", planningPage, header)
	}
	if !strings.Contains(stdout, "learned GRB") {
		t.Errorf("the summary does not name the controller:\n%s", stdout)
	}
	for _, f := range []string{"trace.csv", "mpc.png", "model.safetensors"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// TestMPCErrors: an unknown preset, a bad horizon and a model of another
// robot are refused.
func TestMPCErrors(t *testing.T) {
	dir := t.TempDir()
	other := writePresetModels(t, dir)[1].path // the quadrotor
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "huge"}, `unknown preset "huge"`},
		{[]string{"--horizon", "0"}, "--horizon 0"},
		{[]string{"--model", other}, "not a double-pendulum model"},
	} {
		_, _, err := runCLI(t, append([]string{"mpc", "--quiet", "--out", dir}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mpc %v: %v, want an error mentioning %q", c.args, err, c.want)
		}
	}
}

// TestMPCFigure: mpc.png draws the angles from t = 0, the state at rest
// the run starts from, to the last state, and each torque from the time
// it is applied.
func TestMPCFigure(t *testing.T) {
	tr := &mpc.Trace{
		X: [][]float64{{0, 0, 0, 0}, {0.1, -0.05, 0, 0}, {0.3, -0.25, 0, 0}, {0.38, -0.21, 0, 0}},
		U: [][]float64{{9, -3}, {6, 1}, {5, 1.5}},
	}
	rep := &mpcReport{Steps: 3, Horizon: 20, Runs: []mpcRun{{Model: "learned GRB", trace: tr}}}
	fig := mpcFigure(rep, [2]float64{5.2, 1.6})
	if len(fig.T) != 4 || fig.T[0] != 0 || math.Abs(fig.T[3]-3*mpcDt) > 1e-12 {
		t.Fatalf("times %v, want 0 to %g s", fig.T, 3*mpcDt)
	}
	ch := fig.Models[0].Channels
	for k, x := range tr.X {
		if ch[0][k] != x[0] || ch[1][k] != x[1] {
			t.Errorf("t = %g s: angles (%g, %g), want the state (%g, %g)", fig.T[k], ch[0][k], ch[1][k], x[0], x[1])
		}
	}
	for k, u := range tr.U {
		if ch[2][k] != u[0] || ch[3][k] != u[1] {
			t.Errorf("t = %g s: torques (%g, %g), want those applied from then, (%g, %g)", fig.T[k], ch[2][k], ch[3][k], u[0], u[1])
		}
	}
	if err := plot.Rollout(filepath.Join(t.TempDir(), "mpc.png"), fig); err != nil {
		t.Fatal(err)
	}
}
