package test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// TestTrainOnShards converts the simulated pendulum's logs with a split
// by energy quantiles (which needs every file) as 2 shards, and merged:
// training on the shards' train split (SHARDDIR/train, validated on
// SHARDDIR/id) gives the model, checkpoint, history and evaluation report
// of training on the merged datasets, bit for bit, as one process and as
// 2 MPI processes. A split the shards lack is an error naming those they
// have, and the shards' directory itself is refused with a hint.
func TestTrainOnShards(t *testing.T) {
	bin := buildCLI(t)
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if out, err := run(t, bin, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatalf("sim: %v\n%s", err, out)
	}
	params := fixtures.EditedParams(t, "pendulum_sim.yaml", "  validate:\n", "  split:\n    by: energy\n    default: train\n    rules:\n      - split: id\n        quantile: [0.6, 0.8]\n      - split: ood\n        quantile: [0.8, 1]\n  validate:\n")
	logs := []string{filepath.Join(sim, "id.mcap"), filepath.Join(sim, "ood.mcap"), filepath.Join(sim, "train.mcap")}
	shards, merged := filepath.Join(dir, "shards"), filepath.Join(dir, "merged")
	for i := range 2 {
		args := append([]string{"convert", "--params", params, "--quiet", "--out", shards, "--shard", fmt.Sprintf("%d/2", i)}, logs...)
		if out, err := run(t, bin, args...); err != nil {
			t.Fatalf("convert --shard %d/2: %v\n%s", i, err, out)
		}
	}
	if out, err := run(t, bin, "convert", "--params", params, "--quiet", "--out", merged, "--merge", shards); err != nil {
		t.Fatalf("convert --merge: %v\n%s", err, out)
	}
	ood := filepath.Join(merged, "ood")
	trainArgs := func(data, name string) []string {
		return []string{"train", "--data", filepath.Join(data, "train"), "--val", filepath.Join(data, "id"), "--model", "gr", "--arch", "quadrotor",
			"--layers", "2", "--width", "4", "--epochs", "2", "--batch", "300", "--optimizer", "muon", "--quiet",
			"--out", filepath.Join(dir, name+".safetensors"), "--checkpoint", filepath.Join(dir, name+".ckpt"), "--checkpoint-every", "1"}
	}
	if out, err := run(t, bin, trainArgs(merged, "merged")...); err != nil {
		t.Fatalf("train on the merged datasets: %v\n%s", err, out)
	}
	ref := readRun(t, bin, dir, "merged", ood)
	if out, err := run(t, bin, trainArgs(shards, "shards")...); err != nil {
		t.Fatalf("train on the shards: %v\n%s", err, out)
	}
	if d := differ(ref, readRun(t, bin, dir, "shards", ood)); d != "" {
		t.Errorf("trained on the shards against the merged datasets: %s", d)
	}
	// eval reads a split of the shards too
	a, errA := run(t, bin, "eval", "--model", filepath.Join(dir, "merged.safetensors"), "--data", filepath.Join(shards, "ood"), "--horizon", "20", "--horizons", "5")
	b, errB := run(t, bin, "eval", "--model", filepath.Join(dir, "merged.safetensors"), "--data", ood, "--horizon", "20", "--horizons", "5")
	if errA != nil || errB != nil || strings.ReplaceAll(a, filepath.Join(shards, "ood"), "DATA") != strings.ReplaceAll(b, ood, "DATA") {
		t.Errorf("eval on the shards' ood split (%v):\n%s\nagainst the merged one (%v):\n%s", errA, a, errB, b)
	}
	for _, c := range []struct{ data, want string }{
		{filepath.Join(shards, "rough"), `no split "rough": name one of ` + filepath.Join(shards, "id")},
		{shards, "holds the shards of a conversion"},
	} {
		out, err := run(t, bin, "train", "--data", c.data, "--epochs", "1", "--quiet", "--out", filepath.Join(dir, "bad.safetensors"))
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("train --data %s: %v, want %q:\n%s", c.data, err, c.want, out)
		}
	}

	t.Run("mpi", func(t *testing.T) {
		mpirun := mpiTools(t)
		mbin := filepath.Join(dir, "calisym-mpi")
		if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", mbin, "../cmd/calisym").CombinedOutput(); err != nil {
			t.Fatalf("go build -tags mpi: %v\n%s", err, out)
		}
		for _, data := range []string{shards, merged} {
			name := "mpi-" + filepath.Base(data)
			if out, err := mpiRun(t, mpirun, 2, mbin, trainArgs(data, name)...); err != nil {
				t.Fatalf("2 processes on %s: %v\n%s", data, err, out)
			}
			if d := differ(ref, readRun(t, bin, dir, name, ood)); d != "" {
				t.Errorf("2 processes on %s against one process on the merged datasets: %s", data, d)
			}
		}
	})
}
