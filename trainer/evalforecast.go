package trainer

import (
	"fmt"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// Forecast configures an evaluation whose rollouts forecast their ports
// in the loop, as the live node does, instead of reading the logged ports
// over the horizon: each window starts from its first sample's measured
// ports and the port history of the samples before it in its log
// (LogHistory), and the policy writes the measured ports of every later
// step from the state the rollout reached (forecast.Loop).
type Forecast struct {
	// Kind names the forecast in reports (forecast.KindHold, KindLearned).
	Kind string
	// NewPolicy makes a policy for one goroutine.
	NewPolicy func() forecast.Policy
}

// ForecastRoller rolls a model out from the windows of a dataset with the
// ports forecast in the loop (Forecast), as Evaluate does: the live
// node's prediction from the same sample, bit for bit. It is not safe for
// concurrent use; make one per goroutine.
type ForecastRoller struct {
	loop    *forecast.Loop
	past    *statemap.PortHistory // nil without a port history
	measure forecast.Measure
	nm      int
	m0, m   []float64
	ports   []float64 // horizon × n_e: the ports the loop chose
	n, ne   int
}

// NewForecastRoller makes a roller of fc over up to horizon steps for
// ds's layout; the model's port history is read from the dataset's port
// names.
func NewForecastRoller(fc *Forecast, ds *dataset.Dataset, horizon int) (*ForecastRoller, error) {
	pm, err := predictor.PortMeanFromNames(ds.Ports, ds.NU, ds.NC)
	if err != nil {
		return nil, fmt.Errorf("trainer: forecast: %w", err)
	}
	b := forecast.Binding{N: ds.N, NU: ds.NU, NC: ds.NC, PortMean: pm}
	nm := b.MeasuredPorts()
	w := &ForecastRoller{measure: forecast.MeasureFunc(b), nm: nm, n: ds.N, ne: ds.PortDim(),
		m0: make([]float64, nm), m: make([]float64, nm), ports: make([]float64, horizon*ds.PortDim())}
	var fcHist *statemap.PortHistory
	if pm > 0 {
		a := (ds.NU - ds.NC) / 2
		if w.past, err = statemap.NewPortHistory(pm, a, ds.NC); err != nil {
			return nil, fmt.Errorf("trainer: forecast: %w", err)
		}
		if fcHist, err = statemap.NewPortHistory(pm, a, ds.NC); err != nil {
			return nil, fmt.Errorf("trainer: forecast: %w", err)
		}
	}
	if w.loop, err = forecast.NewLoop(fc.NewPolicy(), nm, horizon, fcHist); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	return w, nil
}

// Rollout rolls r out from sample start of episode e of ds over horizon
// steps with the ports forecast in the loop, writing the states into out
// (the ports used: Ports). hist finds the samples before it in its log.
func (w *ForecastRoller) Rollout(r Roller, hist *LogHistory, ds *dataset.Dataset, e, start, horizon int, out []float64) error {
	nx, ne := ds.StateDim(), ds.PortDim()
	ep := &ds.Episodes[e]
	x0 := ep.X[start*nx : (start+1)*nx]
	w.measure(ep.E[start*ne:(start+1)*ne], w.m0)
	if w.past != nil {
		w.past.Reset()
		// the samples before start in its log, as many as the history
		// holds and none across a gap, oldest first
		for back := hist.Back(e, start, w.past.Cap()); back >= 1; back-- {
			_, ports, _ := hist.Sample(e, start, back)
			w.measure(ports, w.m)
			w.past.Push(w.m)
		}
	}
	w.loop.Start(x0, w.m0, w.past)
	return predictor.RolloutLoop(r, w.loop, w.n, w.ne, x0, horizon, w.ports[:horizon*ne], out)
}

// Ports returns the model ports of the last rollout (horizon × n_e).
func (w *ForecastRoller) Ports() []float64 { return w.ports }
