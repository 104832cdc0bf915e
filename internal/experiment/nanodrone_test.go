package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// nanoTrajectory is a synthetic flight of n samples at 100 Hz: constant
// world velocity v, a steady turn about a tilted axis, a varying body rate.
func nanoTrajectory(n int, v mechanics.Vec3) []NanoOutput {
	out := make([]NanoOutput, n)
	for i := range out {
		t := float64(i) * 0.01
		out[i] = NanoOutput{
			Pos:   v.Scale(t).Add(mechanics.Vec3{1, -2, 0.5}),
			Vel:   v,
			Quat:  mechanics.QuatFromRotationVector(mechanics.Vec3{0.3 * t, -0.2 * t, 1.1 * t}),
			Omega: mechanics.Vec3{math.Sin(t), 0.5, -math.Cos(3 * t)},
		}
	}
	return out
}

// TestNanoMetricKnownError scores predictions with a known error: a
// constant offset of one output group gives that offset at every horizon
// and 50 times it summed, the other groups zero; the state held constant
// on a constant-velocity flight gives |v|·h·dt in position.
func TestNanoMetricKnownError(t *testing.T) {
	truth := nanoTrajectory(300, mechanics.Vec3{0.6, -0.8, 0}) // |v| = 1 m/s
	turn := mechanics.QuatFromRotationVector(mechanics.Vec3{0, 0.03 / math.Sqrt2, 0.03 / math.Sqrt2})
	shifted := func(f func(o *NanoOutput)) NanoPredictor {
		return func(start int, out []NanoOutput) error {
			for h := range out {
				out[h] = truth[start+1+h]
				f(&out[h])
			}
			return nil
		}
	}
	cases := []struct {
		name    string
		predict NanoPredictor
		want    [4]func(h int) float64 // per group, by horizon
	}{
		{"position offset", shifted(func(o *NanoOutput) { o.Pos = o.Pos.Add(mechanics.Vec3{0.03, 0, -0.04}) }),
			[4]func(int) float64{func(int) float64 { return 0.05 }, nil, nil, nil}},
		{"velocity offset", shifted(func(o *NanoOutput) { o.Vel = o.Vel.Add(mechanics.Vec3{0, 0.2, 0}) }),
			[4]func(int) float64{nil, func(int) float64 { return 0.2 }, nil, nil}},
		// a rotation of 0.03 rad about a fixed body axis, and a quaternion
		// of the other sign and not unit norm: the same orientations
		{"orientation offset", shifted(func(o *NanoOutput) {
			q := o.Quat.Mul(turn)
			o.Quat = mechanics.Quat{W: -1.01 * q.W, X: -1.01 * q.X, Y: -1.01 * q.Y, Z: -1.01 * q.Z}
		}), [4]func(int) float64{nil, nil, func(int) float64 { return 0.03 }, nil}},
		{"angular rate offset", shifted(func(o *NanoOutput) { o.Omega = o.Omega.Add(mechanics.Vec3{-1, 2, 2}) }),
			[4]func(int) float64{nil, nil, nil, func(int) float64 { return 3 }}},
		{"state held constant", NanoHold(truth), [4]func(int) float64{
			func(h int) float64 { return 0.01 * float64(h) }, nil, nil, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := NanoScore(truth, NanoHorizon, c.predict)
			if err != nil {
				t.Fatal(err)
			}
			if m.Starts != len(truth)-NanoHorizon {
				t.Fatalf("%d start samples, want %d", m.Starts, len(truth)-NanoHorizon)
			}
			for g := range NanoGroups {
				want := c.want[g]
				if want == nil {
					if g == 0 || g == 1 || c.name != "state held constant" {
						want = func(int) float64 { return 0 }
					} else {
						continue // the held orientation and rate err by the motion
					}
				}
				var sum float64
				for h := 1; h <= NanoHorizon; h++ {
					if got := m.At(g, h); math.Abs(got-want(h)) > 1e-9 {
						t.Errorf("%s at h = %d: %.12g, want %.12g", NanoGroups[g], h, got, want(h))
					}
					sum += want(h)
				}
				if got := m.Sum(g); math.Abs(got-sum) > 1e-8 {
					t.Errorf("%s summed over 1…50: %.12g, want %.12g", NanoGroups[g], got, sum)
				}
			}
		})
	}
	// constant offsets sum to 50 times the offset; the held state's
	// position error to |v|·dt·(1 + … + 50) = 12.75 m
	m, _ := NanoScore(truth, NanoHorizon, cases[0].predict)
	if math.Abs(m.Sum(0)-2.5) > 1e-9 {
		t.Errorf("position offset 0.05 m summed: %v, want 2.5", m.Sum(0))
	}
	m, _ = NanoScore(truth, NanoHorizon, NanoHold(truth))
	if math.Abs(m.Sum(0)-12.75) > 1e-9 {
		t.Errorf("held state, position summed: %v, want 12.75", m.Sum(0))
	}
	// a prediction that is not finite is an error naming the start
	bad := shifted(func(o *NanoOutput) { o.Vel[2] = math.NaN() })
	if _, err := NanoScore(truth, NanoHorizon, bad); err == nil || !strings.Contains(err.Error(), "start sample 0") {
		t.Errorf("NaN prediction: %v", err)
	}
	if _, err := NanoScore(truth, 0, bad); err == nil {
		t.Error("horizon 0: no error")
	}
}

// TestPoolNano checks that pooling weighs each flight by its start
// samples.
func TestPoolNano(t *testing.T) {
	mk := func(n int, v float64) NanoMetric {
		m := NanoMetric{Starts: n}
		for g := range m.MAE {
			m.MAE[g] = []float64{v, 2 * v}
		}
		return m
	}
	p := PoolNano([]NanoMetric{mk(100, 1), mk(300, 3)})
	if p.Starts != 400 || math.Abs(p.At(2, 1)-2.5) > 1e-15 || math.Abs(p.At(2, 2)-5) > 1e-15 || math.Abs(p.Sum(3)-7.5) > 1e-14 {
		t.Errorf("pooled: %+v", p)
	}
}

// TestNanoOutputsRoundTrip reads a real flight in both pose
// representations and maps the true future states, expressed as a
// prediction from each start sample would be (q relative to the start
// pose, p), back to the benchmark's outputs: they are the logged
// position, world velocity, orientation and body rate.
func TestNanoOutputsRoundTrip(t *testing.T) {
	path := fixtures.Path(t, "crazyflie", "test", "random1_20251017_run4.parquet")
	for _, sys := range []string{RealCrazyflieGravity, RealCrazyflie} {
		params, err := NanoParams(sys, filepath.Join(fixtures.Root(), "params"))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := NewNanoReader(params, fixtures.DataDir())
		if err != nil {
			t.Fatal(err)
		}
		f, err := rd.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		// the params' ports: the six of one sample and their means over
		// the port history (convert.history.port_mean: 2)
		if f.Len() < 5000 || len(f.X) != 12*f.Len() || f.PortMean() != 2 || len(f.E) != 12*f.Len() {
			t.Fatalf("%s: %d samples, %d states, %d ports, port_mean %d", sys, f.Len(), len(f.X), len(f.E), f.PortMean())
		}
		oracle := func(start int, out []NanoOutput) error {
			xhat := make([]float64, 12*len(out))
			for h := range out {
				q := f.spec.BaseCoordinates(f.Pose[start], f.Pose[start+1+h])
				copy(xhat[12*h:], q[:])
				copy(xhat[12*h+6:12*h+12], f.X[12*(start+1+h)+6:12*(start+2+h)])
			}
			f.Outputs(start, xhat, out)
			return nil
		}
		m, err := NanoScore(f.Truth[:800], NanoHorizon, oracle)
		if err != nil {
			t.Fatal(err)
		}
		for g := range NanoGroups {
			for h := 1; h <= NanoHorizon; h++ {
				if v := m.At(g, h); v > 1e-7 {
					t.Fatalf("%s: %s at h = %d: %g, want 0", sys, NanoGroups[g], h, v)
				}
			}
		}
		// and the held state is not zero: the oracle's zero is not vacuous
		if h, _ := NanoScore(f.Truth[:800], NanoHorizon, NanoHold(f.Truth)); h.At(0, 50) < 0.05 {
			t.Errorf("%s: held position error at h = 50: %g m", sys, h.At(0, 50))
		}
	}
}

// TestNanoRealFlight trains tiny models on one real flight (as
// TestRealCrazyflieFlight), then scores the saved run with NanoEvaluate
// on that flight: every start sample is scored, the numbers are finite,
// the states and ports fed to the models are those of the benchmark's own
// evaluation windows, and a model of the other pose representation is
// refused.
func TestNanoRealFlight(t *testing.T) {
	const flight = "crazyflie/train/random1_20251017_run1.parquet"
	fixtures.Path(t, "crazyflie", "train", "random1_20251017_run1.parquet")
	ctx := context.Background()
	b, dir := tinyNanoRun(t, flight, nil)
	nopt := NanoOptions{Systems: []string{RealCrazyflieGravity}, Runs: []string{dir}, Flights: []string{flight},
		DataRoot: fixtures.DataDir(), ParamsDir: filepath.Join(fixtures.Root(), "params"), Workers: 2}
	res, paths, err := NanoEvaluate(ctx, nopt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || len(paths) != 1 || res[0].Model != "hold" || res[1].Model != "calisym" || res[2].Model != "mlp" {
		t.Fatalf("results %+v, flights %v", res, paths)
	}
	params, _ := NanoParams(RealCrazyflieGravity, nopt.ParamsDir)
	rd, err := NewNanoReader(params, fixtures.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := rd.Read(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		m := r.Pooled[0]
		if m.Starts != f.Len()-NanoHorizon || len(r.PerFlight[0]) != 1 {
			t.Fatalf("%s: %d start samples, want %d", r.Model, m.Starts, f.Len()-NanoHorizon)
		}
		for g := range NanoGroups {
			for _, h := range NanoReportHorizons {
				if v := m.At(g, h); !(v > 0) || math.IsInf(v, 0) {
					t.Errorf("%s: %s at h = %d: %v", r.Model, NanoGroups[g], h, v)
				}
			}
		}
	}
	// one worker gives the same sums as two
	nopt.Workers = 1
	res1, _, err := NanoEvaluate(ctx, nopt)
	if err != nil {
		t.Fatal(err)
	}
	if res1[1].Pooled[0].Sum(2) != res[1].Pooled[0].Sum(2) || res1[2].Pooled[0].Sum(0) != res[2].Pooled[0].Sum(0) {
		t.Errorf("workers change the sums: %v vs %v", res1[1].Pooled[0].Sum(2), res[1].Pooled[0].Sum(2))
	}
	// the models see the states and ports of the benchmark's evaluation
	// windows (episodes file@first-sample)
	checked := 0
	for _, ep := range b.Data.OOD.Episodes {
		k, err := strconv.Atoi(ep.Name[strings.LastIndex(ep.Name, "@")+1:])
		if err != nil {
			t.Fatal(ep.Name)
		}
		for j := range 12 {
			if d := math.Abs(ep.X[j] - f.X[12*k+j]); d > 1e-12*max(1, math.Abs(ep.X[j])) {
				t.Fatalf("%s: state %d: conversion %g, metric %g", ep.Name, j, ep.X[j], f.X[12*k+j])
			}
		}
		ne := len(f.Ports())
		if len(ep.E) < ne || ne != 12 {
			t.Fatalf("%s: %d ports, the flight gives %d", ep.Name, len(ep.E), ne)
		}
		for j := range ne {
			if d := math.Abs(ep.E[j] - f.E[ne*k+j]); d > 1e-12*max(1, math.Abs(ep.E[j])) {
				t.Fatalf("%s: port %d: conversion %g, metric %g", ep.Name, j, ep.E[j], f.E[ne*k+j])
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("%d windows compared", checked)
	}
	// a gravity-aware model scored as the SE(3) pose is refused
	nopt.Systems = []string{RealCrazyflie}
	if _, _, err := NanoEvaluate(ctx, nopt); err == nil || !strings.Contains(err.Error(), "coordinates") {
		t.Errorf("gravity-aware run scored as %s: %v", RealCrazyflie, err)
	}
}

// recordingRoller passes rollouts on to r and keeps the ports fed to the
// rollouts whose call number (the start sample, with one worker) is in
// keep.
type recordingRoller struct {
	r    trainer.Roller
	keep map[int]bool
	fed  map[int][]float64
	n    int
}

func (rr *recordingRoller) Rollout(x0, ports []float64, horizon int, out []float64) error {
	if rr.keep[rr.n] {
		rr.fed[rr.n] = slices.Clone(ports)
	}
	rr.n++
	return rr.r.Rollout(x0, ports, horizon, out)
}

// TestNanoRealFlightPortHistory trains tiny models with a port history
// of 2 samples (convert.history.port_mean 2, the study's
// default-porthistory2) on one real flight and scores them with
// NanoEvaluate: the ports fed to the model at every step of the
// predictions from the windows' first samples are those conversion gave
// the windows, (u, the mean of the 2 measured samples before, over fewer
// at the flight's start), to 1e-12, the flight's start included; a
// model whose port_mean differs from the flight's ports is refused,
// either way.
func TestNanoRealFlightPortHistory(t *testing.T) {
	const flight = "crazyflie/train/random1_20251017_run1.parquet"
	fixtures.Path(t, "crazyflie", "train", "random1_20251017_run1.parquet")
	ctx := context.Background()
	b, dir := tinyNanoRun(t, flight, PortHistory(2))
	nopt := NanoOptions{Systems: []string{RealCrazyflieGravity}, Runs: []string{dir}, Flights: []string{flight},
		DataRoot: fixtures.DataDir(), ParamsDir: filepath.Join(fixtures.Root(), "params"), Workers: 1}
	res, paths, err := NanoEvaluate(ctx, nopt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || len(paths) != 1 || res[1].Model != "calisym" || res[2].Model != "mlp" {
		t.Fatalf("results %+v, flights %v", res, paths)
	}
	params, _ := NanoParams(RealCrazyflieGravity, nopt.ParamsDir)
	rd, err := NewNanoReader(params, fixtures.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	// the params' flight carries their port history of 2; without it the
	// measured ports alone, and the history built back on those equals it
	fp, err := rd.Read(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	f0, err := fp.WithPortMean(0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := f0.WithPortMean(2)
	if err != nil {
		t.Fatal(err)
	}
	if fp.PortMean() != 2 || f0.PortMean() != 0 || f.PortMean() != 2 || len(f.E) != 12*f.Len() || len(f0.E) != 6*f.Len() || f.Ports()[6] != "mean2(f_x)" || !slices.Equal(f.E, fp.E) {
		t.Fatalf("flight ports: port_mean %d and %d, %d and %d values, names %v", f0.PortMean(), f.PortMean(), len(f0.E), len(f.E), f.Ports())
	}
	// the conversion's windows, by first sample (episodes file@first-sample)
	windows := map[int]dataset.Episode{}
	for _, d := range []*dataset.Dataset{b.Data.Train, b.Data.ID, b.Data.OOD} {
		for _, ep := range d.Episodes {
			k, err := strconv.Atoi(ep.Name[strings.LastIndex(ep.Name, "@")+1:])
			if err != nil {
				t.Fatal(ep.Name)
			}
			if k < f.Len()-NanoHorizon {
				windows[k] = ep
			}
		}
	}
	if _, ok := windows[0]; !ok || len(windows) < 20 {
		t.Fatalf("%d windows, the flight's first sample among them: %v", len(windows), ok)
	}
	keep := map[int]bool{}
	for k := range windows {
		keep[k] = true
	}
	for mi, model := range []string{"calisym-gr.safetensors", "mlp.json"} {
		sv, err := trainer.OpenModel(filepath.Join(dir, model))
		if err != nil {
			t.Fatal(err)
		}
		if sv.PortMean != 2 || sv.PortDim != 12 {
			t.Fatalf("%s: port_mean %d, %d ports", model, sv.PortMean, sv.PortDim)
		}
		// the runner records the port map of the conversion it trained on
		if sv.PortMap == "" || sv.PortMap != fp.PortMap() {
			t.Errorf("%s: port map %q, want the params' %q", model, sv.PortMap, fp.PortMap())
		}
		// refused with the measured ports only, and a model without a
		// port history refused with these
		if err := NanoModelFits(sv, f0); err == nil || !strings.Contains(err.Error(), "port_mean 2") || !strings.Contains(err.Error(), "port_mean 0") {
			t.Errorf("%s on the measured ports: %v", model, err)
		}
		noHist := *sv
		noHist.PortMean, noHist.PortDim, noHist.Ports = 0, 6, noHist.Ports[:6]
		if err := NanoModelFits(&noHist, f); err == nil || !strings.Contains(err.Error(), "port_mean 0") || !strings.Contains(err.Error(), "port_mean 2") {
			t.Errorf("a model without port history on port_mean 2 ports: %v", err)
		}
		if err := NanoModelFits(sv, f); err != nil {
			t.Fatal(err)
		}
		rr := &recordingRoller{keep: keep, fed: map[int][]float64{}}
		factory := func() (trainer.Roller, error) {
			r, err := sv.Rollers()
			rr.r = r
			return rr, err
		}
		pooled, _, err := ScoreNano(ctx, factory, []*NanoFlight{f}, 1)
		if err != nil {
			t.Fatal(err)
		}
		// NanoEvaluate scored the same ports
		if want := res[1+mi].Pooled[0]; pooled.Sum(0) != want.Sum(0) || pooled.Sum(2) != want.Sum(2) {
			t.Errorf("%s: NanoEvaluate %v %v, ScoreNano on the port_mean 2 flight %v %v", model, want.Sum(0), want.Sum(2), pooled.Sum(0), pooled.Sum(2))
		}
		if rr.n != f.Len()-NanoHorizon {
			t.Fatalf("%s: %d rollouts, want %d", model, rr.n, f.Len()-NanoHorizon)
		}
		steps := 0
		for k, ep := range windows {
			fed := rr.fed[k]
			if len(fed) != 12*NanoHorizon {
				t.Fatalf("%s: start %d: %d port values fed", model, k, len(fed))
			}
			for s := range min(ep.Len, NanoHorizon) {
				for j := range 12 {
					want, got := ep.E[12*s+j], fed[12*s+j]
					if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
						t.Fatalf("%s: start %d, step %d, port %d (%s): conversion %.17g, fed %.17g", model, k, s, j, f.Ports()[j], want, got)
					}
				}
				steps++
			}
		}
		if steps < 20*min(20, NanoHorizon) {
			t.Fatalf("%s: %d steps compared", model, steps)
		}
		// the history is not vacuous: the means differ from the ports
		if d := math.Abs(rr.fed[0][12*5+8] - rr.fed[0][12*5+2]); d == 0 {
			t.Errorf("%s: mean2(f_z) equals f_z at step 5", model)
		}
	}
}

// tinyNanoRun trains a tiny gravity-aware Crazyflie run on the first 40 s
// of flight (the conversion changed by conv where not nil) into a
// temporary directory and returns its benchmark and the directory.
func tinyNanoRun(t *testing.T, flight string, conv func(*convert.Spec)) (*RealBenchmark, string) {
	t.Helper()
	ctx := context.Background()
	opt := realOptions(flight)
	opt.Split = timeSplit([2]float64{0, 40}, [2]float64{40, 50}, [2]float64{50, 60})
	opt.Horizon, opt.Epochs, opt.Workers = 20, 1, 1
	if conv != nil {
		opt.Convert = conv
	}
	b, err := PrepareReal(ctx, RealCrazyflieGravity, opt)
	if err != nil {
		t.Fatal(err)
	}
	shrink(b)
	dir := t.TempDir()
	if _, err := b.Run(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	return b, dir
}

// TestNanoModelFitsPortMap scores models of params/crazyflie_gravity.yaml's
// layout on a flight read with those params (the voltage-scaled quadratic
// thrust map, port history of 2): a model trained with the linear thrust
// map of before (the same port names) is refused, naming both maps; one
// trained with the params' map, and one that records none (trained before
// port maps were recorded), fit; on the measured ports alone (port_mean 0)
// the model's map must be the one without the history.
func TestNanoModelFitsPortMap(t *testing.T) {
	params, err := NanoParams(RealCrazyflieGravity, filepath.Join(fixtures.Root(), "params"))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewNanoReader(params, fixtures.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	spec := *rd.spec
	if spec.Control.Quadrotor.Voltage.IsZero() || spec.History.PortMean != 2 {
		t.Fatalf("%s: voltage %q, port_mean %d: the test needs the voltage-scaled map and a history of 2", params, spec.Control.Quadrotor.Voltage.Name, spec.History.PortMean)
	}
	c, k := spec.PortNames()
	f := &NanoFlight{Name: "flight.parquet", nx: 12, ne: 12, portMean: 2, ports: slices.Concat(c, k), coords: rd.Coordinates(), spec: rd.spec}
	f0 := &NanoFlight{Name: "flight.parquet", nx: 12, ne: 6, portMean: 0, ports: f.ports[:6], coords: rd.Coordinates(), spec: rd.spec}
	linear := spec
	linear.Control.Quadrotor.Voltage, linear.Control.Quadrotor.VoltageRef = statemap.Channel{}, 0
	linear.Control.Quadrotor.ThrustPoly = []float64{0, statemap.CrazyflieThrustPerUnit}
	noHist := spec
	noHist.History.PortMean = 0
	model := func(f *NanoFlight, portMap string) *trainer.SavedModel {
		return &trainer.SavedModel{Path: "calisym-gr.safetensors", StateDim: f.nx, PortDim: f.ne, PortMean: f.portMean,
			Ports: f.ports, Coordinates: f.coords, PortMap: portMap}
	}
	for _, tc := range []struct {
		name    string
		flight  *NanoFlight
		portMap string
		want    []string // in the error; none: fits
	}{
		{"linear", f, linear.PortMap(), []string{"thrust_poly [0 0.173] of the command (no voltage scaling)", "params give thrust_poly [0 0.13997 0.06193] of the command scaled by voltage Vbat", "retrain"}},
		{"params", f, spec.PortMap(), nil},
		{"unrecorded", f, "", nil},
		{"measured ports", f0, noHist.PortMap(), nil},
		{"measured ports, history map", f0, spec.PortMap(), []string{"history.port_mean: trained with 2, params give 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NanoModelFits(model(tc.flight, tc.portMap), tc.flight)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, statemap.ErrPortMap) {
				t.Fatalf("error %v, want statemap.ErrPortMap", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestNanoFlightPaths checks --flights: a relative pattern is relative to
// the data directory, an absolute one is used as given (it was joined to
// the data directory too, so new flights needed a folder of symlinks).
func TestNanoFlightPaths(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(root, "crazyflie", "test", "a.parquet"), filepath.Join(root, "crazyflie", "test", "b.parquet"), filepath.Join(other, "new.parquet")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		patterns []string
		want     []string
		err      string
	}{
		{"relative", []string{"crazyflie/test/*.parquet"}, []string{filepath.Join(root, "crazyflie/test/a.parquet"), filepath.Join(root, "crazyflie/test/b.parquet")}, ""},
		{"absolute", []string{filepath.Join(other, "*.parquet")}, []string{filepath.Join(other, "new.parquet")}, ""},
		{"both, one file twice", []string{filepath.Join(other, "new.parquet"), "crazyflie/test/a.parquet", filepath.Join(other, "*")}, []string{filepath.Join(root, "crazyflie/test/a.parquet"), filepath.Join(other, "new.parquet")}, ""},
		{"absolute, no file", []string{filepath.Join(other, "x*.parquet")}, nil, fmt.Sprintf("flights %q match no file", filepath.Join(other, "x*.parquet"))},
		{"relative, no file", []string{"x*.parquet"}, nil, "match no file under " + root + " (a relative pattern is relative to the data directory, --data)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := nanoFlightPaths(root, c.patterns)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%v, %v; want %v", got, err, c.want)
			}
			// NanoEvaluate reads the same flights: past them, no system
			if _, _, err := NanoEvaluate(context.Background(), NanoOptions{Flights: c.patterns, DataRoot: root}); err == nil || !strings.Contains(err.Error(), "no system") {
				t.Errorf("NanoEvaluate: %v, want the flights found and no system", err)
			}
		})
	}
}
