package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// TestConvertShards converts the simulated pendulum's three logs with a
// split by energy quantiles (which needs every file's windows) once
// unsharded on one goroutine, once on every core, and as 2 and 4 shards
// (one of them empty) merged: every file written must be the same bytes.
// A merge with a shard missing, or of shards of other settings, fails
// naming the problem.
func TestConvertShards(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if out, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatalf("sim: %v\n%s", err, out)
	}
	// the params with a split by energy: the top fifth of the windows' energies is OOD
	params := fixtures.EditedParams(t, "pendulum_sim.yaml", "  validate:\n", "  split:\n    by: energy\n    default: train\n    rules:\n      - split: ood\n        quantile: [0.8, 1]\n  validate:\n")
	logs := []string{filepath.Join(sim, "id.mcap"), filepath.Join(sim, "ood.mcap"), filepath.Join(sim, "train.mcap")}
	convert := func(out string, extra ...string) string {
		t.Helper()
		args := append([]string{"convert", "--params", params, "--quiet", "--out", out}, extra...)
		if !strings.Contains(strings.Join(extra, " "), "--merge") {
			args = append(args, logs...)
		}
		stdout, stderr, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("convert %v: %v\n%s%s", extra, err, stdout, stderr)
		}
		return stdout
	}
	ref := filepath.Join(dir, "ref")
	out := convert(ref, "--workers", "1")
	if !strings.Contains(out, "split ood") || !strings.Contains(out, "split train") {
		t.Fatalf("the energy split wrote no ood and train splits:\n%s", out)
	}
	want := readTree(t, ref)
	same := func(name, got string) {
		t.Helper()
		g := readTree(t, got)
		if len(g) != len(want) {
			t.Errorf("%s wrote %d files, the unsharded conversion %d", name, len(g), len(want))
		}
		for p, b := range want {
			if !bytes.Equal(g[p], b) {
				t.Errorf("%s: %s differs from the unsharded conversion's", name, p)
			}
		}
	}
	all := filepath.Join(dir, "all-cores")
	convert(all)
	same("every core", all)
	for _, n := range []string{"2", "4"} {
		shards := filepath.Join(dir, "shards-"+n)
		for i := range map[string]int{"2": 2, "4": 4}[n] {
			if out := convert(shards, "--shard", string(rune('0'+i))+"/"+n); !strings.Contains(out, "shard ") {
				t.Errorf("--shard %d/%s printed %q", i, n, out)
			}
		}
		merged := filepath.Join(dir, "merged-"+n)
		convert(merged, "--merge", shards)
		same(n+" shards merged", merged)
	}

	// a shard missing
	if err := os.Remove(filepath.Join(dir, "shards-4", "shard-2-of-4.calisym-shard")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "convert", "--params", params, "--quiet", "--out", filepath.Join(dir, "bad"), "--merge", filepath.Join(dir, "shards-4")); err == nil || !strings.Contains(err.Error(), "2/4") {
		t.Errorf("merge with shard 2/4 missing: %v", err)
	}
	// shards of other settings
	edited, err := os.ReadFile(params)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte(strings.Replace(string(edited), "stride: 10", "stride: 20", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "convert", "--params", other, "--quiet", "--out", filepath.Join(dir, "bad"), "--merge", filepath.Join(dir, "shards-2")); err == nil || !strings.Contains(err.Error(), "other convert settings") {
		t.Errorf("merge of shards with other settings: %v", err)
	}
	if _, _, err := runCLI(t, "convert", "--params", params, "--quiet", "--out", filepath.Join(dir, "bad"), "--shard", "3/3", logs[0]); err == nil || !strings.Contains(err.Error(), "INDEX/COUNT") {
		t.Errorf("--shard 3/3: %v", err)
	}
}

// readTree reads every file under dir, by path relative to it.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s holds no file", dir)
	}
	return files
}
