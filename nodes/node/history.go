package node

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// The node's input history: it observes one state sample per dt (the
// dataset's rate), the sample it would predict from, and feeds it to the
// port history (convert.history: statemap.PortHistory) and the offset-free
// force estimate (Config.ForceEstimate), as conversion builds the first
// from the log and the evaluation feeds the second from a dataset
// (trainer.LogHistory).
//
// It observes when the state arrives (each accepted message of an input
// that feeds the state), or with a message trigger on another topic (the
// pendulum's torque commands, which pair the state with the command held
// over the next step) at each trigger. From a faster estimator (400 Hz
// for a 100 Hz model) it takes the sample nearest to one dt after the
// last observed one: a sample earlier than dt less half the state input's
// measured period is passed over. A sample within the tolerance
// (Config.HistoryTolerance: the larger of dt/4 and half that period) of
// one dt after the last continues the history; a larger gap is a lost
// sample and starts it again, as does a sample that cannot be built or a
// missing input. A sample that is late but not lost does not: the stamps
// say when it was taken, not when it arrived.

// observation is the state of the node's input history.
type observation struct {
	x, em []float64 // the observed sample: state and measured ports
	stamp int64     // state stamp of the last observed sample
	have  bool
}

// portHistory builds the port-history channels live.
type portHistory struct {
	past *statemap.PortHistory // the samples before the last observed one
	fc   *statemap.PortHistory // scratch: the past extended over a forecast
	// pending holds the measured ports of the last observed sample, which
	// join past when the next sample continues the history.
	pending []float64
}

// forceState is the offset-free estimate (Config.ForceEstimate or
// Config.WrenchEstimate), fed the observed samples with the coordinates a
// window's first sample has at zero (statemap.OriginCoordinates) zeroed.
type forceState struct {
	est    predictor.OffsetEstimator
	force  *predictor.ForceEstimator  // est, for the force estimate
	wrench *predictor.WrenchEstimator // est, for the wrench estimate
	origin []int
	e      []float64     // the observed sample's model ports
	d      []float64     // scratch for the diagnostics
	pose   mechanics.SE3 // the base pose of the last observed sample
}

func newForceState(r predictor.Stepper, coords []string, n, ne int, cfg *Config) (*forceState, error) {
	fs := &forceState{origin: statemap.OriginCoordinates(coords), e: make([]float64, ne), d: make([]float64, 0, n)}
	var err error
	switch {
	case cfg.ForceEstimate != nil:
		if fs.force, err = predictor.NewForceEstimator(r, n, ne, *cfg.ForceEstimate); err != nil {
			return nil, err
		}
		fs.est = fs.force
	case cfg.WrenchEstimate != nil:
		var base predictor.WrenchBase
		switch statemap.BaseKind(coords) {
		case statemap.StateFloatingBase:
			base = predictor.WrenchBaseSE3
		case statemap.StateFloatingBaseGravity:
			base = predictor.WrenchBaseGravity
		default:
			return nil, configError("wrench_estimate", "needs a floating base (state kind %s or %s), and the mapping's coordinates start %v", statemap.StateFloatingBase, statemap.StateFloatingBaseGravity, coords[:min(len(coords), 6)])
		}
		if fs.wrench, err = predictor.NewWrenchEstimator(r, n, ne, base, *cfg.WrenchEstimate); err != nil {
			return nil, err
		}
		fs.est = fs.wrench
	default:
		return nil, fmt.Errorf("node: no offset-free estimate configured")
	}
	return fs, nil
}

// newHistory makes the input history's state for the mapping's port
// history (none without one) and the force estimate (none without one).
func (nd *Node) newHistory(spec *statemap.Spec, cfg *Config) error {
	past, err := spec.NewPortHistory()
	if err != nil {
		return err
	}
	if past != nil {
		fc, err := spec.NewPortHistory()
		if err != nil {
			return err
		}
		nd.hist = &portHistory{past: past, fc: fc, pending: make([]float64, nd.nm)}
	}
	if cfg.ForceEstimate != nil || cfg.WrenchEstimate != nil {
		if nd.force, err = newForceState(nd.model, spec.Coordinates(), nd.n, nd.ne, cfg); err != nil {
			return err
		}
		nd.stepper = nd.force.est
	}
	nd.obs = observation{x: make([]float64, 2*nd.n), em: make([]float64, nd.nm)}
	return nil
}

// restartHistory forgets the input history: the port history and the
// force estimate start again from the next sample.
func (nd *Node) restartHistory() {
	if h := nd.hist; h != nil {
		if nd.obs.have || h.past.Held() > 0 {
			nd.stats.HistoryRestarts++
		}
		h.past.Reset()
	}
	if f := nd.force; f != nil {
		if nd.obs.have || f.est.Residuals() > 0 {
			nd.stats.ForceRestarts++
		}
		f.est.Reset()
	}
	nd.obs.have = false
}

// observe feeds the input history the current state sample, once per
// state stamp and at most one per dt.
func (nd *Node) observe() {
	if nd.force == nil && nd.hist == nil {
		return
	}
	o := &nd.obs
	for _, in := range nd.inputs {
		if !in.have {
			nd.restartHistory()
			return
		}
	}
	stamp := nd.stateStamp()
	if o.have && stamp <= o.stamp {
		return
	}
	step, period := nanos(nd.dt), nd.statePeriod()
	if gap := stamp - o.stamp; o.have {
		if gap < step-period/2 {
			return // a faster input: wait for the sample nearest one dt on
		}
		tol := nanos(nd.cfg.HistoryTolerance)
		if tol == 0 {
			tol = max(step/4, period/2)
		}
		if gap > step+tol {
			nd.restartHistory()
		}
	}
	continues := o.have // the last observed sample is one dt before this one
	pose, err := nd.sampler.Sample(nd.values, o.x, o.em)
	if err != nil {
		nd.restartHistory()
		return
	}
	if h := nd.hist; h != nil {
		if continues {
			h.past.Push(h.pending)
		}
		copy(h.pending, o.em)
	}
	if f := nd.force; f != nil {
		nd.modelPorts(o.em, f.e)
		for _, j := range f.origin {
			o.x[j] = 0
		}
		if err := f.est.Observe(o.x, f.e); err != nil {
			nd.restartHistory()
			return
		}
		f.pose = pose
	}
	o.stamp, o.have = stamp, true
}

// statePeriod returns the measured period [ns] of the inputs that carry
// state channels, the longest of them (0 while unknown).
func (nd *Node) statePeriod() int64 {
	var p int64
	for _, in := range nd.inputs {
		if in.feeds {
			p = max(p, in.period)
		}
	}
	return p
}

// modelPorts writes the model's ports of the current sample, whose
// measured ports are em, into e: em and, with a port history, the means
// over the samples observed before it.
func (nd *Node) modelPorts(em, e []float64) {
	if h := nd.hist; h != nil {
		h.past.Ports(em, e)
		return
	}
	copy(e, em)
}

// ForceEstimate returns the current offset-free estimate (Config.
// ForceEstimate): d, the momentum impulse per step (d/dt is the force) in
// p's coordinates, appended to dst[:0], and the number of residuals it
// averages. Without the estimate it returns nil, 0.
func (nd *Node) ForceEstimate(dst []float64) ([]float64, int) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.force == nil || nd.force.force == nil {
		return nil, 0
	}
	return nd.force.force.Offset(dst), nd.force.est.Residuals()
}

// WrenchEstimate returns the current wrench estimate (Config.
// WrenchEstimate) in the estimator's world frame (predictor.
// WrenchEstimator), and false without one.
func (nd *Node) WrenchEstimate() (predictor.WrenchState, bool) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.force == nil || nd.force.wrench == nil {
		return predictor.WrenchState{}, false
	}
	return nd.force.wrench.State(), true
}

// wrenchOdom returns the applied wrench estimate in newtons and
// newton-metres in the frame of the state's base pose (Config.FrameID,
// the estimator's odom): the estimator's world frame is the base frame at
// the start of its history, so the estimate is rotated by the base's
// orientation there, R_odom·R_estᵀ, and the gates.
func (nd *Node) wrenchOdom() (force, torque mechanics.Vec3, gate [6]float64) {
	st := nd.force.wrench.State()
	var re mechanics.Mat3
	for i := range 3 {
		for j := range 3 {
			re[i][j] = st.Rotation[3*i+j]
		}
	}
	R := nd.force.pose.R.Mul(re.T())
	inv := 1 / nd.dt
	force = R.MulVec(mechanics.Vec3{st.Impulse[0] * inv, st.Impulse[1] * inv, st.Impulse[2] * inv})
	torque = R.MulVec(mechanics.Vec3{st.Impulse[3] * inv, st.Impulse[4] * inv, st.Impulse[5] * inv})
	return force, torque, st.Gate
}

// forceNewtons returns the norm of the estimated force on the base's
// linear momentum [N] (the first three momenta of a floating base), or of
// all momenta without one.
func (nd *Node) forceNewtons() float64 {
	d := nd.force.force.Offset(nd.force.d)
	if nd.sampler.Floating() && len(d) >= 3 {
		d = d[:3]
	}
	var s float64
	for _, v := range d {
		s += v * v
	}
	return math.Sqrt(s) / nd.dt
}
