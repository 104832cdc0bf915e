package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/outguard"
	"github.com/calisym/calisym/trainer"
)

func newBenchCmd() *cobra.Command {
	var out, system, data, paramsDir string
	var epochs, workers int
	var full, reports bool
	var prog progressFlags
	var check, checkpoints, variants, seeds, force, wrench string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Real-robot benchmarks: convert the logs, train CaLiSym and an MLP, evaluate out of distribution, write reports",
		Long: `bench runs the real-robot benchmarks end to end: it converts the logs in
--data with the robot's params YAML (bagtools/convert), splits them by
whole files into ID training, ID test and OOD sets, trains CaLiSym and an
MLP baseline by the same loop, rolls both out autoregressively and writes
report.md, report.json, the models and the plots into --out/<system>, and
a table of all systems into --out/summary.md.

Systems:
  crazyflie           Crazyflie 2.1 Brushless, q = SE(3) log relative to each
                      window's first pose (the paper's choice); GR-SympNet
                      (quadrotor preset) vs MLP, horizon 100 (1 s)
  crazyflie_gravity   the same with gravity-aware q (position and yaw
                      relative, roll and pitch absolute)
  double_pendulum_hw  the real double pendulum; GRB-SympNet vs MLP, horizon
                      200 (2 s)
  anymal_sim          ANYmal D SIMULATED in MuJoCo (data/anymal_sim, not a real
                      robot), the paper's quadruped layout with the params'
                      port history (n_u = 48, 192-dim lift; --full: the
                      paper's 132-dim lift), GR-SympNet (the quadruped preset's
                      18 layers of width 66, 614K parameters) vs an MLP of
                      two layers of 512, horizon 100 (1 s)
  all                 the four above

What the default configuration costs: the training time per seed,
CaLiSym + MLP, measured for docs/benchmarks.md ("Robot benchmarks", the
train s column: seed 1 on two cores of an AMD EPYC shared with other
work); converting the logs and evaluating add to it:
  crazyflie_gravity   683 + 153 s (about 14 minutes)
  crazyflie           518 + 52 s (about 10 minutes)
  double_pendulum_hw  13 + 8 s
  anymal_sim          234 + 44 s (about 5 minutes)
A study (--variants) trains once per variant and seed: its default
variant costs that each seed, the others as their windows and epochs.
--full uses the paper's configuration (Appendix D: 500 epochs, training
stride 10), hours: 12,850 + 7,449 s (5.7 hours) for the quadruped. It
writes training checkpoints every 5 epochs to
--out/<system>/checkpoints, and the same command run again resumes from
them (Ctrl-C stops after the batch under way and writes one). A
system's checkpoints are removed once its report is written; a checkpoint
written training another model, on other data or with other training
settings (seed, rates, batch, schedule) is an error, not resumed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := intIn("epochs", epochs, 0, -1, "0: the configuration's"); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			systems := []string{system}
			if system == "all" {
				systems = experiment.RealSystemNames()
			} else if !slices.Contains(experiment.RealSystemNames(), system) {
				return fmt.Errorf("bench: unknown system %q (known: %s, all)", system, strings.Join(experiment.RealSystemNames(), ", "))
			}
			log := cmd.ErrOrStderr()
			w := cmd.OutOrStdout()
			progress, err := prog.writer(log)
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			if seeds != "" && variants == "" {
				// a study's seeds: without --variants they once ran the
				// study of the default variant unasked, into
				// <out>/<system>/default/seed<S>/ and not report.json
				return errors.New("bench: --seeds are a study's training seeds: give --variants too (--variants default: the system's default, each seed in --out/<system>/default/seed<S>); a single run without a study takes --seed")
			}
			if reports {
				if variants != "" {
					return errors.New("bench: --reports checks the report.json of runs without --variants (--out/<system>/report.json), not a study's runs")
				}
				return checkStoredReports(w, systems, out, full, check, !cmd.Flags().Changed("system"))
			}
			if err := outguard.CheckDir("--out", out, "bench"); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			if wrench != "" && variants == "" {
				return errors.New("bench: --wrench evaluates a study's saved models: give --variants (--variants default: the system's default)")
			}
			if force != "" && variants == "" {
				// it was ignored without a study
				return errors.New("bench: --force evaluates a study's saved models: give --variants (--variants default: the system's default)")
			}
			if variants != "" {
				if err := runStudy(cmd, systems, variants, seeds, force, wrench, experiment.RealOptions{DataRoot: data, ParamsDir: paramsDir, Full: full, Epochs: epochs, Workers: workers, OneStep: true}, out, progress); err != nil {
					return err
				}
				return outguard.Claim(out, "bench")
			}
			// summary.md says that every system ran: an earlier run's
			// must not stay should this one fail.
			summaryPath := filepath.Join(out, "summary.md")
			if err := atomicfile.Remove(summaryPath); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			start := time.Now()
			var published []publishedRow
			var summary strings.Builder
			summary.WriteString("| system | model | OOD AR MSE | ID AR MSE | horizon | params | FLOPs/step | ε_J max | train s |\n")
			summary.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
			for _, s := range systems {
				opt := experiment.RealOptions{DataRoot: data, ParamsDir: paramsDir, Full: full, Epochs: epochs, Seed: seed, Workers: workers}
				switch {
				case checkpoints == "none":
				case checkpoints != "":
					opt.Checkpoints = filepath.Join(checkpoints, s)
				case full:
					opt.Checkpoints = filepath.Join(out, s, "checkpoints")
				}
				opt.Progress = progress
				t0 := time.Now()
				b, err := experiment.PrepareReal(cmd.Context(), s, opt)
				if err != nil {
					return err
				}
				fmt.Fprintf(log, "%s: converted in %.1f s: %d training windows (%d transitions), %d ID-test and %d OOD episodes\n",
					s, time.Since(t0).Seconds(), len(b.Data.Train.Windows()), len(b.Data.Train.UniqueTransitions()),
					len(b.Data.ID.Episodes), len(b.Data.OOD.Episodes))
				dir := filepath.Join(out, s)
				rep, err := b.Run(cmd.Context(), dir, log)
				if ie := (*trainer.Interrupted)(nil); errors.As(err, &ie) && ie.Checkpoint != "" {
					return fmt.Errorf("bench: %s: %w; the same command resumes from it", s, err)
				}
				if err != nil {
					return err
				}
				if opt.Checkpoints != "" {
					if err := removeCheckpoints(opt.Checkpoints, b.Spec.Models); err != nil {
						return fmt.Errorf("bench: %s: %w", s, err)
					}
				}
				fmt.Fprintf(w, "\n## %s (%s)\n\n%s", s, rep.System, experiment.Table(rep))
				if rep.OODChangePercent != nil {
					fmt.Fprintf(w, "\nCaLiSym OOD AR MSE vs MLP: %+.1f%%\n", *rep.OODChangePercent)
				}
				fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, "report.md"))
				published = append(published, publishedRows(benchKey(s, full), rep)...)
				for _, m := range rep.Models {
					fmt.Fprintf(&summary, "| %s | %s | %s | %s | %d | %d | %d | %.1e | %.0f |\n", s, m.Name, benchNum(m.OODARMSE), benchNum(m.IDARMSE),
						m.Horizon, m.Params, m.FLOPsPerStep, m.SymplecticResidualMax, m.TrainSeconds)
				}
			}
			args := []string{"calisym bench", "--system " + system, "--out " + out}
			if epochs > 0 {
				args = append(args, fmt.Sprintf("--epochs %d", epochs))
			}
			if seed != 0 {
				args = append(args, fmt.Sprintf("--seed %d", seed))
			}
			if full {
				args = append(args, "--full")
			}
			fmt.Fprintf(&summary, "\n`%s` (%.0f s)\n", strings.Join(args, " "), time.Since(start).Seconds())
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			if err := atomicfile.WriteFile(summaryPath, []byte(summary.String())); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			if err := outguard.Claim(out, "bench"); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			fmt.Fprintf(w, "\n%s", summary.String())
			if check != "" {
				if err := checkPublishedFile(w, check, benchHeading, published); err != nil {
					return fmt.Errorf("bench: %w", err)
				}
			}
			return nil
		},
	}
	def := defaultDataDir()
	cmd.Flags().StringVar(&system, "system", "all", "crazyflie, crazyflie_gravity, double_pendulum_hw, anymal_sim or all")
	cmd.Flags().StringVar(&out, "out", "out/bench", "output directory (one subdirectory per system)")
	cmd.Flags().StringVar(&data, "data", def, "the shared data directory (default $CALISYM_DATA or ../shared/data)")
	cmd.Flags().StringVar(&paramsDir, "params", "params", "directory of the params YAML files")
	cmd.Flags().IntVar(&epochs, "epochs", 0, "override every model's epochs (0: the configuration's)")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "override every model's training seed (0: the configuration's, 1)")
	cmd.Flags().IntVar(&workers, "workers", 2, "training and evaluation goroutines")
	cmd.Flags().BoolVar(&full, "full", false, "the paper's training configuration instead of the default (hours; see the costs above)")
	prog.add(cmd.Flags())
	cmd.Flags().StringVar(&checkpoints, "checkpoints", "", "training checkpoints in DIR/<system>, resumed when present (default with --full: --out/<system>/checkpoints; \"none\": no checkpoints)")
	cmd.Flags().BoolVar(&reports, "reports", false, "with --check: check the reports a run without --variants left in --out, --out/<system>/report.json, instead of running (the transcription of a run in docs/benchmarks.md, e.g. the hours of --full, without repeating it); without --system, those of the systems that have one")
	cmd.Flags().StringVar(&variants, "variants", "", "run a study instead: these variants (comma-separated: "+strings.Join(variantNames(), ", ")+"; default: default) × --seeds, each in --out/<system>/<variant>/seed<S>, and --out/<system>/study.md with the evaluation groups' errors over the seeds")
	cmd.Flags().StringVar(&force, "force", "", "with --variants: also evaluate every run's models with offset-free rollouts, reported as <variant>+force: the force estimate's window and decay, \"10,0.9\"; several settings separated by ';' (\"10,0.9;32,1\") are reported as <variant>+force(10,0.9) and so on")
	cmd.Flags().StringVar(&wrench, "wrench", "", "with --variants: also evaluate every run's models with rollouts offset-free by the wrench estimate on the floating base, reported as <variant>+wrench: "+wrenchFlagHelp+"; several settings separated by ';' are reported as <variant>+wrench(W,z,λ,B) each")
	cmd.Flags().StringVar(&seeds, "seeds", "", "with --variants: the study's training seeds (comma-separated; default 1,2,3); a run without a study takes --seed")
	cmd.AddCommand(newNanodroneCmd(), newStudyPlotCmd(), newPredictabilityCmd())
	cmd.Flags().StringVar(&check, "check", "", "after the run, check that the results tables of this Markdown file (its \""+benchHeading+"\" section: "+publishedPage+") hold the regenerated numbers; fail if not")
	return cmd
}

// benchHeading is the section of publishedPage whose tables calisym bench
// --check compares with a fresh run.
const benchHeading = "## Robot benchmarks"

// benchNum formats an error for a table; a diverged model's is infinite.
func benchNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "∞"
	}
	return fmt.Sprintf("%.4g", v)
}

// benchKey is the key of a system's rows in publishedPage's tables: its name,
// and "anymal_sim --full" for the full configuration, whose rows sit
// beside the modest ones.
func benchKey(system string, full bool) string {
	if full {
		return system + " --full"
	}
	return system
}

// removeCheckpoints deletes the checkpoints of a finished system and then
// its checkpoint directory, if that is empty: the report and the models
// hold the run now, and a later run starts afresh.
func removeCheckpoints(dir string, models []experiment.ModelSpec) error {
	for _, m := range models {
		if err := atomicfile.Remove(experiment.CheckpointFile(dir, m.Name)); err != nil {
			return err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
			return nil // other files: leave the directory
		}
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// checkStoredReports checks the tables of the document at check against
// the reports of systems stored under out, as --check does after a run:
// out/<system>/report.json, which a run without --variants writes. With
// present (--system not given), the systems of out that have one are
// checked, and only none is an error; otherwise every system's must be
// there. Each report must be of the configuration asked for (--full or
// not). It names the reports it read.
func checkStoredReports(w io.Writer, systems []string, out string, full bool, check string, present bool) error {
	if check == "" {
		return errors.New("bench: --reports checks stored reports against --check FILE: give the file")
	}
	want := experiment.ConfigModest
	if full {
		want = experiment.ConfigFull
	}
	if present {
		var have []string
		for _, s := range systems {
			if _, err := os.Stat(filepath.Join(out, s, "report.json")); err == nil {
				have = append(have, s)
			}
		}
		if len(have) == 0 {
			return fmt.Errorf("bench: --reports: no %s for any system (%s): it reads the report.json that `calisym bench --out %s` without --variants writes; a study's runs (--variants) are in <system>/<variant>/seed<S>", filepath.Join(out, "<system>", "report.json"), strings.Join(systems, ", "), out)
		}
		systems = have
	}
	var published []publishedRow
	var read []string
	for _, s := range systems {
		path := filepath.Join(out, s, "report.json")
		rep, err := experiment.ReadReport(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("bench: --reports: %s: no report: --reports reads the report.json that `calisym bench --system %s --out %s` without --variants writes; a study's runs (--variants) are in %s/<variant>/seed<S>", path, s, out, filepath.Join(out, s))
		}
		if err != nil {
			return fmt.Errorf("bench: --reports: %w", err)
		}
		read = append(read, path)
		if got := rep.Configuration(); got != want {
			return fmt.Errorf("bench: --reports: %s is of the %q configuration, not %q: give the --out of that run, and --full for a full one", path, got, want)
		}
		published = append(published, publishedRows(benchKey(s, full), rep)...)
	}
	fmt.Fprintf(w, "read %s\n", strings.Join(read, ", "))
	if err := checkPublishedFile(w, check, benchHeading, published); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// variantNames lists the study's variants.
func variantNames() []string {
	var out []string
	for _, v := range experiment.Variants() {
		out = append(out, v.Name)
	}
	return out
}

// runStudy runs bench's study: every variant and seed on each system's
// data, converted once.
func runStudy(cmd *cobra.Command, systems []string, variants, seeds, force, wrench string, opt experiment.RealOptions, out string, progress io.Writer) error {
	names := strings.Split(cmp.Or(variants, "default"), ",")
	vs, err := experiment.LookupVariants(names)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	ss, err := parseInts(cmp.Or(seeds, "1,2,3"))
	if err != nil {
		return fmt.Errorf("bench: --seeds: %w", err)
	}
	var sd []uint64
	for _, v := range ss {
		if v < 1 {
			return fmt.Errorf("bench: --seeds: seed %d (want 1 or more)", v)
		}
		sd = append(sd, uint64(v))
	}
	offsets, err := parseOffsets(force, wrench)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if wrench != "" {
		// refused before any system trains
		for _, s := range systems {
			spec, err := experiment.LoadRealSpec(s, opt)
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			if !spec.Floating() {
				return fmt.Errorf("bench: --wrench: %s has no floating base (convert.state.kind %s): the wrench estimate acts on a floating base's momenta", s, spec.State.Kind)
			}
		}
	}
	log := cmd.ErrOrStderr()
	opt.Progress = progress
	for _, s := range systems {
		b, err := experiment.PrepareReal(cmd.Context(), s, opt)
		if err != nil {
			return err
		}
		dir := filepath.Join(out, s)
		if _, err := b.Study(cmd.Context(), vs, sd, dir, offsets, log); err != nil {
			return err
		}
		md, err := os.ReadFile(filepath.Join(dir, "study.md"))
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "\n## %s\n\n%s", s, md)
	}
	return nil
}

// parseOffsets reads bench's --force and --wrench: each empty, or one or
// more settings separated by ';'; the force passes first, then the
// wrench passes, each in the order given.
func parseOffsets(force, wrench string) ([]trainer.EvalOptions, error) {
	var out []trainer.EvalOptions
	if force != "" {
		for f := range strings.SplitSeq(force, ";") {
			fe, err := parseForce(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("--force: %w", err)
			}
			out = append(out, trainer.EvalOptions{Force: fe})
		}
	}
	if wrench != "" {
		for w := range strings.SplitSeq(wrench, ";") {
			we, err := parseWrench(strings.TrimSpace(w))
			if err != nil {
				return nil, fmt.Errorf("--wrench: %w", err)
			}
			out = append(out, trainer.EvalOptions{Wrench: we})
		}
	}
	return out, nil
}
