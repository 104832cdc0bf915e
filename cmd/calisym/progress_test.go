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
		want := regexp.MustCompile(`(?m)^\S+ epoch ` + string(rune('0'+e)) + `/3 loss \S+ .* s$`)
		if !want.MatchString(stderr) {
			t.Errorf("no line for epoch %d in train's log:\n%s", e, stderr)
		}
	}
}
