package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// Variant is a named change of a benchmark's model specs: one lever of the
// long-horizon study (multi-step training, selection by the AR error, loss
// units), applied to every model alike.
type Variant struct {
	Name  string
	About string
	Apply func(ms []ModelSpec, spec Spec)
	// Convert, when set, changes the conversion spec (the port history:
	// PortHistory), and the variant trains and evaluates on the logs
	// converted that way; nil keeps the benchmark's data.
	Convert func(*convert.Spec)
	// TrainStride, when positive, converts the training windows at this
	// stride instead of the benchmark's (more transitions per epoch: the
	// paper's training budget); the evaluation windows are unchanged.
	TrainStride int
	// OnDefault makes the variant a change of the system's default, as
	// the "default" variant is: the default's models (RealBenchmark's
	// Default, before Apply), port history and training stride (unless
	// TrainStride is set), then Apply and Convert on top. Where the
	// default moved on after the study (realSystem.variantBase: the
	// Crazyflie), the change is of the default it was measured on.
	OnDefault bool
	// Systems, when set, are the only systems the variant applies to
	// (Study refuses it on another).
	Systems []string
	// Only, when set, are the kinds of the only models the variant trains
	// and evaluates ("mlp": a control of the baseline alone, whose
	// CaLiSym rows are those of the variant it changes, which trains
	// CaLiSym the same way with the same seeds).
	Only []string
	// Data, when set, changes the variant's own converted datasets (train,
	// ID test, OOD, groups) in place before training and evaluation: a
	// change of state coordinates (CanonicalMomenta).
	Data func(*Datasets) error
}

// withDefaultData returns v, for the "default" variant with what the
// one-step configuration (RealOptions.OneStep) drops from the params
// restored: the port history and the rest of the default's conversion
// (realSystem.stripDefault).
func (b *RealBenchmark) withDefaultData(v Variant) Variant {
	onDefault := v.Name == "default" || v.OnDefault
	history, restore := b.history, b.restore
	if v.OnDefault {
		history, restore = b.variantHistory, b.variantRestore
	}
	if onDefault && b.opts.OneStep && !b.opts.Full {
		var base []func(*convert.Spec)
		if history > 0 {
			base = append(base, PortHistory(history))
		}
		if restore != nil {
			base = append(base, restore)
		}
		switch {
		case len(base) == 0:
		case v.Convert == nil:
			v.Convert = convertAll(base...)
		case v.OnDefault:
			// the default's conversion, then the variant's change
			v.Convert = convertAll(append(base, v.Convert)...)
		}
	}
	stride := b.defaultStride
	if v.OnDefault && b.variantStride > 0 {
		stride = b.variantStride
	}
	if onDefault && stride > 0 && b.opts.OneStep && !b.opts.Full && v.TrainStride == 0 {
		v.TrainStride = stride
	}
	return v
}

// applyModels changes the study's models as variant v says: for a
// variant on the default, the default first.
func (b *RealBenchmark) applyModels(v Variant, ms []ModelSpec, spec Spec) {
	if v.OnDefault && b.variantBase != nil {
		b.variantBase(ms, spec)
	}
	v.Apply(ms, spec)
	if v.Name == "default" && b.Default != nil {
		b.Default(ms, spec)
	}
}

// fillPriors gives the models with a physics prior (ModelSpec.Prior) the
// benchmark's identified pendulum model or quadrotor constants, or refuses
// the variant on a benchmark without them.
func (b *RealBenchmark) fillPriors(v Variant, ms []ModelSpec) error {
	for i := range ms {
		if ms[i].Prior == "" {
			continue
		}
		if ms[i].Prior == mechanics.PriorQuadrotorRK4 {
			if b.Quadrotor == nil {
				return fmt.Errorf("experiment: variant %s: the physics prior %s needs a quadrotor on the gravity-aware floating base, which %s is not", v.Name, ms[i].Prior, b.System)
			}
			qp := *b.Quadrotor
			qp.WrenchPort = ms[i].PriorWrenchPort
			ms[i].QuadrotorPrior = &qp
			continue
		}
		if b.Pendulum == nil {
			return fmt.Errorf("experiment: variant %s: the physics prior %s needs a double pendulum's identified model, which %s has not", v.Name, ms[i].Prior, b.System)
		}
		pp := *b.Pendulum
		ms[i].PriorParams = &pp
	}
	return nil
}

// checkSystems refuses the variants that do not apply to the benchmark's
// system (Variant.Systems).
func (b *RealBenchmark) checkSystems(variants []Variant) error {
	for _, v := range variants {
		if len(v.Systems) > 0 && !slices.Contains(v.Systems, b.System) {
			return fmt.Errorf("experiment: variant %s applies to %s only, not to %s", v.Name, strings.Join(v.Systems, ", "), b.System)
		}
	}
	return nil
}

// data returns the benchmark's datasets as variant v trains and evaluates
// on them: its own conversion of the logs (RealOptions.Convert), once per
// variant, when it changes the conversion.
func (b *RealBenchmark) data(ctx context.Context, v Variant) (Datasets, error) {
	if v.Convert == nil && v.TrainStride == 0 && v.Data == nil {
		return b.Data, nil
	}
	if d, ok := b.variants[v.Name]; ok {
		return d, nil
	}
	opt := b.opts
	if v.Convert != nil {
		opt.Convert = func(s *convert.Spec) {
			if b.opts.Convert != nil {
				b.opts.Convert(s)
			}
			v.Convert(s)
		}
	}
	if v.TrainStride > 0 {
		opt.TrainStride = v.TrainStride
	}
	vb, err := PrepareReal(ctx, b.System, opt)
	if err != nil {
		return Datasets{}, fmt.Errorf("experiment: variant %s: %w", v.Name, err)
	}
	if v.Data != nil {
		// the variant's own conversion: nothing else holds these datasets
		if err := v.Data(&vb.Data); err != nil {
			return Datasets{}, fmt.Errorf("experiment: variant %s: %w", v.Name, err)
		}
	}
	if b.variants == nil {
		b.variants = map[string]Datasets{}
	}
	b.variants[v.Name] = vb.Data
	if b.variantNotes == nil {
		b.variantNotes = map[string]map[string]string{}
	}
	b.variantNotes[v.Name] = vb.Notes
	return vb.Data, nil
}

// convertAll returns the conversion change that applies changes in order.
func convertAll(changes ...func(*convert.Spec)) func(*convert.Spec) {
	return func(s *convert.Spec) {
		for _, c := range changes {
			c(s)
		}
	}
}

// PortHistory returns a variant's conversion change that adds the mean of
// every port over the m samples before each sample as control ports
// (convert.history.port_mean: the lever 4, "history as ports"),
// which conversion builds from the log and the live node from its input
// history.
func PortHistory(m int) func(*convert.Spec) {
	return func(s *convert.Spec) { s.History.PortMean = m }
}

// Crazyflie measured rotor speeds (params/crazyflie_erpm.yaml): the
// channels, the quadratic rotor model's coefficient and the validation
// bound of the logger's glitches.
const (
	// CrazyflieThrustPerERPM2 is k of the rotor thrust f = k·erpm² [N per
	// eRPM²], fitted on the logs as the command map's 0.173 N per unit
	// was: over the airborne samples of the 16 training flights, mean m·a_z
	// / mean Σ erpm_i² (TestCrazyflieERPMThrustFit).
	CrazyflieThrustPerERPM2 = 1.09e-11
	// CrazyflieMaxERPM bounds the measured speeds: the largest real value
	// in the 19 flights is 146,700, the logger's glitches 1,892,800 and
	// 6,000,000.
	CrazyflieMaxERPM = 200000
	// CrazyflieERPMRepair is the longest run of glitch samples repaired
	// by interpolation (the test flight multisine run 4 has one of 3).
	CrazyflieERPMRepair = 3
)

// MeasuredRotorSpeeds changes a Crazyflie conversion spec (params/
// crazyflie.yaml, crazyflie_gravity.yaml) to drive the model by the
// measured rotor speeds m1_erpm … m4_erpm through the quadratic rotor
// model f_i = k·erpm_i² (k = CrazyflieThrustPerERPM2) and the same
// allocation, with the eRPM channels bounded to [0, CrazyflieMaxERPM]
// (validate.bounds: the logger's glitches repaired). It is exactly the
// change from params/crazyflie.yaml to params/crazyflie_erpm.yaml. The
// speeds are the motors' response, not a command: a model trained so is
// not for planning (docs/your-robot.md).
func MeasuredRotorSpeeds(s *convert.Spec) {
	q := &s.Control.Quadrotor
	q.Motors = nil
	var names []string
	for i := 1; i <= 4; i++ {
		name := fmt.Sprintf("m%d_erpm", i)
		q.Motors = append(q.Motors, statemap.Channel{Name: name})
		names = append(names, name)
	}
	q.ThrustPoly = []float64{0, 0, CrazyflieThrustPerERPM2}
	q.Voltage, q.VoltageRef = statemap.Channel{}, 0 // the speeds are measured, not commanded
	lo, hi := 0.0, float64(CrazyflieMaxERPM)
	s.Validate.Bounds = append(slices.Clone(s.Validate.Bounds), convert.BoundSpec{
		Channels: names, Min: &lo, Max: &hi, Repair: CrazyflieERPMRepair,
		MaxFraction: convert.DefaultBoundMaxFraction, Why: "eRPM logger glitches of 1.9e6 and 6e6",
	})
}

const crazyflieVoltageColumn = "Vbat"

// linearThrust changes a Crazyflie conversion spec with the voltage-scaled
// thrust map (params/crazyflie*.yaml since the real-robot study) back to
// the linear 0.173 N per command the one-step and full configurations and
// the study's earlier variants convert with, and returns the change that
// puts the params' map back; nil where the spec has no voltage.
func linearThrust(s *convert.Spec) func(*convert.Spec) {
	q := s.Control.Quadrotor
	if q.Voltage.IsZero() {
		return nil
	}
	poly := slices.Clone(q.ThrustPoly)
	s.Control.Quadrotor.Voltage, s.Control.Quadrotor.VoltageRef = statemap.Channel{}, 0
	s.Control.Quadrotor.ThrustPoly = []float64{0, statemap.CrazyflieThrustPerUnit}
	return func(t *convert.Spec) {
		t.Control.Quadrotor.Voltage, t.Control.Quadrotor.VoltageRef = q.Voltage, q.VoltageRef
		t.Control.Quadrotor.ThrustPoly = slices.Clone(poly)
	}
}

// BatteryVoltage changes a Crazyflie conversion spec (params/crazyflie.yaml,
// crazyflie_gravity.yaml) to scale each motor command by the battery's
// voltage (column Vbat) before a quadratic thrust map (statemap's
// CrazyflieThrustVolt1 and 2 at CrazyflieVoltageRef) in place of the linear 0.173 N per command:
// the same command spins the rotors faster on a full battery. The port
// stays the command (a planner holds the last measured voltage), unlike
// MeasuredRotorSpeeds.
func BatteryVoltage(s *convert.Spec) {
	q := &s.Control.Quadrotor
	q.Voltage = statemap.Channel{Name: crazyflieVoltageColumn}
	q.VoltageRef = statemap.CrazyflieVoltageRef
	q.ThrustPoly = []float64{0, statemap.CrazyflieThrustVolt1, statemap.CrazyflieThrustVolt2}
}

// LongHorizon is the long-horizon training the quadruped's and the
// Crazyflie's benchmarks add to their one-step configuration by default
// (chosen by the ID-test error of the studies in docs/benchmarks.md; for the
// quadruped, variant kstep50-units-select-decay2):
// one-step teacher forcing for 5 epochs, then multi-step training on
// rollouts of K steps, K growing from 2 to 50 over 10 epochs (256
// sequences a batch), step k of a rollout weighed by 1/(k+1)², the state
// loss in physical units, and the epoch of lowest AR MSE at the headline
// horizon on the ID-test windows (from the 5th).
func LongHorizon(ms []ModelSpec, spec Spec) {
	for i := range ms {
		t := &ms[i].Train
		t.AlphaHold, t.AlphaRamp, t.AlphaFinal = 0, 0, 1
		t.RolloutSteps, t.RolloutFrom, t.RolloutRamp, t.RolloutBatch = 50, 5, 10, 256
		t.SelectHorizon, t.SelectFrom = spec.Horizon, 5
		ms[i].Loss.Units, ms[i].Loss.StepDecay = 1, 2
	}
}

// Variants returns the study's variants, each a change of a system's
// one-step configuration (RealOptions.OneStep): "onestep" is that
// configuration unchanged and "default" the system's default (the same
// where the system has no long-horizon training).
func Variants() []Variant {
	// K-step epochs replace the teacher-forcing ramp: one-step teacher
	// forcing for 5 epochs, then K from 2 to k over 10 epochs, k for the
	// last 5 (of the default 20)
	ksteps := func(ms []ModelSpec, k int) {
		for i := range ms {
			t := &ms[i].Train
			t.AlphaHold, t.AlphaRamp, t.AlphaFinal = 0, 0, 1
			t.RolloutSteps, t.RolloutFrom, t.RolloutRamp, t.RolloutBatch = k, 5, 10, 256
		}
	}
	kstep := func(ms []ModelSpec) { ksteps(ms, 10) }
	// twice the epochs (40 of the default 20; --epochs scales alike)
	epochsTimes := func(ms []ModelSpec, k int) {
		for i := range ms {
			ms[i].Train.Epochs *= k
		}
	}
	twice := func(ms []ModelSpec) { epochsTimes(ms, 2) }
	sel := func(ms []ModelSpec, spec Spec) {
		for i := range ms {
			ms[i].Train.SelectHorizon, ms[i].Train.SelectFrom = spec.Horizon, 5
		}
	}
	// the port history of 2 samples and the battery's voltage in the
	// thrust map: the voltage variants' conversion
	vbat := convertAll(PortHistory(2), BatteryVoltage)
	crazyflies := []string{RealCrazyflie, RealCrazyflieGravity}
	// three times the epochs (90 of the default 30 on the Crazyflie)
	thrice := func(ms []ModelSpec) { epochsTimes(ms, 3) }
	// the MLP's two hidden layers h wide
	mlpWidth := func(ms []ModelSpec, h int) {
		for i := range ms {
			if ms[i].Kind == "mlp" {
				ms[i].Hidden = []int{h, h}
			}
		}
	}
	// K-step rollouts growing to k steps instead of the default's
	kmax := func(ms []ModelSpec, k int) {
		for i := range ms {
			ms[i].Train.RolloutSteps = k
		}
	}
	// steps of the K-step loss weighed by (k+1)^−d
	decay := func(ms []ModelSpec, d float64) {
		for i := range ms {
			ms[i].Loss.StepDecay = d
		}
	}
	// the GRB spline's knot range doubled at the same knot spacing
	knots7 := func(ms []ModelSpec) { knots(ms, 2) }
	// both models behind the quadrotor's rigid-body prior over twice the
	// epochs (the quadrotor prior variants)
	quadPriorBoth := func(ms []ModelSpec, _ Spec) {
		twice(ms)
		withPriorBoth(ms, mechanics.PriorQuadrotorRK4)
	}
	// capacity: CaLiSym's layers and tanh units, the MLP's hidden widths
	scale := func(ms []ModelSpec, layers, width int, hidden float64) {
		for i := range ms {
			if ms[i].Kind == "mlp" {
				h := slices.Clone(ms[i].Hidden)
				for j := range h {
					h[j] = int(math.Round(float64(h[j]) * hidden))
				}
				ms[i].Hidden = h
				continue
			}
			ms[i].Arch.Layers *= layers
			ms[i].Arch.Width *= width
		}
	}
	units := func(ms []ModelSpec) {
		for i := range ms {
			ms[i].Loss.Units = 1
		}
	}
	// rollouts to K = 50, physical units and selection: the base of the
	// step-weight and epoch variants
	k50 := func(ms []ModelSpec, s Spec) {
		ksteps(ms, 50)
		units(ms)
		sel(ms, s)
	}
	return []Variant{
		{Name: "onestep", About: "the one-step configuration: teacher forcing with the α ramp, normalised loss, the last epoch (the default before the long-horizon study)", Apply: func([]ModelSpec, Spec) {}},
		{Name: "default", About: "each system's default, as `calisym bench` without --variants trains it: the one-step configuration changed by, on crazyflie, LongHorizon on training windows at stride 10 with the params' port history (convert.history) and thrust map; on crazyflie_gravity, LongHorizonLonger at stride 2 with the params' port history and thrust map (the battery's voltage); on double_pendulum_hw, SelectLongerPrior; on anymal_sim, LongHorizon with the params' port history (convert.history)", Apply: func([]ModelSpec, Spec) {}},
		{Name: "default-calisym", About: "the default's CaLiSym alone (its rows are the default's, without training the MLP): the models the live node serves, for the port-forecast study", Apply: func([]ModelSpec, Spec) {}, OnDefault: true, Only: []string{"gr", "grb"}},
		{Name: "longhorizon", About: "onestep + LongHorizon on any system, at the one-step configuration's training stride and without the params' port history (the base of the Crazyflie's and the quadruped's defaults, see default)", Apply: LongHorizon},
		{Name: "select", About: "keep the epoch (from the 5th) of lowest AR MSE at the headline horizon on the ID-test windows", Apply: sel},
		{Name: "units", About: "state loss in physical units (LossWeights.Units = 1)", Apply: func(ms []ModelSpec, _ Spec) { units(ms) }},
		{Name: "kstep", About: "multi-step training: 5 epochs one-step, then K = 2 → 10 over 10 epochs (no teacher-forcing ramp)", Apply: func(ms []ModelSpec, _ Spec) { kstep(ms) }},
		{Name: "kstep-units", About: "kstep and units", Apply: func(ms []ModelSpec, _ Spec) { kstep(ms); units(ms) }},
		{Name: "kstep-units-select", About: "kstep, units and select", Apply: func(ms []ModelSpec, s Spec) { kstep(ms); units(ms); sel(ms, s) }},
		{Name: "kstep25", About: "multi-step training as kstep, K = 2 → 25", Apply: func(ms []ModelSpec, _ Spec) { ksteps(ms, 25) }},
		{Name: "kstep25-units-select", About: "kstep25, units and select", Apply: func(ms []ModelSpec, s Spec) { ksteps(ms, 25); units(ms); sel(ms, s) }},
		{Name: "kstep50-units-select", About: "multi-step training to K = 50, units and select", Apply: func(ms []ModelSpec, s Spec) { k50(ms, s) }},
		{Name: "kstep50-units-select-decay1", About: "kstep50-units-select with the steps of the K-step loss weighed by 1/(k+1)", Apply: func(ms []ModelSpec, s Spec) { k50(ms, s); decay(ms, 1) }},
		{Name: "kstep50-units-select-decay1-40ep", About: "kstep50-units-select-decay1, twice the epochs (40: K = 50 from the 15th)", Apply: func(ms []ModelSpec, s Spec) { k50(ms, s); twice(ms); decay(ms, 1) }},
		{Name: "kstep50-units-select-decay1.5", About: "kstep50-units-select with the steps of the K-step loss weighed by (k+1)^−1.5", Apply: func(ms []ModelSpec, s Spec) { k50(ms, s); decay(ms, 1.5) }},
		{Name: "kstep50-units-select-decay2", About: "kstep50-units-select with the steps of the K-step loss weighed by 1/(k+1)²", Apply: func(ms []ModelSpec, s Spec) { k50(ms, s); decay(ms, 2) }},
		{Name: "porthistory5", About: "longhorizon with the mean of every port over the 5 samples before as extra control ports (convert.history.port_mean: 5; lever 4)", Apply: LongHorizon, Convert: PortHistory(5)},
		{Name: "porthistory10", About: "longhorizon with the mean of every port over the 10 samples before as extra control ports (convert.history.port_mean: 10)", Apply: LongHorizon, Convert: PortHistory(10)},
		{Name: "porthistory2", About: "longhorizon with the mean of every port over the 2 samples before as extra control ports (convert.history.port_mean: 2)", Apply: LongHorizon, Convert: PortHistory(2)},
		{Name: "layers35", About: "longhorizon with 35 GR layers instead of 18 (614,460 parameters on the quadruped, as porthistory5's GR with its wider lift: a control for its added capacity; lever 6)", Apply: func(ms []ModelSpec, s Spec) {
			LongHorizon(ms, s)
			for i := range ms {
				if ms[i].Arch.Kind == predictor.KindGR {
					ms[i].Arch.Layers = 35
				}
			}
		}},
		// The real-robot study (issue 37): capacity, optimiser, data budget
		// and port history on top of each system's default.
		{Name: "lh-wide", About: "longhorizon with four times the tanh units per layer of CaLiSym (GR/GRB width ×4) and an MLP of twice the hidden width, so the MLP keeps at least CaLiSym's parameters (lever 6)", Apply: func(ms []ModelSpec, s Spec) {
			LongHorizon(ms, s)
			scale(ms, 1, 4, 2)
		}},
		{Name: "lh-deep", About: "longhorizon with twice CaLiSym's layers and an MLP of 1.5 times the hidden width, parameters matched within 10% on the Crazyflie (lever 6)", Apply: func(ms []ModelSpec, s Spec) {
			LongHorizon(ms, s)
			scale(ms, 2, 1, 1.5)
		}},
		{Name: "lh-adamw", About: "longhorizon with CaLiSym trained by AdamW (as the MLP) instead of Muon", Apply: func(ms []ModelSpec, s Spec) {
			LongHorizon(ms, s)
			for i := range ms {
				ms[i].Train.Optimizer = "adamw"
			}
		}},
		{Name: "lh-stride10", About: "longhorizon on training windows at stride 10 instead of 50: five times the transitions and optimiser steps per epoch (lever 1, the paper's stride)", Apply: LongHorizon, TrainStride: 10},
		{Name: "lh-60ep", About: "longhorizon with twice the epochs (60: K = 50 from the 15th), the training windows unchanged (lever 1)", Apply: func(ms []ModelSpec, s Spec) { LongHorizon(ms, s); twice(ms) }},
		{Name: "lh-stride10-60ep", About: "lh-stride10 with twice the epochs (60: K = 50 from the 15th): ten times the default's optimiser steps (lever 1)", Apply: func(ms []ModelSpec, s Spec) { LongHorizon(ms, s); twice(ms) }, TrainStride: 10},
		// Lever 7: the measured rotor speeds, and the command with the
		// rotor lag in the port history, on the default.
		{Name: "default-erpm", About: "the default with the measured rotor speeds m1_erpm … m4_erpm as the motor port through the quadratic rotor model f = 1.09e-11 N/eRPM² · erpm², eRPM glitches repaired (params/crazyflie_erpm.yaml; lever 7): the motors' response, not a command, so not for MPC", Apply: func([]ModelSpec, Spec) {}, Convert: MeasuredRotorSpeeds, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory5", About: "the default with the mean of every port over the 5 samples before as extra control ports (convert.history.port_mean: 5): the command stays the port and the history can carry the rotor lag (lever 7; porthistory5 at the default's training stride)", Apply: func([]ModelSpec, Spec) {}, Convert: PortHistory(5), OnDefault: true},
		{Name: "default-porthistory2", About: "the default with the mean of every port over the 2 samples before as extra control ports (convert.history.port_mean: 2; lever 2 at the default's training stride)", Apply: func([]ModelSpec, Spec) {}, Convert: PortHistory(2), OnDefault: true},
		{Name: "default-porthistory2-60ep", About: "default-porthistory2 with twice the epochs (60: K = 50 from the 15th; levers 1 and 2 together)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms) }, Convert: PortHistory(2), OnDefault: true},
		{Name: "default-porthistory2-vbat", About: "default-porthistory2 with each motor command scaled by the battery's voltage (Vbat/3.7 V) before a quadratic thrust map fitted on the training flights (f = 0.13997·s + 0.06193·s² N) in place of 0.173 N per command: the command stays the port (lever 7, command side)", Apply: func([]ModelSpec, Spec) {}, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat", About: "default-porthistory2-60ep with each motor command scaled by the battery's voltage as default-porthistory2-vbat (levers 1, 2 and 7)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-decay1", About: "default-porthistory2-60ep-vbat with the steps of the K-step loss weighed by 1/(k+1) instead of 1/(k+1)² (lever 3)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); decay(ms, 1) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-decay1.5", About: "default-porthistory2-60ep-vbat with the steps of the K-step loss weighed by (k+1)^−1.5 instead of 1/(k+1)² (lever 3)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); decay(ms, 1.5) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-k25", About: "default-porthistory2-60ep-vbat with K growing to 25 instead of 50 (lever 3)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); kmax(ms, 25) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-k25-decay1", About: "default-porthistory2-60ep-vbat with K growing to 25 and the steps of the K-step loss weighed by 1/(k+1) (lever 3: k25's short horizons with decay1's long ones)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); kmax(ms, 25); decay(ms, 1) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-k25-decay1.5", About: "default-porthistory2-60ep-vbat with K growing to 25 and the steps of the K-step loss weighed by (k+1)^−1.5 (lever 3)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); kmax(ms, 25); decay(ms, 1.5) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-k35", About: "default-porthistory2-60ep-vbat with K growing to 35 instead of 50 (lever 3)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); kmax(ms, 35) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-90ep-vbat", About: "default-porthistory2-60ep-vbat with three times the one-step configuration's epochs (90: K = 50 from the 15th; lever 1)", Apply: func(ms []ModelSpec, _ Spec) { thrice(ms) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-stride5", About: "default-porthistory2-60ep-vbat on training windows at stride 5 instead of 10: twice the transitions and optimiser steps (lever 1)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms) }, Convert: vbat, OnDefault: true, TrainStride: 5, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-mlp175", About: "default-porthistory2-60ep-vbat with the MLP's hidden layers 175 wide instead of 128 (37,287 parameters against CaLiSym's 37,296): the parameter-matched MLP (lever 6)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); mlpWidth(ms, 175) }, Convert: vbat, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-stride5-k25-decay1", About: "default-porthistory2-60ep-vbat-stride5 with K growing to 25 and the steps of the K-step loss weighed by 1/(k+1) as default-porthistory2-60ep-vbat-k25-decay1 (levers 1 and 3)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); kmax(ms, 25); decay(ms, 1) }, Convert: vbat, OnDefault: true, TrainStride: 5, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-stride5-mlp175", About: "default-porthistory2-60ep-vbat-stride5 with the parameter-matched MLP of default-porthistory2-60ep-vbat-mlp175 (levers 1 and 6)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); mlpWidth(ms, 175) }, Convert: vbat, OnDefault: true, TrainStride: 5, Systems: crazyflies},
		{Name: "default-porthistory2-90ep-vbat-stride5", About: "default-porthistory2-60ep-vbat-stride5 with three times the one-step configuration's epochs (90; lever 1)", Apply: func(ms []ModelSpec, _ Spec) { thrice(ms) }, Convert: vbat, OnDefault: true, TrainStride: 5, Systems: crazyflies},
		{Name: "default-porthistory2-90ep-vbat-stride5-mlp175", About: "the MLP alone of default-porthistory2-90ep-vbat-stride5, 175-175 wide (37,287 parameters, CaLiSym's 37,296): the parameter-matched baseline; CaLiSym's rows are default-porthistory2-90ep-vbat-stride5's (lever 6)", Apply: func(ms []ModelSpec, _ Spec) { thrice(ms); mlpWidth(ms, 175) }, Convert: vbat, OnDefault: true, TrainStride: 5, Only: []string{"mlp"}, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-stride2-mlp175", About: "the MLP alone of default-porthistory2-60ep-vbat-stride2, 175-175 wide (the parameter-matched baseline; CaLiSym's rows are default-porthistory2-60ep-vbat-stride2's; lever 6)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); mlpWidth(ms, 175) }, Convert: vbat, OnDefault: true, TrainStride: 2, Only: []string{"mlp"}, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-prior", About: "default-porthistory2-60ep-vbat with both models behind one step of the quadrotor's rigid-body model (Newton–Euler with gravity under the body wrench of the motor commands, one Runge–Kutta step of 10 ms; mechanics.QuadrotorPrior): x' = M(Φ₀(x, u), u), trained K-step through the prior's adjoint as the default trains (the issue's rigid-body prior that the symplectic map corrects)", Apply: quadPriorBoth, Convert: vbat, OnDefault: true, Systems: []string{RealCrazyflieGravity}},
		{Name: "default-porthistory2-60ep-vbat-prior-lag", About: "default-porthistory2-60ep-vbat-prior with the rigid-body prior driven by the port history's wrench (the mean of each command's wrench over the 2 samples before, ports 6–11: QuadrotorParams.WrenchPort 6) instead of the current one: the rotors' lag behind the command in the physics; the learned map still sees both", Apply: func(ms []ModelSpec, s Spec) {
			quadPriorBoth(ms, s)
			for i := range ms {
				ms[i].PriorWrenchPort = 6
			}
		}, Convert: vbat, OnDefault: true, Systems: []string{RealCrazyflieGravity}},
		{Name: "default-porthistory2-60ep-vbat-stride2-prior", About: "default-porthistory2-60ep-vbat-stride2 (the default since the fourth round) with both models behind the quadrotor's rigid-body prior as default-porthistory2-60ep-vbat-prior", Apply: quadPriorBoth, Convert: vbat, OnDefault: true, TrainStride: 2, Systems: []string{RealCrazyflieGravity}},
		{Name: "default-porthistory2-60ep-vbat-stride2", About: "default-porthistory2-60ep-vbat on training windows at stride 2: five times the transitions and optimiser steps (lever 1)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms) }, Convert: vbat, OnDefault: true, TrainStride: 2, Systems: crazyflies},
		{Name: "default-porthistory2-60ep-vbat-canonical", About: "default-porthistory2-60ep-vbat with the base's momenta canonically conjugate to the gravity-aware coordinates, p = J(q)ᵀ·M·v (the linear momentum in the window's first yaw frame, Wᵀ times the angular momentum), instead of the body momenta M·v: the symplectic map's (q, p) a canonical pair (CanonicalMomenta)", Apply: func(ms []ModelSpec, _ Spec) { twice(ms) }, Convert: vbat, Data: canonicalData, OnDefault: true, Systems: []string{RealCrazyflieGravity}},
		{Name: "default-porthistory2-60ep-vbat-decay1-canonical", About: "default-porthistory2-60ep-vbat-decay1 with the canonical momenta of default-porthistory2-60ep-vbat-canonical", Apply: func(ms []ModelSpec, _ Spec) { twice(ms); decay(ms, 1) }, Convert: vbat, Data: canonicalData, OnDefault: true, Systems: []string{RealCrazyflieGravity}},
		{Name: "default-width85", About: "the default with CaLiSym's GR layers 85 tanh units wide instead of 36 (37,408 parameters on the Crazyflie, those of default-porthistory2's 37,296), the MLP unchanged: the port history's capacity control (levers 2 and 6)", Apply: func(ms []ModelSpec, _ Spec) {
			for i := range ms {
				if ms[i].Kind != "mlp" {
					ms[i].Arch.Width = 85
				}
			}
		}, OnDefault: true, Systems: crazyflies},
		{Name: "default-porthistory10", About: "the default with the mean of every port over the 10 samples before as extra control ports (convert.history.port_mean: 10; lever 2 at the default's training stride)", Apply: func([]ModelSpec, Spec) {}, Convert: PortHistory(10), OnDefault: true},
		{Name: "onestep-porthistory5", About: "onestep with the mean of every port over the 5 samples before as extra control ports (the pendulum's default training; lever 2)", Apply: func([]ModelSpec, Spec) {}, Convert: PortHistory(5)},
		{Name: "onestep-porthistory2", About: "onestep with the mean of every port over the 2 samples before as extra control ports (lever 2)", Apply: func([]ModelSpec, Spec) {}, Convert: PortHistory(2)},
		{Name: "onestep-knots7", About: "onestep with the GRB spline's knot range widened from [−3.5, 3.5] to [−7, 7] at the same knot spacing (24 intervals; lever 5)", Apply: func(ms []ModelSpec, _ Spec) { knots7(ms) }},
		{Name: "onestep-gr", About: "onestep with a GR-SympNet of 12 layers of 32 tanh units (4,368 parameters) in place of the pendulum's GRB-SympNet (4,524): tanh ridges instead of the spline outside the training range (lever 5)", Apply: func(ms []ModelSpec, _ Spec) { grInPlaceOfGRB(ms) }},
		{Name: "lh-normunits", About: "longhorizon with the state loss in normalised units (LossWeights.Units = 0) instead of physical ones, so that the small angular momenta weigh as much as the positions", Apply: func(ms []ModelSpec, s Spec) {
			LongHorizon(ms, s)
			for i := range ms {
				ms[i].Loss.Units = 0
			}
		}},
		{Name: "select-knots7", About: "select and onestep-knots7 together", Apply: func(ms []ModelSpec, s Spec) {
			sel(ms, s)
			knots7(ms)
		}},
		{Name: "select-60ep", About: "select with twice the epochs (60, the α ramp over epochs 20–40): selection guards against the overfitting that made more epochs worse", Apply: func(ms []ModelSpec, s Spec) {
			sel(ms, s)
			twice(ms)
		}},
		// Issue 37, the real pendulum: the identified rigid-body model as a
		// prior that CaLiSym corrects, x' = CaLiSym(Φ₀(x, u), u), one-step
		// training (the prior has no tangent map for K-step training)
		{Name: "select-60ep-prior", About: "select-60ep with CaLiSym behind one step of the identified model 2.0 (implicit midpoint on H − τᵀq, symplectic, between two half steps of backward-Euler joint friction): x' = CaLiSym(Φ₀(x, u), u); the MLP unchanged", Apply: func(ms []ModelSpec, s Spec) {
			sel(ms, s)
			twice(ms)
			withPrior(ms, mechanics.PriorMidpointFriction)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-nofriction", About: "select-60ep-prior with the frictionless prior (the implicit midpoint step alone): the composed state map is symplectic for fixed torques", Apply: func(ms []ModelSpec, s Spec) {
			sel(ms, s)
			twice(ms)
			withPrior(ms, mechanics.PriorMidpoint)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both", About: "select-60ep-prior with the MLP behind the same prior too, x' = MLP(Φ₀(x, u), u) (the physics + residual hybrid, its normalisation taken from the pairs (Φ₀(x_t, u_t), u_t) → x_{t+1} it maps): both models trained the same way; CaLiSym's part is select-60ep-prior's", Apply: selectLongerPriorBoth, Systems: []string{RealDoublePendulumHW}},
		// The sixth round: what the learned correction behind the prior
		// does outside the training range (levers 5 and 6), each on
		// select-60ep-prior-both
		{Name: "select-60ep-prior-both-gr", About: "select-60ep-prior-both with CaLiSym a GR-SympNet of 12 layers of 32 tanh units in place of the GRB (onestep-gr's; bounded tanh ridges where the spline's support ends), the MLP unchanged (lever 5 behind the prior)", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			grInPlaceOfGRB(ms)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-knots7", About: "select-60ep-prior-both with the GRB spline's knot range widened to [−7, 7] at the same spacing (onestep-knots7's), the MLP unchanged (lever 5 behind the prior)", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			knots7(ms)
		}, Systems: []string{RealDoublePendulumHW}},
		// The seventh round: the identified model's one-step residual
		// drifts from step to step (lag-1 autocorrelation 0.72–0.96,
		// bench predictability), as a lag of the logged torques behind
		// the applied ones would make it; the port history behind the
		// prior (lever 2) lets the correction see the torques before
		{Name: "select-60ep-prior-both-knots7-porthistory2", About: "select-60ep-prior-both-knots7 with the mean of every port over the 2 samples before as extra ports (the prior steps on the current torques, the correction sees the history; lever 2 behind the prior)", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			knots7(ms)
		}, Convert: PortHistory(2), Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-knots7-porthistory5", About: "select-60ep-prior-both-knots7-porthistory2 over the 5 samples before", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			knots7(ms)
		}, Convert: PortHistory(5), Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-knots10", About: "select-60ep-prior-both with the GRB spline's knot range widened to [−10.5, 10.5] at the same spacing (36 intervals), the MLP unchanged (lever 5 behind the prior)", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			knots(ms, 3)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-knots7-wd1e-1", About: "select-60ep-prior-both-knots7 with both models' decoupled weight decay 1e-1 instead of 2e-4 (select-60ep-prior-both-wd1e-1's)", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			knots7(ms)
			weightDecay(ms, 1e-1)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-wd1e-2", About: "select-60ep-prior-both with both models' decoupled weight decay 1e-2 instead of 2e-4: the learned correction pulled towards the identity where the data do not constrain it", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			weightDecay(ms, 1e-2)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-wd1e-1", About: "select-60ep-prior-both with both models' decoupled weight decay 1e-1 instead of 2e-4", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			weightDecay(ms, 1e-1)
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "select-60ep-prior-both-half", About: "select-60ep-prior-both with half CaLiSym's ridge units per layer (12 × 4) and the MLP's hidden widths halved (48-48): a smaller correction on top of the physics (lever 6)", Apply: func(ms []ModelSpec, s Spec) {
			selectLongerPriorBoth(ms, s)
			for i := range ms {
				if ms[i].Kind == "mlp" {
					ms[i].Hidden = []int{48, 48}
				} else {
					ms[i].Arch.Width /= 2
				}
			}
		}, Systems: []string{RealDoublePendulumHW}},
		{Name: "longhorizon-60ep-prior-both", About: "both models behind the friction-aware implicit-midpoint prior as select-60ep-prior-both, trained K-step through the prior's adjoint (the long-horizon training of longhorizon: K to 50 from the 5th epoch, physical units, weights 1/(k+1)², the epoch of lowest ID-test AR MSE at 200 steps kept) over 60 epochs", Apply: lhPriorBoth(50), Systems: []string{RealDoublePendulumHW}},
		{Name: "longhorizon-60ep-prior-both-k10", About: "longhorizon-60ep-prior-both with K growing to 10 instead of 50 (0.1 s of the 2 s horizon)", Apply: lhPriorBoth(10), Systems: []string{RealDoublePendulumHW}},
		{Name: "lh-units0.5", About: "longhorizon with the state loss halfway between normalised and physical units (LossWeights.Units = 0.5: channel weights ∝ s instead of s²), so the small angular momenta keep some weight", Apply: func(ms []ModelSpec, s Spec) {
			LongHorizon(ms, s)
			for i := range ms {
				ms[i].Loss.Units = 0.5
			}
		}},
		{Name: "onestep-wide", About: "onestep with four times CaLiSym's tanh units per layer and an MLP of twice the hidden width (lever 6)", Apply: func(ms []ModelSpec, _ Spec) { scale(ms, 1, 4, 2) }},
		{Name: "kstep25-units-select-40ep", About: "kstep25-units-select, twice the epochs (40: K = 25 from the 15th)", Apply: func(ms []ModelSpec, s Spec) { ksteps(ms, 25); units(ms); sel(ms, s); twice(ms) }},
		{Name: "kstep50-units-select-40ep", About: "kstep50-units-select, twice the epochs (40: K = 50 from the 15th)", Apply: func(ms []ModelSpec, s Spec) { k50(ms, s); twice(ms) }},
	}
}

// grInPlaceOfGRB replaces each GRB-SympNet by a GR-SympNet of 12 layers
// of 32 tanh units (4,368 parameters against the pendulum GRB's 4,524).
func grInPlaceOfGRB(ms []ModelSpec) {
	for i := range ms {
		if ms[i].Arch.Kind == predictor.KindGRB {
			ms[i].Name, ms[i].Kind = "CaLiSym-GR", "gr"
			ms[i].Arch = predictor.Arch{Kind: predictor.KindGR, Layers: 12, Width: 32, StepSize: ms[i].Arch.StepSize}
		}
	}
}

// knots widens each GRB spline's knot range f times at the same knot
// spacing (f = 2: the pendulum's [−3.5, 3.5] with 12 intervals becomes
// [−7, 7] with 24).
func knots(ms []ModelSpec, f int) {
	for i := range ms {
		if ms[i].Arch.Kind == predictor.KindGRB {
			sp := &ms[i].Arch.Spline
			sp.Intervals *= f
			sp.Lo *= float64(f)
			sp.Hi *= float64(f)
		}
	}
}

// weightDecay sets every model's decoupled weight decay.
func weightDecay(ms []ModelSpec, wd float64) {
	for i := range ms {
		ms[i].Train.WeightDecay = wd
	}
}

// lhPriorBoth is the pendulum's long-horizon training (LongHorizon, K
// growing to k) over twice the epochs with both models behind the
// friction-aware implicit-midpoint prior, trained through its adjoint.
func lhPriorBoth(k int) func(ms []ModelSpec, s Spec) {
	return func(ms []ModelSpec, s Spec) {
		LongHorizon(ms, s)
		for i := range ms {
			t := &ms[i].Train
			t.Epochs *= 2
			t.RolloutSteps = k
		}
		withPriorBoth(ms, mechanics.PriorMidpointFriction)
	}
}

// withPrior gives the GR/GRB models the physics prior of kind k.
func withPrior(ms []ModelSpec, k mechanics.PriorKind) {
	for i := range ms {
		if ms[i].Kind != "mlp" {
			ms[i].Prior = k
		}
	}
}

// withPriorBoth gives every model, CaLiSym and the MLP baseline
// (trainer.NewComposedMLP), the physics prior of kind k: both trained the
// same way.
func withPriorBoth(ms []ModelSpec, k mechanics.PriorKind) {
	for i := range ms {
		ms[i].Prior = k
	}
}

// LookupVariants returns the named variants, in the order given.
func LookupVariants(names []string) ([]Variant, error) {
	all := Variants()
	var out []Variant
	for _, n := range names {
		i := slices.IndexFunc(all, func(v Variant) bool { return v.Name == n })
		if i < 0 {
			var known []string
			for _, v := range all {
				known = append(known, v.Name)
			}
			return nil, fmt.Errorf("experiment: unknown variant %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// StudyRun is one variant and seed of a study, with its report.
type StudyRun struct {
	Variant string  `json:"variant"`
	Seed    uint64  `json:"seed"`
	Dir     string  `json:"dir"`
	Report  *Report `json:"-"`
}

// Study trains and evaluates the benchmark's models under every variant
// and seed, each run in outDir/<variant>/seed<S> (a run whose report.json
// is there is read, not repeated, so a stopped study continues), and
// writes outDir/study.md: the evaluation groups' AR MSE as the mean and
// range over the seeds.
//
// With offsets, every run's saved models are also evaluated on the groups
// with offset-free rollouts, once per setting (trainer.EvalOptions.Force
// or Wrench; its other fields are ignored), reported as the variant
// "<name>+force" or "<name>+wrench" (by its settings where there are
// several of a kind: "<name>+force(10,0.9)"): the same models, no
// training.
func (b *RealBenchmark) Study(ctx context.Context, variants []Variant, seeds []uint64, outDir string, offsets []trainer.EvalOptions, log io.Writer) ([]StudyRun, error) {
	if log == nil {
		log = io.Discard
	}
	passes, err := offsetPasses(offsets)
	if err != nil {
		return nil, err
	}
	if err := b.checkSystems(variants); err != nil {
		return nil, err
	}
	var runs []StudyRun
	for _, v := range variants {
		for _, seed := range seeds {
			dir := filepath.Join(outDir, v.Name, fmt.Sprintf("seed%d", seed))
			run := StudyRun{Variant: v.Name, Seed: seed, Dir: dir}
			if rep, err := readReport(dir); err == nil {
				fmt.Fprintf(log, "study: %s seed %d: read %s\n", v.Name, seed, filepath.Join(dir, "report.json"))
				run.Report = rep
				runs = append(runs, run)
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return runs, err
			}
			spec := b.Spec
			spec.Models = slices.Clone(b.Spec.Models)
			for i := range spec.Models {
				spec.Models[i].Train.Seed = seed
			}
			b.applyModels(v, spec.Models, spec)
			if len(v.Only) > 0 {
				spec.Models = slices.DeleteFunc(spec.Models, func(m ModelSpec) bool { return !slices.Contains(v.Only, m.Kind) })
				if len(spec.Models) == 0 {
					return runs, fmt.Errorf("experiment: variant %s trains only %s, which %s has none of", v.Name, strings.Join(v.Only, ", "), b.System)
				}
			}
			if err := b.fillPriors(v, spec.Models); err != nil {
				return runs, err
			}
			v = b.withDefaultData(v)
			fmt.Fprintf(log, "study: %s seed %d (%s)\n", v.Name, seed, v.About)
			data, err := b.data(ctx, v)
			if err != nil {
				return runs, err
			}
			saved, savedData, savedNotes := b.Spec, b.Data, b.Notes
			b.Spec, b.Data = spec, data
			if n, ok := b.variantNotes[v.Name]; ok {
				// the variant's own conversion (its training windows)
				b.Notes = n
			}
			rep, err := b.Run(ctx, dir, log)
			b.Spec, b.Data, b.Notes = saved, savedData, savedNotes
			if err != nil {
				return runs, fmt.Errorf("experiment: study %s seed %d: %w", v.Name, seed, err)
			}
			run.Report = rep
			runs = append(runs, run)
		}
	}
	if len(passes) > 0 {
		var err error
		if runs, variants, err = b.offsetRuns(ctx, runs, variants, passes, log); err != nil {
			return runs, err
		}
	}
	md := StudyMarkdown(runs, variants)
	// A benchmark without evaluation groups reports its ID-test and OOD
	// sets by horizon as the groups "id_test" and "ood".
	groups := runs
	if len(runs) > 0 && runs[0].Report != nil && len(runs[0].Report.HoldGroups) == 0 {
		hold, err := b.splitHold(ctx)
		if err != nil {
			return runs, err
		}
		physics := map[string][]GroupResult{}
		for _, v := range variants {
			if physics[v.Name], err = b.variantPhysics(ctx, v); err != nil {
				return runs, err
			}
		}
		groups = withSplitGroups(runs, hold, physics)
		var t strings.Builder
		t.WriteString("\n## By horizon: AR MSE on the ID-test and OOD sets, mean [min, max] over seeds\n")
		groupTable(&t, groups, variants)
		md += t.String()
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "study.md"), []byte(md)); err != nil {
		return runs, fmt.Errorf("experiment: %w", err)
	}
	js, err := json.MarshalIndent(StudyRows(groups, variants), "", "  ")
	if err != nil {
		return runs, fmt.Errorf("experiment: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "study.json"), append(js, '\n')); err != nil {
		return runs, fmt.Errorf("experiment: %w", err)
	}
	return runs, studyPlots(groups, variants, b.Spec.System, outDir)
}

// studyPlots draws outDir/study_<group>.png for every evaluation group
// of the runs (StudyPlots of their StudyRows): the seeds' mean AR MSE
// against the horizon with the seeds' range, one colour per variant,
// CaLiSym solid and the MLP dashed, the state held constant dotted.
func studyPlots(runs []StudyRun, variants []Variant, system, outDir string) error {
	rows := StudyRows(runs, variants)
	if len(rows) == 0 {
		return nil
	}
	_, err := StudyPlots(rows, system, outDir, nil, nil)
	return err
}

// readReport reads the report.json of a finished run.
func readReport(dir string) (*Report, error) {
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return nil, err
	}
	rep, err := decodeReport(data)
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: %w", filepath.Join(dir, "report.json"), err)
	}
	return rep, nil
}

// StudyMarkdown renders a study: per evaluation group, variant and model,
// the AR MSE at every horizon as the mean over the seeds and [min, max].
func StudyMarkdown(runs []StudyRun, variants []Variant) string {
	var b strings.Builder
	b.WriteString("# Study: AR MSE by evaluation group, mean [min, max] over seeds\n\n")
	for _, v := range variants {
		fmt.Fprintf(&b, "- `%s`: %s\n", v.Name, v.About)
	}
	if len(runs) == 0 || runs[0].Report == nil {
		b.WriteString("\n(no runs)\n")
		return b.String()
	}
	if len(runs[0].Report.HoldGroups) == 0 {
		// no evaluation groups: the benchmark's ID-test and OOD error at
		// its headline horizon
		fmt.Fprintf(&b, "\n| variant | model | seeds | ID AR MSE | OOD AR MSE |\n|---|---|---:|---:|---:|\n")
		for _, v := range variants {
			for _, sm := range variantSeeds(runs, v.Name, func(m ModelReport) ([]float64, bool) { return []float64{m.ID.MSE, m.OOD.MSE}, true }) {
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", v.Name, sm.Name, sm.Seeds, meanRange(sm.Vals[0]), meanRange(sm.Vals[1]))
			}
		}
		return b.String()
	}
	groupTable(&b, runs, variants)
	return b.String()
}

// seedModel is one model of a study's variant on one evaluation group:
// its error at every horizon in each seed's run.
type seedModel struct {
	Name, Kind string
	Seeds      int
	Vals       [][]float64 // per horizon, one value per seed
}

// groupSeeds gathers the models of a variant's runs that were evaluated
// on the named group, in the order they first appear, with their errors
// at horizons hs (a run that predates the group, such as the OOD logs'
// groups of withSplitGroups, is left out).
func groupSeeds(runs []StudyRun, variant, group string, hs []int) []seedModel {
	return variantSeeds(runs, variant, func(m ModelReport) ([]float64, bool) {
		gi := slices.IndexFunc(m.Groups, func(g GroupResult) bool { return g.Group == group })
		if gi < 0 {
			return nil, false
		}
		vals := make([]float64, len(hs))
		for j, h := range hs {
			vals[j] = m.Groups[gi].At(h)
		}
		return vals, true
	})
}

// variantSeeds gathers the models of a variant's runs, in the order they
// first appear, with the values that vals reads off each (false: the
// model has none), one list per value across the seeds.
func variantSeeds(runs []StudyRun, variant string, vals func(ModelReport) ([]float64, bool)) []seedModel {
	var out []seedModel
	for _, r := range runs {
		if r.Variant != variant {
			continue
		}
		for _, m := range r.Report.Models {
			vs, ok := vals(m)
			if !ok {
				continue
			}
			i := slices.IndexFunc(out, func(s seedModel) bool { return s.Name == m.Name })
			if i < 0 {
				i = len(out)
				out = append(out, seedModel{Name: m.Name, Kind: m.Kind, Vals: make([][]float64, len(vs))})
			}
			out[i].Seeds++
			for j, v := range vs {
				out[i].Vals[j] = append(out[i].Vals[j], v)
			}
		}
	}
	return out
}

// meanRange formats values as "mean [min, max]" (one value alone).
func meanRange(vs []float64) string {
	if len(vs) == 0 {
		return ""
	}
	if len(vs) == 1 {
		return num(vs[0])
	}
	lo, hi, s := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range vs {
		lo, hi, s = min(lo, v), max(hi, v), s+v
	}
	return fmt.Sprintf("%s [%s, %s]", num(s/float64(len(vs))), num(lo), num(hi))
}
