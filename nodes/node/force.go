package node

import (
	"math"

	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// forceState feeds the offset-free estimate (Config.ForceEstimate) one
// state sample per dt, as trainer.EvalOptions.Force feeds it from a
// dataset: the sample the node would predict from, with the coordinates a
// window's first sample has at zero (statemap.OriginCoordinates) zeroed.
type forceState struct {
	est    *predictor.ForceEstimator
	origin []int
	x, e   []float64
	d      []float64 // scratch for the diagnostics
	stamp  int64     // state stamp of the last observed sample
	have   bool
}

func newForceState(r *predictor.Roller, coords []string, n, ne int, cfg predictor.ForceEstimate) (*forceState, error) {
	est, err := predictor.NewForceEstimator(r, n, ne, cfg)
	if err != nil {
		return nil, err
	}
	return &forceState{est: est, origin: statemap.OriginCoordinates(coords), x: make([]float64, 2*n), e: make([]float64, ne), d: make([]float64, 0, n)}, nil
}

// restart forgets the estimate's history.
func (nd *Node) restartForce() {
	if nd.force.have || nd.force.est.Residuals() > 0 {
		nd.stats.ForceRestarts++
	}
	nd.force.est.Reset()
	nd.force.have = false
}

// observe feeds the force estimate the current state sample, once per
// state stamp. A sample one dt (±¼ dt) after the last observed continues
// the history; any other gap, a stale input or a sample that cannot be
// built restarts it.
func (nd *Node) observe(now int64) {
	f := nd.force
	if f == nil {
		return
	}
	if why, _ := nd.stale(now); why != "" {
		nd.restartForce()
		return
	}
	stamp := nd.stateStamp()
	if f.have && stamp == f.stamp {
		return
	}
	step := nanos(nd.dt)
	if gap := stamp - f.stamp; f.have && (gap < step-step/4 || gap > step+step/4) {
		nd.restartForce()
	}
	if _, err := nd.sampler.Sample(nd.values, f.x, f.e); err != nil {
		nd.restartForce()
		return
	}
	for _, j := range f.origin {
		f.x[j] = 0
	}
	if err := f.est.Observe(f.x, f.e); err != nil {
		nd.restartForce()
		return
	}
	f.stamp, f.have = stamp, true
}

// ForceEstimate returns the current offset-free estimate (Config.
// ForceEstimate): d, the momentum impulse per step (d/dt is the force) in
// p's coordinates, appended to dst[:0], and the number of residuals it
// averages. Without the estimate it returns nil, 0.
func (nd *Node) ForceEstimate(dst []float64) ([]float64, int) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.force == nil {
		return nil, 0
	}
	return nd.force.est.Offset(dst), nd.force.est.Residuals()
}

// forceNewtons returns the norm of the estimated force on the base's
// linear momentum [N] (the first three momenta of a floating base), or of
// all momenta without one.
func (nd *Node) forceNewtons() float64 {
	d := nd.force.est.Offset(nd.force.d)
	if nd.sampler.Floating() && len(d) >= 3 {
		d = d[:3]
	}
	var s float64
	for _, v := range d {
		s += v * v
	}
	return math.Sqrt(s) / nd.dt
}
