package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/outguard"
	"github.com/calisym/calisym/statemap"
)

// newPredictabilityCmd is `calisym bench predictability`: how far ahead a
// benchmark's motions can be predicted at all (experiment.Predictability).
func newPredictabilityCmd() *cobra.Command {
	var system, data, paramsDir, seeds, scales, runs, jsonOut, plots string
	var workers int
	cmd := &cobra.Command{
		Use:   "predictability",
		Short: "How far ahead the real pendulum's motions can be predicted at all: twin rollouts of its identified model",
		Long: `predictability measures, with the identified pendulum model standing in
for the true dynamics, what part of the AR MSE at each horizon no model
can avoid given errors of a size the logs allow: from every evaluation
window it rolls the model out once as the reference and once perturbed,
and scores the perturbed rollout against the reference as the benchmark
scores a model against the logs.

  initial     the initial state perturbed (a perfect model fed a state
              measured with error σ)
  every_step  every predicted state perturbed (a model whose every step
              errs at random by σ)

σ is the physics' root mean square one-step residual on the training
windows, per state coordinate, times each --scales value; each case runs
once per --seeds value. Beside them, against the logs: the physics, the
state held constant and the training states' mean, on id_test, ood and
each OOD log, at the study's horizons. The one-step errors (the floor the
logs resolve) of the physics and of the models in --runs (run directories
as 'calisym bench --variants' writes them) are reported too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := intIn("workers", workers, 1, 64, ""); err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			ss, err := parseInts(seeds)
			if err != nil {
				return fmt.Errorf("bench predictability: --seeds: %w", err)
			}
			opt := experiment.PredictabilityOptions{Workers: workers}
			for _, s := range ss {
				if s < 1 {
					return fmt.Errorf("bench predictability: --seeds: seed %d (want 1 or more)", s)
				}
				opt.Seeds = append(opt.Seeds, uint64(s))
			}
			for _, f := range splitList(scales) {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil || !(v > 0) {
					return fmt.Errorf("bench predictability: --scales: %q is not a positive number", f)
				}
				opt.Scales = append(opt.Scales, v)
			}
			for _, pat := range splitList(runs) {
				ms, err := filepath.Glob(pat)
				if err != nil {
					return fmt.Errorf("bench predictability: --runs: %w", err)
				}
				if len(ms) == 0 {
					return fmt.Errorf("bench predictability: --runs: %s matches no directory", pat)
				}
				opt.Runs = append(opt.Runs, ms...)
			}
			// refused before the data are converted
			spec, err := experiment.LoadRealSpec(system, experiment.RealOptions{DataRoot: data, ParamsDir: paramsDir})
			if err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			if spec.Model.Kind != statemap.ModelDoublePendulum {
				return fmt.Errorf("bench predictability: %s has no identified pendulum model to stand in for its dynamics (convert.model.kind %s; %s has one)", system, spec.Model.Kind, experiment.RealDoublePendulumHW)
			}
			in := runInputs(opt.Runs, []string{system})
			if err := checkFileOut("--json", jsonOut, in); err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			if err := outguard.Check(in, []outguard.Path{{Flag: "--plots", Path: plots}}); err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			b, err := experiment.PrepareReal(cmd.Context(), system, experiment.RealOptions{DataRoot: data, ParamsDir: paramsDir, Workers: workers})
			if err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			res, err := experiment.Predictability(cmd.Context(), b, opt)
			if err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: predictability (the identified model as the dynamics)\n\n%s", system, res.Markdown())
			if plots != "" {
				if err := os.MkdirAll(plots, 0o755); err != nil {
					return fmt.Errorf("bench predictability: %w", err)
				}
				paths, err := res.Plots(plots)
				if err != nil {
					return fmt.Errorf("bench predictability: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "\nfigures: %s\n", strings.Join(paths, ", "))
			}
			if jsonOut == "" {
				return nil
			}
			doc := struct {
				Command string `json:"command"`
				*experiment.PredictabilityResult
			}{fmt.Sprintf("calisym bench predictability --system %s --seeds %s --scales %s --runs '%s'", system, seeds, scales, runs), res}
			if err := writeJSONFile(jsonOut, doc); err != nil {
				return fmt.Errorf("bench predictability: %w", err)
			}
			return nil
		},
	}
	def := defaultDataDir()
	cmd.Flags().StringVar(&system, "system", experiment.RealDoublePendulumHW, "the benchmark (one with an identified pendulum model: double_pendulum_hw)")
	cmd.Flags().StringVar(&data, "data", def, "the shared data directory (default $CALISYM_DATA or ../shared/data)")
	cmd.Flags().StringVar(&paramsDir, "params", "params", "directory of the params YAML files")
	cmd.Flags().StringVar(&seeds, "seeds", "1,2,3", "the perturbations' seeds (comma-separated)")
	cmd.Flags().StringVar(&scales, "scales", "1,0.3,0.1", "the perturbations' sizes in multiples of the physics' one-step residual (comma-separated)")
	cmd.Flags().StringVar(&runs, "runs", "", "run directories whose models' one-step errors to report, comma-separated glob patterns (e.g. out/study/double_pendulum_hw/default/seed*)")
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the numbers as JSON to this file")
	cmd.Flags().StringVar(&plots, "plots", "", "also draw each group's figure into this directory (predictability_<group>.png)")
	cmd.Flags().IntVar(&workers, "workers", 2, "goroutines evaluating the references (1–64)")
	return cmd
}
