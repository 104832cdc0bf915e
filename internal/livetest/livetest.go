// Package livetest makes the fixtures of the live-prediction tests: a
// CaLiSym model trained in seconds on the simulated double pendulum and a
// ROS 2 MCAP log of the simulated pendulum as params/pendulum_sim.yaml
// reads it.
package livetest

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/trainer/experiment"
)

// PendulumParams returns the path of params/pendulum_sim.yaml.
func PendulumParams() string { return filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml") }

// TrainPendulum trains the "smoke" preset's CaLiSym-GRB model (seconds)
// into dir and returns the model file's path.
func TrainPendulum(t testing.TB, dir string) string {
	t.Helper()
	data, spec, err := experiment.PendulumPreset("smoke")
	if err != nil {
		t.Fatal(err)
	}
	spec.Models = spec.Models[:1] // CaLiSym-GRB only
	spec.Horizons = []int{5, 25}
	spec.Horizon = 25
	sets, err := experiment.SimulatePendulum(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := experiment.Run(context.Background(), spec, experiment.Datasets{Train: sets[0], ID: sets[1], OOD: sets[2]}, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "calisym-grb.safetensors")
}

// PendulumTrajectories simulates n trajectories of the given number of
// 10 ms steps from the smoke preset's in-distribution energies (seed 7).
func PendulumTrajectories(t testing.TB, n, steps int) []mechanics.Trajectory {
	t.Helper()
	data, _, err := experiment.PendulumPreset("smoke")
	if err != nil {
		t.Fatal(err)
	}
	data.Sim.Steps = steps
	trs, err := data.SimulateSplit(context.Background(), experiment.Split{Name: "log", Energy: data.TrainEnergy, Seed: 7, Count: n})
	if err != nil {
		t.Fatal(err)
	}
	return trs
}

// PendulumLog writes trajectories as an uncompressed ROS 2 MCAP log at
// path (experiment.WritePendulumMCAP, the log `calisym sim --mcap` writes).
func PendulumLog(t testing.TB, path string, trs []mechanics.Trajectory) {
	t.Helper()
	if err := experiment.WritePendulumMCAP(path, trs, &experiment.PendulumMCAPOptions{Writer: &logio.ROS2WriterOptions{Compression: "none"}}); err != nil {
		t.Fatal(err)
	}
}
