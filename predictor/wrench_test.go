package predictor

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// baseStepper is a stand-in model of a floating base and one joint (n = 7,
// one port): the base turns by a rotation that depends on the joint
// (q̂[3:6], an SO(3) rotation vector, or roll and pitch held and a yaw
// change for the gravity-aware base), the momenta follow p̂ = 0.9p + 0.1e.
type baseStepper struct{ gravity bool }

const baseN = 7

func (s baseStepper) Rollout(x0, ports []float64, horizon int, out []float64) error {
	prev := x0
	for k := range horizon {
		next := out[k*2*baseN : (k+1)*2*baseN]
		qj := prev[6]
		next[0], next[1], next[2] = 0.01, 0, 0.002*qj
		if s.gravity {
			next[3], next[4], next[5] = prev[3], prev[4], 0.005+0.01*qj
		} else {
			next[3], next[4], next[5] = 0.02*qj, 0.001, 0.005
		}
		next[6] = qj + 0.01*prev[baseN+6]
		for j := range baseN {
			next[baseN+j] = 0.9*prev[baseN+j] + 0.1*ports[k]
		}
		prev = next
	}
	return nil
}

// wrenchTruth runs the system that is the stand-in model plus an external
// wrench W (world frame, newtons and newton-metres) on the base and extra
// body-frame impulses on the base momenta (disturb(t)), for steps samples
// from a fixed start, and feeds each sample to f with the origin
// coordinates zeroed (all six for the SE(3) base; position and yaw for
// the gravity-aware one, whose roll and pitch wander). It returns the
// world orientation the system had at its last observed sample and, for
// the gravity-aware base, that sample's heading.
func wrenchTruth(t *testing.T, f *WrenchEstimator, s baseStepper, W [6]float64, dt float64, steps int, disturb func(k int, d []float64)) ([9]float64, float64) {
	t.Helper()
	x := make([]float64, 2*baseN)
	x[6], x[baseN] = 0.2, 0.1
	R := [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	yaw := 0.0
	next := make([]float64, 2*baseN)
	obs := make([]float64, 2*baseN)
	var observed [9]float64 // the orientation of the last observed sample
	var heading float64
	d := make([]float64, 6)
	for k := range steps {
		e := []float64{math.Sin(0.1 * float64(k))}
		copy(obs, x)
		for j := range 6 {
			if !s.gravity || j != 3 && j != 4 {
				obs[j] = 0
			}
		}
		if err := f.Observe(obs, e); err != nil {
			t.Fatal(err)
		}
		observed, heading = R, yaw
		if err := s.Rollout(obs, e, 1, next); err != nil {
			t.Fatal(err)
		}
		// the orientation of the next sample
		if s.gravity {
			yaw += next[5]
			next[3], next[4] = 0.05*math.Sin(0.07*float64(k)), 0.03*math.Cos(0.05*float64(k))
			R = rpy(next[3], next[4], yaw)
		} else {
			var dR [9]float64
			expSO3(next[3], next[4], next[5], &dR)
			R = mulT3(&R, &[9]float64{dR[0], dR[3], dR[6], dR[1], dR[4], dR[7], dR[2], dR[5], dR[8]})
		}
		var b [6]float64
		rotate(&R, W[0:3], b[0:3], true)
		rotate(&R, W[3:6], b[3:6], true)
		clear(d)
		if disturb != nil {
			disturb(k, d)
		}
		for j := range 6 {
			next[baseN+j] += b[j]*dt + d[j]
		}
		x, next = next, x
	}
	return observed, heading
}

// inFrame returns the wrench W (world frame) in the estimate's frame:
// the base frame of the last observed sample (orientation R) for the
// SE(3) base, z up with its heading for the gravity-aware one.
func inFrame(W [6]float64, R [9]float64, heading float64, gravity bool) [6]float64 {
	if gravity {
		R = rpy(0, 0, heading)
	}
	var out [6]float64
	rotate(&R, W[0:3], out[0:3], true)
	rotate(&R, W[3:6], out[3:6], true)
	return out
}

// TestWrenchEstimatorRecoversConstantWrench: a constant external wrench in
// the world frame on a turning base is recovered, for either base kind:
// exactly (1e-9 relative) without other residuals; within 5% of each
// component plus 4 standard errors of the noise mean (σ/√window) under
// gait-periodic residuals (amplitude 1 N·s per step, 100 N, whole
// periods per block in the body frame) and white noise (σ 0.3 N·s), while components the wrench does not have stay
// within those 4 standard errors. The world frame is the base frame of the
// first sample, chained by the model's one-step rotations.
func TestWrenchEstimatorRecoversConstantWrench(t *testing.T) {
	const dt = 0.01
	W := [6]float64{12, -40, -98.1, 0, 6, 0} // N, N·m
	cfg := WrenchEstimate{Window: 200, Gate: 3, Decay: 1, Blocks: 8}
	for _, gravity := range []bool{false, true} {
		name := map[bool]string{false: "se3", true: "gravity"}[gravity]
		base := map[bool]WrenchBase{false: WrenchBaseSE3, true: WrenchBaseGravity}[gravity]
		t.Run(name+"/exact", func(t *testing.T) {
			f, err := NewWrenchEstimator(baseStepper{gravity}, baseN, 1, base, cfg)
			if err != nil {
				t.Fatal(err)
			}
			R, heading := wrenchTruth(t, f, baseStepper{gravity}, W, dt, 300, nil)
			st := f.State()
			if st.Residuals != cfg.Window {
				t.Fatalf("%d residuals, want %d", st.Residuals, cfg.Window)
			}
			want := inFrame(W, R, heading, gravity)
			for j, w := range want {
				if got := st.Impulse[j] / dt; math.Abs(got-w) > 1e-9*100 {
					t.Errorf("component %d: %v, want %v", j, got, w)
				}
			}
			// the latest base in the estimate's frame: the identity, or its
			// roll and pitch
			wantR := [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
			if gravity {
				Rh := rpy(0, 0, heading)
				wantR = mulT3(&[9]float64{Rh[0], Rh[3], Rh[6], Rh[1], Rh[4], Rh[7], Rh[2], Rh[5], Rh[8]}, &[9]float64{R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]})
			}
			for i := range wantR {
				if math.Abs(wantR[i]-st.Rotation[i]) > 1e-12 {
					t.Fatalf("orientation %v, want %v", st.Rotation, wantR)
				}
			}
		})
		t.Run(name+"/gait-and-noise", func(t *testing.T) {
			f, err := NewWrenchEstimator(baseStepper{gravity}, baseN, 1, base, cfg)
			if err != nil {
				t.Fatal(err)
			}
			const sigma, amp, period = 0.3, 1.0, 25 // N·s per step
			rng := rand.New(rand.NewPCG(5, 6))
			R, heading := wrenchTruth(t, f, baseStepper{gravity}, W, dt, 400, func(k int, d []float64) {
				for j := range d {
					d[j] = amp*math.Sin(2*math.Pi*float64(k)/period+float64(j)) + sigma*rng.NormFloat64()
				}
			})
			st := f.State()
			noise := 4 * sigma / math.Sqrt(float64(cfg.Window)) / dt
			var got [6]float64
			for j, v := range st.Impulse {
				got[j] = v / dt
			}
			t.Logf("estimate %.4g N, N·m (gates %.3f)", got, st.Gate)
			for j, w := range inFrame(W, R, heading, gravity) {
				got := st.Impulse[j] / dt
				if tol := 0.05*math.Abs(w) + noise; math.Abs(got-w) > tol {
					t.Errorf("component %d: %.4g, want %.4g within %.3g (mean %.4g, se %.3g, gate %.3f)", j, got, w, tol, st.Mean[j]/dt, st.SE[j]/dt, st.Gate[j])
				}
			}
		})
	}
}

// TestWrenchEstimatorGatesPeriodicResiduals: without an external wrench,
// residuals that average out over the gait (periods of 37 samples, which
// do not divide the blocks of 25) and white noise leave an estimate held
// back by the gate: every component within 0.5% of the residuals'
// amplitude, while the ungated mean is several times that.
func TestWrenchEstimatorGatesPeriodicResiduals(t *testing.T) {
	const dt, amp = 0.01, 3.0
	cfg := WrenchEstimate{Window: 200, Gate: 3, Decay: 1, Blocks: 8}
	f, err := NewWrenchEstimator(baseStepper{}, baseN, 1, WrenchBaseSE3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var worstMean, worstEst float64
	wrenchTruth(t, f, baseStepper{}, [6]float64{}, dt, 1200, func(k int, d []float64) {
		for j := range d {
			d[j] = amp*math.Sin(2*math.Pi*float64(k)/37+float64(j)) + 0.3*rng.NormFloat64()
		}
		if k > cfg.Window {
			st := f.State()
			for j := range 6 {
				worstMean = max(worstMean, math.Abs(st.Mean[j]))
				worstEst = max(worstEst, math.Abs(st.Impulse[j]))
			}
		}
	})
	if worstEst > 0.005*amp {
		t.Errorf("largest applied component %.3g N·s per step, want ≤ %.3g (ungated mean up to %.3g)", worstEst, 0.005*amp, worstMean)
	}
	t.Logf("ungated mean up to %.3g, applied up to %.3g N·s per step (residual amplitude %g)", worstMean, worstEst, amp)
}

// TestWrenchCorrectedStepIsTranslation: on a compiled quadruped model the
// corrected step is the model's step plus one vector on the base momenta,
// the same at every state: the corrected map's Jacobian is the model's
// (checked by finite differences), so ε_J is unchanged. Without an
// estimate the rollout is the model's; Observe and Rollout allocate
// nothing.
func TestWrenchCorrectedStepIsTranslation(t *testing.T) {
	m, plan, state := quadrupedCase(t, 8, 9)
	l := m.Layout
	n2, ne := l.StateDim(), l.PortDim()
	rng := rand.New(rand.NewPCG(8, 10))
	e := randVec(rng, ne, 0.1)
	r := plan.NewRoller()
	cfg := WrenchEstimate{Window: 16, Gate: 3, Decay: 0.95, Blocks: 4}
	f, err := NewWrenchEstimator(r, l.N, ne, WrenchBaseSE3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ports := append(append(append([]float64(nil), e...), e...), e...)
	plain, corrected := make([]float64, 3*n2), make([]float64, 3*n2)
	x := state()
	_ = r.Rollout(x, ports, 3, plain)
	if err := f.Rollout(x, ports, 3, corrected); err != nil {
		t.Fatal(err)
	}
	for i := range plain {
		if math.Abs(plain[i]-corrected[i]) > 1e-12*math.Max(1, math.Abs(plain[i])) {
			t.Fatalf("without an estimate x[%d] = %v corrected, %v the model's", i, corrected[i], plain[i])
		}
	}
	// a history whose residual on the base momenta is a constant c
	c := []float64{0.3, -0.2, -1, 0.05, 0.1, -0.02}
	next := make([]float64, n2)
	for range 40 {
		_ = r.Rollout(x, e, 1, next)
		for j := range c {
			next[l.N+j] += c[j]
		}
		for i := range 6 {
			next[i] = 0
		}
		if err := f.Observe(x, e); err != nil {
			t.Fatal(err)
		}
		x, next = next, x
	}
	var d [6]float64
	f.Translation(&d)
	if d == [6]float64{} {
		t.Fatal("no estimate")
	}
	// the corrected step minus the model's is d on the base momenta, at
	// every state
	step, model := make([]float64, n2), make([]float64, n2)
	for range 5 {
		x0 := state()
		_ = r.Rollout(x0, e, 1, model)
		if err := f.Rollout(x0, e, 1, step); err != nil {
			t.Fatal(err)
		}
		for i := range step {
			want := model[i]
			if i >= l.N && i < l.N+6 {
				want += d[i-l.N]
			}
			if step[i] != want {
				t.Fatalf("x[%d] = %v, want the model's %v plus %v", i, step[i], model[i], want-model[i])
			}
		}
	}
	// finite-difference Jacobians of the corrected and the model's step
	x0 := state()
	const h = 1e-6
	xp, xm := append([]float64(nil), x0...), append([]float64(nil), x0...)
	sp, sm, mp, mm := make([]float64, n2), make([]float64, n2), make([]float64, n2), make([]float64, n2)
	for j := range n2 {
		copy(xp, x0)
		copy(xm, x0)
		xp[j] += h
		xm[j] -= h
		_ = f.Rollout(xp, e, 1, sp)
		_ = f.Rollout(xm, e, 1, sm)
		_ = r.Rollout(xp, e, 1, mp)
		_ = r.Rollout(xm, e, 1, mm)
		for i := range n2 {
			jc, jm := (sp[i]-sm[i])/(2*h), (mp[i]-mm[i])/(2*h)
			if math.Abs(jc-jm) > 1e-6*math.Max(1, math.Abs(jm)) {
				t.Fatalf("∂x̂[%d]/∂x[%d]: corrected %v, model %v", i, j, jc, jm)
			}
		}
	}
	if a := testing.AllocsPerRun(20, func() {
		_ = f.Observe(x, e)
		_ = f.Rollout(x, ports, 3, corrected)
	}); a != 0 {
		t.Errorf("Observe and Rollout allocate %v times per step", a)
	}
}

// TestWrenchEstimateSettings: settings out of range are refused naming the
// setting, its range and the value; a bad sample resets the history.
func TestWrenchEstimateSettings(t *testing.T) {
	var def WrenchEstimate
	def.Defaults()
	if def != (WrenchEstimate{Window: 400, Gate: 6, Decay: 1, Blocks: 8}) {
		t.Errorf("defaults %+v", def)
	}
	for _, tc := range []struct {
		cfg  WrenchEstimate
		want string
	}{
		{WrenchEstimate{Window: 4, Gate: 3, Decay: 1, Blocks: 8}, "window 4: want 8 (the blocks) … 100000"},
		{WrenchEstimate{Window: 400, Gate: 3, Decay: 1, Blocks: 1}, "blocks 1: want 2 … 1000"},
		{WrenchEstimate{Window: 400, Gate: -1, Decay: 1, Blocks: 8}, "gate -1: want"},
		{WrenchEstimate{Window: 400, Gate: math.NaN(), Decay: 1, Blocks: 8}, "gate NaN: want"},
		{WrenchEstimate{Window: 400, Gate: 3, Decay: 1.5, Blocks: 8}, "decay 1.5: want a factor in [0, 1]"},
	} {
		err := tc.cfg.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewWrenchEstimator(baseStepper{}, 2, 1, WrenchBaseSE3, def); err == nil {
		t.Error("n = 2: no error")
	}
	if _, err := NewWrenchEstimator(baseStepper{}, baseN, 1, 0, def); err == nil {
		t.Error("no base kind: no error")
	}
	f, err := NewWrenchEstimator(baseStepper{}, baseN, 1, WrenchBaseSE3, WrenchEstimate{Window: 8, Gate: 3, Decay: 1, Blocks: 2})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 2*baseN)
	for range 5 {
		if err := f.Observe(x, []float64{0}); err != nil {
			t.Fatal(err)
		}
	}
	if f.Residuals() != 4 {
		t.Fatalf("%d residuals", f.Residuals())
	}
	x[baseN] = math.Inf(1)
	if err := f.Observe(x, []float64{0}); !errors.Is(err, ErrNotFinite) || f.Residuals() != 0 {
		t.Errorf("infinite sample: %v, %d residuals after", err, f.Residuals())
	}
	if err := f.Observe(x[:3], []float64{0}); !errors.Is(err, ErrLayout) {
		t.Errorf("short sample: %v", err)
	}
	var _ OffsetEstimator = f
	var _ OffsetEstimator = (*ForceEstimator)(nil)
}
