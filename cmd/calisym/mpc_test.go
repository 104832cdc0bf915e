package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
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
