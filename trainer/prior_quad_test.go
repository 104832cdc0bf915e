package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
)

// quadParams are the Crazyflie's constants (params/crazyflie*.yaml).
var quadParams = mechanics.QuadrotorParams{Mass: 0.045, Inertia: [3]float64{2.3951e-5, 2.3951e-5, 3.2347e-5}, Gravity: 9.81, Substeps: 1}

func quadPrior(t testing.TB) *mechanics.QuadrotorPrior {
	t.Helper()
	p, err := mechanics.NewQuadrotorPrior(quadParams, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// quadDataset simulates a Crazyflie-like vehicle, n = 6 (the gravity-aware
// floating base) with 12 ports (the body wrench and a second wrench the
// prior does not read), by the prior plus what it leaves out: a linear
// drag on the body momenta and a lag of the thrust.
func quadDataset(t testing.TB, episodes, length int, seed uint64) *dataset.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	prior := quadPrior(t)
	const n, nu = 6, 12
	ds := &dataset.Dataset{Meta: dataset.Meta{FormatVersion: 1, N: n, NU: nu, Dt: 0.01, WindowLen: 20, Stride: 5}}
	m, g := quadParams.Mass, quadParams.Gravity
	off := 0
	for range episodes {
		x := make([]float64, length*2*n)
		u := make([]float64, length*nu)
		s := make([]float64, 2*n)
		for i := range 3 {
			s[3+i] = 0.2 * rng.NormFloat64()
			s[6+i] = m * 0.5 * rng.NormFloat64()
			s[9+i] = quadParams.Inertia[i] * rng.NormFloat64()
		}
		next := make([]float64, 2*n)
		for k := range length {
			copy(x[k*2*n:], s)
			e := u[k*nu : (k+1)*nu]
			e[0], e[1], e[2] = 0.005*rng.NormFloat64(), 0.005*rng.NormFloat64(), m*g*(1+0.2*math.Sin(0.3*float64(k)))
			e[3], e[4], e[5] = 2e-5*rng.NormFloat64(), 2e-5*rng.NormFloat64(), 1e-6*rng.NormFloat64()
			for i := range 6 {
				e[6+i] = e[i] * (0.9 + 0.05*rng.Float64())
			}
			if err := prior.StepTo(next, s, e); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				next[6+i] -= 0.03 * s[6+i]       // drag
				next[9+i] -= 0.02 * s[9+i]       // rotor damping
				next[8] -= 0.001 * (e[2] - e[8]) // thrust lag
			}
			copy(s, next)
		}
		ds.Episodes = append(ds.Episodes, dataset.Episode{Name: "quad", Len: length, Offset: off, X: x, E: u})
		off += length
	}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	return ds
}

// quadLearners returns GR-SympNet and the MLP behind the quadrotor prior.
func quadLearners(t *testing.T, ds *dataset.Dataset, w LossWeights) (*Composed, *Composed) {
	t.Helper()
	sym := symplecticLearner(t, ds, predictor.KindGR, 3)
	sym.W = w
	gr, err := NewComposed(sym, quadPrior(t))
	if err != nil {
		t.Fatal(err)
	}
	mw := w
	mw.Sec, mw.Mu, mw.Fc = 0, 0, 0
	ml, err := NewComposedMLP(ds, []int{9, 7}, mw, 4, quadPrior(t))
	if err != nil {
		t.Fatal(err)
	}
	return gr, ml
}

// TestQuadrotorComposedSeqGradFD checks the K-step loss gradient of
// GR-SympNet and the MLP behind the quadrotor prior against central
// differences: back-propagation through the learned map, the prior's
// adjoint (the Runge–Kutta stages) and the normalisation at every step.
func TestQuadrotorComposedSeqGradFD(t *testing.T) {
	ds := quadDataset(t, 2, 20, 1)
	gr, ml := quadLearners(t, ds, LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Units: 0.5, StepDecay: 1})
	for _, c := range []struct {
		name string
		l    Learner
		K    int
	}{
		{"gr K=1", gr, 1}, {"gr K=4", gr, 4}, {"mlp K=1", ml, 1}, {"mlp K=5", ml, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.l.(*Composed).CheckConfig(Config{RolloutSteps: c.K}); err != nil {
				t.Fatal(err)
			}
			checkLossGradFD(t, c.l, seqBatch(ds, c.K), 1e-4)
		})
	}
}

// TestQuadrotorComposedSeqLossIsRolloutError checks the K-step forward
// pass behind the prior against the composed inference rollout
// (ComposedRollers, what the node serves): with only the state terms in
// physical units the K-step loss is the weighted mean squared error of
// the composed rollout; and that a K-step batch allocates nothing.
func TestQuadrotorComposedSeqLossIsRolloutError(t *testing.T) {
	ds := quadDataset(t, 2, 25, 2)
	const K = 6
	b := seqBatch(ds, K)
	gr, ml := quadLearners(t, ds, LossWeights{Q: 1, P: 1, Units: 1})
	nx, n := ds.StateDim(), ds.N
	for _, c := range []struct {
		name  string
		l     *Composed
		scale []float64
	}{
		{"gr", gr, gr.Model().Norm.Scale[:nx]},
		{"mlp", ml, ml.Inner.(*MLP).Net.Norm().SX},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.l.NewWorker(b.N)
			grad := make([]float64, c.l.NumParams())
			got := w.LossGrad(b, grad, nil)
			want := seqRolloutError(t, b, c.l.Rollers(), c.scale, n)
			if rel := math.Abs(got-want) / want; rel > 1e-12 {
				t.Errorf("K-step loss %.15g, composed rollout error %.15g (rel %.1e)", got, want, rel)
			}
			if a := testing.AllocsPerRun(5, func() { w.LossGrad(b, grad, nil) }); a != 0 {
				t.Errorf("%v allocations per K-step batch", a)
			}
		})
	}
}

// TestQuadrotorComposedTraining trains GR-SympNet behind the quadrotor
// prior with K-step sequences: the rollout error falls below the prior's
// alone (which leaves out the drag and the lag the data have), and a
// pendulum prior without an adjoint (DOP853) still refuses K-step
// training.
func TestQuadrotorComposedTraining(t *testing.T) {
	ds := quadDataset(t, 24, 60, 3)
	val := quadDataset(t, 2, 40, 4)
	gr, _ := quadLearners(t, ds, LossWeights{Q: 1, P: 1, Sec: 0.01, Mu: 0.1})
	gr.Inner.(*Symplectic).T.Init(rand.New(rand.NewPCG(1, 2)), 0.01)
	eval := func(f RollerFactory) float64 {
		t.Helper()
		r, err := Evaluate(context.Background(), f, val, EvalOptions{Horizon: 20, Stride: 5, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.MSE
	}
	physics := eval(func() (Roller, error) { return quadPrior(t), nil })
	before := eval(gr.Rollers())
	cfg := Config{Epochs: 30, BatchSize: 16, LR: 1e-3, Optimizer: "adamw", Schedule: "cosine", Workers: 2, Seed: 1,
		RolloutSteps: 4, RolloutFrom: 0, RolloutBatch: 16}
	if _, err := Train(context.Background(), gr, ds, nil, cfg); err != nil {
		t.Fatal(err)
	}
	after := eval(gr.Rollers())
	t.Logf("AR MSE at 20 steps: physics alone %.4g, composed before %.4g, after K-step training %.4g", physics, before, after)
	if !(after < 0.8*physics) {
		t.Errorf("K-step training behind the prior: AR MSE %.4g, the prior alone %.4g", after, physics)
	}
	pend, err := NewComposed(symplecticLearner(t, toyDataset(t, 1, 10, 2, 0, 1), predictor.KindGR, 1), testPrior(t, mechanics.PriorDOP853))
	if err != nil {
		t.Fatal(err)
	}
	if err := pend.CheckConfig(Config{RolloutSteps: 3}); err == nil || !strings.Contains(err.Error(), "tangent map") {
		t.Errorf("pendulum prior, K = 3: error %v", err)
	}
}

// outOfDomain is the quadrotor prior alone, except that rollouts from a
// state with x[0] above a threshold fail as a composed rollout that runs
// into the prior's singularity does (wrapping mechanics.ErrOutOfDomain),
// or with another error when other is set.
type outOfDomain struct {
	*mechanics.QuadrotorPrior
	above float64
	other bool
}

func (o outOfDomain) Rollout(x0, ports []float64, horizon int, out []float64) error {
	if x0[0] > o.above {
		if o.other {
			return errors.New("a failure that is not the prior's domain")
		}
		return fmt.Errorf("mechanics: composed rollout, step 3: %w: quadrotor prior: pitch 1.5707963 rad is at the Euler angles' singularity (±π/2)", mechanics.ErrOutOfDomain)
	}
	return o.QuadrotorPrior.Rollout(x0, ports, horizon, out)
}

// TestEvaluatePriorOutOfDomain: a rollout that leaves its prior's domain
// counts as a diverged window (the error unbounded), as a non-finite one
// does, instead of failing the evaluation; any other rollout error still
// fails it.
func TestEvaluatePriorOutOfDomain(t *testing.T) {
	ds := quadDataset(t, 4, 60, 3)
	opt := EvalOptions{Horizon: 10, Stride: 5, Workers: 2}
	plain, err := Evaluate(context.Background(), func() (Roller, error) { return quadPrior(t), nil }, ds, opt)
	if err != nil || plain.Diverged != 0 || math.IsInf(plain.MSE, 0) {
		t.Fatalf("the prior alone: %+v, %v", plain, err)
	}
	// the windows starting above the median x fail
	var xs []float64
	for _, ep := range ds.Episodes {
		for k := 0; k+opt.Horizon < ep.Len; k += opt.Stride {
			xs = append(xs, ep.X[k*12])
		}
	}
	slices.Sort(xs)
	median := xs[len(xs)/2]
	res, err := Evaluate(context.Background(), func() (Roller, error) { return outOfDomain{quadPrior(t), median, false}, nil }, ds, opt)
	if err != nil {
		t.Fatalf("a rollout out of the prior's domain failed the evaluation: %v", err)
	}
	if res.Windows != plain.Windows || res.Diverged == 0 || res.Diverged >= res.Windows || !math.IsInf(res.MSE, 1) {
		t.Errorf("%d of %d windows diverged, MSE %v; want some, not all, and an unbounded error", res.Diverged, res.Windows, res.MSE)
	}
	if _, err := Evaluate(context.Background(), func() (Roller, error) { return outOfDomain{quadPrior(t), median, true}, nil }, ds, opt); err == nil || !strings.Contains(err.Error(), "not the prior's domain") {
		t.Errorf("another rollout error: %v", err)
	}
}
