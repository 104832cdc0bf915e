package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/nodetest"
)

// requireORT checks that onnxruntime-node is installed in test/js (on a
// machine whose node_modules predates it, scripts/test.sh installs it).
func requireORT(t *testing.T) {
	t.Helper()
	nodetest.Require(t)
	if _, err := os.Stat(filepath.Join(nodetest.Dir(), "node_modules", "onnxruntime-node")); err != nil {
		msg := "test/js/node_modules/onnxruntime-node is missing (scripts/test.sh installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// checkONNX exports the model twice — the one-step map with a dynamic
// batch, stepped by the script, and the unrolled rollout of the case's
// horizon with a fixed batch — runs both with onnxruntime-node and
// compares them with the Go rollout.
func checkONNX(t *testing.T, m refModel, c refCase, casePath string) {
	requireORT(t)
	for _, g := range []struct {
		name string
		args []string
		out  string
	}{
		{"step", []string{"--batch", "dynamic"}, "next_state"},
		{"rollout", []string{"--horizon", strconv.Itoa(c.Horizon), "--batch", strconv.Itoa(len(c.X0))}, "states"},
	} {
		file := m.path + "." + g.name + ".onnx"
		if _, _, err := runCLI(t, append([]string{"export", m.path, "--onnx", file}, g.args...)...); err != nil {
			t.Fatalf("export %s: %v", g.name, err)
		}
		var res struct {
			States  [][][]float64 `json:"states"`
			Inputs  []string      `json:"inputs"`
			Outputs []string      `json:"outputs"`
		}
		if err := json.Unmarshal(nodetest.Run(t, 2*time.Minute, "onnx_rollout.mjs", file, casePath), &res); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Inputs, []string{"state", "ports"}) || !slices.Equal(res.Outputs, []string{g.out}) {
			t.Errorf("%s graph: inputs %v, outputs %v; want [state ports], [%s]", g.name, res.Inputs, res.Outputs, g.out)
		}
		rel, err := compareStates(res.States, c.Want)
		if err != nil {
			t.Fatalf("%s graph: %v", g.name, err)
		}
		t.Logf("%s graph: %.3g relative to the Go rollout", g.name, rel)
		if !(rel <= refTol) {
			t.Errorf("%s graph differs from the Go rollout by %.3g relative (want ≤ %g)", g.name, rel, refTol)
		}
	}
}

// TestExportErrors: missing --onnx, a bad --batch or --horizon, and a
// corrupted model file are errors.
func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	model := writePresetModels(t, dir)[0].path
	raw, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	bad := filepath.Join(dir, "bad.safetensors")
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.onnx")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{model}, "--onnx FILE is required"},
		{[]string{model, "--onnx", out, "--batch", "many"}, `--batch "many"`},
		{[]string{model, "--onnx", out, "--batch", "0"}, `--batch "0"`},
		{[]string{model, "--onnx", out, "--horizon", "-2"}, "--horizon -2"},
		{[]string{bad, "--onnx", out}, "checksum mismatch"},
		{[]string{filepath.Join(dir, "absent.safetensors"), "--onnx", out}, "absent.safetensors"},
	} {
		_, _, err := runCLI(t, append([]string{"export"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("export %v: %v, want an error mentioning %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed export wrote its output")
	}
}
