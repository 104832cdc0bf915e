package main

import (
	"bytes"
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

// checkONNX exports every model four times — the one-step map with a
// dynamic batch, stepped by the script; the rollout of the case's horizon
// as an ONNX Loop with a dynamic batch; the rollout unrolled with a fixed
// batch; the one-step map with its Jacobians (--jacobian) — runs all
// graphs with onnxruntime-node (one process) and compares each with the
// Go rollout, and the Jacobians with Go's Linearizer along it.
func checkONNX(t *testing.T, models []refModel, cases []refCase, paths []string) {
	requireORT(t)
	type graph struct {
		name string
		args []string
		out  string
	}
	type job struct {
		model int
		graph graph
	}
	var jobs []job
	var pairs []string
	for i, m := range models {
		h := strconv.Itoa(cases[i].Horizon)
		for _, g := range []graph{
			{"step", []string{"--batch", "dynamic"}, "next_state"},
			{"loop", []string{"--horizon", h, "--batch", "dynamic"}, "states"},
			{"unrolled", []string{"--horizon", h, "--unroll", "--batch", strconv.Itoa(len(cases[i].X0))}, "states"},
			{"jacobian", []string{"--jacobian", "--batch", "dynamic"}, "next_state jac_state jac_ports"},
		} {
			file := m.path + "." + g.name + ".onnx"
			if _, _, err := runCLI(t, append([]string{"export", m.path, "--onnx", file}, g.args...)...); err != nil {
				t.Fatalf("%s: export %s: %v", m.name, g.name, err)
			}
			jobs = append(jobs, job{i, g})
			pairs = append(pairs, file, paths[i])
		}
	}
	for _, m := range models {
		if !strings.HasSuffix(m.name, "mlp") || m.data == "" {
			continue
		}
		// An MLP trained on a dataset records its layout and dt (the
		// simulated pendulum: n = 2, n_u = 2, dt = 0.01 s) in the graph.
		raw, err := os.ReadFile(m.path + ".step.onnx")
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range [][2]string{{"calisym.layout", `{"n":2,"n_u":2,"n_c":0}`}, {"calisym.dt", "0.01"}, {"calisym.port_mean", "0"}, {"calisym.dtype", "float64"}} {
			if !bytes.Contains(raw, onnxMetaEntry(kv[0], kv[1])) {
				t.Errorf("%s: the ONNX graph has no metadata entry %s = %s", m.name, kv[0], kv[1])
			}
		}
	}
	var res []refResult
	if err := json.Unmarshal(nodetest.Run(t, 5*time.Minute, "onnx_rollout.mjs", pairs...), &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d graphs", len(res), len(jobs))
	}
	for k, j := range jobs {
		m, g, r := models[j.model], j.graph, res[k]
		if !slices.Equal(r.Inputs, []string{"state", "ports"}) || !slices.Equal(r.Outputs, strings.Fields(g.out)) {
			t.Errorf("%s, %s graph: inputs %v, outputs %v; want [state ports], [%s]", m.name, g.name, r.Inputs, r.Outputs, g.out)
		}
		rel, err := compareStates(r.States, cases[j.model].Want)
		if err != nil {
			t.Errorf("%s, %s graph: %v", m.name, g.name, err)
			continue
		}
		t.Logf("%s, %s graph: %.3g relative to the Go rollout", m.name, g.name, rel)
		if !(rel <= refTol) {
			t.Errorf("%s, %s graph differs from the Go rollout by %.3g relative (want ≤ %g)", m.name, g.name, rel, refTol)
		}
		if g.name == "jacobian" {
			checkJacobians(t, m.name+", ONNX jac_state and jac_ports", r, cases[j.model])
		}
	}
}

// onnxMetaEntry returns the bytes of a metadata_props entry as protobuf
// encodes a StringStringEntryProto (key and value shorter than 128 bytes).
func onnxMetaEntry(key, value string) []byte {
	b := append([]byte{0x0a, byte(len(key))}, key...)
	return append(append(b, 0x12, byte(len(value))), value...)
}

// TestExportErrors: missing --onnx, a bad --batch or --horizon, --unroll
// without a horizon, --jacobian with a horizon, an unknown --dtype,
// --port-history for a model without one or with a horizon, and a
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
		{[]string{model, "--onnx", out, "--unroll"}, "--unroll needs --horizon"},
		{[]string{model, "--onnx", out, "--jacobian", "--horizon", "3"}, "--jacobian belongs to the one-step map"},
		{[]string{model, "--onnx", out, "--dtype", "float16"}, `--dtype "float16": want float64 or float32`},
		{[]string{model, "--onnx", out, "--port-history"}, "--port-history: " + model + " has no port history"},
		{[]string{model, "--onnx", out, "--port-history", "--horizon", "3"}, "--port-history writes the port-history graph"},
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
