package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/calisym/calisym/bagtools/convert"
)

func newConvertCmd() *cobra.Command {
	var params, out, data, stamp string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "convert --params FILE --out DIR [LOG…]",
		Short: "Convert robot logs (MCAP, ROS 1 bag, CSV, parquet) into training datasets",
		Long: `convert turns robot logs into calisym datasets as the "convert:" section of
a params YAML says: which message paths or columns are q, v, u and f_c, the
mechanics model for p = M(q)v, the clock, resampling, filtering, windows,
validation and the split. MCAP files (ROS 2, CDR) and ROS 1 bags are
streamed; CSV and parquet tables are read by column.

The logs are the LOG arguments, or else the params' inputs (glob patterns
relative to --data). One dataset per split is written to --out/<split>,
with the conversion report in --out/report.json. A progress bar goes to
stderr; the summary (windows kept and rejected with the reasons, and the
statistics of every written channel) to stdout.`,
		Example: `  calisym sim --preset smoke --mcap --out out/sim
  calisym convert --params params/pendulum_sim.yaml --out out/sim-conv out/sim/*.mcap
  calisym convert --params params/crazyflie.yaml --out out/crazyflie`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if params == "" {
				return fmt.Errorf("convert: --params is required")
			}
			if out == "" {
				return fmt.Errorf("convert: --out is required")
			}
			spec, err := convert.LoadSpec(params)
			if err != nil {
				return err
			}
			root := data
			if len(args) > 0 {
				spec.Inputs = spec.Inputs[:0]
				for _, a := range args {
					abs, err := filepath.Abs(a)
					if err != nil {
						return fmt.Errorf("convert: %w", err)
					}
					spec.Inputs = append(spec.Inputs, abs)
				}
				// The logs are absolute now; --data still resolves the
				// params' relative files (model.urdf, params_file).
			}
			if stamp != "" {
				spec.Clock.Stamp = stamp
			}
			var advance func(path string, done, total int64)
			c, err := convert.NewConverter(spec, convert.Options{DataRoot: root, Params: params,
				Progress: func(path string, done, total int64) {
					if advance != nil {
						advance(path, done, total)
					}
				}})
			if err != nil {
				return err
			}
			var bar *progressbar.ProgressBar
			if !quiet {
				inputs, err := c.Inputs()
				if err != nil {
					return err
				}
				bar, advance = convertProgress(cmd.ErrOrStderr(), inputs)
			}
			start := time.Now()
			res, err := c.Run(cmd.Context())
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return err
			}
			if err := res.Save(out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprint(w, res.Report)
			printChannelStats(w, res.Report)
			fmt.Fprintf(w, "wrote %s (%.1f s)\n", out, time.Since(start).Seconds())
			return nil
		},
	}
	def := os.Getenv("CALISYM_DATA")
	if def == "" {
		def = filepath.Join("..", "shared", "data")
	}
	cmd.Flags().StringVar(&params, "params", "", "params YAML with a convert: section (required)")
	cmd.Flags().StringVar(&out, "out", "", "output directory: one dataset per split and report.json (required)")
	cmd.Flags().StringVar(&data, "data", def, "directory the params' inputs (when no LOG is given), model.urdf and params_file are relative to (default $CALISYM_DATA or ../shared/data)")
	cmd.Flags().StringVar(&stamp, "stamp", "", "override the clock of message logs: header or log_time")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bar")
	return cmd
}

// convertProgress returns a progress bar over the bytes of all inputs and
// the callback that advances it as message logs are streamed (tables move
// it when the next file starts).
func convertProgress(w io.Writer, inputs []string) (*progressbar.ProgressBar, func(path string, done, total int64)) {
	base := map[string]int64{}
	var total int64
	for _, p := range inputs {
		base[p] = total
		if st, err := os.Stat(p); err == nil {
			total += st.Size()
		}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("convert"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return bar, func(path string, done, _ int64) {
		_ = bar.Set64(base[path] + done)
	}
}

// printChannelStats writes, per split, the count, mean, standard
// deviation and range of every written column.
func printChannelStats(w io.Writer, rep *convert.Report) {
	names := make([]string, 0, len(rep.Splits))
	for k := range rep.Splits {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(w, "\nsplit %s, per channel:\n", k)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "channel\tcount\tmean\tstd\tmin\tmax\t")
		for _, c := range rep.Splits[k].Channels {
			fmt.Fprintf(tw, "%s\t%d\t%.6g\t%.6g\t%.6g\t%.6g\t\n", c.Name, c.Count, c.Mean, c.Std, c.Min, c.Max)
		}
		tw.Flush()
	}
}
