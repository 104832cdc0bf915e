// Package test holds end-to-end tests that run the calisym command-line
// tool as a user would.
package test

import (
	"bytes"
	"encoding/binary"
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

// tensorData returns the tensor bytes of a safetensors file: what follows
// its 8-byte header length and its JSON header.
func tensorData(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 8 {
		t.Fatalf("%s: %d bytes, no safetensors header", path, len(raw))
	}
	n := binary.LittleEndian.Uint64(raw)
	if n > uint64(len(raw)-8) || uint64(len(raw)-8)-n == 0 {
		t.Fatalf("%s: header of %d bytes in a file of %d, no tensor data", path, n, len(raw))
	}
	return raw[8+n:]
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
	// 2 epochs resumed to 3: the cosine schedule's length is its number of
	// epochs, so a longer resume is refused under it (the checkpoint
	// records it) and allowed under the constant schedule, where it ends
	// with the bits of 3 epochs uninterrupted (docs/training.md).
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
	out, err = run(t, bin, append(args, "--resume")...)
	if err == nil || !strings.Contains(out, "3 epochs (the cosine schedule's length)") {
		t.Errorf("train --resume to 3 epochs of a 2-epoch cosine run: %v, want a refusal naming the epochs\n%s", err, out)
	}
	constant := filepath.Join(dir, "gr_constant.ckpt")
	args[12], args[16] = "2", constant // --epochs, --checkpoint
	args = append(args, "--schedule", "constant")
	if out, err := run(t, bin, args...); err != nil {
		t.Fatalf("train --schedule constant: %v\n%s", err, out)
	}
	args[12] = "3"
	out, err = run(t, bin, append(args, "--resume")...)
	if err != nil {
		t.Fatalf("train --schedule constant --resume (2 epochs to 3): %v\n%s", err, out)
	}
	if !strings.Contains(out, "epoch 3/3 (resumed after 2)") || strings.Contains(out, "epoch 1/") {
		t.Errorf("train --schedule constant --resume trained other epochs than the 3rd after the checkpoint's 2:\n%s", out)
	}
	whole := filepath.Join(dir, "gr_whole.safetensors")
	if out, err := run(t, bin, "train", "--data", train, "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "4",
		"--epochs", "3", "--batch", "128", "--schedule", "constant", "--out", whole); err != nil {
		t.Fatalf("train 3 epochs: %v\n%s", err, out)
	}
	// the tensors, bit for bit (the header records when each was written)
	if resumed, uninterrupted := tensorData(t, model), tensorData(t, whole); !bytes.Equal(resumed, uninterrupted) {
		t.Errorf("constant schedule: 2 epochs resumed to 3 differ from 3 uninterrupted (tensor data of %d and %d bytes)", len(resumed), len(uninterrupted))
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
