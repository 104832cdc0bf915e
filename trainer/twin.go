package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/calisym/calisym/dataset"
)

// TwinOptions configures Twin.
type TwinOptions struct {
	// Horizon, Stride and MaxWindows are the evaluation's (EvalOptions).
	Horizon, Stride, MaxWindows int
	// Sigma is the standard deviation of the perturbation of each state
	// coordinate (2n values, in the dataset's units).
	Sigma []float64
	// EveryStep perturbs every predicted state, x̂_{k+1} = Φ(x̂_k) + ε_k
	// from the logged x̂_0 (a model whose every step errs at random by
	// Sigma); otherwise only the initial state is perturbed (a model
	// without error fed a state measured with error Sigma).
	EveryStep bool
	// Seed seeds the perturbations.
	Seed uint64
}

// Twin measures how predictable a model's own dynamics are: from the
// initial state of every evaluation window of ds it rolls the model out
// once as the reference and once perturbed (opt), and scores the perturbed
// rollouts against the reference as Evaluate scores a model
// against the logs (AR MSE, per step, per coordinate, per log file), over
// the windows' logged ports. Where the model stands in for the system's
// dynamics, the result is the error of a model that knows those dynamics
// exactly and errs only by Sigma (at the start, or at every step): what
// errors of that size alone make at each horizon, chaos included.
// Deterministic for a given seed.
func Twin(ctx context.Context, newRoller RollerFactory, ds *dataset.Dataset, opt TwinOptions) (EvalResult, error) {
	H, nx, ne := opt.Horizon, ds.StateDim(), ds.PortDim()
	if H < 1 {
		return EvalResult{}, fmt.Errorf("trainer: twin horizon %d < 1", H)
	}
	if len(opt.Sigma) != nx {
		return EvalResult{}, fmt.Errorf("trainer: twin perturbation of %d coordinates for states of %d", len(opt.Sigma), nx)
	}
	for j, s := range opt.Sigma {
		if !(s >= 0) || math.IsInf(s, 0) {
			return EvalResult{}, fmt.Errorf("trainer: twin perturbation of coordinate %d: standard deviation %v", j, s)
		}
	}
	ws := EvalWindows(ds, H, opt.Stride, opt.MaxWindows)
	if len(ws) == 0 {
		return EvalResult{}, fmt.Errorf("trainer: twin: no episode longer than the horizon %d", H)
	}
	r, err := newRoller()
	if err != nil {
		return EvalResult{}, err
	}
	// the reference rollouts as a dataset of one episode per window (x0
	// and the H predicted states, the logged ports), named as the
	// window's episode so that the errors group by log file
	ref := &dataset.Dataset{Meta: ds.Meta}
	ref.Episodes = make([]dataset.Episode, len(ws))
	ref.WindowLen, ref.Stride = H+1, H+1
	for i, w := range ws {
		if err := ctx.Err(); err != nil {
			return EvalResult{}, err
		}
		ep := &ds.Episodes[w.Episode]
		x := make([]float64, (H+1)*nx)
		copy(x, ep.X[w.Start*nx:(w.Start+1)*nx])
		ports := ep.E[w.Start*ne : (w.Start+H+1)*ne]
		if err := r.Rollout(x[:nx], ports[:H*ne], H, x[nx:]); err != nil {
			return EvalResult{}, fmt.Errorf("trainer: twin reference of %s at sample %d: %w", ep.Name, w.Start, err)
		}
		ref.Episodes[i] = dataset.Episode{Name: ep.Name, Len: H + 1, X: x, E: ports} // the logged ports, read only
	}
	perturbed := func() (Roller, error) {
		return &twinRoller{inner: r, opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, 0x7417)), ne: ne,
			x: make([]float64, nx)}, nil
	}
	// one worker: the perturbations are drawn in window order
	res, err := Evaluate(ctx, perturbed, ref, EvalOptions{Horizon: H, Stride: H + 1, Workers: 1})
	if err != nil {
		return res, fmt.Errorf("trainer: twin: %w", err)
	}
	return res, nil
}

// twinRoller rolls its inner roller out under Twin's perturbations.
type twinRoller struct {
	inner Roller
	opt   TwinOptions
	rng   *rand.Rand
	ne    int
	x     []float64
}

// perturb adds a draw of the perturbation to x.
func (t *twinRoller) perturb(x []float64) {
	for j := range x {
		x[j] += t.opt.Sigma[j] * t.rng.NormFloat64()
	}
}

// Rollout implements Roller.
func (t *twinRoller) Rollout(x0, ports []float64, horizon int, out []float64) error {
	copy(t.x, x0)
	if !t.opt.EveryStep {
		t.perturb(t.x)
		return t.inner.Rollout(t.x, ports, horizon, out)
	}
	nx := len(x0)
	for k := range horizon {
		o := out[k*nx : (k+1)*nx]
		if err := t.inner.Rollout(t.x, ports[k*t.ne:(k+1)*t.ne], 1, o); err != nil {
			return err
		}
		t.perturb(o)
		copy(t.x, o)
	}
	return nil
}

// OneStepResidual returns, per state coordinate, the root mean square
// of a model's one-step residual x_{k+1} − Φ(x_k, e_k) over the
// consecutive samples of every episode of ds (the square root of
// Evaluate's PerCoord at horizon 1, stride 1: the same pairs) and its
// lag-1 autocorrelation (Σ r_k r_{k−1} / Σ r_k², the residual not
// centred: a constant offset counts as correlated), in one pass. The
// autocorrelation is NaN for a coordinate the model predicts exactly at
// every sample, and an error if it does so for all.
func OneStepResidual(ctx context.Context, newRoller RollerFactory, ds *dataset.Dataset) (rms, autocorr []float64, err error) {
	r, err := newRoller()
	if err != nil {
		return nil, nil, err
	}
	nx, ne := ds.StateDim(), ds.PortDim()
	sq, lag := make([]float64, nx), make([]float64, nx)
	out, prev, cur := make([]float64, nx), make([]float64, nx), make([]float64, nx)
	n := 0
	for _, ep := range ds.Episodes {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for k := 0; k+1 < ep.Len; k++ {
			if err := r.Rollout(ep.X[k*nx:(k+1)*nx], ep.E[k*ne:(k+1)*ne], 1, out); err != nil {
				return nil, nil, fmt.Errorf("one-step residual of %s at sample %d: %w", ep.Name, k, err)
			}
			for j := range nx {
				cur[j] = ep.X[(k+1)*nx+j] - out[j]
				sq[j] += cur[j] * cur[j]
				if k > 0 {
					lag[j] += cur[j] * prev[j]
				}
			}
			prev, cur = cur, prev
			n++
		}
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("trainer: one-step residual: no episode of %s has two samples", ds.Split)
	}
	rms = make([]float64, nx)
	some := false
	for j := range lag {
		rms[j] = math.Sqrt(sq[j] / float64(n))
		if !(sq[j] > 0) {
			// predicted exactly at every step: no residual to correlate
			lag[j] = math.NaN()
			continue
		}
		lag[j] /= sq[j]
		some = true
	}
	if !some {
		return nil, nil, fmt.Errorf("trainer: residual autocorrelation: the model predicts every sample of every coordinate exactly: no one-step residual")
	}
	return rms, lag, nil
}

// TwinSeeds runs Twin once per seed (opt.Seed ignored), the seeds side by
// side on up to workers goroutines (each twin on one), and returns the
// results in the seeds' order.
func TwinSeeds(ctx context.Context, newRoller RollerFactory, ds *dataset.Dataset, opt TwinOptions, seeds []uint64, workers int) ([]EvalResult, error) {
	rs, errs := make([]EvalResult, len(seeds)), make([]error, len(seeds))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			o := opt
			o.Seed = seed
			rs[i], errs[i] = Twin(ctx, newRoller, ds, o)
		})
	}
	wg.Wait()
	return rs, errors.Join(errs...)
}
