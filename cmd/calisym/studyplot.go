package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/experiment"
)

// newStudyPlotCmd is `calisym bench plot`: a study's figures drawn from
// its published rows (study.json, docs/results/<system>_study.json)
// instead of its runs.
func newStudyPlotCmd() *cobra.Command {
	var out, system, variants, groups string
	cmd := &cobra.Command{
		Use:   "plot STUDY.json",
		Short: "Draw a study's figures (study_<group>.png) from its study.json",
		Long: `plot draws the figures of a study, study_<group>.png in --out, from the
rows of its study.json (as 'calisym bench --variants' writes them in
--out/<system>/, and as docs/results/<system>_study.json publishes them):
per evaluation group the AR MSE by horizon, the mean over the seeds with
error bars from the least to the largest seed's, one colour per variant,
CaLiSym solid, the MLP dashed and the state held constant dotted: the
figures the study itself draws, without its runs.

Every row must have group, model (calisym, mlp or hold), variant,
horizon, mean, min, max and seeds, with min ≤ mean ≤ max.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("bench plot: --out is required (the directory of the figures)")
			}
			// The file first: a missing, empty, cut or other file is
			// named as such, not blamed on a system taken from its path.
			data, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("bench plot: %w", err)
			}
			rows, err := experiment.ReadStudyRows(data)
			if err != nil {
				return fmt.Errorf("bench plot: %s: not a study.json (a JSON list of rows as 'calisym bench --variants' writes): %w", args[0], err)
			}
			if system == "" {
				system = studySystem(args[0])
			}
			title, err := experiment.RealSystemTitle(system)
			if err != nil {
				return fmt.Errorf("bench plot: --system (default: from the file's name, <system>_study.json or <system>/study.json): %w", err)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("bench plot: %w", err)
			}
			paths, err := experiment.StudyPlots(rows, title, out, splitList(variants), splitList(groups))
			if err != nil {
				return fmt.Errorf("bench plot: %s: %w", args[0], err)
			}
			for _, p := range paths {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", p)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory of the figures (required)")
	cmd.Flags().StringVar(&system, "system", "", "the study's system, which titles the figures ("+strings.Join(experiment.RealSystemNames(), ", ")+"; default: from the file's name)")
	cmd.Flags().StringVar(&variants, "only-variants", "", "draw only these variants, in this order (comma-separated; default: every variant of the rows)")
	cmd.Flags().StringVar(&groups, "only-groups", "", "draw only these evaluation groups (comma-separated; default: every group of the rows)")
	return cmd
}

// studySystem returns the system a study's rows are named for:
// <system>_study.json, or study.json in the directory <system> (as bench
// --variants writes it).
func studySystem(path string) string {
	base := filepath.Base(path)
	if s, ok := strings.CutSuffix(base, "_study.json"); ok {
		return s
	}
	return filepath.Base(filepath.Dir(path))
}
