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

// TestDamagedLogCommands reads the damaged copies of a pendulum log with
// the four commands that read logs, as docs/live-prediction.md says they
// do: a log without its footer (its data section complete) is read in full
// by replay, node --input and convert, each with one warning that says the
// footer is missing; a log with a corrupt record inside a chunk (not a cut)
// is an error for replay, convert and topics, while node --input plays the
// part before the damage with a warning and serves on.
func TestDamagedLogCommands(t *testing.T) {
	dir := t.TempDir()
	model := randomPendulumModel(t, dir)
	params := livetest.PendulumParams()
	logs := livetest.PendulumDamaged(t, dir, livetest.PendulumTrajectories(t, 1, 100))
	topics := []string{"/joint_states", "/torque_command"}
	const noFooter = "ends without its footer"

	t.Run("no footer", func(t *testing.T) {
		out := filepath.Join(dir, "nofooter_replay.mcap")
		stdout, stderr, err := runCLI(t, "replay", "--params", params, "--model", model, logs.NoFooter, "--out", out)
		if err != nil {
			t.Fatalf("replay: %v\n%s", err, stderr)
		}
		if !strings.HasPrefix(stdout, strconv.Itoa(logs.Messages)+" input messages") || strings.Count(stderr, "warning:") != 1 ||
			!strings.Contains(stderr, noFooter) || !strings.Contains(stderr, "replayed all "+strconv.Itoa(logs.Messages)+" input messages") {
			t.Errorf("replay: stdout\n%s\nstderr\n%s", stdout, stderr)
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("replay wrote no file: %v", err)
		}
		// The whole log replays without a warning.
		if _, stderr, err := runCLI(t, "replay", "--params", params, "--model", model, logs.Whole, "--out", filepath.Join(dir, "whole_replay.mcap")); err != nil || strings.Contains(stderr, "warning") {
			t.Errorf("whole log: %v, stderr\n%s", err, stderr)
		}

		var n atomic.Int64
		var warn bytes.Buffer
		if err := playLog(context.Background(), logs.NoFooter, topics, func(string, []byte) { n.Add(1) }, false, 1e6, &warn); err != nil || n.Load() != int64(logs.Messages) {
			t.Errorf("node --input: %v, %d messages, want %d", err, n.Load(), logs.Messages)
		}
		if strings.Count(warn.String(), "warning:") != 1 || !strings.Contains(warn.String(), noFooter) {
			t.Errorf("node --input warnings:\n%s", warn.String())
		}
		warn.Reset()
		if err := playLog(context.Background(), logs.Whole, topics, func(string, []byte) {}, false, 1e6, &warn); err != nil || warn.Len() != 0 {
			t.Errorf("node --input, whole log: %v, warnings:\n%s", err, warn.String())
		}

		stdout, stderr, err = runCLI(t, "convert", "--quiet", "--params", params, "--out", filepath.Join(dir, "conv_nofooter"), logs.NoFooter)
		if err != nil || !strings.Contains(stdout, noFooter) || !strings.Contains(stdout, "kept all "+strconv.Itoa(logs.Messages)+" messages") {
			t.Errorf("convert: %v\nstdout\n%s\nstderr\n%s", err, stdout, stderr)
		}
	})

	t.Run("corrupt chunk", func(t *testing.T) {
		out := filepath.Join(dir, "corrupt_replay.mcap")
		if _, _, err := runCLI(t, "replay", "--params", params, "--model", model, logs.Corrupt, "--out", out); err == nil || !strings.Contains(err.Error(), "exceeds the size limit") || !strings.Contains(err.Error(), logs.Corrupt) {
			t.Errorf("replay: %v, want the corrupt record and the file named", err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("replay of a corrupt log left %s (%v)", out, err)
		}
		if _, _, err := runCLI(t, "convert", "--quiet", "--params", params, "--out", filepath.Join(dir, "conv_corrupt"), logs.Corrupt); err == nil || !strings.Contains(err.Error(), "corrupt.mcap") {
			t.Errorf("convert: %v, want an error naming the file", err)
		}
		if _, _, err := runCLI(t, "topics", logs.Corrupt); err == nil || !strings.Contains(err.Error(), logs.Corrupt) {
			t.Errorf("topics of a corrupt log: %v, want an error naming the file", err)
		}
		var n atomic.Int64
		var warn bytes.Buffer
		if err := playLog(context.Background(), logs.Corrupt, topics, func(string, []byte) { n.Add(1) }, false, 1e6, &warn); err != nil || n.Load() == 0 || n.Load() >= int64(logs.Messages) {
			t.Errorf("node --input: %v, %d of %d messages played", err, n.Load(), logs.Messages)
		}
		if strings.Count(warn.String(), "warning:") != 1 || !strings.Contains(warn.String(), "is damaged: played the "+strconv.Itoa(int(n.Load()))+" input messages") {
			t.Errorf("node --input warnings:\n%s", warn.String())
		}
	})
}
