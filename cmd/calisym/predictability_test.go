package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// TestPredictabilityFlags: bad settings of bench predictability are
// refused before any log is read, each naming the flag; a run directory
// without models is refused naming it (the run itself is
// experiment.TestPendulumPredictability).
func TestPredictabilityFlags(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scales", "1,-0.3"}, "--scales: \"-0.3\" is not a positive number"},
		{[]string{"--scales", "x"}, "--scales: \"x\""},
		{[]string{"--seeds", "0"}, "--seeds: seed 0"},
		{[]string{"--seeds", "a"}, "--seeds"},
		{[]string{"--workers", "0"}, "workers"},
		{[]string{"--runs", filepath.Join(empty, "nothing*")}, "matches no directory"},
		{[]string{"--system", "nope", "--data", empty}, "unknown real-robot system \"nope\""},
	} {
		_, _, err := runCLI(t, append([]string{"bench", "predictability"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	// A system without a pendulum model is refused from its params,
	// before its data are read (an empty data root: nothing to convert).
	for _, s := range []string{"crazyflie_gravity", "anymal_sim"} {
		_, _, err := runCLI(t, "bench", "predictability", "--system", s, "--data", empty, "--params", filepath.Join(fixtures.Root(), "params"))
		if err == nil || !strings.Contains(err.Error(), s+" has no identified pendulum model") {
			t.Errorf("--system %s: %v, want a refusal before the conversion", s, err)
		}
	}
	fixtures.Path(t, "double_pendulum_hw", "trajectories")
	_, _, err := runCLI(t, "bench", "predictability", "--data", fixtures.DataDir(), "--params", filepath.Join(fixtures.Root(), "params"), "--runs", empty, "--seeds", "1", "--scales", "1")
	if err == nil || !strings.Contains(err.Error(), "holds no model") {
		t.Errorf("a run directory without models: %v", err)
	}
}

// TestNanNull: eval --twin's autocorrelations write a NaN (a coordinate
// predicted exactly) as null and read it back as NaN.
func TestNanNull(t *testing.T) {
	b, err := json.Marshal(nanNull{0.5, math.NaN(), -1})
	if err != nil || string(b) != "[0.5,null,-1]" {
		t.Fatalf("marshal: %s, %v", b, err)
	}
	var back nanNull
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 3 || back[0] != 0.5 || !math.IsNaN(back[1]) || back[2] != -1 {
		t.Errorf("unmarshal: %v, %v", back, err)
	}
}
