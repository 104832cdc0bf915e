package main

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// TestReplayServesPriorModel: `calisym replay` serves a composed model (a
// physics prior recorded in its file, trainer.Composed) through the node:
// every torque command of a simulated pendulum log predicts, none is
// suppressed (the node applies the prior; it used to refuse the file).
func TestReplayServesPriorModel(t *testing.T) {
	dir := t.TempDir()
	m := livetest.PendulumModel(t)
	prior, err := mechanics.NewPendulumPrior(mechanics.PriorMidpoint, mechanics.PaperPendulum(), m.Meta.Dt)
	if err != nil {
		t.Fatal(err)
	}
	tr := predictor.NewTrainable(m)
	tr.Init(rand.New(rand.NewPCG(37, 3)), 0.1)
	c, err := trainer.NewComposed(&trainer.Symplectic{T: tr}, prior)
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "composed.safetensors")
	if err := c.Model().Save(model); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "pendulum.mcap")
	livetest.PendulumLog(t, log, livetest.PendulumTrajectories(t, 1, 50)) // 51 joint states and commands
	out := filepath.Join(dir, "pred.mcap")
	stdout, _, err := runCLI(t, "replay", "--params", livetest.PendulumParams(), "--model", model, "--every", "1", log, "--out", out)
	if err != nil {
		t.Fatalf("replay of a composed model: %v\n%s", err, stdout)
	}
	if !strings.Contains(stdout, "102 input messages, 51 predictions, 0 suppressed") {
		t.Errorf("replay output:\n%s", stdout)
	}
}
