package trainer

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
)

// testPrior is a pendulum prior with the real pendulum's identified
// model 2.0 (inertias about the centres of mass).
func testPrior(t testing.TB, kind mechanics.PriorKind) *mechanics.PendulumPrior {
	t.Helper()
	pp := mechanics.PendulumParams{
		M1: 0.7586436245588385, M2: 0.33693688400430855, L1: 0.2, L2: 0.3, R1: 0.2, R2: 0.4684380078598044,
		I1: 0.042111626356002546 - 0.7586436245588385*0.04, I2: 0.0510352807011669 - 0.33693688400430855*0.4684380078598044*0.4684380078598044,
		B1: 0.003690870343196907, B2: 0.0006450852127932183, Cf1: 0.17467189894350432, Cf2: 0.10999997753612206,
		G: 9.81, Ir: 6.287203962819607e-05, Gr: 6,
	}
	p, err := mechanics.NewPendulumPrior(kind, pp, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func composedLearner(t testing.TB, kind mechanics.PriorKind) (*Composed, []float64, []float64, []float64) {
	t.Helper()
	ds := toyDataset(t, 2, 40, 2, 0, 3)
	c, err := NewComposed(symplecticLearner(t, ds, predictor.KindGRB, 4), testPrior(t, kind))
	if err != nil {
		t.Fatal(err)
	}
	ep := ds.Episodes[0]
	return c, ep.X[:4], ep.E[:30*2], ep.X[4 : 31*4]
}

// TestComposedRolloutParity checks the composed model x' = CaLiSym(Φ₀(x,
// u), u): a rollout equals the prior and the learned map applied by hand
// step by step, the training path's one-step predictions equal the
// rollout's first step (to 1e-12: the training path normalises apart),
// and a rollout allocates nothing.
func TestComposedRolloutParity(t *testing.T) {
	for _, kind := range []mechanics.PriorKind{mechanics.PriorMidpoint, mechanics.PriorMidpointFriction} {
		c, x0, ports, _ := composedLearner(t, kind)
		const H = 30
		r, err := c.Rollers()()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, H*4)
		if err := r.Rollout(x0, ports, H, out); err != nil {
			t.Fatal(err)
		}
		plan, err := c.Model().Compile()
		if err != nil {
			t.Fatal(err)
		}
		inner, prior := plan.NewRoller(), testPrior(t, kind)
		x := [4]float64(x0)
		for k := range H {
			y, err := prior.Step(x, [2]float64{ports[2*k], ports[2*k+1]})
			if err != nil {
				t.Fatal(err)
			}
			next := make([]float64, 4)
			if err := inner.Rollout(y[:], ports[2*k:2*k+2], 1, next); err != nil {
				t.Fatal(err)
			}
			if [4]float64(next) != [4]float64(out[4*k:4*k+4]) {
				t.Fatalf("%s step %d: rollout %v, by hand %v", kind, k+1, out[4*k:4*k+4], next)
			}
			x = [4]float64(next)
		}
		// the training path: one row, its prediction
		w := c.NewWorker(1)
		pred := make([]float64, 4)
		grad := make([]float64, c.NumParams())
		w.LossGrad(Batch{N: 1, X: x0, E: ports[:2], XNext: out[:4], W: []float64{1}}, grad, pred)
		for i := range 4 {
			if math.Abs(pred[i]-out[i]) > 1e-12*max(1, math.Abs(out[i])) {
				t.Fatalf("%s: training prediction %v, rollout %v", kind, pred, out[:4])
			}
		}
		if a := testing.AllocsPerRun(5, func() { _ = r.Rollout(x0, ports, H, out) }); a != 0 {
			t.Errorf("%s: %v allocations a rollout", kind, a)
		}
	}
}

// TestComposedLossGradFD checks the composed model's loss gradient
// against central differences: the prior's states are constants of the
// learned map's parameters.
func TestComposedLossGradFD(t *testing.T) {
	ds := toyDataset(t, 2, 30, 2, 0, 5)
	c, err := NewComposed(symplecticLearner(t, ds, predictor.KindGRB, 6), testPrior(t, mechanics.PriorMidpointFriction))
	if err != nil {
		t.Fatal(err)
	}
	checkLossGradFD(t, c, fullBatch(ds), 1e-6)
}

// TestComposedRefusals checks what a composed model refuses: multi-step
// training (no tangent map of the prior), a model that is not a double
// pendulum's, and a prior of another step than the model's.
func TestComposedRefusals(t *testing.T) {
	ds := toyDataset(t, 2, 40, 2, 0, 3)
	c, _, _, _ := composedLearner(t, mechanics.PriorMidpoint)
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Workers = 2, 1
	cfg.RolloutSteps, cfg.RolloutFrom, cfg.RolloutRamp, cfg.RolloutBatch = 5, 1, 1, 4
	_, err := Train(context.Background(), c, ds, nil, cfg)
	if err == nil || !strings.Contains(err.Error(), "tangent map") || !strings.Contains(err.Error(), "rollout_steps 5") {
		t.Errorf("multi-step training: error %v", err)
	}
	ds3 := toyDataset(t, 1, 20, 3, 0, 3)
	big := symplecticLearner(t, ds3, predictor.KindGR, 1)
	big.Model().Layout.N = 3
	if _, err := NewComposed(big, testPrior(t, mechanics.PriorMidpoint)); err == nil || !strings.Contains(err.Error(), "n = 2") {
		t.Errorf("n = 3: error %v", err)
	}
	s := symplecticLearner(t, ds, predictor.KindGR, 1)
	s.Model().Meta.Dt = 0.02
	if _, err := NewComposed(s, testPrior(t, mechanics.PriorMidpoint)); err == nil || !strings.Contains(err.Error(), "sampling period") {
		t.Errorf("dt 0.02 against 0.01: error %v", err)
	}
}

// TestComposedModelFile checks that a composed model's file describes it:
// OpenModel rebuilds the prior from the file and rolls out the same bits,
// the file without its prior is another model, and a corrupted prior
// record is refused.
func TestComposedModelFile(t *testing.T) {
	c, x0, ports, _ := composedLearner(t, mechanics.PriorMidpointFriction)
	path := filepath.Join(t.TempDir(), "composed.safetensors")
	if err := c.Model().Save(path); err != nil {
		t.Fatal(err)
	}
	sv, err := OpenModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if sv.Prior == nil || *sv.Prior != c.Prior.Spec() {
		t.Fatalf("prior read back %+v, want %+v", sv.Prior, c.Prior.Spec())
	}
	const H = 30
	roll := func(f RollerFactory) []float64 {
		r, err := f()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, H*4)
		if err := r.Rollout(x0, ports, H, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := roll(c.Rollers()), roll(sv.Rollers)
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("value %d: saved model %v, trained %v", i, got[i], want[i])
		}
	}
	alone := roll(planRollers(sv.Model))
	if alone[4*H-1] == want[4*H-1] {
		t.Error("the learned map alone rolls out as the composed model: the prior does nothing")
	}
	// a file whose prior record is broken is refused, naming the key
	c.Model().Meta.Provenance[PriorKey] = `{"kind":"pendulum_euler","dt":0.01}`
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := c.Model().Save(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenModel(bad); err == nil || !strings.Contains(err.Error(), PriorKey) {
		t.Errorf("broken prior record: error %v", err)
	}
	if !errors.Is(ErrPriorUnsupported, ErrPriorUnsupported) || !strings.Contains(ErrPriorUnsupported.Error(), PriorKey) {
		t.Error(ErrPriorUnsupported)
	}
}
