// Package forecast owns the port forecasts a prediction is rolled out
// with when the future ports are not known: the live node's case. A
// robot's ports are not exogenous: its controller computes the commands
// from the state, and its contact forces follow from the state. A Policy
// writes the measured ports of each predicted step from the state the
// rollout has reached, and a Loop turns them into the model's ports (with
// the port history's means, statemap.PortHistory) step by step, as a
// predictor.PortSource that predictor.RolloutLoop asks at every step.
//
// Policies: Hold (the latest measured ports over the whole horizon, the
// node's forecast before the loop existed) and Learned (a regression of
// the next ports on the predicted state, the initial state and the
// initial ports, fitted to the training logs by Fit and stored in a file
// bound to the model, the params' port map and the dataset's layout).
package forecast

import (
	"fmt"
	"slices"

	"github.com/calisym/calisym/statemap"
)

// Kinds of forecast, as params (node.ports.forecast) and the commands'
// --forecast name them.
const (
	// KindHold holds the latest measured ports over the horizon.
	KindHold = "hold"
	// KindLearned rolls a learned Policy out with the model (Learned).
	KindLearned = "learned"
	// KindLogged uses the ports the robot actually applied over the
	// horizon (the logs'; a planner's case): evaluation only.
	KindLogged = "logged"
	// KindTopic follows a port trajectory a planner publishes: the node
	// only.
	KindTopic = "topic"
)

// Policy forecasts the measured ports of each predicted step.
type Policy interface {
	// Begin starts a prediction from the current state x0 (2n values) and
	// its measured ports m0.
	Begin(x0, m0 []float64)
	// Next writes the measured ports of step k ≥ 1 into out from the
	// state x the rollout reached at step k and the measured ports of step
	// k−1, prev. It must not keep its arguments.
	Next(k int, x, prev, out []float64)
}

// Hold is the Policy that holds the latest measured ports.
type Hold struct{}

// Begin implements Policy.
func (Hold) Begin(_, _ []float64) {}

// Next implements Policy: the ports of step k−1 again.
func (Hold) Next(_ int, _, prev, out []float64) { copy(out, prev) }

// Loop turns a Policy's measured ports into the model's ports of each
// step, with the port history's means over the observed samples and the
// forecast steps before it, and records the measured ports it forecast.
// It implements predictor.PortSource. A Loop does not allocate after
// NewLoop and is not safe for concurrent use.
type Loop struct {
	pol  Policy
	nm   int                   // measured ports
	fc   *statemap.PortHistory // the past extended over the forecast (nil: no port history)
	meas []float64             // horizon × nm measured ports, as forecast
	h    int
}

// NewLoop returns a loop of pol over up to horizon steps of nm measured
// ports; hist is a port history of the model's layout whose samples Start
// copies (nil for a model without one).
func NewLoop(pol Policy, nm, horizon int, hist *statemap.PortHistory) (*Loop, error) {
	if pol == nil || nm < 0 || horizon < 1 {
		return nil, fmt.Errorf("forecast: loop of %d measured ports over %d steps", nm, horizon)
	}
	if hist != nil && hist.Measured() != nm {
		return nil, fmt.Errorf("forecast: a port history of %d measured ports for %d", hist.Measured(), nm)
	}
	return &Loop{pol: pol, nm: nm, fc: hist, meas: make([]float64, horizon*nm), h: horizon}, nil
}

// Start begins a prediction from x0 (2n values) whose measured ports are
// m0, with past the port history of the samples before it (nil without
// one; it is copied, not changed).
func (l *Loop) Start(x0, m0 []float64, past *statemap.PortHistory) {
	copy(l.meas[:l.nm], m0)
	if l.fc != nil && past != nil {
		l.fc.CopyFrom(past)
	} else if l.fc != nil {
		l.fc.Reset()
	}
	l.pol.Begin(x0, m0)
}

// PortsAt implements predictor.PortSource: the measured ports of step k
// (m0 for k = 0, the policy's from x after), then the model's ports from
// them.
func (l *Loop) PortsAt(k int, x, row []float64) error {
	if k < 0 || k >= l.h {
		return fmt.Errorf("forecast: step %d of a loop over %d steps", k, l.h)
	}
	nm := l.nm
	meas := l.meas[k*nm : (k+1)*nm]
	if k > 0 {
		l.pol.Next(k, x, l.meas[(k-1)*nm:k*nm], meas)
	}
	if l.fc == nil {
		copy(row, meas)
		return nil
	}
	l.fc.Ports(meas, row)
	l.fc.Push(meas)
	return nil
}

// Measured returns the measured ports of steps 0 … horizon−1 of the last
// rollout (horizon × nm values; valid until the next Start).
func (l *Loop) Measured() []float64 { return l.meas }

// CheckKind reports a forecast kind that is not one of kinds.
func CheckKind(kind string, kinds ...string) error {
	if !slices.Contains(kinds, kind) {
		return fmt.Errorf("forecast: %q is not one of %q", kind, kinds)
	}
	return nil
}
