package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/dataset"
)

// walkData is one episode of n samples of a state (q, p) that moves by
// step each sample, plus white noise of standard deviation noise.
func walkData(n int, step, noise float64) *dataset.Dataset {
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 1, Dt: 0.01, Coordinates: []string{"q"}, WindowLen: 2, Stride: 1}}
	rng := rand.New(rand.NewPCG(3, 4))
	ep := dataset.Episode{Name: "walk@0", Len: n, X: make([]float64, 2*n), E: make([]float64, n)}
	for k := range n {
		ep.X[2*k] = float64(k)*step + noise*rng.NormFloat64()
		ep.X[2*k+1] = -float64(k)*step + noise*rng.NormFloat64()
	}
	ds.Episodes = []dataset.Episode{ep}
	return ds
}

// TestTwin: the held state as the model, whose own dynamics keep every
// perturbation as it is. Unperturbed, the twin is its reference exactly;
// an initial perturbation σ leaves σ² at every step; a perturbation σ at
// every step is a random walk, k·σ² at step k; a seed gives the same
// numbers twice and another seed others; bad options are refused.
func TestTwin(t *testing.T) {
	ctx := context.Background()
	ds := walkData(4001, 0.01, 0)
	const sigma = 0.1
	sig := []float64{sigma, sigma}
	zero, err := Twin(ctx, HoldRollers, ds, TwinOptions{Horizon: 20, Stride: 1, Sigma: []float64{0, 0}, EveryStep: true})
	if err != nil || zero.MSE != 0 || zero.Windows != 3981 {
		t.Fatalf("unperturbed twin: %v, MSE %v over %d windows", err, zero.MSE, zero.Windows)
	}
	ini, err := Twin(ctx, HoldRollers, ds, TwinOptions{Horizon: 20, Stride: 1, Sigma: sig, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	every, err := Twin(ctx, HoldRollers, ds, TwinOptions{Horizon: 20, Stride: 1, Sigma: sig, EveryStep: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 10, 20} {
		if got := ini.PerStep[k-1]; math.Abs(got/(sigma*sigma)-1) > 0.1 {
			t.Errorf("initial perturbation: step %d MSE %.4g, want σ² = %.4g", k, got, sigma*sigma)
		}
		if got, want := every.PerStep[k-1], float64(k)*sigma*sigma; math.Abs(got/want-1) > 0.1 {
			t.Errorf("every step: step %d MSE %.4g, want k·σ² = %.4g", k, got, want)
		}
	}
	again, _ := Twin(ctx, HoldRollers, ds, TwinOptions{Horizon: 20, Stride: 1, Sigma: sig, EveryStep: true, Seed: 1})
	other, _ := Twin(ctx, HoldRollers, ds, TwinOptions{Horizon: 20, Stride: 1, Sigma: sig, EveryStep: true, Seed: 2})
	if again.MSE != every.MSE || other.MSE == every.MSE {
		t.Errorf("seed 1 twice: %v, %v; seed 2: %v", every.MSE, again.MSE, other.MSE)
	}
	// TwinSeeds: the seeds' twins side by side, in the seeds' order
	rs, err := TwinSeeds(ctx, HoldRollers, ds, TwinOptions{Horizon: 20, Stride: 1, Sigma: sig, EveryStep: true, Seed: 9}, []uint64{2, 1}, 2)
	if err != nil || len(rs) != 2 || rs[0].MSE != other.MSE || rs[1].MSE != every.MSE {
		t.Errorf("TwinSeeds 2, 1: %v, %d results", err, len(rs))
	}
	if _, err := TwinSeeds(ctx, HoldRollers, ds, TwinOptions{Horizon: 0, Sigma: sig}, []uint64{1, 2}, 2); err == nil {
		t.Error("TwinSeeds accepted horizon 0")
	}
	for _, bad := range []TwinOptions{{Horizon: 10, Sigma: []float64{1}}, {Horizon: 10, Sigma: []float64{0, -1}},
		{Horizon: 10, Sigma: []float64{0, math.Inf(1)}}, {Horizon: 0, Sigma: sig}, {Horizon: 5000, Sigma: sig}} {
		if _, err := Twin(ctx, HoldRollers, ds, bad); err == nil {
			t.Errorf("Twin accepted %+v", bad)
		}
	}
}

// TestOneStepResidual: the held state's one-step residual is the step;
// a steady drift is correlated from step to step (near 1), white noise
// on the states is not (near −0.5: r_k = n_{k+1} − n_k); its root mean
// square is Evaluate's per-coordinate one-step error.
func TestOneStepResidual(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		ds     *dataset.Dataset
		lo, hi float64
	}{
		{"drift", walkData(2001, 0.01, 0), 0.99, 1},
		{"white noise", walkData(20001, 0, 0.1), -0.53, -0.47},
	} {
		rms, ac, err := OneStepResidual(ctx, HoldRollers, c.ds)
		if err != nil {
			t.Fatal(err)
		}
		for j, a := range ac {
			if !(a >= c.lo && a <= c.hi) {
				t.Errorf("%s: coordinate %d: lag-1 autocorrelation %.4f, want in [%g, %g]", c.name, j, a, c.lo, c.hi)
			}
		}
		one, err := Evaluate(ctx, HoldRollers, c.ds, EvalOptions{Horizon: 1, Stride: 1})
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range one.PerCoord {
			if math.Abs(rms[j]*rms[j]-v) > 1e-12*v {
				t.Errorf("%s: coordinate %d: mean square %v, Evaluate's %v", c.name, j, rms[j]*rms[j], v)
			}
		}
	}
	if _, _, err := OneStepResidual(ctx, HoldRollers, walkData(100, 0, 0)); err == nil {
		t.Error("a residual of zeros has no autocorrelation; got none refused")
	}
	if _, _, err := OneStepResidual(ctx, HoldRollers, walkData(1, 0.01, 0)); err == nil {
		t.Error("an episode of one sample has no one-step residual; got none refused")
	}
	// a coordinate predicted exactly has none: NaN, the others theirs
	half := walkData(100, 0.01, 0)
	for k := range 100 {
		half.Episodes[0].X[2*k+1] = 0
	}
	rms, ac, err := OneStepResidual(ctx, HoldRollers, half)
	if err != nil || !(ac[0] > 0.98) || !math.IsNaN(ac[1]) || math.Abs(rms[0]-0.01) > 1e-12 || rms[1] != 0 {
		t.Errorf("drift in q, p constant: rms %v, autocorrelation %v, %v", rms, ac, err)
	}
}
