package node

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// DefaultForecaster returns where the learned port forecast of a model
// file is by default: MODEL.forecaster.json beside it (what calisym train
// --forecaster and calisym bench write).
func DefaultForecaster(modelPath string) string {
	return strings.TrimSuffix(modelPath, filepath.Ext(modelPath)) + ".forecaster.json"
}

// newForecast loads the learned port forecast (Ports.Forecaster, default
// DefaultForecaster of modelPath) for ForecastLearned and checks that it
// was fitted for this model file (modelSHA256), the params' port map and
// the mapping's layout. A forecaster that does not exist (or none named,
// and no model path) leaves the node holding the ports, with a warning
// (ModelWarning, /diagnostics); one that cannot be used is an error.
func (nd *Node) newForecast(modelSHA256, modelPath string) error {
	if nd.cfg.Ports.Forecast != ForecastLearned {
		return nil
	}
	hold := func(why string) {
		nd.modelWarning = strings.TrimPrefix(nd.modelWarning+"; ", "; ") + fmt.Sprintf("forecast %s: %s, so the node holds the latest ports over the horizon (fit one with `calisym train --forecaster MODEL --data DIR`)", ForecastLearned, why)
	}
	path := nd.params.Resolve(nd.cfg.Ports.Forecaster)
	if nd.cfg.Ports.Forecaster == "" {
		if modelPath == "" {
			hold("no forecaster file (ports.forecaster) and no model file beside which to look for one")
			return nil
		}
		path = DefaultForecaster(modelPath)
	}
	f, err := forecast.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		hold("no forecaster " + path)
		return nil
	}
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
	if err := got.Check(want); err != nil {
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
