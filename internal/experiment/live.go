package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// liveRows fits the learned port forecast of a saved CaLiSym model on the
// training set (trainer.FitForecaster; written beside the model as
// MODEL.forecaster.json, bound to it) and evaluates the model on every
// group with each of the node's forecasts in the loop: mr.Live,
// mr.Forecaster. A benchmark without groups is evaluated on its ID-test
// and OOD sets at every horizon, as its multi-horizon rows are (the
// groups "id_test" and "ood" of its study).
func liveRows(ctx context.Context, mr *ModelReport, tr *trained, data Datasets, spec Spec, outDir string) error {
	modelPath := filepath.Join(outDir, mr.File)
	b, err := ForecastBinding(modelPath, data.Train)
	if err != nil {
		return fmt.Errorf("experiment: %s: forecaster: %w", mr.Name, err)
	}
	pol, rep, err := trainer.FitForecaster(ctx, data.Train, b.MeasuredPorts(), forecast.MeasureFunc(b), trainer.ForecasterOptions{Rollers: tr.rollers})
	if err != nil {
		return fmt.Errorf("experiment: %s: %w", mr.Name, err)
	}
	fit, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	file := strings.TrimSuffix(mr.File, filepath.Ext(mr.File)) + ".forecaster.json"
	if err := (&forecast.File{Binding: b, Fit: fit, Policy: pol}).Save(filepath.Join(outDir, file)); err != nil {
		return err
	}
	mr.Forecaster = &ForecasterResult{File: file, Fit: rep}
	for _, fc := range []*trainer.Forecast{
		{Kind: forecast.KindHold, NewPolicy: func() forecast.Policy { return forecast.Hold{} }},
		{Kind: forecast.KindLearned, NewPolicy: func() forecast.Policy { return pol.Clone() }},
	} {
		var gs []GroupResult
		if len(data.Groups) > 0 {
			gs, err = EvalGroupsWith(ctx, tr.rollers, data.Groups, spec.Horizons, trainer.EvalOptions{Forecast: fc})
		} else {
			gs, err = liveSplit(ctx, tr.rollers, data, spec, fc)
		}
		if err != nil {
			return fmt.Errorf("experiment: %s, forecast %s: %w", mr.Name, fc.Kind, err)
		}
		mr.Live = append(mr.Live, LiveResult{Forecast: fc.Kind, Groups: gs})
	}
	return nil
}

// liveSplit evaluates rollers with the forecast fc on the ID-test and OOD
// sets at every horizon of spec, with the windows of the multi-horizon
// rows.
func liveSplit(ctx context.Context, rollers trainer.RollerFactory, data Datasets, spec Spec, fc *trainer.Forecast) ([]GroupResult, error) {
	var out []GroupResult
	for _, set := range []struct {
		name string
		ds   *dataset.Dataset
	}{{splitIDTest, data.ID}, {splitOOD, data.OOD}} {
		g := GroupResult{Group: set.name, Horizons: slices.Clone(spec.Horizons)}
		for _, h := range spec.Horizons {
			r, err := trainer.Evaluate(ctx, rollers, set.ds, trainer.EvalOptions{Horizon: h, Stride: spec.EvalStride, MaxWindows: spec.MaxEvalWindows, Forecast: fc})
			if err != nil {
				// a horizon longer than the set's windows, as multiHorizonRows
				g.MSE = append(g.MSE, math.NaN())
				continue
			}
			g.MSE = append(g.MSE, r.MSE)
			g.Windows = r.Windows
		}
		out = append(out, g)
	}
	return out, nil
}

// ForecastBinding returns what a forecaster of the model file at
// modelPath, fitted on ds, is bound to (forecast.Binding): the file's
// checksum, the dataset's port map, names and layout.
func ForecastBinding(modelPath string, ds *dataset.Dataset) (forecast.Binding, error) {
	sum, err := forecast.FileDigest(modelPath)
	if err != nil {
		return forecast.Binding{}, err
	}
	pm, err := predictor.PortMeanFromNames(ds.Ports, ds.NU, ds.NC)
	if err != nil {
		return forecast.Binding{}, err
	}
	return forecast.Binding{ModelSHA256: sum, PortMap: ds.Source[statemap.PortMapKey],
		Coordinates: ds.Coordinates, Ports: ds.Ports, N: ds.N, NU: ds.NU, NC: ds.NC, Dt: ds.Dt, PortMean: pm}, nil
}
