// Package test holds end-to-end tests that run the calisym command-line
// tool as a user would.
package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildCLI compiles cmd/calisym once per test binary run.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "calisym")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/calisym").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// TestDemoTrainEval runs `calisym demo --preset smoke`, then trains and
// evaluates a model on its datasets with the individual commands, and feeds
// the tools wrong input.
func TestDemoTrainEval(t *testing.T) {
	bin := buildCLI(t)
	dir := t.TempDir()
	out, err := run(t, bin, "demo", "--preset", "smoke", "--quiet", "--out", dir)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	if !strings.Contains(out, "CaLiSym-GRB") || !strings.Contains(out, "MLP") {
		t.Errorf("demo printed no comparison table:\n%s", out)
	}
	var rep struct {
		Models []map[string]any `json:"models"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Models {
		for _, k := range []string{"ood_ar_mse", "id_ar_mse", "horizon", "params", "flops_per_step", "symplectic_residual_max", "train_seconds"} {
			if _, ok := m[k]; !ok {
				t.Errorf("model %v lacks %s", m["name"], k)
			}
		}
	}
	train, ood := filepath.Join(dir, "data", "train"), filepath.Join(dir, "data", "ood")
	model := filepath.Join(dir, "gr.safetensors")
	ckpt := filepath.Join(dir, "gr.ckpt")
	args := []string{"train", "--data", train, "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "4",
		"--epochs", "2", "--batch", "128", "--checkpoint", ckpt, "--checkpoint-every", "1", "--out", model}
	if out, err := run(t, bin, args...); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	out, err = run(t, bin, args...)
	if err == nil || !strings.Contains(out, "--resume") {
		t.Errorf("training over an existing checkpoint without --resume: %v\n%s", err, out)
	}
	args[12] = "3" // --epochs
	if out, err := run(t, bin, append(args, "--resume")...); err != nil {
		t.Fatalf("train --resume: %v\n%s", err, out)
	}
	out, err = run(t, bin, "eval", "--model", model, "--data", ood, "--horizon", "50", "--horizons", "5,50", "--json")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, out)
	}
	var ev struct {
		ARMSE float64 `json:"ar_mse"`
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil || !(ev.ARMSE > 0) {
		t.Errorf("eval --json: %v, %s", err, out)
	}
	out, err = run(t, bin, "inspect", model, "--json")
	if err != nil || !strings.Contains(out, `"lifted_dim": 12`) {
		t.Errorf("inspect of a trained model: %v\n%s", err, out)
	}

	t.Run("wrong dimensions", func(t *testing.T) {
		other := filepath.Join(dir, "quad.safetensors")
		if out, err := run(t, bin, "inspect", "--preset", "quadrotor", "--save", other); err != nil {
			t.Fatalf("inspect --save: %s", out)
		}
		out, err := run(t, bin, "eval", "--model", other, "--data", ood)
		if err == nil || !strings.Contains(out, other) || !strings.Contains(out, ood) {
			t.Errorf("eval with mismatched dimensions: %v\n%s", err, out)
		}
	})
	t.Run("corrupt model file", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.safetensors")
		raw, _ := os.ReadFile(model)
		if err := os.WriteFile(bad, raw[:len(raw)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := run(t, bin, "eval", "--model", bad, "--data", ood)
		if err == nil || !strings.Contains(out, "bad.safetensors") {
			t.Errorf("eval of a truncated model: %v\n%s", err, out)
		}
	})
	t.Run("missing dataset", func(t *testing.T) {
		out, err := run(t, bin, "train", "--data", filepath.Join(dir, "nope"))
		if err == nil || !strings.Contains(out, "nope") {
			t.Errorf("train on a missing dataset: %v\n%s", err, out)
		}
	})
}
