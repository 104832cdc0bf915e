package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// The cross-checks of this file read the model files the Go code wrote
// with two implementations that share no code with it — the numpy
// reference in python/ and (export_test.go) the exported ONNX graph run by
// onnxruntime — and require both to reproduce the Go rollout to 1e-12
// relative.

// refTol is the relative agreement required of the independent
// implementations: max |other − Go| / max |Go| over a batch of rollouts.
const refTol = 1e-12

// refHorizon and refBatch size the cross-check rollouts.
const (
	refHorizon = 8
	refBatch   = 3
)

// refModel is a model file under test with the batch it is rolled out on.
type refModel struct {
	name, path string
	stateDim   int
	portDim    int
	// data is the dataset a trained model was trained on ("" for a preset).
	data string
}

// refCase is the rollout request the cross-checks share: a batch of
// initial states and port sequences, and the Go rollout of them.
type refCase struct {
	X0      [][]float64   `json:"x0"`
	Ports   [][][]float64 `json:"ports"`
	Horizon int           `json:"horizon"`
	// Want is the Go rollout (not read by the other implementations).
	Want [][][]float64 `json:"want"`
	// JacA and JacB are the step Jacobians of Go's Linearizer along the
	// rollout (trajectory × step × the row-major 2n×2n and
	// 2n×(n_u+n_c) matrices), SX and SE the model's state and port
	// scales, which compareJacobians weighs entries by.
	JacA, JacB [][][]float64 `json:"-"`
	SX, SE     []float64     `json:"-"`
	// Dense asks the numpy reference for the rollout's full Jacobians,
	// which JacX0 and JacPorts hold as Go's Linearization.Dense writes
	// them (trajectory × step × block row k: ∂x̂_{k+1}/∂x_0, 2n×2n, and
	// ∂x̂_{k+1}/∂(e_0 … e_{H−1}), 2n×H(n_u+n_c)).
	Dense           bool          `json:"dense"`
	JacX0, JacPorts [][][]float64 `json:"-"`
}

// writePresetModels writes every preset with random parameters and a
// random normalisation under dir, then a small GRB model with a 3-D ridge
// coordinate and a contact port (the presets' GRB has m = 2 and no
// contacts) and one whose spline covers [−0.1, 0.1] only, so that many
// ridge coordinates fall beyond the grid, where the basis fades out or
// vanishes.
func writePresetModels(t *testing.T, dir string) []refModel {
	t.Helper()
	var ms []refModel
	presets := predictor.Presets()
	names := append(predictor.PresetNames(), "grb-m3")
	presets["grb-m3"] = predictor.Preset{Name: "grb-m3", Layout: predictor.Layout{N: 2, NU: 1, NC: 2},
		Arch: predictor.Arch{Kind: predictor.KindGRB, Layers: 3, Width: 4, RidgeDim: 3,
			Spline: predictor.Spline{Intervals: 5, Lo: -2, Hi: 2}, StepSize: 0.5}}
	names = append(names, "grb-narrow")
	presets["grb-narrow"] = predictor.Preset{Name: "grb-narrow", Layout: predictor.Layout{N: 2, NU: 1, NC: 1},
		Arch: predictor.Arch{Kind: predictor.KindGRB, Layers: 3, Width: 3, RidgeDim: 2,
			Spline: predictor.Spline{Intervals: 3, Lo: -0.1, Hi: 0.1}, StepSize: 0.5}}
	for i, name := range names {
		p := presets[name]
		rng := rand.New(rand.NewPCG(uint64(31+i), 5))
		m, err := predictor.New(p.Layout, p.Arch, rng)
		if err != nil {
			t.Fatal(err)
		}
		tr := predictor.NewTrainable(m)
		tr.Init(rng, 0.5)
		for k := range m.Norm.Mu {
			m.Norm.Mu[k] = 0.3 * rng.NormFloat64()
			m.Norm.Scale[k] = math.Exp(0.3 * rng.NormFloat64())
		}
		path := filepath.Join(dir, "preset-"+name+".safetensors")
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, refModel{name: "preset " + name, path: path, stateDim: p.Layout.StateDim(), portDim: p.Layout.PortDim()})
	}
	return ms
}

// robotLog converts one log of a robot with its params file into a
// dataset under dir and returns the dataset's directory, or "" (with a
// note) where the shared data is absent outside CI.
func robotLog(t *testing.T, dir, params, root string, log ...string) string {
	t.Helper()
	src := filepath.Join(append([]string{fixtures.DataDir(), root}, log...)...)
	if _, err := os.Stat(src); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("fixture %s is missing: %v", src, err)
		}
		t.Logf("leaving out the model trained on %s: %v", src, err)
		return ""
	}
	out := filepath.Join(dir, "conv-"+strings.TrimSuffix(params, ".yaml"))
	args := []string{"convert", "--quiet", "--params", filepath.Join(fixtures.Root(), "params", params),
		"--data", filepath.Join(fixtures.DataDir(), root), "--split", "train", "--out", out, src}
	if _, _, err := runCLI(t, args...); err != nil {
		t.Fatalf("convert %s: %v", src, err)
	}
	return filepath.Join(out, "train")
}

// writeTrainedModels trains one tiny model per robot of the presets (one
// epoch, calisym train): the pendulum's GRB and MLP on the simulated
// pendulum, the quadrotor's GR on a Crazyflie flight and the quadruped's
// GR on a run of the simulated ANYmal D (../shared/data).
func writeTrainedModels(t *testing.T, dir string) []refModel {
	t.Helper()
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--out", sim); err != nil {
		t.Fatal(err)
	}
	pend := filepath.Join(sim, "train")
	type job struct {
		name, data string
		args       []string
		sx, se     int
	}
	jobs := []job{
		{"trained pendulum grb", pend, []string{"--model", "grb", "--arch", "pendulum", "--layers", "3"}, 4, 2},
		{"trained pendulum mlp", pend, []string{"--model", "mlp", "--hidden", "16,16"}, 4, 2},
		{"trained crazyflie gr", robotLog(t, dir, "crazyflie.yaml", "", "crazyflie", "train", "melon_20251017_run1.parquet"),
			[]string{"--model", "gr", "--arch", "quadrotor", "--layers", "3", "--width", "12"}, 12, 12}, // ports: 6, their 6 means (convert.history)
		{"trained anymal gr", robotLog(t, dir, "anymal.yaml", "anymal_sim", "id", "stand_101.mcap"),
			[]string{"--model", "gr", "--arch", "quadruped", "--layers", "3", "--width", "16"}, 36, 60}, // ports: 30 measured, their 30 means (convert.history)
	}
	var ms []refModel
	for i, j := range jobs {
		if j.data == "" {
			continue
		}
		ext := ".safetensors"
		if strings.HasSuffix(j.name, "mlp") {
			ext = ".json"
		}
		out := filepath.Join(dir, fmt.Sprintf("trained%d%s", i, ext))
		args := append([]string{"train", "--data", j.data, "--epochs", "1", "--batch", "256", "--workers", "1", "--quiet", "--out", out}, j.args...)
		if _, _, err := runCLI(t, args...); err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		ms = append(ms, refModel{name: j.name, path: out, stateDim: j.sx, portDim: j.se, data: j.data})
	}
	return ms
}

// goCase draws a batch of initial states and ports for a model and rolls
// it out with the Go implementation (the file as trainer.OpenModel reads it).
func goCase(t *testing.T, m refModel, seed uint64) refCase {
	t.Helper()
	return goCaseH(t, m, seed, refHorizon)
}

// goCaseH is goCase over the given horizon.
func goCaseH(t *testing.T, m refModel, seed uint64, horizon int) refCase {
	t.Helper()
	sv, err := trainer.OpenModel(m.path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sv.Rollers()
	if err != nil {
		t.Fatal(err)
	}
	var lin predictor.Linearizer
	if sv.Model != nil {
		plan, err := sv.Model.Compile()
		if err != nil {
			t.Fatal(err)
		}
		lin = plan.NewLinearizer()
	} else {
		lin = sv.Net.NewLinearizer()
	}
	lz := predictor.NewLinearization(lin, horizon)
	// Draw inputs where the model was trained: its normalisation's mean
	// plus half a scale of noise (a Crazyflie's momenta are of order 1e-5;
	// inputs of order 1 would saturate every ridge and make any map
	// agree).
	var muX, sX, muE, sE []float64
	if sv.Model != nil {
		nz, nx := sv.Model.Norm, m.stateDim
		muX, sX = nz.Mu[:nx], nz.Scale[:nx]
		muE, sE = nz.Mu[nx:nx+m.portDim], nz.Scale[nx:nx+m.portDim]
	} else {
		nz := sv.Net.Norm()
		muX, sX, muE, sE = nz.MuX, nz.SX, nz.MuE, nz.SE
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	// The full rollout Jacobians only for the short cross-check horizon
	// (at 100 steps the ANYmal's would take half a gigabyte).
	c := refCase{Horizon: horizon, SX: sX, SE: sE, Dense: horizon <= refHorizon}
	for range refBatch {
		x0 := make([]float64, m.stateDim)
		for i := range x0 {
			x0[i] = muX[i] + 0.5*sX[i]*rng.NormFloat64()
		}
		var ports [][]float64
		flat := make([]float64, 0, horizon*m.portDim)
		for range horizon {
			e := make([]float64, m.portDim)
			for i := range e {
				e[i] = muE[i] + 0.5*sE[i]*rng.NormFloat64()
			}
			ports = append(ports, e)
			flat = append(flat, e...)
		}
		out := make([]float64, horizon*m.stateDim)
		if err := r.Rollout(x0, flat, horizon, out); err != nil {
			t.Fatal(err)
		}
		var want [][]float64
		for k := range horizon {
			want = append(want, out[k*m.stateDim:(k+1)*m.stateDim])
		}
		if err := lz.Run(x0, flat, horizon); err != nil {
			t.Fatal(err)
		}
		var ja, jb [][]float64
		for k := range horizon {
			a, b := lz.Step(k)
			ja, jb = append(ja, slices.Clone(a)), append(jb, slices.Clone(b))
		}
		c.X0 = append(c.X0, x0)
		c.Ports = append(c.Ports, ports)
		c.Want = append(c.Want, want)
		c.JacA, c.JacB = append(c.JacA, ja), append(c.JacB, jb)
		if !c.Dense {
			continue
		}
		nx, ne := m.stateDim, m.portDim
		dx0, dp := make([]float64, horizon*nx*nx), make([]float64, horizon*nx*horizon*ne)
		if err := lz.Dense(dx0, dp); err != nil {
			t.Fatal(err)
		}
		var jx, jp [][]float64
		for k := range horizon {
			jx = append(jx, dx0[k*nx*nx:(k+1)*nx*nx])
			jp = append(jp, dp[k*nx*horizon*ne:(k+1)*nx*horizon*ne])
		}
		c.JacX0, c.JacPorts = append(c.JacX0, jx), append(c.JacPorts, jp)
	}
	return c
}

// writeCase writes the case as JSON beside the model and returns its path.
func writeCase(t *testing.T, m refModel, c refCase) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := m.path + ".case.json"
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// compareStates returns the largest relative difference of got from want
// per state coordinate: max over coordinates i of max |got − want| / max
// |want| over the batch and horizon (coordinates of very different scales,
// a Crazyflie's position and its momenta, are each held to the
// tolerance), or an error when the shapes differ.
func compareStates(got, want [][][]float64) (float64, error) {
	if len(got) != len(want) || len(want) == 0 || len(want[0]) == 0 {
		return 0, fmt.Errorf("%d trajectories, want %d", len(got), len(want))
	}
	nx := len(want[0][0])
	diff, scale := make([]float64, nx), make([]float64, nx)
	for b := range want {
		if len(got[b]) != len(want[b]) {
			return 0, fmt.Errorf("trajectory %d has %d steps, want %d", b, len(got[b]), len(want[b]))
		}
		for k := range want[b] {
			if len(got[b][k]) != nx || len(want[b][k]) != nx {
				return 0, fmt.Errorf("trajectory %d step %d has %d values, want %d", b, k, len(got[b][k]), nx)
			}
			for i, w := range want[b][k] {
				d := math.Abs(got[b][k][i] - w)
				if math.IsNaN(d) {
					return math.Inf(1), nil
				}
				diff[i] = math.Max(diff[i], d)
				scale[i] = math.Max(scale[i], math.Abs(w))
			}
		}
	}
	var rel float64
	for i := range nx {
		if diff[i] > 0 {
			rel = math.Max(rel, diff[i]/scale[i])
		}
	}
	return rel, nil
}

// compareJacobians returns the relative difference of step Jacobians got
// from want (trajectory × step × a row-major rows×cols matrix): entry (i,
// j) is weighed by colScale_j/rowScale_i, which makes it the derivative in
// the normalised coordinates (dimensionless, of order one whatever the
// units), and the result is max |Δ| / max |want| of the weighed entries.
func compareJacobians(got, want [][][]float64, rowScale, colScale []float64) (float64, error) {
	nr, nc := len(rowScale), len(colScale)
	var diff, scale float64
	if len(got) != len(want) || len(want) == 0 {
		return 0, fmt.Errorf("%d trajectories, want %d", len(got), len(want))
	}
	for b := range want {
		if len(got[b]) != len(want[b]) {
			return 0, fmt.Errorf("trajectory %d has %d steps, want %d", b, len(got[b]), len(want[b]))
		}
		for k := range want[b] {
			if len(got[b][k]) != nr*nc || len(want[b][k]) != nr*nc {
				return 0, fmt.Errorf("trajectory %d step %d has %d entries, want %d×%d", b, k, len(got[b][k]), nr, nc)
			}
			for i := range nr {
				for j := range nc {
					w := colScale[j] / rowScale[i]
					d := math.Abs(got[b][k][i*nc+j]-want[b][k][i*nc+j]) * w
					if math.IsNaN(d) {
						return math.Inf(1), nil
					}
					diff = max(diff, d)
					scale = max(scale, math.Abs(want[b][k][i*nc+j])*w)
				}
			}
		}
	}
	if scale == 0 {
		return 0, fmt.Errorf("every Jacobian entry is zero: nothing to compare")
	}
	return diff / scale, nil
}

// checkJacobians compares an implementation's step Jacobians with Go's
// Linearizer for one model and reports the difference.
func checkJacobians(t *testing.T, what string, r refResult, c refCase) {
	t.Helper()
	ra, err := compareJacobians(r.A, c.JacA, c.SX, c.SX)
	if err != nil {
		t.Errorf("%s: A: %v", what, err)
		return
	}
	rb, err := compareJacobians(r.B, c.JacB, c.SX, c.SE)
	if err != nil {
		t.Errorf("%s: B: %v", what, err)
		return
	}
	t.Logf("%s: A_k %.3g, B_k %.3g relative to Go's Linearizer", what, ra, rb)
	if !(ra <= refTol) || !(rb <= refTol) {
		t.Errorf("%s: step Jacobians differ from Go's Linearizer by %.3g (A) and %.3g (B) relative (want ≤ %g)", what, ra, rb, refTol)
	}
}

// holdStates is the batch of the case's initial states held over the
// horizon: a rollout that matches it is no test of the map.
func holdStates(c refCase) [][][]float64 {
	var out [][][]float64
	for _, x0 := range c.X0 {
		var tr [][]float64
		for range c.Horizon {
			tr = append(tr, x0)
		}
		out = append(out, tr)
	}
	return out
}

// python returns the interpreter the numpy reference runs on: apt's
// /usr/bin/python3 with python3-numpy, which scripts/test.sh installs.
func python(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s with numpy is missing (scripts/test.sh installs python3-numpy): %v", py, err)
		}
		t.Skipf("%s with numpy is absent (scripts/test.sh installs python3-numpy): %v", py, err)
	}
	return py
}

// refResult is one rollout an independent implementation reports.
type refResult struct {
	States  [][][]float64 `json:"states"`
	A       [][][]float64 `json:"A"`
	B       [][][]float64 `json:"B"`
	DX0     [][][]float64 `json:"dx0"`
	DPorts  [][][]float64 `json:"dports"`
	Error   string        `json:"error"`
	Inputs  []string      `json:"inputs"`
	Outputs []string      `json:"outputs"`
	// PortMean is the port history's m the numpy reader found.
	PortMean int `json:"port_mean"`
}

// runReference runs the numpy reference's rollout on (model, case) pairs
// in one process and returns its results, its stderr and its exit error.
func runReference(t *testing.T, py string, pairs ...string) ([]refResult, string, error) {
	t.Helper()
	return runReferenceCmd(t, py, "rollout", pairs...)
}

// runReferenceCmd is runReference for the reference's command rollout or
// jacobian.
func runReferenceCmd(t *testing.T, py, command string, pairs ...string) ([]refResult, string, error) {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join(fixtures.Root(), "python", "calisym_ref.py"), command}, pairs...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res []refResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, errb.String(), fmt.Errorf("reading the reference's output (exit %v): %w", runErr, err)
	}
	if len(res) != len(pairs)/2 {
		return nil, errb.String(), fmt.Errorf("%d results for %d rollouts", len(res), len(pairs)/2)
	}
	return res, errb.String(), runErr
}

// TestIndependentRollouts requires two implementations that share no code
// with the Go rollout — the numpy reference (python/calisym_ref.py) and
// the ONNX graphs of calisym export run by onnxruntime-node — to reproduce
// it for every preset and one trained model per robot, from the files on
// disk, to 1e-12 relative; and the numpy reader to refuse a corrupted file
// of each format.
func TestIndependentRollouts(t *testing.T) {
	dir := t.TempDir()
	models := append(writePresetModels(t, dir), writeTrainedModels(t, dir)...)
	cases := make([]refCase, len(models))
	paths := make([]string, len(models))
	for i, m := range models {
		c := goCase(t, m, uint64(i))
		if moved, err := compareStates(holdStates(c), c.Want); err != nil || !(moved > 1e-6) {
			t.Fatalf("%s: the Go rollout stays within %.3g of its initial states (%v): inputs that leave the map idle test nothing", m.name, moved, err)
		}
		cases[i], paths[i] = c, writeCase(t, m, c)
	}
	t.Run("numpy", func(t *testing.T) { checkNumpy(t, dir, models, cases, paths) })
	t.Run("onnx", func(t *testing.T) { checkONNX(t, models, cases, paths) })
	t.Run("float32", func(t *testing.T) { checkFloat32(t, models) })
	t.Run("port history", func(t *testing.T) {
		for _, m := range models {
			if m.name == "trained anymal gr" {
				checkPortHistory(t, dir, m)
				return
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatal("no ANYmal model: the port history is not checked")
		}
		t.Skip("no ANYmal model (shared data absent)")
	})
}

// float32Horizon is the horizon of the float32 graphs' rollouts.
const float32Horizon = 100

// checkFloat32 exports the trained model of every robot as a float32
// rollout graph of 100 steps (export --dtype float32), runs it with
// onnxruntime and reports its error against the float64 Go rollout at
// every step, in units of the state's normalisation scale: max over the
// batch and the state coordinates i of |x32 − x64|/s_x,i. The first step
// must be within 1e-5 (float32 rounding), and not exact (a float64 graph
// would be).
func checkFloat32(t *testing.T, models []refModel) {
	requireORT(t)
	var jobs []refModel
	var cases []refCase
	var pairs []string
	for i, m := range models {
		if m.data == "" {
			continue
		}
		c := goCaseH(t, m, uint64(100+i), float32Horizon)
		b, err := json.Marshal(struct {
			refCase
			Dtype string `json:"dtype"`
		}{c, "float32"})
		if err != nil {
			t.Fatal(err)
		}
		casePath, file := m.path+".f32case.json", m.path+".f32.onnx"
		if err := os.WriteFile(casePath, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := runCLI(t, "export", m.path, "--onnx", file, "--horizon", strconv.Itoa(float32Horizon), "--batch", "dynamic", "--dtype", "float32"); err != nil {
			t.Fatalf("%s: export --dtype float32: %v", m.name, err)
		}
		jobs, cases, pairs = append(jobs, m), append(cases, c), append(pairs, file, casePath)
	}
	if len(jobs) == 0 {
		t.Skip("no trained models (shared data absent)")
	}
	var res []refResult
	if err := json.Unmarshal(nodetest.Run(t, 5*time.Minute, "onnx_rollout.mjs", pairs...), &res); err != nil {
		t.Fatal(err)
	}
	for j, m := range jobs {
		c, got := cases[j], res[j].States
		errs := make([]float64, float32Horizon)
		for b := range c.Want {
			for k := range float32Horizon {
				for i, w := range c.Want[b][k] {
					errs[k] = max(errs[k], math.Abs(got[b][k][i]-w)/c.SX[i])
				}
			}
		}
		t.Logf("%s, float32 graph against the float64 Go rollout (in state scales): H=1 %.2g, H=10 %.2g, H=30 %.2g, H=100 %.2g, largest %.2g",
			m.name, errs[0], errs[9], errs[29], errs[99], slices.Max(errs))
		if !(errs[0] <= 1e-5) || errs[0] == 0 {
			t.Errorf("%s: the float32 graph's first step differs from float64 by %.3g state scales, want (0, 1e-5]", m.name, errs[0])
		}
	}
}

// checkPortHistory checks the port history of a model trained on a
// dataset converted with convert.history.port_mean (params/anymal.yaml):
// the model file and its ONNX graph record port_mean, the numpy reader
// reads it, and the numpy reference's port_means builds the means of the
// dataset's every sample, from the measured ports before it, bit for bit
// (each episode's first m samples as the history, the rest as the plan,
// which takes the plan's own earlier steps into the means), and those of
// statemap.PortHistory where fewer than m samples come before.
func checkPortHistory(t *testing.T, dir string, m refModel) {
	py := python(t)
	sv, err := trainer.OpenModel(m.path)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Load(m.data)
	if err != nil {
		t.Fatal(err)
	}
	pm := sv.PortMean
	if pm != 10 || sv.Model.Meta.PortMean != 10 {
		t.Fatalf("%s: port_mean %d (meta %d), want 10 (params/anymal.yaml)", m.name, pm, sv.Model.Meta.PortMean)
	}
	// The ONNX graph's metadata_props entry (key, value), as protobuf
	// encodes a StringStringEntryProto.
	onnxFile := filepath.Join(dir, "anymal.onnx")
	if _, _, err := runCLI(t, "export", m.path, "--onnx", onnxFile); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(onnxFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, onnxMetaEntry("calisym.port_mean", "10")) {
		t.Errorf("the ONNX graph has no metadata entry calisym.port_mean = 10")
	}
	nc := ds.NC
	a := (ds.NU - nc) / 2
	nm, ne := a+nc, ds.PortDim()
	measured := func(row []float64) []float64 { return slices.Concat(row[:a], row[a+nm:]) }
	type pmCase struct {
		Plan    [][]float64 `json:"plan"`
		History [][]float64 `json:"history"`
		M       int         `json:"m"`
	}
	var cases []pmCase
	var want [][][]float64
	for _, ep := range ds.Episodes {
		if ep.Len <= pm {
			continue
		}
		if len(cases) == 60 { // enough samples (a few thousand) for a test
			break
		}
		var c pmCase
		var w [][]float64
		for j := range ep.Len {
			row := ep.E[j*ne : (j+1)*ne]
			if j < pm {
				c.History = append(c.History, measured(row))
				continue
			}
			c.Plan = append(c.Plan, measured(row))
			w = append(w, slices.Clone(row[a:a+nm]))
		}
		c.M = pm
		cases, want = append(cases, c), append(want, w)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no episode longer than %d samples", m.data, pm)
	}
	// Fewer than m samples before: a plan from the start of a stretch, a
	// history of 3, against statemap.PortHistory as conversion feeds it.
	for _, held := range []int{0, 3} {
		plan := cases[0].Plan[:pm+2]
		hist := cases[0].History[:held]
		ph, err := statemap.NewPortHistory(pm, a, nc)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hist {
			ph.Push(h)
		}
		out := make([]float64, 2*nm)
		var w [][]float64
		for _, p := range plan {
			ph.Ports(p, out)
			w = append(w, slices.Clone(out[a:a+nm]))
			ph.Push(p)
		}
		cases, want = append(cases, pmCase{Plan: plan, History: hist, M: pm}), append(want, w)
	}
	var paths []string
	for i, c := range cases {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("port_means%d.json", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	cmd := exec.Command(py, append([]string{filepath.Join(fixtures.Root(), "python", "calisym_ref.py"), "port_means"}, paths...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("numpy port_means: %v\n%s", err, errb.String())
	}
	var got []struct {
		Means [][]float64 `json:"means"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("numpy port_means: %d results for %d cases (%v)", len(got), len(cases), err)
	}
	samples := 0
	for i := range cases {
		if len(got[i].Means) != len(want[i]) {
			t.Fatalf("case %d: %d rows of means, want %d", i, len(got[i].Means), len(want[i]))
		}
		for k, w := range want[i] {
			for j, v := range w {
				if g := got[i].Means[k][j]; math.Float64bits(g) != math.Float64bits(v) {
					t.Fatalf("case %d (history %d samples), plan step %d, mean of measured port %d: numpy %v, conversion %v (bits differ)",
						i, len(cases[i].History), k, j, g, v)
				}
			}
			samples++
		}
	}
	t.Logf("%s: numpy port_means equal the dataset's means bit for bit at %d samples of %d episodes (m = %d, %d measured ports), and statemap.PortHistory's with fewer than m before",
		m.name, samples-2*(pm+2), len(cases)-2, pm, nm)
	checkPortHistoryGraph(t, dir, m, a, paths, want)
}

// checkPortHistoryGraph exports the port-history graph of a port-history
// model (export --port-history), runs it with onnxruntime on the cases of
// checkPortHistory (paths, with conversion's means want; a actuated
// ports) and requires its means to equal conversion's to 1e-12 relative
// (the graph's are one matrix product; conversion sums first and divides
// after), and its ports to be the plan's measured ports (u, f_c) with the
// means between them, unchanged.
func checkPortHistoryGraph(t *testing.T, dir string, m refModel, a int, paths []string, want [][][]float64) {
	requireORT(t)
	file := filepath.Join(dir, "anymal.port_history.onnx")
	if _, _, err := runCLI(t, "export", m.path, "--onnx", file, "--port-history", "--batch", "dynamic"); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Means [][]float64 `json:"means"`
		Ports [][]float64 `json:"ports"`
	}
	if err := json.Unmarshal(nodetest.Run(t, 5*time.Minute, "onnx_port_history.mjs", append([]string{file}, paths...)...), &got); err != nil || len(got) != len(paths) {
		t.Fatalf("onnx_port_history.mjs: %d results for %d cases (%v)", len(got), len(paths), err)
	}
	var worst float64
	for i, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Plan    [][]float64 `json:"plan"`
			History [][]float64 `json:"history"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		if len(got[i].Means) != len(want[i]) || len(got[i].Ports) != len(want[i]) {
			t.Fatalf("case %d: %d rows of means and %d of ports, want %d", i, len(got[i].Means), len(got[i].Ports), len(want[i]))
		}
		// The scale of the case's ports, for means near zero.
		var scale float64
		for _, r := range slices.Concat(c.Plan, c.History) {
			for _, v := range r {
				scale = max(scale, math.Abs(v))
			}
		}
		for k, w := range want[i] {
			for j, v := range w {
				g := got[i].Means[k][j]
				d := math.Abs(g - v)
				if !(d <= 1e-12*max(math.Abs(v), 1e-3*scale)) {
					t.Fatalf("case %d (history %d samples), plan step %d, mean of measured port %d: ONNX %v, conversion %v", i, len(c.History), k, j, g, v)
				}
				if v != 0 {
					worst = max(worst, d/math.Abs(v))
				}
			}
			plan := c.Plan[k]
			if wp := slices.Concat(plan[:a], got[i].Means[k], plan[a:]); !slices.Equal(got[i].Ports[k], wp) {
				t.Fatalf("case %d, plan step %d: ports %v, want (u, means, f_c) %v", i, k, got[i].Ports[k], wp)
			}
		}
	}
	t.Logf("%s: the ONNX port-history graph's means are within %.3g relative of conversion's in %d cases", m.name, worst, len(paths))
}

// checkNumpy runs the numpy reference on every model (one process), then
// on a corrupted copy of each, which it must refuse by the checksum.
func checkNumpy(t *testing.T, dir string, models []refModel, cases []refCase, paths []string) {
	py := python(t)
	var pairs, bad []string
	for i, m := range models {
		pairs = append(pairs, m.path, paths[i])
		// A changed byte of the tensor data (or a changed weight in the
		// MLP's JSON).
		raw, err := os.ReadFile(m.path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(m.path, ".json") {
			raw = corruptFirstNumber(t, raw, `"layers.0.bias":[`)
		} else {
			raw[len(raw)-3] ^= 0x10
		}
		path := filepath.Join(dir, fmt.Sprintf("corrupt%d%s", i, filepath.Ext(m.path)))
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, path, paths[i])
	}
	res, stderr, err := runReference(t, py, pairs...)
	if err != nil {
		t.Fatalf("numpy reference: %v\n%s", err, stderr)
	}
	jac, stderr, err := runReferenceCmd(t, py, "jacobian", pairs...)
	if err != nil {
		t.Fatalf("numpy reference, jacobian: %v\n%s", err, stderr)
	}
	for i, m := range models {
		if rel, err := compareStates(jac[i].States, cases[i].Want); err != nil || !(rel <= refTol) {
			t.Errorf("%s: numpy rollout_jacobian's states: %.3g relative to the Go rollout (%v)", m.name, rel, err)
		}
		checkJacobians(t, m.name+", numpy rollout_jacobian", jac[i], cases[i])
		c := cases[i]
		rx, errX := compareJacobians(jac[i].DX0, c.JacX0, c.SX, c.SX)
		var seH []float64
		for range c.Horizon {
			seH = append(seH, c.SE...)
		}
		rp, errP := compareJacobians(jac[i].DPorts, c.JacPorts, c.SX, seH)
		t.Logf("%s, numpy dense rollout Jacobians: ∂x̂/∂x0 %.3g, ∂x̂/∂e %.3g relative to Linearization.Dense", m.name, rx, rp)
		if errX != nil || errP != nil || !(rx <= refTol) || !(rp <= refTol) {
			t.Errorf("%s: numpy dense rollout Jacobians differ from Linearization.Dense by %.3g and %.3g relative (want ≤ %g; %v, %v)", m.name, rx, rp, refTol, errX, errP)
		}
	}
	for i, m := range models {
		rel, err := compareStates(res[i].States, cases[i].Want)
		if err != nil {
			t.Errorf("%s: %v", m.name, err)
			continue
		}
		t.Logf("%s: numpy reference %.3g relative to the Go rollout", m.name, rel)
		if sv, err := trainer.OpenModel(m.path); err != nil || res[i].PortMean != sv.PortMean {
			t.Errorf("%s: the numpy reader finds port_mean %d, Go %d (%v)", m.name, res[i].PortMean, sv.PortMean, err)
		}
		if !(rel <= refTol) {
			t.Errorf("%s: numpy reference differs from the Go rollout by %.3g relative (want ≤ %g)", m.name, rel, refTol)
		}
	}
	res, stderr, err = runReference(t, py, bad...)
	if err == nil {
		t.Errorf("numpy reference exits 0 on corrupted files:\n%s", stderr)
	}
	for i, m := range models {
		if res == nil || !strings.Contains(res[i].Error, "checksum mismatch") {
			t.Errorf("%s: numpy reference on a corrupted copy: %+v; want a checksum error (stderr %q)", m.name, res, stderr)
			break
		}
	}
}

// corruptFirstNumber changes the first digit of the number that follows
// anchor in a JSON file.
func corruptFirstNumber(t *testing.T, raw []byte, anchor string) []byte {
	t.Helper()
	i := bytes.Index(raw, []byte(anchor))
	if i < 0 {
		t.Fatalf("%s not in the file", anchor)
	}
	for j := i + len(anchor); j < len(raw); j++ {
		if c := raw[j]; c >= '0' && c <= '9' {
			raw[j] = '0' + (c-'0'+1)%10
			return raw
		}
	}
	t.Fatalf("no digit after %s", anchor)
	return nil
}
