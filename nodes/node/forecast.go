package node

import (
	"fmt"

	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// newForecast loads the learned port forecast (Ports.Forecaster) for
// ForecastLearned and checks that it was fitted for this model file
// (modelSHA256), the params' port map and the mapping's layout.
func (nd *Node) newForecast(modelSHA256 string) error {
	if nd.cfg.Ports.Forecast != ForecastLearned {
		return nil
	}
	path := nd.params.Resolve(nd.cfg.Ports.Forecaster)
	f, err := forecast.Load(path)
	if err != nil {
		return fmt.Errorf("node: ports.forecaster: %w", err)
	}
	if modelSHA256 == "" {
		return fmt.Errorf("node: ports.forecaster %s: the model file's SHA-256 is unknown, so the forecaster cannot be checked against it", path)
	}
	n, nu, nc := nd.sampler.Layout()
	want := forecast.Binding{ModelSHA256: modelSHA256, Coordinates: nd.sampler.Coordinates(), Ports: nd.sampler.Ports(),
		N: n, NU: nu, NC: nc, Dt: nd.dt, PortMean: nd.params.Spec.History.PortMean}
	got := f.Binding
	got.PortMap = "" // compared below, by meaning
	if err := (&forecast.File{Binding: got}).Check(want); err != nil {
		return fmt.Errorf("node: ports.forecaster %s: %w", path, err)
	}
	if err := statemap.CheckPortMap(f.Binding.PortMap, nd.params.Spec.PortMap()); err != nil {
		return fmt.Errorf("node: ports.forecaster %s: %w: fitted on data whose ports the params compute otherwise: %w", path, forecast.ErrFile, err)
	}
	var past *statemap.PortHistory
	if nd.hist != nil {
		if past, err = nd.params.Spec.NewPortHistory(); err != nil {
			return fmt.Errorf("node: %w", err)
		}
	}
	if nd.loop, err = forecast.NewLoop(f.Policy, nd.nm, nd.h, past); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nil
}

// rollout rolls the model out from the sample predicted from (x, its
// measured ports em): with the learned forecast in the loop, or over the
// ports forecast filled.
func (nd *Node) rollout() error {
	if nd.loop == nil {
		return nd.stepper.Rollout(nd.x, nd.ports, nd.h, nd.out)
	}
	var past *statemap.PortHistory
	if nd.hist != nil {
		past = nd.hist.past
	}
	nd.loop.Start(nd.x, nd.em, past)
	return predictor.RolloutLoop(nd.stepper, nd.loop, nd.n, nd.ne, nd.x, nd.h, nd.ports, nd.out)
}
