package experiment

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// TestRealRobotVariants: each variant of the real-robot study changes the
// one-step configuration of both models as its description says (the
// Crazyflie's models, the pendulum's for the spline and GR variants).
func TestRealRobotVariants(t *testing.T) {
	quad := func() []ModelSpec {
		ms, err := quadrotorModels(false)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	pend := func() []ModelSpec {
		ms, err := pendulumHWModels(false)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	spec := Spec{Horizon: 100}
	cases := []struct {
		variant string
		models  func() []ModelSpec
		stride  int
		check   func(t *testing.T, gr, mlp ModelSpec)
	}{
		{"lh-wide", quad, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Arch.Width != 144 || gr.Arch.Layers != 14 || mlp.Hidden[0] != 256 || mlp.Hidden[1] != 256 || gr.Train.RolloutSteps != 50 {
				t.Errorf("width %d, layers %d, MLP %v, K %d", gr.Arch.Width, gr.Arch.Layers, mlp.Hidden, gr.Train.RolloutSteps)
			}
		}},
		{"lh-deep", quad, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Arch.Layers != 28 || gr.Arch.Width != 36 || mlp.Hidden[0] != 192 {
				t.Errorf("layers %d, width %d, MLP %v", gr.Arch.Layers, gr.Arch.Width, mlp.Hidden)
			}
		}},
		{"lh-adamw", quad, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Train.Optimizer != "adamw" || mlp.Train.Optimizer != "adamw" {
				t.Errorf("optimisers %q, %q", gr.Train.Optimizer, mlp.Train.Optimizer)
			}
		}},
		{"lh-stride10", quad, 10, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Train.Epochs != 30 || gr.Loss.Units != 1 || gr.Train.SelectHorizon != 100 {
				t.Errorf("epochs %d, units %v, selection at %d", gr.Train.Epochs, gr.Loss.Units, gr.Train.SelectHorizon)
			}
		}},
		{"lh-60ep", quad, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Train.Epochs != 60 || mlp.Train.Epochs != 60 || gr.Train.RolloutFrom != 5 {
				t.Errorf("epochs %d, %d, K-step from %d", gr.Train.Epochs, mlp.Train.Epochs, gr.Train.RolloutFrom)
			}
		}},
		{"lh-normunits", quad, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Loss.Units != 0 || mlp.Loss.Units != 0 || gr.Loss.StepDecay != 2 {
				t.Errorf("units %v, %v, decay %v", gr.Loss.Units, mlp.Loss.Units, gr.Loss.StepDecay)
			}
		}},
		{"lh-units0.5", quad, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Loss.Units != 0.5 || mlp.Loss.Units != 0.5 {
				t.Errorf("units %v, %v", gr.Loss.Units, mlp.Loss.Units)
			}
		}},
		{"onestep-knots7", pend, 0, func(t *testing.T, grb, mlp ModelSpec) {
			if s := grb.Arch.Spline; s.Intervals != 24 || s.Lo != -7 || s.Hi != 7 {
				t.Errorf("spline %+v", s)
			}
		}},
		{"onestep-gr", pend, 0, func(t *testing.T, gr, mlp ModelSpec) {
			if gr.Arch.Kind != predictor.KindGR || gr.Kind != "gr" || gr.Arch.Layers != 12 || gr.Arch.Width != 32 || mlp.Kind != "mlp" {
				t.Errorf("%+v", gr.Arch)
			}
		}},
		{"select-60ep", pend, 0, func(t *testing.T, grb, mlp ModelSpec) {
			if grb.Train.Epochs != 60 || grb.Train.SelectHorizon != 100 || mlp.Train.SelectFrom != 5 {
				t.Errorf("epochs %d, selection at %d from %d", grb.Train.Epochs, grb.Train.SelectHorizon, mlp.Train.SelectFrom)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.variant, func(t *testing.T) {
			vs, err := LookupVariants([]string{c.variant})
			if err != nil {
				t.Fatal(err)
			}
			if vs[0].TrainStride != c.stride {
				t.Errorf("training stride %d, want %d", vs[0].TrainStride, c.stride)
			}
			ms := c.models()
			vs[0].Apply(ms, spec)
			c.check(t, ms[0], ms[1])
		})
	}
}

// TestRealDefaults: the Crazyflie's default is LongHorizon on training
// windows at stride 10 (the SE(3) pose) or 2 (the gravity-aware pose,
// whose study variants keep the stride 10 they were measured at), the
// pendulum's the selection over 60 epochs; the study's default variant
// keeps a system's default stride and its one-step base drops it.
func TestRealDefaults(t *testing.T) {
	sys := realSystems()
	for name, stride := range map[string][2]int{RealCrazyflie: {10, 0}, RealCrazyflieGravity: {2, 10}} {
		if s := sys[name]; s.defaultStride != stride[0] || s.variantStride != stride[1] || s.trainStride != 50 || s.defaults == nil {
			t.Errorf("%s: default stride %d, the variants' %d, one-step stride %d", name, s.defaultStride, s.variantStride, s.trainStride)
		}
	}
	// the gravity-aware pose's default trains twice the epochs (with the
	// params' port history: TestRealCrazyflieFlight); the study's
	// default-… variants change the one they were measured on
	for name, epochs := range map[string]int{RealCrazyflie: 30, RealCrazyflieGravity: 60} {
		s := sys[name]
		qm, err := quadrotorModels(false)
		if err != nil {
			t.Fatal(err)
		}
		s.defaults(qm, Spec{Horizon: s.horizon})
		vm, _ := quadrotorModels(false)
		s.variantBase(vm, Spec{Horizon: s.horizon})
		if qm[0].Train.Epochs != epochs || qm[1].Train.Epochs != epochs || vm[0].Train.Epochs != 30 || qm[0].Train.RolloutSteps != 50 || vm[0].Train.RolloutSteps != 50 {
			t.Errorf("%s: default %d epochs, the variants' base %d", name, qm[0].Train.Epochs, vm[0].Train.Epochs)
		}
	}
	p := sys[RealDoublePendulumHW]
	ms, err := pendulumHWModels(false)
	if err != nil {
		t.Fatal(err)
	}
	p.defaults(ms, Spec{Horizon: p.horizon})
	for _, m := range ms {
		if m.Train.Epochs != 60 || m.Train.SelectHorizon != 200 || m.Train.SelectFrom != 5 || m.Train.RolloutSteps != 0 {
			t.Errorf("pendulum default %s: epochs %d, selection at %d from %d, K %d", m.Name, m.Train.Epochs, m.Train.SelectHorizon, m.Train.SelectFrom, m.Train.RolloutSteps)
		}
		// both models behind the identified model's friction-aware step
		if m.Prior != mechanics.PriorMidpointFriction {
			t.Errorf("pendulum default %s: prior %q, want %q", m.Name, m.Prior, mechanics.PriorMidpointFriction)
		}
		// the GRB's knot range doubled (select-60ep-prior-both-knots7)
		if want := (predictor.Spline{Intervals: 24, Lo: -7, Hi: 7}); m.Kind == "grb" && m.Arch.Spline != want {
			t.Errorf("pendulum default %s: spline %+v, want %+v", m.Name, m.Arch.Spline, want)
		}
	}
	// the sixth round's variants change the previous default
	// (select-60ep-prior-both), not this one
	for name, want := range map[string]predictor.Spline{
		"select-60ep-prior-both":                     {Intervals: 12, Lo: -3.5, Hi: 3.5},
		"select-60ep-prior-both-knots7":              {Intervals: 24, Lo: -7, Hi: 7},
		"select-60ep-prior-both-knots10":             {Intervals: 36, Lo: -10.5, Hi: 10.5},
		"select-60ep-prior-both-knots7-wd1e-1":       {Intervals: 24, Lo: -7, Hi: 7},
		"select-60ep-prior-both-wd1e-1":              {Intervals: 12, Lo: -3.5, Hi: 3.5},
		"select-60ep-prior-both-knots7-porthistory2": {Intervals: 24, Lo: -7, Hi: 7},
		"select-60ep-prior-both-knots7-porthistory5": {Intervals: 24, Lo: -7, Hi: 7},
	} {
		vs, err := LookupVariants([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		vm, err := pendulumHWModels(false)
		if err != nil {
			t.Fatal(err)
		}
		vs[0].Apply(vm, Spec{Horizon: p.horizon})
		if vm[0].Kind != "grb" || vm[0].Arch.Spline != want || vm[0].Prior != mechanics.PriorMidpointFriction || vm[1].Prior != mechanics.PriorMidpointFriction || vm[0].Train.Epochs != 60 {
			t.Errorf("%s: %s spline %+v (want %+v), priors %q %q, %d epochs", name, vm[0].Name, vm[0].Arch.Spline, want, vm[0].Prior, vm[1].Prior, vm[0].Train.Epochs)
		}
	}
	// the seventh round's: the default's models on the port history
	for name, m := range map[string]int{"select-60ep-prior-both-knots7-porthistory2": 2, "select-60ep-prior-both-knots7-porthistory5": 5} {
		vs, err := LookupVariants([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		var cs convert.Spec
		vs[0].Convert(&cs)
		if cs.History.PortMean != m {
			t.Errorf("%s: port history %d, want %d", name, cs.History.PortMean, m)
		}
	}
	b := &RealBenchmark{opts: RealOptions{OneStep: true}, defaultStride: 10}
	if v := b.withDefaultData(Variant{Name: "default"}); v.TrainStride != 10 {
		t.Errorf("default variant's stride %d", v.TrainStride)
	}
	if v := b.withDefaultData(Variant{Name: "onestep"}); v.TrainStride != 0 {
		t.Errorf("onestep variant's stride %d", v.TrainStride)
	}
}

// TestVoltageDefaultData: the gravity-aware Crazyflie's params scale the
// commands by the battery's voltage (the study's
// default-porthistory2-60ep-vbat, chosen by its rule); the one-step and
// full configurations strip that map back to the linear 0.173 N per
// command, and the study's variants get exactly the conversion they were
// measured with: the "default" variant the params' (voltage and port
// history), the default-… variants measured before the switch the linear
// map (with their own port history), the -vbat variants the voltage.
func TestVoltageDefaultData(t *testing.T) {
	load := func(name string) *convert.Spec { return paramsFile(t, name) }
	params := load("crazyflie_gravity.yaml")
	if q := params.Control.Quadrotor; q.Voltage.Name != "Vbat" || q.VoltageRef != statemap.CrazyflieVoltageRef ||
		!slices.Equal(q.ThrustPoly, []float64{0, statemap.CrazyflieThrustVolt1, statemap.CrazyflieThrustVolt2}) || params.History.PortMean != 2 {
		t.Fatalf("params/crazyflie_gravity.yaml: voltage %+v, ref %g, thrust %v, port history %d", q.Voltage, q.VoltageRef, q.ThrustPoly, params.History.PortMean)
	}
	sys := realSystems()[RealCrazyflieGravity]
	stripped := load("crazyflie_gravity.yaml")
	stripped.History.PortMean = 0
	restore := sys.stripDefault(stripped)
	if restore == nil || !stripped.Control.Quadrotor.Voltage.IsZero() || stripped.Control.Quadrotor.VoltageRef != 0 ||
		!slices.Equal(stripped.Control.Quadrotor.ThrustPoly, []float64{0, statemap.CrazyflieThrustPerUnit}) {
		t.Fatalf("stripped: %+v", stripped.Control.Quadrotor)
	}
	b := &RealBenchmark{opts: RealOptions{OneStep: true}, history: 2, restore: restore, variantBase: sys.variantBase}
	byName := map[string]Variant{"default": {Name: "default"}}
	for _, v := range Variants() {
		byName[v.Name] = v
	}
	for _, c := range []struct {
		variant string
		voltage bool
		history int
	}{
		{"default", true, 2}, {"onestep", false, 0}, {"default-porthistory2", false, 2},
		{"default-porthistory2-60ep", false, 2}, {"default-erpm", false, 0},
		{"default-porthistory2-vbat", true, 2}, {"default-porthistory2-60ep-vbat", true, 2},
	} {
		v, ok := byName[c.variant]
		if !ok {
			t.Fatalf("no variant %s", c.variant)
		}
		v = b.withDefaultData(v)
		s := *stripped
		s.Control.Quadrotor.ThrustPoly = slices.Clone(stripped.Control.Quadrotor.ThrustPoly)
		if v.Convert != nil {
			v.Convert(&s)
		}
		q := s.Control.Quadrotor
		if got := !q.Voltage.IsZero(); got != c.voltage || s.History.PortMean != c.history {
			t.Errorf("%s: voltage %v (thrust %v), port history %d; want voltage %v, history %d", c.variant, got, q.ThrustPoly, s.History.PortMean, c.voltage, c.history)
		}
		if c.voltage && (q.VoltageRef != statemap.CrazyflieVoltageRef || !slices.Equal(q.ThrustPoly, params.Control.Quadrotor.ThrustPoly)) {
			t.Errorf("%s: voltage reference %g, thrust %v", c.variant, q.VoltageRef, q.ThrustPoly)
		}
	}
	// the SE(3) pose's params (not switched) have nothing to strip
	if r := linearThrust(load("crazyflie.yaml")); r != nil {
		t.Error("params/crazyflie.yaml: stripped a voltage map it does not have")
	}
}

// TestStudyTrainStride: a variant with its own training stride trains on
// its own conversion, whose windows its report names, and a study of a
// benchmark without evaluation groups writes study.json with the ID-test
// and OOD sets by horizon, the state held constant included.
func TestStudyTrainStride(t *testing.T) {
	ctx := context.Background()
	b := tinyPendulumStudy(t)
	variants := []Variant{
		{Name: "onestep", Apply: func([]ModelSpec, Spec) {}},
		{Name: "s5", TrainStride: 5, Apply: func([]ModelSpec, Spec) {}},
	}
	dir := t.TempDir()
	runs, err := b.Study(ctx, variants, []uint64{1}, dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		want := map[string]string{"onestep": "stride 10 ", "s5": "stride 5 "}[r.Variant]
		if w := r.Report.Extra["train_windows"]; !strings.Contains(w, want) {
			t.Errorf("%s: train_windows %q, want %q", r.Variant, w, want)
		}
	}
	if n1, n5 := runs[0].Report.Data["train_windows"], runs[1].Report.Data["train_windows"]; !(toFloat(n5) > 1.5*toFloat(n1)) {
		t.Errorf("training windows: %v at stride 10, %v at stride 5", n1, n5)
	}
	all := studyRowsFile(t, filepath.Join(dir, "study.json"))
	// the live rows: ID test and OOD × 2 variants × (hold, learned) × 2
	// horizons, CaLiSym's
	rows := slices.DeleteFunc(slices.Clone(all), func(r StudyRow) bool { return r.Forecast != "" })
	if live := len(all) - len(rows); live != 2*2*2*2 {
		t.Errorf("%d live rows, want 16", live)
	}
	// 3 groups (ID test, OOD, and the OOD set's one log) × 2 variants ×
	// (CaLiSym, MLP, held state, identified physics model) × 2 horizons
	if len(rows) != 48 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	// the one OOD log's group is the OOD set's
	for i := range 16 {
		o, f := rows[16+i], rows[32+i]
		if o.Group != "ood" || !strings.HasPrefix(f.Group, "ood_") || o.Model != f.Model || o.Variant != f.Variant || o.Horizon != f.Horizon ||
			math.Abs(o.Mean-f.Mean) > 1e-12*o.Mean {
			t.Errorf("OOD row %+v, its log's %+v", o, f)
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Group+" "+r.Model] = true
		if r.Seeds != 1 || !(r.Mean > 0) || r.Min != r.Mean || r.Max != r.Mean {
			t.Errorf("row %+v", r)
		}
	}
	for _, k := range []string{"id_test calisym", "id_test mlp", "id_test hold", "id_test physics", "ood calisym", "ood mlp", "ood hold", "ood physics"} {
		if !seen[k] {
			t.Errorf("no %s rows", k)
		}
	}
	if md, err := os.ReadFile(filepath.Join(dir, "study.md")); err != nil || !strings.Contains(string(md), "| ood | s5 | CaLiSym-GRB | 1 |") {
		t.Errorf("study.md: %v\n%s", err, md)
	}
}

// toFloat reads a number a report's data holds (JSON numbers decode as float64).
func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return math.NaN()
}

// TestMeasuredRotorSpeeds: the variants' change of a Crazyflie spec is
// exactly the change from params/crazyflie.yaml to
// params/crazyflie_erpm.yaml, and on the gravity-aware params it changes
// the same motor port and bound.
func TestMeasuredRotorSpeeds(t *testing.T) {
	load := func(name string) *convert.Spec { return paramsFile(t, name) }
	want := load("crazyflie_erpm.yaml")
	got := load("crazyflie.yaml")
	// crazyflie_erpm.yaml keeps the layout default-erpm was measured with,
	// no port history (crazyflie.yaml has 2 since the study)
	if got.History.PortMean != 2 || want.History.PortMean != 0 {
		t.Fatalf("port histories %d and %d", got.History.PortMean, want.History.PortMean)
	}
	got.History.PortMean = 0
	if reflect.DeepEqual(got, want) {
		t.Fatal("crazyflie.yaml and crazyflie_erpm.yaml are the same")
	}
	MeasuredRotorSpeeds(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MeasuredRotorSpeeds(crazyflie.yaml):\n%+v\ncrazyflie_erpm.yaml:\n%+v", got, want)
	}
	g := load("crazyflie_gravity.yaml")
	MeasuredRotorSpeeds(g)
	if !reflect.DeepEqual(g.Control, want.Control) || !reflect.DeepEqual(g.Validate, want.Validate) || g.State.Kind != statemap.StateFloatingBaseGravity {
		t.Errorf("gravity-aware: control %+v, validate %+v", g.Control, g.Validate)
	}
	if q := want.Control.Quadrotor; q.Motors[3].Name != "m4_erpm" || len(q.ThrustPoly) != 3 || q.ThrustPoly[2] != CrazyflieThrustPerERPM2 || q.ThrustPoly[1] != 0 {
		t.Errorf("crazyflie_erpm.yaml: motors %v, thrust %v", q.Motors, q.ThrustPoly)
	}
}

// TestLeverSevenVariants: default-erpm and default-porthistory5 are the
// system's default (its models, training stride and port history) with
// the measured rotor speeds or the port history on top, and default-erpm
// is refused on a system without them.
func TestLeverSevenVariants(t *testing.T) {
	vs, err := LookupVariants([]string{"default", "default-erpm", "default-porthistory5"})
	if err != nil {
		t.Fatal(err)
	}
	def, erpm, ph := vs[0], vs[1], vs[2]
	if !erpm.OnDefault || !ph.OnDefault || def.OnDefault || !slices.Equal(erpm.Systems, []string{RealCrazyflie, RealCrazyflieGravity}) || ph.Systems != nil {
		t.Fatalf("variants %+v, %+v", erpm, ph)
	}
	ms := func() []ModelSpec {
		m, err := quadrotorModels(false)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	spec := Spec{Horizon: 100}
	// the default moved on (the port history of 2 samples, twice the
	// epochs) after the study measured its variants on the long-horizon
	// default at stride 10: the variants still change that one
	b := &RealBenchmark{System: RealCrazyflie, opts: RealOptions{OneStep: true}, defaultStride: 10, Default: LongHorizonLonger,
		history: 2, variantBase: LongHorizon}
	if dv := b.withDefaultData(def); dv.Convert == nil {
		t.Error("the default variant without the params' port history")
	} else {
		s := &convert.Spec{}
		dv.Convert(s)
		if s.History.PortMean != 2 {
			t.Errorf("the default's port history %d", s.History.PortMean)
		}
	}
	{
		got := ms()
		b.applyModels(def, got, spec)
		if got[0].Train.Epochs != 60 || got[1].Train.Epochs != 60 || got[0].Train.RolloutSteps != 50 {
			t.Errorf("the default: %d and %d epochs, K %d", got[0].Train.Epochs, got[1].Train.Epochs, got[0].Train.RolloutSteps)
		}
	}
	base := ms()
	LongHorizon(base, spec)
	for _, v := range []Variant{erpm, ph} {
		got := ms()
		b.applyModels(v, got, spec)
		if !reflect.DeepEqual(got, base) || got[0].Train.RolloutSteps != 50 || got[0].Train.SelectHorizon != 100 {
			t.Errorf("%s: models differ from the default's: %+v", v.Name, got[0].Train)
		}
		dv := b.withDefaultData(v)
		if dv.TrainStride != 10 {
			t.Errorf("%s: training stride %d, want the default's 10", v.Name, dv.TrainStride)
		}
	}
	s := &convert.Spec{}
	b.withDefaultData(erpm).Convert(s)
	if len(s.Control.Quadrotor.Motors) != 4 || s.Control.Quadrotor.Motors[0].Name != "m1_erpm" || len(s.Validate.Bounds) != 1 || s.History.PortMean != 0 {
		t.Errorf("default-erpm's conversion: %+v", s)
	}
	// on a default with a port history (the quadruped's), the variant's
	// change comes after it
	b.variantHistory = 3
	s = &convert.Spec{}
	b.withDefaultData(ph).Convert(s)
	if s.History.PortMean != 5 {
		t.Errorf("default-porthistory5 over a history of 3: port_mean %d", s.History.PortMean)
	}
	s = &convert.Spec{}
	b.withDefaultData(erpm).Convert(s)
	if s.History.PortMean != 3 || len(s.Validate.Bounds) != 1 {
		t.Errorf("default-erpm over a history of 3: port_mean %d, bounds %v", s.History.PortMean, s.Validate.Bounds)
	}
	if err := b.checkSystems(vs); err != nil {
		t.Errorf("crazyflie: %v", err)
	}
	b.System = RealDoublePendulumHW
	if err := b.checkSystems(vs); err == nil || !strings.Contains(err.Error(), "default-erpm applies to crazyflie, crazyflie_gravity only") {
		t.Errorf("pendulum: %v", err)
	}
	if _, err := b.Study(context.Background(), []Variant{erpm}, []uint64{1}, t.TempDir(), nil, nil); err == nil {
		t.Error("Study ran default-erpm on the pendulum")
	}
}

// TestMeasuredRotorSpeedsData prepares the gravity-aware Crazyflie
// benchmark on the two flights with eRPM glitches (and a third as the ID
// test) and converts the data of default-erpm and default-porthistory5:
// both have exactly the windows and states of the default they change
// (lh-stride10: the default moved on to stride 2 since) in the training,
// ID-test and OOD sets; default-erpm's ports differ and its conversion
// notes count the 5 glitch samples repaired, default-porthistory5 has
// twice the ports.
func TestMeasuredRotorSpeedsData(t *testing.T) {
	fixtures.Path(t, "crazyflie")
	ctx := context.Background()
	opt := realOptions("crazyflie/train/multisine_20251017_run1.parquet", "crazyflie/train/multisine_20251017_run3.parquet", "crazyflie/test/multisine_20251017_run4.parquet")
	opt.Split = &convert.SplitSpec{By: convert.SplitByFile, Default: splitTrain, Rules: []convert.SplitRule{
		{Split: splitOOD, Files: []string{"crazyflie/test/*"}}, {Split: splitIDTest, Files: []string{"multisine_20251017_run3.*"}}}}
	opt.OneStep, opt.Workers = true, 1
	b, err := PrepareReal(ctx, RealCrazyflieGravity, opt)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := LookupVariants([]string{"lh-stride10", "default-erpm", "default-porthistory5"})
	if err != nil {
		t.Fatal(err)
	}
	var data []Datasets
	for _, v := range vs {
		d, err := b.data(ctx, b.withDefaultData(v))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, d)
	}
	sets := func(d Datasets) []*dataset.Dataset { return []*dataset.Dataset{d.Train, d.ID, d.OOD} }
	for vi, d := range data[1:] {
		name := vs[vi+1].Name
		for si, s := range sets(d) {
			ref := sets(data[0])[si]
			if len(s.Episodes) != len(ref.Episodes) || s.Stride != ref.Stride {
				t.Fatalf("%s set %d: %d windows at stride %d, the default %d at %d", name, si, len(s.Episodes), s.Stride, len(ref.Episodes), ref.Stride)
			}
			differ := false
			for i, ep := range s.Episodes {
				r := ref.Episodes[i]
				if ep.Name != r.Name || !slices.Equal(ep.X, r.X) {
					t.Fatalf("%s set %d: window %s differs from the default's %s", name, si, ep.Name, r.Name)
				}
				differ = differ || !slices.Equal(ep.E, r.E)
			}
			if !differ {
				t.Errorf("%s set %d: the same ports as the default", name, si)
			}
		}
	}
	if data[0].Train.Stride != 10 || data[1].Train.NU != 6 || data[2].Train.NU != 12 {
		t.Errorf("training stride %d, ports %d and %d", data[0].Train.Stride, data[1].Train.NU, data[2].Train.NU)
	}
	note := b.variantNotes["default-erpm"]["bounds"]
	if !strings.Contains(note, "training conversion 5 samples out of range, 5 repaired, 0 windows rejected") || !strings.Contains(note, "[0, 200000]") {
		t.Errorf("bounds note %q", note)
	}
	if c := b.variantNotes["default-erpm"]["constants"]; !strings.Contains(c, "m1_erpm, m2_erpm") || !strings.Contains(c, "1.09e-11") {
		t.Errorf("constants note %q", c)
	}
	if _, ok := b.Notes["bounds"]; ok {
		t.Error("the default's notes name bounds")
	}
}

// TestRoundFourVariants: the fourth round's variants of the gravity-aware
// default change the 60-epoch voltage default's models and training
// stride as their names say, and nothing else.
func TestRoundFourVariants(t *testing.T) {
	b := &RealBenchmark{System: RealCrazyflieGravity, opts: RealOptions{OneStep: true}, defaultStride: 10,
		Default: LongHorizonLonger, history: 2, variantBase: LongHorizon}
	spec := Spec{Horizon: 100}
	models := func() []ModelSpec {
		ms, err := quadrotorModels(false)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	for _, c := range []struct {
		variant        string
		epochs, k      int
		decay          float64
		stride, hidden int
	}{
		{"default-porthistory2-60ep-vbat", 60, 50, 2, 10, 128},
		{"default-porthistory2-60ep-vbat-k25-decay1", 60, 25, 1, 10, 128},
		{"default-porthistory2-60ep-vbat-k25-decay1.5", 60, 25, 1.5, 10, 128},
		{"default-porthistory2-60ep-vbat-k35", 60, 35, 2, 10, 128},
		{"default-porthistory2-90ep-vbat", 90, 50, 2, 10, 128},
		{"default-porthistory2-60ep-vbat-stride5", 60, 50, 2, 5, 128},
		{"default-porthistory2-60ep-vbat-mlp175", 60, 50, 2, 10, 175},
		{"default-porthistory2-60ep-vbat-stride5-k25-decay1", 60, 25, 1, 5, 128},
		{"default-porthistory2-60ep-vbat-stride5-mlp175", 60, 50, 2, 5, 175},
		{"default-porthistory2-90ep-vbat-stride5", 90, 50, 2, 5, 128},
		{"default-porthistory2-60ep-vbat-stride2", 60, 50, 2, 2, 128},
		{"default-porthistory2-90ep-vbat-stride5-mlp175", 90, 50, 2, 5, 175},
		{"default-porthistory2-60ep-vbat-stride2-mlp175", 60, 50, 2, 2, 175},
	} {
		vs, err := LookupVariants([]string{c.variant})
		if err != nil {
			t.Fatal(err)
		}
		v := vs[0]
		// the parameter-matched MLPs of the later defaults train alone
		alone := c.variant == "default-porthistory2-90ep-vbat-stride5-mlp175" || c.variant == "default-porthistory2-60ep-vbat-stride2-mlp175"
		if alone != slices.Equal(v.Only, []string{"mlp"}) {
			t.Errorf("%s: trains only %v", c.variant, v.Only)
		}
		if !v.OnDefault || !slices.Equal(v.Systems, []string{RealCrazyflie, RealCrazyflieGravity}) {
			t.Errorf("%s: on the default %v, systems %v", c.variant, v.OnDefault, v.Systems)
		}
		ms := models()
		b.applyModels(v, ms, spec)
		for _, m := range ms {
			tr := m.Train
			if tr.Epochs != c.epochs || tr.RolloutSteps != c.k || m.Loss.StepDecay != c.decay || tr.SelectHorizon != 100 {
				t.Errorf("%s %s: %d epochs, K %d, decay %g, selection at %d; want %d, %d, %g, 100",
					c.variant, m.Name, tr.Epochs, tr.RolloutSteps, m.Loss.StepDecay, tr.SelectHorizon, c.epochs, c.k, c.decay)
			}
			if m.Kind == "mlp" && !slices.Equal(m.Hidden, []int{c.hidden, c.hidden}) {
				t.Errorf("%s: MLP hidden %v, want %d, %d", c.variant, m.Hidden, c.hidden, c.hidden)
			}
		}
		if dv := b.withDefaultData(v); dv.TrainStride != c.stride {
			t.Errorf("%s: training stride %d, want %d", c.variant, dv.TrainStride, c.stride)
		}
	}
	// a default whose stride moved on (variantStride): the default
	// variant trains at its own stride, the variants measured before at
	// theirs
	b.defaultStride, b.variantStride = 5, 10
	for _, c := range []struct {
		variant string
		stride  int
	}{{"default", 5}, {"default-porthistory2-60ep-vbat", 10}, {"default-porthistory2", 10}, {"default-porthistory2-60ep-vbat-stride2", 2}, {"onestep", 0}} {
		v := Variant{Name: c.variant}
		if c.variant != "default" {
			vs, err := LookupVariants([]string{c.variant})
			if err != nil {
				t.Fatal(err)
			}
			v = vs[0]
		}
		if got := b.withDefaultData(v).TrainStride; got != c.stride {
			t.Errorf("moved default: %s trains at stride %d, want %d", c.variant, got, c.stride)
		}
	}
}

// TestStudyOnly: a variant that trains only some model kinds (a control
// of the baseline alone) reports those models and no other, and one
// whose kinds the benchmark has none of is an error naming them.
func TestStudyOnly(t *testing.T) {
	ctx := context.Background()
	b := tinyPendulumStudy(t)
	dir := t.TempDir()
	runs, err := b.Study(ctx, []Variant{{Name: "mlp-alone", Only: []string{"mlp"}, Apply: func([]ModelSpec, Spec) {}}}, []uint64{1}, dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ms := runs[0].Report.Models; len(ms) != 1 || ms[0].Kind != "mlp" || runs[0].Report.OODChangePercent != nil {
		t.Fatalf("models %+v", ms)
	}
	md, err := os.ReadFile(filepath.Join(dir, "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "| mlp-alone | CaLiSym") || !strings.Contains(string(md), "| ood | mlp-alone | MLP | 1 |") {
		t.Errorf("study.md:\n%s", md)
	}
	_, err = b.Study(ctx, []Variant{{Name: "gru-alone", Only: []string{"gru"}, Apply: func([]ModelSpec, Spec) {}}}, []uint64{1}, t.TempDir(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "trains only gru") {
		t.Errorf("a variant of no model: %v", err)
	}
}

// tinyPendulumStudy prepares the real pendulum's benchmark on one run
// (split in time: 6 s train, 2 s ID test, 2 s OOD), tiny models trained
// one epoch, a study's one-step base, horizons 5 and 20.
func tinyPendulumStudy(t *testing.T) *RealBenchmark {
	t.Helper()
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-143524.csv")
	const H = 20
	opt := realOptions("double_pendulum_hw/trajectories/20230629-143524.csv")
	opt.Split = timeSplit([2]float64{0, 6}, [2]float64{6, 8}, [2]float64{8, 10})
	opt.Horizon, opt.Epochs, opt.Workers, opt.OneStep = H, 1, 1, true
	b, err := PrepareReal(context.Background(), RealDoublePendulumHW, opt)
	if err != nil {
		t.Fatal(err)
	}
	shrink(b)
	b.Spec.Horizons = []int{5, H}
	return b
}

// TestQuadrotorPriorVariants checks the rigid-body prior's variants on the
// gravity-aware Crazyflie: both models behind the quadrotor prior on the
// training of default-porthistory2-60ep-vbat (K-step, at stride 10 and 2),
// the prior's constants read off the params' rigid body
// (quadrotorPriorParams, none for the SE(3) pose or the pendulum), and
// the variants refused on a benchmark without them.
func TestQuadrotorPriorVariants(t *testing.T) {
	grav := paramsFile(t, "crazyflie_gravity.yaml")
	qp, ok := quadrotorPriorParams(&grav.Spec)
	want := mechanics.QuadrotorParams{Mass: 0.045, Inertia: [3]float64{2.3951e-5, 2.3951e-5, 3.2347e-5}, Gravity: 9.81, Substeps: 1}
	if !ok || qp != want {
		t.Fatalf("crazyflie_gravity.yaml: quadrotor prior %+v (%v), want %+v", qp, ok, want)
	}
	for _, name := range []string{"crazyflie.yaml", "double_pendulum_hw.yaml"} {
		if qp, ok := quadrotorPriorParams(&paramsFile(t, name).Spec); ok {
			t.Errorf("%s: a quadrotor prior %+v", name, qp)
		}
	}
	b := &RealBenchmark{System: RealCrazyflieGravity, opts: RealOptions{OneStep: true}, defaultStride: 2, variantStride: 10,
		Default: LongHorizonLonger, history: 2, variantBase: LongHorizon, Quadrotor: &qp}
	spec := Spec{Horizon: 100}
	for _, c := range []struct {
		variant string
		stride  int
		port    int // the wrench's first port
	}{{"default-porthistory2-60ep-vbat-prior", 10, 0}, {"default-porthistory2-60ep-vbat-stride2-prior", 2, 0}, {"default-porthistory2-60ep-vbat-prior-lag", 10, 6}} {
		vs, err := LookupVariants([]string{c.variant})
		if err != nil {
			t.Fatal(err)
		}
		v := vs[0]
		if !v.OnDefault || !slices.Equal(v.Systems, []string{RealCrazyflieGravity}) {
			t.Errorf("%s: on the default %v, systems %v", c.variant, v.OnDefault, v.Systems)
		}
		ms, err := quadrotorModels(false)
		if err != nil {
			t.Fatal(err)
		}
		b.applyModels(v, ms, spec)
		if err := b.fillPriors(v, ms); err != nil {
			t.Fatal(err)
		}
		want := want
		want.WrenchPort = c.port
		for _, m := range ms {
			tr := m.Train
			if m.Prior != mechanics.PriorQuadrotorRK4 || m.QuadrotorPrior == nil || *m.QuadrotorPrior != want || tr.Epochs != 60 || tr.RolloutSteps != 50 {
				t.Errorf("%s %s: prior %q %+v, %d epochs, K %d", c.variant, m.Name, m.Prior, m.QuadrotorPrior, tr.Epochs, tr.RolloutSteps)
			}
		}
		if dv := b.withDefaultData(v); dv.TrainStride != c.stride {
			t.Errorf("%s: training stride %d, want %d", c.variant, dv.TrainStride, c.stride)
		}
		none := &RealBenchmark{System: RealCrazyflie}
		if err := none.fillPriors(v, ms); err == nil || !strings.Contains(err.Error(), "gravity-aware floating base") {
			t.Errorf("%s without the quadrotor's constants: error %v", c.variant, err)
		}
	}
}

// TestQuadrotorPriorLag measures the quadrotor's rigid-body model alone on
// the real flights (the default's data: its split, the voltage and the
// port history, as default-porthistory2-60ep-vbat-prior-lag's evaluation
// windows) driven by the current
// wrench and by the port history's wrench (the mean over the 2 samples
// before, QuadrotorParams.WrenchPort 6): the lagged wrench predicts the
// first 5 steps (50 ms) better on the ID-test and the OOD flights, the
// rotors' lag behind the command that the variant puts into the physics.
func TestQuadrotorPriorLag(t *testing.T) {
	fixtures.Path(t, "crazyflie")
	if testing.Short() {
		t.Skip("converts every Crazyflie flight")
	}
	ctx := context.Background()
	opt := realOptions()
	opt.Workers = 2
	b, err := PrepareReal(ctx, RealCrazyflieGravity, opt)
	if err != nil {
		t.Fatal(err)
	}
	d := b.Data
	if d.ID.NU != 12 || b.Quadrotor == nil {
		t.Fatalf("%d ports (want the 6 wrench values and their history), quadrotor constants %v", d.ID.NU, b.Quadrotor)
	}
	eval := func(set *dataset.Dataset, port int) float64 {
		qp := *b.Quadrotor
		qp.WrenchPort = port
		r, err := trainer.Evaluate(ctx, func() (trainer.Roller, error) { return mechanics.NewQuadrotorPrior(qp, set.Dt) }, set,
			trainer.EvalOptions{Horizon: 5, Stride: b.Spec.EvalStride, MaxWindows: b.Spec.MaxEvalWindows, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return r.MSE
	}
	// the study's physics rows of the two prior variants: the same
	// numbers (their data's evaluation windows are the default's)
	b.Spec.Horizons = []int{5}
	rows := map[int][]GroupResult{}
	for port, name := range map[int]string{0: "default-porthistory2-60ep-vbat-prior", 6: "default-porthistory2-60ep-vbat-prior-lag"} {
		vs, err := LookupVariants([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if rows[port], err = b.variantPhysics(ctx, vs[0]); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range []struct {
		name string
		set  *dataset.Dataset
	}{{"ID test", d.ID}, {"OOD", d.OOD}} {
		now, lag := eval(s.set, 0), eval(s.set, 6)
		t.Logf("%s flights, the physics alone at 5 steps: AR MSE %.4g with the current wrench, %.4g with the port history's (%+.1f %%)", s.name, now, lag, 100*(lag/now-1))
		if !(lag < now) {
			t.Errorf("%s: the lagged wrench's 5-step error %g, the current wrench's %g", s.name, lag, now)
		}
		if a, b := rows[0][i].At(5), rows[6][i].At(5); a != now || b != lag {
			t.Errorf("%s: the study's physics rows %g (prior) and %g (prior-lag), measured %g and %g", s.name, a, b, now, lag)
		}
	}
}

// TestStudyForceWithoutGroups: on a benchmark without evaluation groups
// (the real pendulum's, the Crazyflie's) a study's offset-free pass
// reports the ID-test and OOD sets by horizon with the force estimate,
// the same models' rollouts that trainer.Evaluate makes with it — it
// used to repeat the plain rows, the estimate never applied; a wrench
// estimate on a model without a floating base is an error, not NaN rows.
func TestStudyForceWithoutGroups(t *testing.T) {
	ctx := context.Background()
	b := tinyPendulumStudy(t)
	variants := []Variant{{Name: "onestep", Apply: func([]ModelSpec, Spec) {}}}
	dir := t.TempDir()
	force := &predictor.ForceEstimate{Window: 4, Decay: 1}
	runs, err := b.Study(ctx, variants, []uint64{1}, dir, []trainer.EvalOptions{{Force: force}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Variant != "onestep+force" {
		t.Fatalf("runs %+v", runs)
	}
	for i, m := range runs[1].Report.Models {
		plain := runs[0].Report.Models[i]
		saved, err := trainer.OpenModel(filepath.Join(runs[1].Dir, m.File))
		if err != nil {
			t.Fatal(err)
		}
		for j, row := range m.MultiHorizon {
			want, err := trainer.Evaluate(ctx, saved.Rollers, b.Data.OOD, trainer.EvalOptions{Horizon: row.Horizon, Stride: b.Spec.EvalStride, MaxWindows: b.Spec.MaxEvalWindows, Force: force})
			if err != nil {
				t.Fatal(err)
			}
			if row.OODMSE != want.MSE || row.OODMSE == plain.MultiHorizon[j].OODMSE || row.IDMSE == plain.MultiHorizon[j].IDMSE {
				t.Errorf("%s at %d: +force OOD %v (trainer.Evaluate with the estimate %v), plain %v; ID %v, plain %v", m.Name, row.Horizon, row.OODMSE, want.MSE, plain.MultiHorizon[j].OODMSE, row.IDMSE, plain.MultiHorizon[j].IDMSE)
			}
		}
	}
	rows := studyRowsFile(t, filepath.Join(dir, "study.json"))
	by := map[string]float64{}
	for _, r := range rows {
		if r.Forecast == "" { // the logged ports' rows
			by[fmt.Sprintf("%s %s %s %d", r.Group, r.Model, r.Variant, r.Horizon)] = r.Mean
		}
	}
	for _, k := range []string{"ood calisym", "id_test mlp"} {
		h := b.Spec.Horizons[len(b.Spec.Horizons)-1]
		p, f := by[fmt.Sprintf("%s onestep %d", k, h)], by[fmt.Sprintf("%s onestep+force %d", k, h)]
		if !(p > 0) || !(f > 0) || p == f {
			t.Errorf("study.json %s at %d: plain %v, +force %v", k, h, p, f)
		}
	}
	wrench := &predictor.WrenchEstimate{Window: 50, Gate: 3, Decay: 1, Blocks: 8}
	if _, err := b.Study(ctx, variants, []uint64{1}, dir, []trainer.EvalOptions{{Wrench: wrench}}, nil); err == nil || !strings.Contains(err.Error(), "onestep+wrench") {
		t.Errorf("a wrench estimate on the pendulum: %v", err)
	}
}

// studyRowsFile reads a study.json (ReadStudyRows).
func studyRowsFile(t *testing.T, path string) []StudyRow {
	t.Helper()
	js, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadStudyRows(js)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestDefaultVariantAbout checks the "default" variant's description
// against each system's default as the code builds it: its training
// function by name, its training stride, and the params' port history and
// battery voltage where the params have them. It said "for the Crazyflie:
// onestep + LongHorizon", which the gravity-aware pose's default
// (LongHorizonLonger at stride 2) had long left.
func TestDefaultVariantAbout(t *testing.T) {
	vs, err := LookupVariants([]string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	about := vs[0].About
	params := filepath.Join(fixtures.Root(), "params")
	for _, name := range RealSystemNames() {
		t.Run(name, func(t *testing.T) {
			sys := realSystems()[name]
			var part string
			for p := range strings.SplitSeq(about, "; ") {
				if strings.Contains(p, "on "+name+", ") {
					part = p
				}
			}
			if part == "" {
				t.Fatalf("%q says nothing on %s", about, name)
			}
			spec, err := LoadRealSpec(name, RealOptions{ParamsDir: params})
			if err != nil {
				t.Fatal(err)
			}
			fn := runtime.FuncForPC(reflect.ValueOf(sys.defaults).Pointer()).Name()
			fn = fn[strings.LastIndex(fn, ".")+1:]
			for _, c := range []struct {
				what string
				want bool
			}{
				{fn + " ", true},
				{fmt.Sprintf("stride %d ", sys.defaultStride), sys.defaultStride > 0},
				{"stride", sys.defaultStride > 0},
				{"port history", spec.History.PortMean > 0},
				{"voltage", !spec.Control.Quadrotor.Voltage.IsZero()},
			} {
				if got := strings.Contains(part+" ", c.what); got != c.want {
					t.Errorf("%q: mentions %q: %v, want %v", part, c.what, got, c.want)
				}
			}
		})
	}
}
