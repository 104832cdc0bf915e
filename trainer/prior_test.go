package trainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer/mlp"
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
		checkComposedTraining(t, kind, c, r, x0, ports, out, H)
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

// TestComposedSeqGradFD checks the K-step loss gradient of GRB and the
// MLP behind the pendulum's implicit-midpoint priors (with and without
// friction) against central differences: back-propagation through the
// learned map and the prior's adjoint (mechanics.PendulumPrior.Adjoint:
// the midpoint step's and the friction half steps' Jacobians).
func TestComposedSeqGradFD(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 0, 5)
	for _, kind := range []mechanics.PriorKind{mechanics.PriorMidpointFriction, mechanics.PriorMidpoint} {
		grb, err := NewComposed(symplecticLearner(t, ds, predictor.KindGRB, 6), testPrior(t, kind))
		if err != nil {
			t.Fatal(err)
		}
		ml, err := NewComposedMLP(ds, []int{7, 6}, LossWeights{Q: 10, P: 5, StepDecay: 1}, 4, testPrior(t, kind))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			l    *Composed
			K    int
		}{{"grb", grb, 4}, {"mlp", ml, 5}} {
			t.Run(string(kind)+" "+c.name, func(t *testing.T) {
				if err := c.l.CheckConfig(Config{RolloutSteps: c.K}); err != nil {
					t.Fatal(err)
				}
				checkLossGradFD(t, c.l, seqBatch(ds, c.K), 1e-6)
			})
		}
	}
}

// TestComposedRefusals checks what a composed model refuses: multi-step
// training through a prior without a tangent map (the DOP853 kinds), a
// model that is not a double pendulum's, and a prior of another step than
// the model's.
func TestComposedRefusals(t *testing.T) {
	ds := toyDataset(t, 2, 40, 2, 0, 3)
	c, _, _, _ := composedLearner(t, mechanics.PriorDOP853)
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
	roll := func(f RollerFactory) []float64 { return rollPendulum(t, f, x0, ports, H) }
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

// composedMLP is the MLP baseline behind a prior on a toy pendulum
// dataset, with the first episode's initial state, 30 steps of ports and
// the dataset.
func composedMLP(t testing.TB, kind mechanics.PriorKind) (*Composed, []float64, []float64, *dataset.Dataset) {
	t.Helper()
	ds := toyDataset(t, 2, 40, 2, 0, 3)
	c, err := NewComposedMLP(ds, []int{7, 6}, LossWeights{Q: 10, P: 5}, 4, testPrior(t, kind))
	if err != nil {
		t.Fatal(err)
	}
	ep := ds.Episodes[0]
	return c, ep.X[:4], ep.E[:30*2], ds
}

// damp scales the composed model's parameters by 0.01, so that the
// untrained network's corrections (of the toy data's scale, which the
// pendulum prior does not model) keep a 30-step rollout where the prior's
// implicit step converges.
func damp(t testing.TB, c *Composed) {
	t.Helper()
	theta := c.Params()
	for i := range theta {
		theta[i] *= 0.01
	}
	if err := c.SetParams(theta); err != nil {
		t.Fatal(err)
	}
}

// TestComposedMLPRolloutParity checks the MLP behind the prior, x' =
// MLP(Φ₀(x, u), u) (the "physics + residual" hybrid): a rollout equals
// the prior and the network applied by hand step by step, bit for bit;
// the training path's one-step predictions equal the rollout's first step
// (to 1e-12: the batched forward pass sums apart); a rollout allocates
// nothing; the network starts from NewMLP's parameters for the seed, and
// its output scale is the spread of what the prior leaves, x_{t+1} −
// Φ₀(x_t, e_t), not of x_{t+1} − x_t.
func TestComposedMLPRolloutParity(t *testing.T) {
	for _, kind := range []mechanics.PriorKind{mechanics.PriorMidpoint, mechanics.PriorMidpointFriction} {
		c, x0, ports, ds := composedMLP(t, kind)
		m, ok := c.Inner.(*MLP)
		if !ok || c.Model() != nil {
			t.Fatalf("inner %T, Model %v: want the MLP and no symplectic model", c.Inner, c.Model())
		}
		plain, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 10, P: 5}, 4)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(plain.Params(), c.Params()) {
			t.Errorf("%s: initial parameters differ from NewMLP's for the same seed", kind)
		}
		damp(t, c)
		const H = 30
		r, err := c.Rollers()()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, H*4)
		if err := r.Rollout(x0, ports, H, out); err != nil {
			t.Fatal(err)
		}
		prior := testPrior(t, kind)
		x := [4]float64(x0)
		next := make([]float64, 4)
		for k := range H {
			y, err := prior.Step(x, [2]float64{ports[2*k], ports[2*k+1]})
			if err != nil {
				t.Fatal(err)
			}
			m.Net.Step(y[:], ports[2*k:2*k+2], next)
			if [4]float64(next) != [4]float64(out[4*k:4*k+4]) {
				t.Fatalf("%s step %d: rollout %v, by hand %v", kind, k+1, out[4*k:4*k+4], next)
			}
			x = [4]float64(next)
		}
		checkComposedTraining(t, kind, c, r, x0, ports, out, H)
		// the residual's spread per channel, as mlp.ComputeNorm takes it
		xs, e, xn := transitionArrays(ds)
		xt := make([]float64, len(xs))
		if err := applyPrior(prior, xs, e, len(xs)/4, 4, 2, xt); err != nil {
			t.Fatal(err)
		}
		rows := float64(len(xs) / 4)
		for j := range 4 {
			var mu, ss float64
			for r := 0; r < len(xs); r += 4 {
				mu += xn[r+j] - xt[r+j]
			}
			mu /= rows
			for r := 0; r < len(xs); r += 4 {
				d := xn[r+j] - xt[r+j] - mu
				ss += d * d
			}
			want := math.Sqrt(ss / rows)
			if got := m.Net.Norm().SDelta[j]; math.Abs(got-want) > 1e-12*want || got == plain.Net.Norm().SDelta[j] {
				t.Errorf("%s: channel %d: output scale %v, want the residual's %v (the raw transitions' %v)", kind, j, got, want, plain.Net.Norm().SDelta[j])
			}
		}
	}
}

// TestComposedMLPLossGradFD checks the composed MLP's loss gradient
// against finite differences, with the prior in front. The toy data are
// not the pendulum the prior models, so the loss is large (about 700) and
// the differences take a step of 1e-4 to stay clear of rounding (the
// gradient agrees to about 2e-8 there).
func TestComposedMLPLossGradFD(t *testing.T) {
	c, _, _, ds := composedMLP(t, mechanics.PriorMidpointFriction)
	checkLossGradFD(t, c, fullBatch(ds), 1e-4)
}

// TestComposedMLPModelFile checks that the MLP's file records its prior
// (meta prior): OpenModel rebuilds it and rolls out the same bits,
// LoadMLP (the network alone) refuses the file, a changed prior fails
// the checksum, and the training's settings name the prior.
func TestComposedMLPModelFile(t *testing.T) {
	c, x0, ports, _ := composedMLP(t, mechanics.PriorMidpointFriction)
	damp(t, c)
	m := c.Inner.(*MLP)
	path := filepath.Join(t.TempDir(), "mlp.json")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	sv, err := OpenModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if sv.Kind != "mlp" || sv.Prior == nil || *sv.Prior != c.Prior.Spec() || !sv.ChecksumVerified {
		t.Fatalf("opened %s as kind %s, prior %+v (want %+v), checksum verified %v", path, sv.Kind, sv.Prior, c.Prior.Spec(), sv.ChecksumVerified)
	}
	const H = 30
	roll := func(f RollerFactory) []float64 { return rollPendulum(t, f, x0, ports, H) }
	want, got := roll(c.Rollers()), roll(sv.Rollers)
	if !slices.Equal(want, got) {
		t.Fatalf("saved model %v, trained %v", got[:4], want[:4])
	}
	if alone := roll((&MLP{Net: sv.Net}).Rollers()); alone[4*H-1] == want[4*H-1] {
		t.Error("the network alone rolls out as the composed model: the prior does nothing")
	}
	if _, err := LoadMLP(path); !errors.Is(err, ErrPriorUnsupported) {
		t.Errorf("LoadMLP of a composed MLP: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b2 := fmt.Sprintf(`"B2":%v`, c.Prior.Spec().Params.B2)
	if !bytes.Contains(raw, []byte(b2)) {
		t.Fatalf("the file does not record the prior's %s", b2)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, bytes.Replace(raw, []byte(b2), []byte(`"B2":0.5`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenModel(bad); !errors.Is(err, ErrMLPChecksum) {
		t.Errorf("a changed prior: %v", err)
	}
	s := joinSettings(learnerSettings(c))
	if !strings.Contains(s, "hidden layers [7 6]") || !strings.Contains(s, "physics prior {") {
		t.Errorf("settings %q", s)
	}
}

// TestComposedMLPRefusals checks where an MLP cannot sit behind the
// pendulum prior: fewer than 2 ports, another state size, another
// sampling period, K-step training through a prior without an adjoint
// (DOP853), and a broken prior record in a file.
func TestComposedMLPRefusals(t *testing.T) {
	one := toyDataset(t, 2, 40, 1, 0, 3)
	if _, err := NewComposedMLP(one, []int{5}, LossWeights{Q: 1, P: 1}, 1, testPrior(t, mechanics.PriorMidpoint)); err == nil || !strings.Contains(err.Error(), "at least 2 ports") {
		t.Errorf("1 port: %v", err)
	}
	big := &MLP{Net: mlp.New(mlp.Config{StateDim: 6, PortDim: 3, Hidden: []int{4}}, rand.New(rand.NewPCG(1, 1))), Meta: &MLPMeta{N: 3, NU: 3, Dt: 0.01}}
	if _, err := NewComposed(big, testPrior(t, mechanics.PriorMidpoint)); err == nil || !strings.Contains(err.Error(), "n = 2") {
		t.Errorf("n = 3: %v", err)
	}
	c, _, _, ds := composedMLP(t, mechanics.PriorMidpoint)
	slow := &MLP{Net: c.Inner.(*MLP).Net, Meta: &MLPMeta{N: 2, NU: 2, Dt: 0.02}}
	if _, err := NewComposed(slow, testPrior(t, mechanics.PriorMidpoint)); err == nil || !strings.Contains(err.Error(), "sampling period") {
		t.Errorf("dt 0.02 against 0.01: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Epochs, cfg.Workers = 2, 1
	cfg.RolloutSteps, cfg.RolloutFrom, cfg.RolloutRamp, cfg.RolloutBatch = 5, 1, 1, 4
	dop, _, _, _ := composedMLP(t, mechanics.PriorDOP853)
	if _, err := Train(context.Background(), dop, ds, nil, cfg); err == nil || !strings.Contains(err.Error(), "tangent map") {
		t.Errorf("multi-step training through DOP853: %v", err)
	}
	m := c.Inner.(*MLP)
	m.Meta.Prior.Dt = 0.02
	path := filepath.Join(t.TempDir(), "dt.json")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenModel(path); err == nil || !strings.Contains(err.Error(), "meta prior") {
		t.Errorf("a prior of another step than the file's dt: %v", err)
	}
}

// checkComposedTraining: the training path of composed model c predicts
// for one row (x0 under the first ports) what its roller r's rollout out
// of H steps holds first, and r's rollout allocates nothing.
func checkComposedTraining(t *testing.T, kind mechanics.PriorKind, c *Composed, r Roller, x0, ports, out []float64, H int) {
	t.Helper()
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

// rollPendulum rolls a fresh roller of f out from x0 (the pendulum's 4
// states) under ports for H steps.
func rollPendulum(t *testing.T, f RollerFactory, x0, ports []float64, H int) []float64 {
	t.Helper()
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
