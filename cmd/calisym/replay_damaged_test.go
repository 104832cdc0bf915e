package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calisym/calisym/internal/livetest"
)

// randomPendulumModel saves the pendulum preset with random parameters
// into dir: these tests are about which messages are replayed and which
// files are written, not about what the node predicts.
func randomPendulumModel(t *testing.T, dir string) string {
	t.Helper()
	m := livetest.PendulumModel(t)
	path := filepath.Join(dir, "random.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestReplayDamagedLogCLI replays logs as a killed recorder or an
// unfinished copy leaves them (cut in the middle of a chunk; no data end,
// summary or footer): each replays up to the damage, with a warning, and
// the output is written.
func TestReplayDamagedLogCLI(t *testing.T) {
	dir := t.TempDir()
	model := randomPendulumModel(t, dir)
	params := livetest.PendulumParams()
	logs := livetest.PendulumDamaged(t, dir, livetest.PendulumTrajectories(t, 1, 100))
	for _, tc := range []struct {
		name, log string
		kept      int
	}{
		{"mid_chunk", logs.MidChunk, logs.MidChunkMessages},
		{"no_summary", logs.NoSummary, logs.Messages},
	} {
		out := filepath.Join(dir, tc.name+"_replay.mcap")
		stdout, stderr, err := runCLI(t, "replay", "--params", params, "--model", model, tc.log, "--out", out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, stderr)
		}
		if !strings.HasPrefix(stdout, strconv.Itoa(tc.kept)+" input messages") || !strings.Contains(stdout, "wrote "+out) {
			t.Errorf("%s: stdout\n%s", tc.name, stdout)
		}
		if strings.Count(stderr, "warning:") != 1 || !strings.Contains(stderr, "ends early: replayed the "+strconv.Itoa(tc.kept)+" input messages before the damage") {
			t.Errorf("%s: stderr\n%s", tc.name, stderr)
		}
		topics, _, err := runCLI(t, "topics", out)
		if err != nil || !strings.Contains(topics, "/calisym/prediction") {
			t.Errorf("%s: topics of the replay: %v\n%s", tc.name, err, topics)
		}
	}
}

// TestNodeInputDamagedLoop plays a log cut in the middle of a chunk as
// `node --input LOG --loop` does: the node keeps being fed past the
// damage, pass after pass, and the damage is reported once.
func TestNodeInputDamagedLoop(t *testing.T) {
	logs := livetest.PendulumDamaged(t, t.TempDir(), livetest.PendulumTrajectories(t, 1, 100))
	topics := []string{"/joint_states", "/torque_command"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	deliver := func(string, []byte) {
		if n.Add(1) == int64(3*logs.MidChunkMessages) {
			cancel()
		}
	}
	var warn bytes.Buffer
	if err := playLog(ctx, logs.MidChunk, topics, deliver, true, 1e6, &warn); err != context.Canceled {
		t.Fatalf("looping over a damaged log: %v, want it to run until cancelled", err)
	}
	if strings.Count(warn.String(), "warning:") != 1 || !strings.Contains(warn.String(), "ends early: played the "+strconv.Itoa(logs.MidChunkMessages)+" input messages") {
		t.Errorf("warnings:\n%s", warn.String())
	}
	// Without --loop: one pass up to the damage, then the node serves on.
	n.Store(0)
	warn.Reset()
	if err := playLog(context.Background(), logs.MidChunk, topics, func(string, []byte) { n.Add(1) }, false, 1e6, &warn); err != nil || n.Load() != int64(logs.MidChunkMessages) {
		t.Errorf("one pass: %v, %d messages, want %d", err, n.Load(), logs.MidChunkMessages)
	}
	if strings.Count(warn.String(), "warning:") != 1 {
		t.Errorf("warnings:\n%s", warn.String())
	}
}
