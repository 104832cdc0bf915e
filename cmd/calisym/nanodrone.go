package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/internal/experiment"
)

// newNanodroneCmd is `calisym bench nanodrone`: the metric of the
// Nonlinear System Identification Nano-drone Benchmark on trained runs.
func newNanodroneCmd() *cobra.Command {
	var systems, runs, flights, data, paramsDir, jsonOut string
	var workers int
	cmd := &cobra.Command{
		Use:   "nanodrone",
		Short: "Score trained Crazyflie runs in the Nano-drone Benchmark's own metric (Busetto et al. 2025)",
		Long: `nanodrone scores the CaLiSym model and the MLP of trained Crazyflie runs
in the metric of the Nonlinear System Identification Nano-drone Benchmark
(Busetto et al., arXiv 2512.14450), whose flights are data/crazyflie: from
every start sample of the flights, 50 steps of open-loop simulation under
the logged motor commands, and at h = 1, 10, 50 and summed over h = 1…50
the mean error norm of the position [m], the world-frame velocity [m/s],
the orientation (geodesic angle [rad]) and the body angular rate [rad/s].
The state (q, p) is mapped back to those outputs through the params' pose
representation and mass matrix. A model with a port history
(convert.history.port_mean m) is fed, at every step, the logged ports and
their means over the m measured samples before it, built as conversion
builds them (fewer at a flight's start). The state held constant (the benchmark's
naïve model) is scored too, and the benchmark's own table is printed
beside the results.

--runs are run directories (glob patterns; "{system}" stands for each
system's name), one per training seed, as 'calisym bench --variants'
writes them in --out/<system>/<variant>/seed<S>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := intIn("workers", workers, 1, 64, ""); err != nil {
				return fmt.Errorf("bench nanodrone: %w", err)
			}
			if runs == "" {
				return fmt.Errorf("bench nanodrone: --runs is required (run directories, e.g. 'out/study/{system}/default/seed*')")
			}
			if err := checkFileOut("--json", jsonOut, runInputs(splitList(runs), splitList(systems))); err != nil {
				return fmt.Errorf("bench nanodrone: %w", err)
			}
			opt := experiment.NanoOptions{Systems: splitList(systems), Runs: splitList(runs), Flights: splitList(flights),
				DataRoot: data, ParamsDir: paramsDir, Workers: workers, Log: cmd.ErrOrStderr()}
			res, paths, err := experiment.NanoEvaluate(cmd.Context(), opt)
			if err != nil {
				return fmt.Errorf("bench nanodrone: %w", err)
			}
			w := cmd.OutOrStdout()
			per, all := experiment.NanoStarts(res[0])
			var names []string
			for i, p := range paths {
				names = append(names, fmt.Sprintf("%s (%d)", filepath.Base(p), per[i]))
			}
			fmt.Fprintf(w, "Nano-drone Benchmark metric, %d start samples: %s\n\n%s\npaper: %s\n",
				all, strings.Join(names, ", "), experiment.NanoMarkdown(res), experiment.NanoPaperSource)
			if jsonOut != "" {
				doc := struct {
					Command string                  `json:"command"`
					Flights []string                `json:"flights"`
					Starts  int                     `json:"start_samples"`
					Paper   string                  `json:"paper_source"`
					Records []experiment.NanoRecord `json:"records"`
				}{fmt.Sprintf("calisym bench nanodrone --system %s --runs '%s' --flights '%s'", systems, runs, flights), names, all, experiment.NanoPaperSource,
					experiment.NanoRecords(res, paths)}
				if err := writeJSONFile(jsonOut, doc); err != nil {
					return fmt.Errorf("bench nanodrone: %w", err)
				}
			}
			return nil
		},
	}
	def := defaultDataDir()
	cmd.Flags().StringVar(&systems, "system", experiment.RealCrazyflieGravity+","+experiment.RealCrazyflie, "the pose representations of the runs (comma-separated: crazyflie_gravity, crazyflie)")
	cmd.Flags().StringVar(&runs, "runs", "", "run directories, comma-separated glob patterns; {system} stands for the system (e.g. out/study/{system}/default/seed*)")
	cmd.Flags().StringVar(&flights, "flights", "crazyflie/test/*.parquet", "the flights scored, comma-separated glob patterns relative to --data unless absolute")
	cmd.Flags().StringVar(&data, "data", def, "the shared data directory (default $CALISYM_DATA or ../shared/data)")
	cmd.Flags().StringVar(&paramsDir, "params", "params", "directory of the params YAML files")
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the numbers as JSON to this file")
	cmd.Flags().IntVar(&workers, "workers", 1, "goroutines sharing each flight's start samples (1–64)")
	return cmd
}

// splitList splits a comma-separated flag value, dropping empty items; a
// comma inside parentheses does not split, so that a study's offset-free
// variants ("default+force(10,0.9)") stay whole.
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	add := func(f string) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// writeJSONFile writes v as indented JSON (one space), with a final
// newline, to path atomically: the --json files of bench's subcommands.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}
