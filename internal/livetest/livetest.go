// Package livetest makes the fixtures of the live-prediction tests: a
// CaLiSym model trained in seconds on the simulated double pendulum, a
// ROS 2 MCAP log of the simulated pendulum as params/pendulum_sim.yaml
// reads it, and the paper's quadruped model with fixed random parameters.
package livetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
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

// predictionJSON is a calisym/msg/PredictedTrajectory as the JavaScript
// cross-checks print it: @foxglove/rosmsg2-serialization's decoding, made
// JSON-safe (test/js/json_safe.mjs), with the .msg field names.
type predictionJSON struct {
	Header struct {
		Stamp struct {
			Sec     int32  `json:"sec"`
			Nanosec uint32 `json:"nanosec"`
		} `json:"stamp"`
		FrameID string `json:"frame_id"`
	} `json:"header"`
	Dt                float64   `json:"dt"`
	CoordinateNames   []string  `json:"coordinate_names"`
	Horizon           uint32    `json:"horizon"`
	Q                 []float64 `json:"q"`
	P                 []float64 `json:"p"`
	PortNames         []string  `json:"port_names"`
	Ports             []float64 `json:"ports"`
	ModelID           string    `json:"model_id"`
	ModelSHA256       string    `json:"model_sha256"`
	InferenceLatencyS float64   `json:"inference_latency_s"`
}

// DiffPrediction compares a prediction decoded by Foxglove's JavaScript
// libraries (raw, JSON) with the Go message g, every field exactly, and
// returns the first difference ("" when there is none).
func DiffPrediction(raw []byte, g *msgs.PredictedTrajectory) (string, error) {
	var js predictionJSON
	if err := json.Unmarshal(raw, &js); err != nil {
		return "", fmt.Errorf("livetest: decoded prediction: %w", err)
	}
	switch {
	case js.Header.Stamp.Sec != g.Header.Stamp.Sec || js.Header.Stamp.Nanosec != g.Header.Stamp.Nanosec:
		return fmt.Sprintf("stamp JS %+v, Go %+v", js.Header.Stamp, g.Header.Stamp), nil
	case js.Header.FrameID != g.Header.FrameID:
		return fmt.Sprintf("frame_id JS %q, Go %q", js.Header.FrameID, g.Header.FrameID), nil
	case js.Dt != g.Dt || js.Horizon != g.Horizon:
		return fmt.Sprintf("dt/horizon JS %v/%d, Go %v/%d", js.Dt, js.Horizon, g.Dt, g.Horizon), nil
	case js.ModelID != g.ModelID || js.ModelSHA256 != g.ModelSHA256 || js.InferenceLatencyS != g.InferenceLatencyS:
		return fmt.Sprintf("model JS %q %q %v, Go %q %q %v", js.ModelID, js.ModelSHA256, js.InferenceLatencyS, g.ModelID, g.ModelSHA256, g.InferenceLatencyS), nil
	case !slices.Equal(js.CoordinateNames, g.CoordinateNames) || !slices.Equal(js.PortNames, g.PortNames):
		return fmt.Sprintf("names JS %v %v, Go %v %v", js.CoordinateNames, js.PortNames, g.CoordinateNames, g.PortNames), nil
	}
	for _, f := range []struct {
		name     string
		js, want []float64
	}{{"q", js.Q, g.Q}, {"p", js.P, g.P}, {"ports", js.Ports, g.Ports}} {
		if len(f.js) != len(f.want) {
			return fmt.Sprintf("%s: %d values JS, %d Go", f.name, len(f.js), len(f.want)), nil
		}
		for i := range f.want {
			if f.js[i] != f.want[i] {
				return fmt.Sprintf("%s[%d] JS %v, Go %v", f.name, i, f.js[i], f.want[i]), nil
			}
		}
	}
	return "", nil
}

// PendulumModel returns a model of the pendulum preset with random
// parameters (a fixed seed) and the coordinate and port names, time step
// and port map of params/pendulum_sim.yaml: for the live tests that are about
// which messages the node sees, when it predicts and what it writes, not
// about what it predicts.
func PendulumModel(t testing.TB) *predictor.Model {
	t.Helper()
	pre, err := predictor.LookupPreset("pendulum")
	if err != nil {
		t.Fatal(err)
	}
	m, err := predictor.New(pre.Layout, pre.Arch, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	m.Meta = predictor.Metadata{Name: "random pendulum", Coordinates: []string{"q1", "q2"}, Ports: []string{"u1", "u2"}, Dt: 0.01,
		Provenance: map[string]string{statemap.PortMapKey: experiment.PendulumPortMap()}}
	return m
}

// QuadrupedModel is the paper's quadruped preset's architecture
// (GR-SympNet, 18 layers of width 66) named name, on the layout of the
// coordinate and port names of the params it serves (params/anymal.yaml: a
// Sampler's Coordinates and Ports, the last 12 ports the feet's contact
// forces): the preset's 132-dim lift, or a wider one with the params'
// port history. Its parameters are random with a fixed seed: the live tests check
// that predictions are the offline rollout of the same model, or the
// commands' plumbing, which hold for any parameters, and a random model
// takes no training time. Its normalisation has the scales of the data
// (rad, N·m, N) so that the lifted coordinates the maps see are of order
// one, as in a trained model.
func QuadrupedModel(t testing.TB, name string, coordinates, ports []string) *predictor.Model {
	t.Helper()
	pre, err := predictor.LookupPreset("quadruped")
	if err != nil {
		t.Fatal(err)
	}
	layout := predictor.Layout{N: len(coordinates), NU: len(ports) - pre.Layout.NC, NC: pre.Layout.NC}
	m, err := predictor.New(layout, pre.Arch, rand.New(rand.NewPCG(401, 18)))
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layout
	for k := range l.D() {
		switch {
		case k < l.N: // (q, r)
			m.Norm.Scale[k] = 0.5
		case k < 2*l.N: // (y, p)
			m.Norm.Scale[k] = 5
		case k < 2*l.N+l.NU: // (λ_u, μ_u)
			m.Norm.Scale[k] = 20
		default: // (λ_c, π_c)
			m.Norm.Mu[k], m.Norm.Scale[k] = 40, 100
		}
	}
	m.Meta = predictor.Metadata{Name: name, Coordinates: coordinates, Ports: ports, Dt: 0.01}
	return m
}
