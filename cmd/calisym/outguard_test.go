package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/outguard"
)

// TestOutputsNeverInputs: no command overwrites its own inputs or writes
// into a folder another command wrote, and each refuses before any work
// (issue 49, item 2): the input's bytes are unchanged and nothing is left
// beside them.
func TestOutputsNeverInputs(t *testing.T) {
	dir := t.TempDir()
	model := randomPendulumModel(t, dir)
	params := livetest.PendulumParams()
	log := filepath.Join(dir, "run.mcap")
	livetest.PendulumLog(t, log, livetest.PendulumTrajectories(t, 1, 20))
	data := filepath.Join(dir, "data")
	npy := filepath.Join(data, "x.npy")
	ckpt := filepath.Join(dir, "ckpt")
	run := filepath.Join(dir, "runs", "seed1")
	runModel := filepath.Join(run, "model.safetensors")
	conv := filepath.Join(dir, "conv")
	sim := filepath.Join(dir, "sim")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(npy, "dataset")
	write(ckpt, "checkpoint")
	write(runModel, "scored model")
	write(filepath.Join(conv, "report.json"), `{"robot": "r", "window_len": 100, "stride": 10, "splits": {}}`)
	write(filepath.Join(sim, outguard.Marker), "sim\n")
	guarded := []string{log, model, npy, ckpt, runModel, filepath.Join(conv, "report.json"), filepath.Join(sim, outguard.Marker)}
	before := map[string][]byte{}
	for _, p := range guarded {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = b
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"replay over its log", []string{"replay", "--params", params, "--model", model, log, "--out", log}, "--out " + log + " is also the input LOG"},
		{"replay over its model", []string{"replay", "--params", params, "--model", model, log, "--out", model}, "is also the input --model"},
		{"train into its dataset", []string{"train", "--data", data, "--out", npy}, "is inside the input --data"},
		{"train's checkpoint is its model", []string{"train", "--data", data, "--checkpoint", ckpt, "--resume", "--out", ckpt}, "--checkpoint and --out are both"},
		{"nanodrone over a scored model", []string{"bench", "nanodrone", "--runs", filepath.Join(dir, "runs", "seed*"), "--json", runModel}, "is inside the input --runs"},
		{"nanodrone into a missing folder", []string{"bench", "nanodrone", "--runs", filepath.Join(dir, "runs", "seed*"), "--json", filepath.Join(dir, "missing", "n.json")}, "does not exist"},
		{"sim into convert's folder", []string{"sim", "--preset", "smoke", "--out", conv}, "written by calisym convert"},
		{"demo into convert's folder", []string{"demo", "--preset", "smoke", "--out", conv}, "written by calisym convert"},
		{"demo into sim's folder", []string{"demo", "--preset", "smoke", "--out", sim}, "written by calisym sim"},
		{"convert into sim's folder", []string{"convert", "--params", params, "--out", sim, log}, "written by calisym sim"},
		{"convert over its log", []string{"convert", "--params", params, "--out", log, log}, "is also the input LOG"},
		{"mpc into sim's folder", []string{"mpc", "--preset", "smoke", "--out", sim}, "written by calisym sim"},
		{"bench into convert's folder", []string{"bench", "--system", "crazyflie", "--out", conv}, "written by calisym convert"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runCLI(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, outguard.ErrOverwrite) {
				t.Errorf("error %v, want an outguard.ErrOverwrite containing %q", err, c.want)
			}
			for _, p := range guarded {
				if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, before[p]) {
					t.Errorf("%s changed (%v)", p, err)
				}
			}
			for _, d := range []string{conv, sim, data, filepath.Dir(log)} {
				for _, n := range dirEntries(t, d) {
					if strings.Contains(n, ".tmp") || n == "train" || n == "id" || n == "models" {
						t.Errorf("%s left %s in %s", c.args[0], n, d)
					}
				}
			}
		})
	}
}

// TestReplayInterrupted: an interrupted replay exits non-zero and leaves
// nothing at --out; what it replayed is kept, a readable MCAP, under a
// name that says it is partial (it used to exit 0 with a partial file at
// --out).
func TestReplayInterrupted(t *testing.T) {
	dir := t.TempDir()
	model := randomPendulumModel(t, dir)
	log := filepath.Join(dir, "run.mcap")
	livetest.PendulumLog(t, log, livetest.PendulumTrajectories(t, 1, 20))
	out := filepath.Join(dir, "r.mcap")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := runCLICtx(t, ctx, "replay", "--params", livetest.PendulumParams(), "--model", model, log, "--out", out)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "r.interrupted.mcap") {
		t.Errorf("error %v, want an interruption naming r.interrupted.mcap", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an interrupted replay left %s (%v)", out, err)
	}
	if _, _, err := runCLI(t, "topics", filepath.Join(dir, "r.interrupted.mcap")); err != nil {
		t.Errorf("the partial replay does not read: %v", err)
	}
}

// TestReplayServedStopped: Ctrl-C ends a replay served to Foxglove in real
// time, as it ends node: exit 0, nothing at --out, what was replayed kept
// as OUT.interrupted.mcap.
func TestReplayServedStopped(t *testing.T) {
	dir := t.TempDir()
	model := randomPendulumModel(t, dir)
	log := filepath.Join(dir, "run.mcap")
	livetest.PendulumLog(t, log, livetest.PendulumTrajectories(t, 1, 400))
	out := filepath.Join(dir, "r.mcap")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	stdout, _, err := runCLICtx(t, ctx, "replay", "--params", livetest.PendulumParams(), "--model", model, log, "--out", out, "--foxglove", "127.0.0.1:0")
	if err != nil || !strings.Contains(stdout, "r.interrupted.mcap") {
		t.Errorf("a served replay stopped by Ctrl-C: %v\n%s", err, stdout)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stopped replay left %s (%v)", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.interrupted.mcap")); err != nil {
		t.Errorf("the partial replay: %v", err)
	}
}
