package trainer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// seqBatch cuts every episode of ds into sequences of K steps from sample 0.
func seqBatch(ds *dataset.Dataset, K int) Batch {
	nx, ne := ds.StateDim(), ds.PortDim()
	var b Batch
	b.K = K
	for _, ep := range ds.Episodes {
		for t := 0; t+K < ep.Len; t += K {
			b.X = append(b.X, ep.X[t*nx:(t+1)*nx]...)
			b.E = append(b.E, ep.E[t*ne:(t+K)*ne]...)
			b.XNext = append(b.XNext, ep.X[(t+1)*nx:(t+1+K)*nx]...)
			b.W = append(b.W, 1+0.1*float64(b.N%3))
			b.N++
		}
	}
	return b
}

// TestSeqGradientFiniteDifference checks the gradient of the K-step loss
// (back-propagation through the gauge-fixed rollout: map, projection,
// re-embedding) against central differences for GR, GRB and the MLP, with
// loss weights in normalised and in physical units.
func TestSeqGradientFiniteDifference(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 10, P: 5, Units: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	grb := symplecticLearner(t, ds, predictor.KindGRB, 2)
	grb.W.Units = 0.5
	cases := []struct {
		name string
		l    Learner
		K    int
		// h is the relative finite-difference step: GRB's cubic spline
		// ridge has jumps in its third derivative at the knots, which a
		// K-step rollout crosses within larger steps (the differences
		// then converge only linearly in h, to the analytic value).
		h float64
	}{
		{"gr K=4", symplecticLearner(t, ds, predictor.KindGR, 1), 4, 1e-4},
		{"gr K=2", symplecticLearner(t, ds, predictor.KindGR, 5), 2, 1e-4},
		{"grb K=3 units 0.5", grb, 3, 1e-6},
		{"mlp K=5 units 1", mlpL, 5, 1e-4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := seqBatch(ds, c.K)
			w := c.l.NewWorker(b.N)
			theta := c.l.Params()
			grad := make([]float64, len(theta))
			w.LossGrad(b, grad, nil)
			scratch := make([]float64, len(theta))
			loss := func() float64 {
				if err := c.l.SetParams(theta); err != nil {
					t.Fatal(err)
				}
				return w.LossGrad(b, scratch, nil)
			}
			var gmax float64
			for _, g := range grad {
				gmax = max(gmax, math.Abs(g))
			}
			rng := rand.New(rand.NewPCG(9, 9))
			worst := 0.0
			for range 60 {
				i := rng.IntN(len(theta))
				h := c.h * math.Max(1, math.Abs(theta[i]))
				orig := theta[i]
				f := func(s float64) float64 { theta[i] = orig + s*h; return loss() }
				fd := (-f(2) + 8*f(1) - 8*f(-1) + f(-2)) / (12 * h)
				theta[i] = orig
				if err := c.l.SetParams(theta); err != nil {
					t.Fatal(err)
				}
				rel := math.Abs(fd-grad[i]) / math.Max(math.Abs(fd), 1e-3*gmax)
				worst = max(worst, rel)
				if rel > 1e-6 {
					t.Errorf("θ[%d]: analytic %.12g, finite differences %.12g (rel %.2e)", i, grad[i], fd, rel)
				}
			}
			t.Logf("worst relative error %.2e over 60 parameters", worst)
		})
	}
}

// TestSeqLossIsRolloutError checks the K-step forward pass against the
// inference rollout: with only the state terms, in physical units, the
// K-step loss is the weighted mean squared error of the compiled model's
// (or the MLP's) rollout from each sequence's first state.
func TestSeqLossIsRolloutError(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	const K = 6
	b := seqBatch(ds, K)
	sym := symplecticLearner(t, ds, predictor.KindGR, 1)
	sym.W = LossWeights{Q: 1, P: 1, Units: 1}
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 1, P: 1, Units: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	nx, ne, n := ds.StateDim(), ds.PortDim(), ds.N
	for _, c := range []struct {
		name    string
		l       Learner
		rollers RollerFactory
		scale   []float64
	}{
		{"gr", sym, sym.Rollers(), sym.Model().Norm.Scale[:nx]},
		{"mlp", mlpL, mlpL.Rollers(), mlpL.Net.Norm().SX},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.l.NewWorker(b.N).LossGrad(b, make([]float64, c.l.NumParams()), nil)
			// the weight of a physical squared error: 1/n over the
			// group's mean variance
			var mq, mp float64
			for i := range n {
				mq += c.scale[i] * c.scale[i] / float64(n)
				mp += c.scale[n+i] * c.scale[n+i] / float64(n)
			}
			r, err := c.rollers()
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float64, K*nx)
			var want float64
			for row := range b.N {
				if err := r.Rollout(b.X[row*nx:(row+1)*nx], b.E[row*K*ne:(row+1)*K*ne], K, out); err != nil {
					t.Fatal(err)
				}
				for s := range K {
					for j := range nx {
						e := out[s*nx+j] - b.XNext[(row*K+s)*nx+j]
						m := mq
						if j >= n {
							m = mp
						}
						want += b.W[row] / K / float64(n) / m * e * e
					}
				}
			}
			if rel := math.Abs(got-want) / want; rel > 1e-12 {
				t.Errorf("K-step loss %.15g, rollout error %.15g (rel %.1e)", got, want, rel)
			}
		})
	}
}

// TestSeqAllocationFree checks that a K-step loss and gradient allocate
// nothing once the worker has grown its buffers.
func TestSeqAllocationFree(t *testing.T) {
	ds := toyDataset(t, 2, 25, 2, 1, 3)
	b := seqBatch(ds, 4)
	mlpL, err := NewMLP(ds, []int{7, 6}, LossWeights{Q: 1, P: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Learner{symplecticLearner(t, ds, predictor.KindGR, 1), mlpL} {
		w := l.NewWorker(b.N)
		grad := make([]float64, l.NumParams())
		w.LossGrad(b, grad, nil)
		if a := testing.AllocsPerRun(5, func() { w.LossGrad(b, grad, nil) }); a != 0 {
			t.Errorf("%s: %v allocations per K-step batch", l.Name(), a)
		}
	}
}
