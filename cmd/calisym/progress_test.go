package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// TestProgressInLogs runs convert and train with their stderr going to a
// buffer, as to a log file: no progress bar is drawn (no carriage
// return), convert writes one line per input file and train one line per
// epoch.
func TestProgressInLogs(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatal(err)
	}
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	conv := filepath.Join(dir, "conv")
	_, stderr, err := runCLI(t, "convert", "--params", params, "--split", "train", "--out", conv,
		filepath.Join(sim, "id.mcap"), filepath.Join(sim, "ood.mcap"))
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "\r") {
		t.Errorf("convert drew a bar into a log:\n%q", stderr)
	}
	lines := regexp.MustCompile(`(?m)^convert \[(\d)/2\] .*(id|ood)\.mcap \(0\.\d MB\)$`).FindAllStringSubmatch(stderr, -1)
	if len(lines) != 2 || lines[0][1] != "1" || lines[1][1] != "2" {
		t.Errorf("convert's progress in a log, want one line per file:\n%s", stderr)
	}

	_, stderr, err = runCLI(t, "train", "--data", filepath.Join(conv, "train"), "--model", "gr", "--arch", "gr:2x4",
		"--epochs", "3", "--out", filepath.Join(dir, "m.safetensors"))
	if err != nil {
		t.Fatalf("train: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "\r") {
		t.Errorf("train drew a bar into a log:\n%q", stderr)
	}
	t.Logf("train:\n%s", stderr)
	for e := 1; e <= 3; e++ {
		want := regexp.MustCompile(`(?m)^\S+ epoch ` + string(rune('0'+e)) + `/3 loss \S+ .* s, elapsed \S+, ETA \S+$`)
		if !want.MatchString(stderr) {
			t.Errorf("no line for epoch %d in train's log:\n%s", e, stderr)
		}
	}
}

// trainConvertedSim converts the simulator's smoke log for train, once per
// test: the dataset directory.
func trainConvertedSim(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatal(err)
	}
	conv := filepath.Join(dir, "conv")
	if _, stderr, err := runCLI(t, "convert", "--params", filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"), "--split", "train", "--out", conv,
		filepath.Join(sim, "id.mcap")); err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	return filepath.Join(conv, "train")
}

// TestTrainProgressFlags runs train with each choice of progress, its
// stderr a log: --quiet printed nothing for the whole training (a long run
// looked hung); it keeps one plain line per epoch with the loss, the
// elapsed time and the ETA, as --progress plain; --progress none prints
// none. A wrong value, and --quiet with --progress none, are refused.
func TestTrainProgressFlags(t *testing.T) {
	data := trainConvertedSim(t)
	line := regexp.MustCompile(`(?m)^CaLiSym-gr epoch [12]/2 loss \S+ val \S+ \d+ tr/s \S+ s, elapsed \S+, ETA \S+$`)
	for _, c := range []struct {
		name  string
		args  []string
		lines int
		err   string
	}{
		{"auto, to a log", nil, 2, ""},
		{"--quiet", []string{"--quiet"}, 2, ""},
		{"--progress plain", []string{"--progress", "plain"}, 2, ""},
		{"--quiet --progress plain", []string{"--quiet", "--progress", "plain"}, 2, ""},
		{"--progress none", []string{"--progress", "none"}, 0, ""},
		{"--progress bars", []string{"--progress", "bars"}, 0, `--progress "bars": want auto, plain or none`},
		{"--quiet --progress none", []string{"--quiet", "--progress", "none"}, 0, "--quiet is --progress plain"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"train", "--data", data, "--model", "gr", "--arch", "gr:2x4", "--epochs", "2", "--workers", "1",
				"--out", filepath.Join(t.TempDir(), "m.safetensors")}, c.args...)
			_, stderr, err := runCLI(t, args...)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if got := len(line.FindAllString(stderr, -1)); got != c.lines || strings.Contains(stderr, "\r") {
				t.Errorf("%d epoch lines, want %d (no carriage return):\n%q", got, c.lines, stderr)
			}
		})
	}
}
