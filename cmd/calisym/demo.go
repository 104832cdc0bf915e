package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/outguard"
)

func newDemoCmd() *cobra.Command {
	var out, preset string
	var epochs, workers int
	var quiet bool
	var check string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Simulate the double pendulum, train CaLiSym (GRB) and an MLP, evaluate out of distribution, write a report",
		Long: `demo runs the paper's double-pendulum benchmark end to end in the chaotic
regime: it simulates the controlled dissipative pendulum (DOP853, 100 Hz,
random sinusoidal torques), trains the lifted GRB-SympNet and a 10K-parameter
MLP by the same loop, rolls both out autoregressively on in-distribution and
out-of-distribution (36% higher energy) trajectories, and writes report.md,
report.json, the models and the plots into --out.

Presets: default (under 10 minutes on two cores), paper (the paper's data
size and 500 epochs), smoke (seconds).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, spec, err := experiment.PendulumPreset(preset)
			if err != nil {
				return err
			}
			if err := outguard.CheckDir("--out", out, "demo"); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			for i := range spec.Models {
				if epochs > 0 {
					spec.Models[i].Train.Epochs = epochs
				}
				spec.Models[i].Train.Workers = workers
				if !quiet {
					spec.Models[i].Train.Progress = cmd.ErrOrStderr()
				}
			}
			log := cmd.ErrOrStderr()
			start := time.Now()
			fmt.Fprintf(log, "simulating %d+%d+%d trajectories of %.0f s (energies %v J, OOD ×%.2f)\n",
				data.TrainTraj, data.IDTraj, data.OODTraj, float64(data.Sim.Steps)*data.Sim.Dt, data.TrainEnergy, data.OODFactor)
			sets, err := experiment.SimulatePendulum(cmd.Context(), data)
			if err != nil {
				return err
			}
			for _, ds := range sets {
				if err := ds.Save(filepath.Join(out, "data", ds.Split)); err != nil {
					return err
				}
			}
			fmt.Fprintf(log, "simulated in %.1f s; datasets in %s\n", time.Since(start).Seconds(), filepath.Join(out, "data"))
			rep, err := experiment.Run(cmd.Context(), spec, experiment.Datasets{Train: sets[0], ID: sets[1], OOD: sets[2]}, out, log)
			if err != nil {
				return err
			}
			if err := outguard.Claim(out, "demo"); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "\n%s", experiment.Table(rep))
			if rep.OODChangePercent != nil {
				fmt.Fprintf(w, "\nCaLiSym OOD AR MSE vs MLP: %+.1f%% (paper: -69.5%%)\n", *rep.OODChangePercent)
			}
			fmt.Fprintf(w, "report: %s (total %.0f s)\n", filepath.Join(out, "report.md"), time.Since(start).Seconds())
			if check != "" {
				if err := checkPublishedFile(w, check, demoHeading, publishedRows("", rep)); err != nil {
					return fmt.Errorf("demo: %w", err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "out/demo", "output directory")
	cmd.Flags().StringVar(&preset, "preset", "default", fmt.Sprintf("benchmark preset %v", experiment.PendulumPresetNames()))
	cmd.Flags().IntVar(&epochs, "epochs", 0, "override the preset's epochs (0: keep)")
	cmd.Flags().IntVar(&workers, "workers", 2, "training goroutines")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bars")
	cmd.Flags().StringVar(&check, "check", "", "after the run, check that the tables of this Markdown file (its \""+demoHeading+"\" section: "+publishedPage+") hold the regenerated numbers; fail if not")
	return cmd
}

// demoHeading is the section of publishedPage whose tables calisym demo --check
// compares with a fresh run of the default preset.
const demoHeading = "## The double-pendulum benchmark"

// loadDataset loads a dataset directory, or a split of a sharded
// conversion (readDataset), with an error naming it.
func loadDataset(dir string) (*dataset.Dataset, error) {
	return readDataset(dir, false)
}
