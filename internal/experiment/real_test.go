package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// The wrench mapping (Fz = 0.173 N·Σ commands, no sideways force) and the
// momenta against finite differences of the poses are checked on a real
// flight in bagtools/convert (TestCrazyflieFlight, TestCrazyflieAllocation,
// TestPendulumRun); these tests check the benchmark's own code path.

func realOptions(inputs ...string) RealOptions {
	return RealOptions{DataRoot: fixtures.DataDir(), ParamsDir: filepath.Join(fixtures.Root(), "params"), Inputs: inputs}
}

// timeSplit splits a single log by window start time.
func timeSplit(train, idTest, ood [2]float64) *convert.SplitSpec {
	return &convert.SplitSpec{By: convert.SplitByTime, Default: "unused", Rules: []convert.SplitRule{
		{Split: splitTrain, Time: train[:]}, {Split: splitIDTest, Time: idTest[:]}, {Split: splitOOD, Time: ood[:]}}}
}

// shrink makes the benchmark's models tiny for a test.
func shrink(b *RealBenchmark) {
	for i := range b.Spec.Models {
		m := &b.Spec.Models[i]
		m.Arch.Layers, m.Arch.Width = 2, 8
		m.Hidden = []int{16}
	}
}

// checkReport checks that a report's numbers are finite and files exist.
func checkReport(t *testing.T, rep *Report, dir string, horizon int) {
	t.Helper()
	if len(rep.Models) != 2 || rep.OODChangePercent == nil {
		t.Fatalf("%d models, OOD change %v", len(rep.Models), rep.OODChangePercent)
	}
	for _, m := range rep.Models {
		for name, v := range map[string]float64{"OOD": m.OODARMSE, "ID": m.IDARMSE, "ε_J": m.SymplecticResidualMax,
			"train s": m.TrainSeconds, "loss": m.FinalLoss, "val loss": m.FinalValLoss} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Errorf("%s: %s = %v", m.Name, name, v)
			}
		}
		if m.Horizon != horizon || m.Params <= 0 || m.FLOPsPerStep <= 0 || m.OOD.Windows == 0 || m.ID.Windows == 0 || len(m.MultiHorizon) == 0 {
			t.Errorf("%s: %+v", m.Name, m)
		}
	}
	if sym := rep.Models[0]; sym.Kind == "mlp" || sym.SymplecticResidualMax > 1e-12 {
		t.Errorf("%s: ε_J %v", sym.Name, sym.SymplecticResidualMax)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "2.341 vs 7.688)") || !strings.Contains(string(md), "## Data preparation") {
		t.Errorf("report.md:\n%s", md)
	}
	for _, f := range []string{"report.json", PlotRollout, PlotTraining, rep.Models[0].File, rep.Models[1].File} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, k := range []string{"constants", "split", "hold_baseline_ood", "train_files", "paper"} {
		if rep.Extra[k] == "" {
			t.Errorf("report lacks note %q", k)
		}
	}
}

// paramsFile reads a params file of the repository (params/name).
func paramsFile(t *testing.T, name string) *convert.Spec {
	t.Helper()
	s, err := convert.LoadSpec(filepath.Join(fixtures.Root(), "params", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// realParamsSpec reads the params file of a real-robot system.
func realParamsSpec(t *testing.T, system string) *convert.Spec {
	t.Helper()
	return paramsFile(t, realSystems()[system].params)
}

// TestRealCrazyflieFlight converts one real flight through PrepareReal in
// both pose representations, trains tiny models for one epoch and checks
// the report.
func TestRealCrazyflieFlight(t *testing.T) {
	const flight = "crazyflie/train/random1_20251017_run1.parquet"
	fixtures.Path(t, "crazyflie", "train", "random1_20251017_run1.parquet")
	ctx := context.Background()
	const H = 20
	var gravity *RealBenchmark
	for _, sys := range []string{RealCrazyflieGravity, RealCrazyflie} {
		opt := realOptions(flight)
		opt.Split = timeSplit([2]float64{0, 40}, [2]float64{40, 50}, [2]float64{50, 60})
		opt.Horizon, opt.Epochs, opt.Workers = H, 1, 1
		b, err := PrepareReal(ctx, sys, opt)
		if err != nil {
			t.Fatal(err)
		}
		d := b.Data
		// the default trains on windows at stride 10 on the SE(3) pose
		// and 2 on the gravity-aware one (the one-step configuration of a
		// study at 50: TestRealDefaults), with the params' port history of
		// 2 samples (n_u = 6 + 6 means)
		stride := map[string]int{RealCrazyflieGravity: 2, RealCrazyflie: 10}[sys]
		if d.Train.N != 6 || d.Train.NU != 12 || d.Train.WindowLen != 100 || d.Train.Stride != stride || d.Train.Ports[6] != "mean2(f_x)" {
			t.Fatalf("%s: training set n=%d n_u=%d windows %d/%d", sys, d.Train.N, d.Train.NU, d.Train.WindowLen, d.Train.Stride)
		}
		if b.Spec.Horizon != H || slices.Max(b.Spec.Horizons) > H || b.Spec.EvalStride != H+1 {
			t.Fatalf("%s: horizon %d, table %v, stride %d", sys, b.Spec.Horizon, b.Spec.Horizons, b.Spec.EvalStride)
		}
		// Every evaluation episode is one window of H+1 samples that starts
		// at the window's own origin: zero position and yaw.
		if len(d.ID.Episodes) < 5 || len(d.OOD.Episodes) < 5 {
			t.Errorf("%s: %d ID-test and %d OOD episodes", sys, len(d.ID.Episodes), len(d.OOD.Episodes))
		}
		for _, ep := range append(slices.Clone(d.OOD.Episodes), d.ID.Episodes...) {
			if ep.Len != H+1 || ep.X[0] != 0 || ep.X[1] != 0 || ep.X[2] != 0 || ep.X[5] != 0 {
				t.Fatalf("%s: %s: %d samples, first q %v", sys, ep.Name, ep.Len, ep.X[:6])
			}
		}
		if sys == RealCrazyflieGravity {
			gravity = b
			if !strings.Contains(b.Notes["constants"], "each times Vbat/3.7 V") {
				t.Errorf("%s: the constants note does not name the voltage-scaled thrust map: %s", sys, b.Notes["constants"])
			}
		} else {
			// The representations differ in q only: the same windows have
			// the same momenta, and the same wrenches where the thrust
			// maps agree; the gravity-aware pose's voltage-scaled map
			// (since the real-robot study) changes every sample's wrench.
			a, g := d.OOD.Episodes, gravity.Data.OOD.Episodes
			if len(a) != len(g) {
				t.Fatalf("%d vs %d OOD windows", len(a), len(g))
			}
			sameMap := reflect.DeepEqual(realParamsSpec(t, RealCrazyflie).Control.Quadrotor, realParamsSpec(t, RealCrazyflieGravity).Control.Quadrotor)
			for i := range a {
				if a[i].Name != g[i].Name || slices.Equal(a[i].E, g[i].E) != sameMap {
					t.Fatalf("window %d: %s vs %s, the same thrust map %v, the same wrenches %v", i, a[i].Name, g[i].Name, sameMap, slices.Equal(a[i].E, g[i].E))
				}
				for k := range a[i].Len {
					if !slices.Equal(a[i].X[12*k+6:12*k+12], g[i].X[12*k+6:12*k+12]) {
						t.Fatalf("%s sample %d: momenta differ", a[i].Name, k)
					}
				}
			}
		}
	}
	shrink(gravity)
	dir := t.TempDir()
	rep, err := gravity.Run(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, dir, H)
}

// TestRealPendulumRun converts one real pendulum run through PrepareReal,
// trains tiny models for two epochs and checks the report.
func TestRealPendulumRun(t *testing.T) {
	const run = "double_pendulum_hw/trajectories/20230629-143524.csv"
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-143524.csv")
	fixtures.Path(t, "double_pendulum_hw", "identified_parameters", "model_2.0", "model_parameters.yml")
	ctx := context.Background()
	const H = 50
	opt := realOptions(run)
	opt.Split = timeSplit([2]float64{0, 6}, [2]float64{6, 8}, [2]float64{8, 10})
	opt.Horizon, opt.Epochs, opt.Workers = H, 2, 1
	b, err := PrepareReal(ctx, RealDoublePendulumHW, opt)
	if err != nil {
		t.Fatal(err)
	}
	d := b.Data
	if d.Train.N != 2 || d.Train.NU != 2 || len(d.Train.Episodes) != 1 || d.Train.Episodes[0].Len < 600 {
		t.Fatalf("training set: n=%d, %d episodes", d.Train.N, len(d.Train.Episodes))
	}
	if len(d.OOD.Episodes) != 1 || d.OOD.Episodes[0].Len < H+1 || b.Spec.EvalStride != 10 {
		t.Fatalf("OOD: %d episodes, eval stride %d", len(d.OOD.Episodes), b.Spec.EvalStride)
	}
	shrink(b)
	dir := t.TempDir()
	rep, err := b.Run(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, dir, H)
	if !strings.Contains(rep.Extra["constants"], "model_2.0") {
		t.Errorf("constants: %s", rep.Extra["constants"])
	}
}

// TestRealResumeFromCheckpoints runs the real pendulum benchmark for two
// epochs with a checkpoint directory, then again for three: the second run
// says it resumes both models at epoch 2, keeps their first two epochs as
// the first run trained them and trains one more. A seed other than the
// checkpoints' is an error naming the settings, not a silent resume.
func TestRealResumeFromCheckpoints(t *testing.T) {
	const run = "double_pendulum_hw/trajectories/20230629-143524.csv"
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-143524.csv")
	ctx := context.Background()
	ckdir := filepath.Join(t.TempDir(), "checkpoints")
	prepare := func(epochs int, seed uint64) *RealBenchmark {
		t.Helper()
		opt := realOptions(run)
		opt.Split = timeSplit([2]float64{0, 6}, [2]float64{6, 8}, [2]float64{8, 10})
		opt.Horizon, opt.Epochs, opt.Workers, opt.Seed, opt.Checkpoints = 20, epochs, 1, seed, ckdir
		b, err := PrepareReal(ctx, RealDoublePendulumHW, opt)
		if err != nil {
			t.Fatal(err)
		}
		shrink(b)
		// the constant schedule: a run of 2 epochs resumed to 3 is the
		// run of 3 (a cosine schedule's length is in the checkpoint)
		for i := range b.Spec.Models {
			b.Spec.Models[i].Train.Schedule = "constant"
		}
		return b
	}
	first, err := prepare(2, 0).Run(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range first.Models {
		ck, err := trainer.LoadCheckpoint(CheckpointFile(ckdir, m.Name))
		if err != nil || ck.Epoch != 2 {
			t.Fatalf("%s: checkpoint %v, %v", m.Name, ck, err)
		}
	}
	var log strings.Builder
	second, err := prepare(3, 0).Run(ctx, t.TempDir(), &log)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range second.Models {
		if want := fmt.Sprintf("resuming %s from %s (epoch 2 of 3", m.Name, CheckpointFile(ckdir, m.Name)); !strings.Contains(log.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, log.String())
		}
		if len(m.History) != 3 {
			t.Fatalf("%s: %d epochs after resuming", m.Name, len(m.History))
		}
		for e := range 2 {
			if m.History[e].Loss != first.Models[i].History[e].Loss {
				t.Errorf("%s epoch %d: loss %v resumed, %v in the first run", m.Name, e+1, m.History[e].Loss, first.Models[i].History[e].Loss)
			}
		}
	}
	_, err = prepare(4, 7).Run(ctx, t.TempDir(), nil)
	if !errors.Is(err, trainer.ErrCheckpoint) || !strings.Contains(err.Error(), "other training settings") || !strings.Contains(err.Error(), "seed 7") {
		t.Errorf("resuming with another seed: %v", err)
	}
}

// TestRealSplitsByFile checks the benchmarks' default splits on all the
// logs: whole files, disjoint, as documented.
func TestRealSplitsByFile(t *testing.T) {
	if testing.Short() {
		t.Skip("converts every log")
	}
	fixtures.Path(t, "crazyflie", "test", "random1_20251017_run4.parquet")
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-154548.csv")
	ctx := context.Background()
	for sys, want := range map[string][3]int{RealCrazyflie: {11, 5, 3}, RealDoublePendulumHW: {6, 1, 3}} {
		b, err := PrepareReal(ctx, sys, realOptions())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for i, s := range []string{splitTrain, splitIDTest, splitOOD} {
			if len(b.Files[s]) != want[i] {
				t.Errorf("%s: %d %s files, want %d: %v", sys, len(b.Files[s]), s, want[i], b.Files[s])
			}
			for _, f := range b.Files[s] {
				if prev, ok := seen[f]; ok {
					t.Errorf("%s: %s in %s and %s", sys, f, prev, s)
				}
				seen[f] = s
			}
		}
		if sys == RealCrazyflie && !slices.Equal(b.Files[splitOOD], []string{
			"crazyflie/test/multisine_20251017_run4.parquet", "crazyflie/test/random1_20251017_run4.parquet", "crazyflie/test/random2_20251017_run4.parquet"}) {
			t.Errorf("OOD flights %v", b.Files[splitOOD])
		}
		for _, ep := range b.Data.OOD.Episodes {
			if ep.Len < b.Spec.Horizon+1 {
				t.Fatalf("%s: OOD episode %s of %d samples for horizon %d", sys, ep.Name, ep.Len, b.Spec.Horizon)
			}
		}
	}
}

func TestRealErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := PrepareReal(ctx, "anymal", realOptions()); err == nil || !strings.Contains(err.Error(), RealCrazyflieGravity) {
		t.Errorf("unknown system: %v", err)
	}
	opt := realOptions()
	opt.Params = filepath.Join(t.TempDir(), "missing.yaml")
	if _, err := PrepareReal(ctx, RealCrazyflie, opt); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing params: %v", err)
	}
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-143524.csv")
	opt = realOptions("double_pendulum_hw/trajectories/20230629-143524.csv")
	// With one training run and the split by file, there is no ID test.
	_, err := PrepareReal(ctx, RealDoublePendulumHW, opt)
	if err == nil || !strings.Contains(err.Error(), `"id_test" split has no windows`) {
		t.Errorf("empty split: %v", err)
	}
	if errors.Is(err, convert.ErrSpec) {
		t.Errorf("empty split reported as a spec error: %v", err)
	}
}

// TestAnymalSimRun converts one simulated ANYmal D run through PrepareReal
// with params/anymal.yaml (paper layout, n = 18, n_u = 18, n_c = 12, with
// the port history's 30 means: n_u = 48),
// checks the data preparation (windows relative to their first pose, the
// excluded shank-contact stretch, momentum-only filtering), trains tiny
// models for one epoch and checks the report.
func TestAnymalSimRun(t *testing.T) {
	fixtures.Path(t, "anymal_sim", "id", "sway_201.mcap")
	fixtures.Path(t, "anymal_sim", "anymal_d_simple_description", "urdf", "anymal.urdf")
	ctx := context.Background()
	const H = 50
	// sway_201 has shank contacts from 6.82 s: the benchmark excludes
	// every window reaching past 6.7 s.
	opt := realOptions("id/sway_201.mcap")
	opt.Split = timeSplit([2]float64{0, 3}, [2]float64{3, 4.5}, [2]float64{4.5, 7})
	opt.Horizon, opt.Epochs, opt.Workers = H, 1, 1
	b, err := PrepareReal(ctx, AnymalSim, opt)
	if err != nil {
		t.Fatal(err)
	}
	d := b.Data
	// the default: the paper's layout and the params' port history, the
	// means of the 30 measured ports over 10 samples
	if d.Train.N != 18 || d.Train.NU != 48 || d.Train.NC != 12 || d.Train.WindowLen != 100 || d.Train.Stride != 50 || d.Train.Ports[18] != "mean10(base_fx)" {
		t.Fatalf("training set n=%d n_u=%d n_c=%d windows %d/%d", d.Train.N, d.Train.NU, d.Train.NC, d.Train.WindowLen, d.Train.Stride)
	}
	if n := b.EvalConversion.Windows.Rejected[convert.ReasonExcluded]; n == 0 {
		t.Errorf("no evaluation window excluded: %+v", b.EvalConversion.Windows)
	}
	for _, ep := range d.OOD.Episodes {
		if ep.Len != H+1 || slices.ContainsFunc(ep.X[:6], func(v float64) bool { return v != 0 }) {
			t.Fatalf("%s: %d samples, first base q %v", ep.Name, ep.Len, ep.X[:6])
		}
		if start := ep.Tags["t0"]; start+float64(H)*d.OOD.Dt > 6.7 {
			t.Errorf("%s starts at %v s and reaches into the excluded stretch", ep.Name, start)
		}
	}
	if len(d.OOD.Episodes) < 3 || len(d.ID.Episodes) < 1 {
		t.Fatalf("%d OOD and %d ID-test episodes", len(d.OOD.Episodes), len(d.ID.Episodes))
	}
	if !strings.Contains(b.Notes["filter"], "momentum channels only") || !strings.Contains(b.Notes["simulated"], "SIMULATED") ||
		!strings.Contains(b.Notes["constants"], "51.539 kg") {
		t.Errorf("notes: filter %q, simulated %q, constants %q", b.Notes["filter"], b.Notes["simulated"], b.Notes["constants"])
	}
	shrink(b)
	dir := t.TempDir()
	rep, err := b.Run(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, dir, H)
}

// TestAnymalStudy runs a study of two variants and two seeds on one
// simulated ANYmal log, with its ID-test and OOD windows as evaluation
// groups: the groups' errors at every horizon, the mean and range over the
// seeds in study.md, the plots, and a second call that reads the finished
// runs instead of training again.
func TestAnymalStudy(t *testing.T) {
	fixtures.Path(t, "anymal_sim", "id", "sway_201.mcap")
	fixtures.Path(t, "anymal_sim", "anymal_d_simple_description", "urdf", "anymal.urdf")
	ctx := context.Background()
	const H = 20
	opt := realOptions("id/sway_201.mcap")
	opt.Split = timeSplit([2]float64{0, 3}, [2]float64{3, 4.5}, [2]float64{4.5, 7})
	opt.Horizon, opt.Epochs, opt.Workers, opt.OneStep = H, 2, 1, true
	b, err := PrepareReal(ctx, AnymalSim, opt)
	if err != nil {
		t.Fatal(err)
	}
	// the study starts from the one-step configuration; the default adds
	// the long-horizon training
	def := slices.Clone(b.Spec.Models)
	if b.Default == nil || def[0].Train.RolloutSteps != 0 || def[0].Loss.Units != 0 {
		t.Fatalf("one-step configuration: %+v", def[0].Train)
	}
	b.Default(def, b.Spec)
	for _, m := range def {
		if m.Train.RolloutSteps != 50 || m.Train.SelectHorizon != H || m.Loss.Units != 1 || m.Loss.StepDecay != 2 || m.Train.AlphaFinal != 1 || m.Train.Epochs != 2 {
			t.Errorf("%s: default %+v, loss %+v", m.Name, m.Train, m.Loss)
		}
	}
	if len(b.Data.Groups) != 0 {
		t.Fatalf("groups %v with other inputs than the benchmark's", b.Data.Groups)
	}
	shrink(b)
	b.Spec.Horizons = []int{5, 10, H}
	b.Data.Groups = []EvalGroup{{Name: "id", Data: b.Data.ID}, {Name: "ood", Data: b.Data.OOD}}
	variants := []Variant{
		{Name: "one-step", About: "the configuration", Apply: func([]ModelSpec, Spec) {}},
		{Name: "k3-select", About: "3-step rollouts and selection", Apply: func(ms []ModelSpec, s Spec) {
			for i := range ms {
				ms[i].Train.AlphaHold, ms[i].Train.AlphaRamp, ms[i].Train.AlphaFinal = 0, 0, 1
				ms[i].Train.RolloutSteps, ms[i].Train.SelectHorizon = 3, s.Horizon
				ms[i].Loss.Units = 1
			}
		}},
	}
	dir := t.TempDir()
	var log strings.Builder
	runs, err := b.Study(ctx, variants, []uint64{1, 2}, dir, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs", len(runs))
	}
	for _, r := range runs {
		for _, m := range r.Report.Models {
			if len(m.Groups) != 2 || len(m.Groups[1].MSE) != 3 || !(m.Groups[1].At(H) > m.Groups[1].At(5)) || m.Groups[1].Windows != len(b.Data.OOD.Episodes) {
				t.Errorf("%s seed %d %s: groups %+v", r.Variant, r.Seed, m.Name, m.Groups)
			}
			if math.Abs(m.Groups[1].At(H)-m.OOD.MSE) > 1e-12*m.OOD.MSE {
				t.Errorf("%s seed %d %s: OOD group at %d steps %v, the OOD evaluation %v (same windows)", r.Variant, r.Seed, m.Name, H, m.Groups[1].At(H), m.OOD.MSE)
			}
			if m.Kind != "mlp" {
				if len(m.Live) != 2 || m.Live[0].Forecast != "hold" || m.Live[1].Forecast != "learned" || len(m.Live[1].Groups) != 2 ||
					!(m.Live[1].Groups[1].At(H) > 0) || m.Forecaster == nil {
					t.Errorf("%s seed %d %s: live rows %+v", r.Variant, r.Seed, m.Name, m.Live)
				} else {
					f, err := forecast.Load(filepath.Join(dir, r.Variant, fmt.Sprintf("seed%d", r.Seed), m.Forecaster.File))
					if err != nil {
						t.Error(err)
					} else if sum, _ := forecast.FileDigest(filepath.Join(dir, r.Variant, fmt.Sprintf("seed%d", r.Seed), m.File)); f.Binding.ModelSHA256 != sum {
						t.Errorf("%s seed %d: the forecaster is bound to %s, the model file hashes to %s", r.Variant, r.Seed, f.Binding.ModelSHA256, sum)
					}
				}
			} else if len(m.Live) != 0 {
				t.Errorf("%s seed %d %s: live rows for the MLP", r.Variant, r.Seed, m.Name)
			}
			if k := m.History[len(m.History)-1].K; (r.Variant == "k3-select") != (k == 3) {
				t.Errorf("%s seed %d %s: last epoch K = %d", r.Variant, r.Seed, m.Name, k)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| ood | k3-select | CaLiSym-GR | 2 |", "| id | one-step | MLP | 2 |", "| ood | | state held constant | |", " ["} {
		if !strings.Contains(string(md), want) {
			t.Errorf("study.md lacks %q:\n%s", want, md)
		}
	}
	var rows []StudyRow
	if js, err := os.ReadFile(filepath.Join(dir, "study.json")); err != nil {
		t.Error(err)
	} else if err := json.Unmarshal(js, &rows); err != nil || len(rows) != 2*2*5*3 {
		// groups × variants × (CaLiSym, CaLiSym live hold, CaLiSym live
		// learned, MLP, hold) × horizons
		t.Errorf("study.json: %d rows, %v", len(rows), err)
	}
	for _, f := range []string{"hold", "learned"} {
		if !slices.ContainsFunc(rows, func(r StudyRow) bool {
			return r.Forecast == f && r.Model == "calisym" && r.Group == "ood" && r.Horizon == H && r.Seeds == 2 && r.Mean > 0
		}) {
			t.Errorf("study.json has no live row of the %s forecast", f)
		}
	}
	for _, f := range []string{"study_id.png", "study_ood.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// Read again, with offset-free rollouts of the saved models.
	log.Reset()
	force := &predictor.ForceEstimate{Window: 3, Decay: 0.9}
	runs2, err := b.Study(ctx, variants, []uint64{1, 2}, dir, []trainer.EvalOptions{{Force: force}}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), ": read "); n != 4 || strings.Contains(log.String(), "training") {
		t.Errorf("second study read %d runs; log:\n%s", n, log.String())
	}
	if len(runs2) != 8 || runs2[2].Variant != "one-step+force" || runs2[2].Seed != 1 {
		t.Fatalf("%d runs with the force pass, the third %s seed %d", len(runs2), runs2[2].Variant, runs2[2].Seed)
	}
	plain, forced := runs2[0].Report.Models[0].Groups[1], runs2[2].Report.Models[0].Groups[1]
	if !(forced.At(5) > 0) || forced.At(5) == plain.At(5) || forced.Windows != plain.Windows {
		t.Errorf("offset-free OOD group %+v, plain %+v: want other errors on the same windows", forced, plain)
	}
	md, err = os.ReadFile(filepath.Join(dir, "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| ood | k3-select+force | CaLiSym-GR | 2 |"; !strings.Contains(string(md), want) {
		t.Errorf("study.md lacks %q:\n%s", want, md)
	}
	// Read again, with the wrench estimate as well: "<variant>+wrench"
	// after "<variant>+force", the same models on the same windows.
	wrench := &predictor.WrenchEstimate{Window: 16, Gate: 1e-6, Decay: 1, Blocks: 4}
	runs3, err := b.Study(ctx, variants, []uint64{1, 2}, dir, []trainer.EvalOptions{{Force: force}, {Wrench: wrench}}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs3) != 12 || runs3[4].Variant != "one-step+wrench" || runs3[4].Seed != 1 {
		t.Fatalf("%d runs with the force and wrench passes, the fifth %s seed %d", len(runs3), runs3[4].Variant, runs3[4].Seed)
	}
	wrenched := runs3[4].Report.Models[0].Groups[1]
	if !(wrenched.At(5) > 0) || wrenched.At(5) == plain.At(5) || wrenched.At(5) == forced.At(5) || wrenched.Windows != plain.Windows {
		t.Errorf("wrench-corrected OOD group %+v, plain %+v: want other errors on the same windows", wrenched, plain)
	}
	md, err = os.ReadFile(filepath.Join(dir, "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| ood | k3-select+wrench | CaLiSym-GR | 2 |"; !strings.Contains(string(md), want) {
		t.Errorf("study.md lacks %q:\n%s", want, md)
	}
	// Several settings of a kind, in one study: each pass named by its
	// settings, in the order given; the first equals the single pass.
	force2 := &predictor.ForceEstimate{Window: 5, Decay: 1}
	runs4, err := b.Study(ctx, variants, []uint64{1, 2}, dir, []trainer.EvalOptions{{Force: force}, {Force: force2}, {Wrench: wrench}}, &log)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs4[:8] {
		if r.Seed == 1 {
			names = append(names, r.Variant)
		}
	}
	if want := []string{"one-step", "one-step+force(3,0.9)", "one-step+force(5,1)", "one-step+wrench"}; !slices.Equal(names, want) {
		t.Errorf("passes %v, want %v", names, want)
	}
	if g := runs4[2].Report.Models[0].Groups[1]; g.At(5) != forced.At(5) {
		t.Errorf("force(3,0.9) pass at 5 steps %v, the single force pass %v", g.At(5), forced.At(5))
	}
	if g := runs4[4].Report.Models[0].Groups[1]; g.At(5) == forced.At(5) {
		t.Errorf("force(5,1) pass at 5 steps %v: the same as force(3,0.9)", g.At(5))
	}
	for _, bad := range [][]trainer.EvalOptions{{{Force: force}, {Force: force}}, {{}}, {{Force: force, Wrench: wrench}}} {
		if _, err := b.Study(ctx, variants, []uint64{1}, dir, bad, nil); err == nil {
			t.Errorf("offsets %+v: no error", bad)
		}
	}
}

// TestPortHistoryData: a params file's convert.history is part of the
// default; the one-step and the paper's configurations convert without
// it, the study's "default" variant with it, and a variant that changes
// the conversion (PortHistory) trains on the logs converted its way.
func TestPortHistoryData(t *testing.T) {
	const run = "double_pendulum_hw/trajectories/20230629-143524.csv"
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-143524.csv")
	params := fixtures.EditedParams(t, "double_pendulum_hw.yaml", "\nconvert:\n", "\nconvert:\n  history:\n    port_mean: 3\n")
	ctx := context.Background()
	prepare := func(oneStep, full bool) *RealBenchmark {
		t.Helper()
		opt := realOptions(run)
		opt.Params, opt.OneStep, opt.Full = params, oneStep, full
		opt.Split = timeSplit([2]float64{0, 6}, [2]float64{6, 8}, [2]float64{8, 10})
		opt.Horizon = 20
		b, err := PrepareReal(ctx, RealDoublePendulumHW, opt)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ports := func(d Datasets) string {
		return strings.Join(d.Train.Ports, ",") + " / " + strings.Join(d.OOD.Ports, ",")
	}
	const with, without = "tau1,tau2,mean3(tau1),mean3(tau2) / tau1,tau2,mean3(tau1),mean3(tau2)", "tau1,tau2 / tau1,tau2"
	if got := ports(prepare(false, false).Data); got != with {
		t.Errorf("default: ports %s, want %s", got, with)
	}
	if got := ports(prepare(false, true).Data); got != without {
		t.Errorf("the paper's configuration: ports %s, want %s", got, without)
	}
	b := prepare(true, false)
	if got := ports(b.Data); got != without {
		t.Errorf("one-step: ports %s, want %s", got, without)
	}
	for _, c := range []struct {
		v    Variant
		want string
	}{
		{Variant{Name: "default"}, with},
		{Variant{Name: "onestep"}, without},
		{Variant{Name: "ph2", Convert: PortHistory(2)}, "tau1,tau2,mean2(tau1),mean2(tau2) / tau1,tau2,mean2(tau1),mean2(tau2)"},
	} {
		d, err := b.data(ctx, b.withDefaultData(c.v))
		if err != nil {
			t.Fatal(err)
		}
		if got := ports(d); got != c.want {
			t.Errorf("variant %s: ports %s, want %s", c.v.Name, got, c.want)
		}
	}
}
