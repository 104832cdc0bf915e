package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/trainer"
)

// openModelData opens a model file and a dataset and checks that they
// fit each other (eval's and train --forecaster's inputs).
func openModelData(cmd *cobra.Command, modelPath, dataDir string) (*trainer.SavedModel, *dataset.Dataset, error) {
	sv, err := openModel(cmd, modelPath)
	if err != nil {
		return nil, nil, err
	}
	ds, err := loadDataset(dataDir)
	if err != nil {
		return nil, nil, err
	}
	if err := sv.CheckDataset(ds, dataDir); err != nil {
		return nil, nil, err
	}
	return sv, ds, nil
}

// fitForecaster is train --forecaster MODEL: it fits the learned port
// forecast (forecast.Fit) on the windows of dataDir for the model file
// and writes it to out, bound to the model, the dataset's port map and
// layout.
func fitForecaster(cmd *cobra.Command, modelPath, dataDir, out string, opt trainer.ForecasterOptions) error {
	sv, ds, err := openModelData(cmd, modelPath, dataDir)
	if err != nil {
		return err
	}
	b, err := experiment.ForecastBinding(modelPath, ds)
	if err != nil {
		return err
	}
	if out == "" {
		out = node.DefaultForecaster(modelPath)
	}
	if sameFile(out, modelPath) {
		return fmt.Errorf("train --forecaster: --out %s is the model file", out)
	}
	start := time.Now()
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "fitting the port forecaster of %s on %s (%d episodes, %d measured ports)\n", modelPath, dataDir, len(ds.Episodes), b.MeasuredPorts())
	opt.Rollers = sv.Rollers
	pol, rep, err := trainer.FitForecaster(cmd.Context(), ds, b.MeasuredPorts(), forecast.MeasureFunc(b), opt)
	if err != nil {
		return fmt.Errorf("train --forecaster: %w", err)
	}
	fit, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	f := &forecast.File{Binding: b, Fit: fit, Policy: pol}
	if err := f.Save(out); err != nil {
		return err
	}
	printFitReport(cmd.OutOrStdout(), rep)
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s in %.1f s\n", out, time.Since(start).Seconds())
	return nil
}

// printFitReport writes the penalties tried and the one chosen.
func printFitReport(w io.Writer, rep trainer.ForecasterReport) {
	fmt.Fprintf(w, "%d training pairs from %d files, %d validation pairs from %s\n", rep.Rows, len(rep.Files), rep.ValRows, strings.Join(rep.ValFiles, ", "))
	fmt.Fprintf(w, "validation MSE of the standardised ports (holding the first ports: %.4g):", rep.HoldMSE)
	for i, l := range rep.Lambdas {
		fmt.Fprintf(w, " λ %g: %.4g;", l, rep.ValMSE[i])
	}
	if len(rep.ValARMSE) > 0 {
		fmt.Fprintf(w, "\nthe model's AR MSE at %d steps on the validation windows with each in the loop (holding the first ports: %.4g):", rep.ValHorizon, rep.HoldARMSE)
		for i, l := range rep.Lambdas {
			fmt.Fprintf(w, " λ %g: %.4g;", l, rep.ValARMSE[i])
		}
	}
	fmt.Fprintf(w, " chosen λ %g\n", rep.Lambda)
}

// evalForecast returns the evaluation's forecast for --forecast kind
// (nil for the logged ports), loading and checking --forecaster for the
// learned one.
func evalForecast(kind, forecasterPath, modelPath string, ds *dataset.Dataset) (*trainer.Forecast, error) {
	if err := forecast.CheckKind(kind, forecast.KindLogged, forecast.KindHold, forecast.KindLearned); err != nil {
		return nil, fmt.Errorf("--forecast: %w", err)
	}
	if forecasterPath != "" && kind != forecast.KindLearned {
		return nil, fmt.Errorf("--forecaster %s is for --forecast %s, not %s", forecasterPath, forecast.KindLearned, kind)
	}
	switch kind {
	case forecast.KindHold:
		return &trainer.Forecast{Kind: kind, NewPolicy: func() forecast.Policy { return forecast.Hold{} }}, nil
	case forecast.KindLearned:
		if forecasterPath == "" {
			forecasterPath = node.DefaultForecaster(modelPath)
		}
		f, err := forecast.Load(forecasterPath)
		if err != nil {
			return nil, fmt.Errorf("--forecast learned: %w (fit one with `calisym train --forecaster %s --data DIR`)", err, modelPath)
		}
		b, err := experiment.ForecastBinding(modelPath, ds)
		if err != nil {
			return nil, err
		}
		if err := f.Check(b); err != nil {
			return nil, fmt.Errorf("%s: %w", forecasterPath, err)
		}
		return &trainer.Forecast{Kind: kind, NewPolicy: func() forecast.Policy { return f.Policy.Clone() }}, nil
	}
	return nil, nil
}

// liveEval is an evaluation with the node's forecast in the loop (eval
// --forecast hold|learned), beside the logged ports' rows.
type liveEval struct {
	Forecast     string               `json:"forecast"`
	Result       trainer.EvalResult   `json:"result"`
	MultiHorizon []trainer.EvalResult `json:"multi_horizon"`
}

// evalLive evaluates the model's rollouts with the forecast fc in the
// loop at opt's horizon and at hs.
func evalLive(ctx context.Context, rollers trainer.RollerFactory, ds *dataset.Dataset, opt trainer.EvalOptions, fc *trainer.Forecast, hs []int) (*liveEval, error) {
	opt.Forecast = fc
	res, err := trainer.Evaluate(ctx, rollers, ds, opt)
	if err != nil {
		return nil, fmt.Errorf("eval --forecast %s: %w", fc.Kind, err)
	}
	multi, err := trainer.MultiHorizon(ctx, rollers, ds, hs, opt)
	if err != nil {
		return nil, fmt.Errorf("eval --forecast %s: %w", fc.Kind, err)
	}
	res.PerStep = nil
	for i := range multi {
		multi[i].PerFile = nil
	}
	return &liveEval{Forecast: fc.Kind, Result: res, MultiHorizon: multi}, nil
}

// forecastFlags are the flags of replay and node that choose the port
// forecast the rollouts use (the params' node.ports).
type forecastFlags struct {
	kind, path string
}

// add declares --forecast and --forecaster.
func (g *forecastFlags) add(f *pflag.FlagSet) {
	f.StringVar(&g.kind, "forecast", "", "the ports over the horizon: hold (the latest held), learned (the forecaster in the loop) or topic (a planner's port plan) (default node.ports.forecast of the params)")
	f.StringVar(&g.path, "forecaster", "", "the forecaster file of --forecast learned (default node.ports.forecaster of the params, else MODEL.forecaster.json beside the model)")
}

// apply sets the given flags in the params' node.ports and checks them
// (the node defaults the forecaster to MODEL.forecaster.json).
func (g *forecastFlags) apply(p *node.Params) error {
	ports := &p.Node.Ports
	if g.kind != "" {
		if err := forecast.CheckKind(g.kind, node.ForecastHold, node.ForecastLearned, node.ForecastTopic); err != nil {
			return fmt.Errorf("--forecast: %w", err)
		}
		ports.Forecast = g.kind
	}
	if g.path != "" {
		if ports.Forecast != node.ForecastLearned {
			return fmt.Errorf("--forecaster %s is for the forecast %s, not %s", g.path, node.ForecastLearned, ports.Forecast)
		}
		abs, err := filepath.Abs(g.path)
		if err != nil {
			return fmt.Errorf("--forecaster: %w", err)
		}
		ports.Forecaster = abs
	}
	if ports.Forecast == node.ForecastTopic && ports.Topic == "" {
		return fmt.Errorf("--forecast %s needs node.ports.topic in the params", node.ForecastTopic)
	}
	return nil
}
