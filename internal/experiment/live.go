package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
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
// mr.Forecaster.
func liveRows(ctx context.Context, mr *ModelReport, tr *trained, data Datasets, horizons []int, outDir string) error {
	modelPath := filepath.Join(outDir, mr.File)
	b, err := ForecastBinding(modelPath, data.Train)
	if err != nil {
		return fmt.Errorf("experiment: %s: forecaster: %w", mr.Name, err)
	}
	pol, rep, err := trainer.FitForecaster(ctx, data.Train, b.MeasuredPorts(), forecast.MeasureFunc(b), trainer.ForecasterOptions{})
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
		gs, err := EvalGroupsWith(ctx, tr.rollers, data.Groups, horizons, trainer.EvalOptions{Forecast: fc})
		if err != nil {
			return fmt.Errorf("experiment: %s, forecast %s: %w", mr.Name, fc.Kind, err)
		}
		mr.Live = append(mr.Live, LiveResult{Forecast: fc.Kind, Groups: gs})
	}
	return nil
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
