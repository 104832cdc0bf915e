package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/internal/outguard"
	"github.com/calisym/calisym/internal/tty"
	"github.com/calisym/calisym/statemap"
)

func newConvertCmd() *cobra.Command {
	var params, out, data, stamp, split string
	var quiet, skipBad bool
	var shard, merge string
	var workers int
	cmd := &cobra.Command{
		Use:   "convert --params FILE --out DIR [--data ROOT] [--split NAME] [--skip-bad] [LOG…]",
		Short: "Convert robot logs (MCAP, ROS 1 bag, CSV, parquet) into training datasets",
		Long: `convert turns robot logs into calisym datasets as the "convert:" section of
a params YAML says: which message paths or columns are q, v, u and f_c, the
mechanics model for p = M(q)v, the clock, resampling, filtering, windows,
validation and the split. MCAP files (ROS 2, CDR) and ROS 1 bags are
streamed; CSV and parquet tables are read by column.

The logs are the LOG arguments (paths from the current directory), which
replace the params' inputs (then optional), or else the params' inputs.
--data (default $CALISYM_DATA, else ../shared/data) is the root that the
params' relative files resolve against, whether or not LOGs are given:
model.urdf, model.pendulum.params_file and the inputs patterns. Logs under
it are named (in the report, and for split.rules and validate.exclude) by
their path relative to it, others by their full path; file patterns also
match the base name.

One dataset per split is written to --out/<split>, with the conversion
report in --out/report.json; --split NAME puts every window into split NAME
instead of the params' split. Split folders of an earlier conversion in
--out that this one does not write are removed (the output says which), so
that --out never mixes two runs; a dataset folder no conversion wrote is
refused. A file that fails to convert stops the command, or with --skip-bad
is left out and listed with the reason; the command still fails when no
file converts. Progress goes to stderr: a bar on a terminal, else (a log)
one line per file as it starts; the summary (windows kept and rejected
with the reasons, warnings such as time going backwards, skipped files,
and the statistics of every written channel) to stdout.

The logs convert in parallel, --workers at once (default: every core).
On a cluster, --shard INDEX/COUNT converts only that part of the sorted
inputs (a Slurm array task each) into --out/shard-INDEX-of-COUNT.calisym-shard,
and --merge DIR then assembles a directory of every shard into the
datasets of --out: byte for byte those of the unsharded conversion (the
split, by energy quantiles too, needs every file, so it waits for the
merge). Shards and merge take the same --params. Without a merge, train
and eval read a split of the shards as DIR/SPLIT (DIR/train, say): the
same bits as the merged OUT/SPLIT.`,
		Example: `  calisym sim --preset smoke --mcap --out out/sim
  calisym convert --params params/pendulum_sim.yaml --out out/sim-conv out/sim/*.mcap
  calisym convert --params params/crazyflie.yaml --out out/crazyflie
  calisym convert --params my_robot.yaml --data ~/my_robot --split train --skip-bad --out out/my_robot ~/logs/*.mcap
  calisym convert --params my_robot.yaml --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT --out out/shards ~/logs/*.mcap
  calisym convert --params my_robot.yaml --merge out/shards --out out/my_robot`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if params == "" {
				return fmt.Errorf("convert: --params is required")
			}
			if out == "" {
				return fmt.Errorf("convert: --out is required")
			}
			if cmd.Flags().Changed("split") {
				if err := convert.CheckSplitName(split); err != nil {
					return fmt.Errorf("convert: --split: %w", err)
				}
			}
			spec, err := convert.LoadSpec(params)
			if err != nil {
				return err
			}
			in := []outguard.Path{{Flag: "--params", Path: params}, {Flag: "--merge", Path: merge}}
			for _, a := range args {
				in = append(in, outguard.Path{Flag: "LOG", Path: a})
			}
			if err := outguard.Check(in, []outguard.Path{{Flag: "--out", Path: out}}); err != nil {
				return fmt.Errorf("convert: %w", err)
			}
			if err := outguard.CheckDir("--out", out, "convert"); err != nil {
				return fmt.Errorf("convert: %w", err)
			}
			if len(args) > 0 {
				// The logs replace the params' inputs; --data still
				// resolves the params' relative files.
				spec.Inputs = spec.Inputs[:0]
				for _, a := range args {
					abs, err := filepath.Abs(a)
					if err != nil {
						return fmt.Errorf("convert: %w", err)
					}
					spec.Inputs = append(spec.Inputs, abs)
				}
			}
			if stamp != "" {
				spec.Clock.Stamp = stamp
			}
			if split != "" {
				spec.Split = convert.SplitSpec{Default: split}
			}
			if err := checkModelFiles(params, &spec.Model, data, dataRootSource(cmd)); err != nil {
				return err
			}
			var advance func(path string, done, total int64)
			opts := convert.Options{DataRoot: data, Params: params, SkipBad: skipBad, Workers: workers,
				Progress: func(path string, done, total int64) {
					if advance != nil {
						advance(path, done, total)
					}
				}}
			// A bar on a terminal; to a log, one line per file as it starts.
			lines := !quiet && !tty.IsTerminal(cmd.ErrOrStderr())
			var inputs []string
			if lines {
				opts.Open = convertLines(cmd.ErrOrStderr(), &inputs)
			}
			c, err := convert.NewConverter(spec, opts)
			if err != nil {
				return err
			}
			if shard != "" || merge != "" {
				return convertShards(cmd, c, shard, merge, out, len(args) > 0)
			}
			var bar *progressbar.ProgressBar
			if !quiet {
				if inputs, err = c.Inputs(); err != nil {
					return err
				}
				if !lines {
					bar, advance = convertProgress(cmd.ErrOrStderr(), inputs)
				}
			}
			start := time.Now()
			res, err := c.Run(cmd.Context())
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return err
			}
			removed, err := res.Save(cmd.Context(), out)
			if err != nil {
				return err
			}
			if err := outguard.Claim(out, "convert"); err != nil {
				return fmt.Errorf("convert: %w", err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprint(w, res.Report)
			printChannelStats(w, res.Report)
			for _, r := range removed {
				fmt.Fprintf(w, "removed the stale split %s (an earlier conversion's; this one does not write it)\n", r)
			}
			fmt.Fprintf(w, "wrote %s (%.1f s)\n", out, time.Since(start).Seconds())
			return nil
		},
	}
	def := defaultDataDir()
	cmd.Flags().StringVar(&params, "params", "", "params YAML with a convert: section (required)")
	cmd.Flags().StringVar(&out, "out", "", "output directory: one dataset per split and report.json (required)")
	cmd.Flags().StringVar(&data, "data", def, "root of the params' relative files: model.urdf, model.pendulum.params_file and the inputs patterns, LOGs given or not (default $CALISYM_DATA, else ../shared/data; LOG arguments are paths from the current directory)")
	cmd.Flags().StringVar(&stamp, "stamp", "", "override the clock of message logs: header or log_time")
	cmd.Flags().StringVar(&split, "split", "", "put every window into this one split (a folder name such as train), overriding the params' split")
	cmd.Flags().BoolVar(&skipBad, "skip-bad", false, "leave out files that fail to convert, listing each with the reason, instead of stopping (fails still when none converts)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress bar")
	cmd.Flags().IntVar(&workers, "workers", 0, "files converted at once (0: every core); the datasets do not depend on it")
	cmd.Flags().StringVar(&shard, "shard", "", "convert only shard INDEX/COUNT of the sorted inputs (e.g. $SLURM_ARRAY_TASK_ID/8) into --out/shard-INDEX-of-COUNT"+convert.PartialExt+"; --merge assembles the shards")
	cmd.Flags().StringVar(&merge, "merge", "", "assemble the shards in this directory (every one of a --shard conversion with the same --params) into the datasets of --out, byte for byte those of the unsharded conversion")
	cmd.MarkFlagsMutuallyExclusive("shard", "merge")
	return cmd
}

// convertShards runs convert --shard (one shard's files into a partial
// file in out) or --merge (the partial files of dir into the datasets).
func convertShards(cmd *cobra.Command, c *convert.Converter, shard, merge, out string, logs bool) error {
	w := cmd.OutOrStdout()
	start := time.Now()
	if shard != "" {
		sh, err := convert.ParseShard(shard)
		if err != nil {
			return err
		}
		p, err := c.RunShard(cmd.Context(), sh)
		if err != nil {
			return err
		}
		path, err := p.Save(out)
		if err != nil {
			return err
		}
		if err := outguard.Claim(out, "convert"); err != nil {
			return fmt.Errorf("convert: %w", err)
		}
		fmt.Fprintf(w, "shard %s: %d of the %d inputs converted (%d skipped) -> %s (%.1f s)\n", sh, len(p.Files), len(p.Inputs), len(p.Skipped), path, time.Since(start).Seconds())
		return nil
	}
	if logs {
		return fmt.Errorf("convert --merge takes no LOG arguments: the shards hold the converted logs")
	}
	parts, err := convert.LoadPartials(merge)
	if err != nil {
		return err
	}
	res, err := c.Merge(cmd.Context(), parts)
	if err != nil {
		return err
	}
	removed, err := res.Save(cmd.Context(), out)
	if err != nil {
		return err
	}
	if err := outguard.Claim(out, "convert"); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	fmt.Fprint(w, res.Report)
	printChannelStats(w, res.Report)
	for _, r := range removed {
		fmt.Fprintf(w, "removed the stale split %s (an earlier conversion's; this one does not write it)\n", r)
	}
	fmt.Fprintf(w, "merged %d shards of %s -> %s (%.1f s)\n", len(parts), merge, out, time.Since(start).Seconds())
	return nil
}

// defaultDataRoot is convert's data root when neither --data nor
// $CALISYM_DATA is set.
const defaultDataRoot = "../shared/data"

// defaultDataDir is the --data default of the commands that read the
// shared data: $CALISYM_DATA, else defaultDataRoot.
func defaultDataDir() string {
	if d := os.Getenv("CALISYM_DATA"); d != "" {
		return d
	}
	return defaultDataRoot
}

// dataRootSource says where convert's --data value came from, for errors.
func dataRootSource(cmd *cobra.Command) string {
	switch {
	case cmd.Flags().Changed("data"):
		return "--data"
	case os.Getenv("CALISYM_DATA") != "":
		return "$CALISYM_DATA"
	}
	return "the default, as neither --data nor $CALISYM_DATA is set"
}

// checkModelFiles reports a model file of the params (model.urdf,
// model.pendulum.params_file) that is relative to the data root and not
// there, naming the root, where it came from and --data, before the
// conversion fails on a bare "no such file". A copy beside the params
// file is suggested.
func checkModelFiles(params string, m *statemap.ModelSpec, root, source string) error {
	for _, f := range []struct{ field, path string }{
		{"model.urdf", m.URDF},
		{"model.pendulum.params_file", m.Pendulum.ParamsFile},
	} {
		if f.path == "" || filepath.IsAbs(f.path) {
			continue
		}
		full := filepath.Join(root, f.path)
		if _, err := os.Stat(full); err == nil {
			continue
		}
		hint := ""
		if dir := filepath.Dir(params); dir != filepath.Clean(root) {
			if _, err := os.Stat(filepath.Join(dir, f.path)); err == nil {
				hint = fmt.Sprintf(" (the params file's directory has it: --data %s)", dir)
			}
		}
		return fmt.Errorf("convert: %s: %s %q is relative to the data root %s (%s), and %s does not exist; give --data DIR, the directory it is relative to%s",
			params, f.field, f.path, root, source, full, hint)
	}
	return nil
}

// convertProgress returns a progress bar over the bytes of all inputs and
// the callback that advances it as message logs are streamed, several at
// once (tables do not report: the bar ends with the conversion).
func convertProgress(w io.Writer, inputs []string) (*progressbar.ProgressBar, func(path string, done, total int64)) {
	var total int64
	for _, p := range inputs {
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
	// files convert in parallel: the bar shows the bytes read of all
	var mu sync.Mutex
	read := map[string]int64{}
	var sum int64
	return bar, func(path string, done, _ int64) {
		mu.Lock()
		defer mu.Unlock()
		sum += done - read[path]
		read[path] = done
		_ = bar.Set64(sum)
	}
}

// convertLines returns the opener of a conversion whose progress goes to
// a log (w is not a terminal): it writes one line per input file as it
// starts, "convert [i/n] path (size)", n the number of *inputs (set
// before the conversion runs), then opens the file as the default opener
// does.
func convertLines(w io.Writer, inputs *[]string) convert.Opener {
	i := 0
	var mu sync.Mutex // files open in parallel
	return func(path string, spec *convert.Spec) (convert.Source, error) {
		mu.Lock()
		i++
		size := ""
		if st, err := os.Stat(path); err == nil {
			size = fmt.Sprintf(" (%.1f MB)", float64(st.Size())/1e6)
		}
		fmt.Fprintf(w, "convert [%d/%d] %s%s\n", i, len(*inputs), path, size)
		mu.Unlock()
		return convert.OpenSource(path, spec)
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
