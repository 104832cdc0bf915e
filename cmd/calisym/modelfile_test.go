package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
)

// runCLICtx runs the command line in process under ctx (for commands that
// serve until interrupted, such as node) and returns its stdout and
// stderr.
func runCLICtx(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// stripChecksums writes a copy of a model file without its checksum
// entries, as calisym wrote files before it added them.
func stripChecksums(t *testing.T, src, dst string) {
	t.Helper()
	file, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	hl := binary.LittleEndian.Uint64(file[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+hl], &header); err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	if err := json.Unmarshal(header["__metadata__"], &meta); err != nil {
		t.Fatal(err)
	}
	if meta["tensors_sha256"] == "" || meta["model_sha256"] == "" {
		t.Fatalf("%s carries no checksums to strip: %v", src, meta)
	}
	delete(meta, "tensors_sha256")
	delete(meta, "model_sha256")
	raw, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	header["__metadata__"] = raw
	hj, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hj)))
	if err := os.WriteFile(dst, append(append(out, hj...), file[8+hl:]...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestModelChecksumWarning: eval, inspect, replay and node all load a
// model file without checksums with the same warning on stderr, and a
// file with them without one.
func TestModelChecksumWarning(t *testing.T) {
	dir := t.TempDir()
	model := livetest.TrainPendulum(t, dir)
	old := filepath.Join(dir, "old.safetensors")
	stripChecksums(t, model, old)
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatal(err)
	}
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	log := filepath.Join(sim, "ood.mcap")
	for _, tc := range []struct {
		name string
		args func(model string) []string
	}{
		{"eval", func(m string) []string {
			return []string{"eval", "--model", m, "--data", filepath.Join(sim, "ood"), "--horizon", "5", "--horizons", "5"}
		}},
		{"inspect", func(m string) []string { return []string{"inspect", m} }},
		{"replay", func(m string) []string {
			return []string{"replay", "--params", params, "--model", m, "--out", filepath.Join(dir, "replay.mcap"), log}
		}},
		{"node", func(m string) []string {
			return []string{"node", "--params", params, "--model", m, "--addr", "127.0.0.1:0", "--input", log}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []string{old, model} {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, stderr, err := runCLICtx(t, ctx, tc.args(m)...)
				cancel()
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", tc.name, m, err, stderr)
				}
				want := "calisym " + tc.name + ": warning: model file " + old + " carries no checksum"
				if got := strings.Contains(stderr, want); got != (m == old) {
					t.Errorf("%s of %s: warning %v, want %v; stderr:\n%s", tc.name, m, got, m == old, stderr)
				}
			}
		})
	}
}
