package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/trainer"
)

// TestRemoveCheckpoints requires a finished system's checkpoints to go,
// and their directory with them unless it holds other files; a directory
// that does not exist is no error.
func TestRemoveCheckpoints(t *testing.T) {
	models := []experiment.ModelSpec{{Name: "CaLiSym-GR"}, {Name: "MLP"}}
	for _, c := range []struct {
		name    string
		files   []string // created in the directory
		dirGone bool
	}{
		{"only checkpoints", []string{"calisym-gr.ckpt", "mlp.ckpt"}, true},
		{"one model's", []string{"mlp.ckpt"}, true},
		{"another file", []string{"calisym-gr.ckpt", "notes.txt"}, false},
		{"no directory", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "checkpoints")
			for _, f := range c.files {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := removeCheckpoints(dir, models); err != nil {
				t.Fatal(err)
			}
			for _, m := range models {
				if _, err := os.Stat(experiment.CheckpointFile(dir, m.Name)); !os.IsNotExist(err) {
					t.Errorf("%s's checkpoint left: %v", m.Name, err)
				}
			}
			if _, err := os.Stat(dir); os.IsNotExist(err) != c.dirGone {
				t.Errorf("directory gone %v, want %v", os.IsNotExist(err), c.dirGone)
			}
		})
	}
}

// TestBenchCheckStoredReports checks a document against the report.json a
// run left (bench --reports --check): the rows reproduce; a number off, a
// report of the other configuration and a missing report are errors.
func TestBenchCheckStoredReports(t *testing.T) {
	out := t.TempDir()
	rep := experiment.Report{System: "Crazyflie", Extra: map[string]string{"configuration": experiment.ConfigFull},
		Models: []experiment.ModelReport{{Name: "CaLiSym-GR", OODARMSE: 0.0040861, IDARMSE: 0.0057942, Horizon: 100, Params: 23688, FLOPsPerStep: 76416,
			MultiHorizon: []experiment.HorizonRow{{Horizon: 5, OODMSE: 1.5011e-05}, {Horizon: 100, OODMSE: 0.0040861}}}}}
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "crazyflie"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "crazyflie", "report.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := func(ood string) string {
		path := filepath.Join(t.TempDir(), "benchmarks.md")
		text := "# x\n\n## Robot benchmarks\n\n| system | model | OOD AR MSE | ID AR MSE | horizon | params | FLOPs/step |\n|---|---|---:|---:|---:|---:|---:|\n" +
			"| `crazyflie --full` | CaLiSym-GR | " + ood + " | 0.005794 | 100 | 23,688 | 76,416 |\n\n" +
			"| horizon | model | 5 | 100 |\n|---|---|---:|---:|\n| `crazyflie --full` | CaLiSym-GR | 1.501e-05 | 0.004086 |\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	args := func(check string, extra ...string) []string {
		return append([]string{"bench", "--system", "crazyflie", "--out", out, "--reports", "--check", check}, extra...)
	}
	if stdout, _, err := runCLI(t, args(doc("0.004086"), "--full")...); err != nil || !strings.Contains(stdout, "the 2 rows") {
		t.Fatalf("the stored report against its rows: %v\n%s", err, stdout)
	}
	// without --system: the systems that have a report in --out (only
	// crazyflie's here), named; before, all four were required
	stdout, _, err := runCLI(t, "bench", "--out", out, "--reports", "--check", doc("0.004086"), "--full")
	if want := "read " + filepath.Join(out, "crazyflie", "report.json") + "\n"; err != nil || !strings.Contains(stdout, want) || !strings.Contains(stdout, "the 2 rows") {
		t.Errorf("--reports without --system: %v, want it to check the one report present and say %q\n%s", err, want, stdout)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"number off", args(doc("0.004087"), "--full"), "column 3 reads \"0.004087\""},
		{"modest asked, full stored", args(doc("0.004086")), "not \"modest (default)\""},
		{"no report", []string{"bench", "--system", "crazyflie_gravity", "--out", out, "--reports", "--check", doc("0.004086"), "--full"}, "report.json that `calisym bench --system crazyflie_gravity --out " + out + "` without --variants writes"},
		{"no report of any system", []string{"bench", "--out", t.TempDir(), "--reports", "--check", doc("0.004086"), "--full"}, "without --variants writes"},
		{"a study's runs", append(args(doc("0.004086"), "--full"), "--variants", "default"), "not a study's runs"},
		{"no document", []string{"bench", "--system", "crazyflie", "--out", out, "--reports", "--full"}, "--check FILE"},
	} {
		_, _, err := runCLI(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
		if c.name == "number off" && !errors.Is(err, errPublished) {
			t.Errorf("number off: %v is not errPublished", err)
		}
	}
}

// TestBenchCheckpointsCLI leaves a checkpoint of the real pendulum's
// CaLiSym after one of two epochs, as an interrupted run would, and runs
// `bench --system double_pendulum_hw --epochs 2 --checkpoints DIR` as a
// user would: it says that it resumes, its report equals that of a run
// without checkpoints to the bit, and the checkpoints are gone once the
// report is written. A checkpoint written with another seed is refused.
func TestBenchCheckpointsCLI(t *testing.T) {
	fixtures.Path(t, "double_pendulum_hw", "trajectories")
	ctx := context.Background()
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	sysDir := filepath.Join(ck, experiment.RealDoublePendulumHW)
	interrupted := func(seed uint64) string {
		t.Helper()
		b, err := experiment.PrepareReal(ctx, experiment.RealDoublePendulumHW, experiment.RealOptions{DataRoot: fixtures.DataDir(),
			ParamsDir: filepath.Join(fixtures.Root(), "params"), Epochs: 2, Workers: 1, Seed: seed, Checkpoints: sysDir})
		if err != nil {
			t.Fatal(err)
		}
		ms := b.Spec.Models[0]
		l, err := experiment.NewLearner(ms, b.Data.Train)
		if err != nil {
			t.Fatal(err)
		}
		stop, cancel := context.WithCancel(ctx)
		defer cancel()
		ms.Train.OnEpoch = func(trainer.EpochStats) { cancel() } // Ctrl-C during the first epoch
		var ie *trainer.Interrupted
		if _, err := trainer.Train(stop, l, b.Data.Train, b.Data.ID, ms.Train); !errors.As(err, &ie) || ie.Done != 1 || ie.Checkpoint == "" {
			t.Fatalf("interrupted training: %v", err)
		}
		return ie.Checkpoint
	}
	bench := func(out string, extra ...string) (string, error) {
		args := append([]string{"bench", "--system", experiment.RealDoublePendulumHW, "--data", fixtures.DataDir(),
			"--params", filepath.Join(fixtures.Root(), "params"), "--epochs", "2", "--workers", "1", "--quiet", "--out", out}, extra...)
		_, stderr, err := runCLI(t, args...)
		return stderr, err
	}
	report := func(out string) *experiment.Report {
		t.Helper()
		rep, err := experiment.ReadReport(filepath.Join(out, experiment.RealDoublePendulumHW, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	path := interrupted(0)
	stderr, err := bench(filepath.Join(dir, "resumed"), "--checkpoints", ck)
	if err != nil {
		t.Fatal(err)
	}
	if want := "resuming CaLiSym-GRB from " + path + " (epoch 1 of 2"; !strings.Contains(stderr, want) {
		t.Errorf("the run does not say %q:\n%s", want, stderr)
	}
	// --quiet keeps one plain line per epoch with the ETA (it printed
	// nothing for the whole training): the resumed model's epoch 2 and
	// both of the MLP's
	for _, want := range []string{`CaLiSym-grb\S* epoch 2/2 \(resumed after 1\) loss`, `MLP\S* epoch 1/2 loss`, `MLP\S* epoch 2/2 loss`} {
		if !regexp.MustCompile(`(?m)^`+want+` .* s, elapsed \S+, ETA \S+$`).MatchString(stderr) || strings.Contains(stderr, "\r") {
			t.Errorf("no plain line %q with the ETA in bench --quiet's log:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(sysDir); !os.IsNotExist(err) {
		t.Errorf("checkpoints left after the report: %v", err)
	}
	if _, err := bench(filepath.Join(dir, "plain"), "--checkpoints", "none"); err != nil {
		t.Fatal(err)
	}
	resumed, plain := report(filepath.Join(dir, "resumed")), report(filepath.Join(dir, "plain"))
	for i, m := range resumed.Models {
		p := plain.Models[i]
		if m.OODARMSE != p.OODARMSE || m.IDARMSE != p.IDARMSE || len(m.History) != 2 || m.History[1].Loss != p.History[1].Loss {
			t.Errorf("%s resumed: OOD %v, ID %v, %d epochs; without checkpoints: OOD %v, ID %v", m.Name, m.OODARMSE, m.IDARMSE, len(m.History), p.OODARMSE, p.IDARMSE)
		}
	}

	interrupted(7)
	if _, err := bench(filepath.Join(dir, "other"), "--checkpoints", ck); !errors.Is(err, trainer.ErrCheckpoint) || !strings.Contains(err.Error(), "seed 7") {
		t.Errorf("a checkpoint of another seed: %v", err)
	}
}

// TestBenchStudyFlags checks the study flags' refusals, before anything
// converts or trains: --seeds without --variants took the study path
// unasked (into --out/<system>/default/seed<S>, not report.json); it is
// refused, naming --variants default and --seed; so is --force without
// --variants, which was ignored.
func TestBenchStudyFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"seeds without variants", []string{"--seeds", "1,2"}, []string{"--seeds are a study's training seeds: give --variants too", "--variants default", "--seed"}},
		{"seeds and wrench without variants", []string{"--seeds", "1", "--wrench", "10,0.9"}, []string{"give --variants too"}},
		{"wrench without variants", []string{"--wrench", "10,0.9"}, []string{"--wrench evaluates a study's saved models: give --variants (--variants default"}},
		{"force without variants", []string{"--force", "10,0.9"}, []string{"--force evaluates a study's saved models: give --variants (--variants default"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"bench", "--system", "crazyflie", "--data", t.TempDir(), "--out", out, "--quiet"}, c.args...)
			_, _, err := runCLI(t, args...)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want it to say %q", err, w)
				}
			}
			if _, serr := os.Stat(out); !os.IsNotExist(serr) {
				t.Errorf("--out created: %v", serr)
			}
		})
	}
}

// TestBenchHelpCost checks the cost of each default that bench --help
// and docs/benchmarks.md state against the training seconds (CaLiSym +
// MLP) of the published tables: the help called every default
// "compute-modest (minutes on two cores)" while the gravity-aware
// Crazyflie's trained for 14 minutes a seed.
func TestBenchHelpCost(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Root(), publishedPage))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	section, err := markdownSection(doc, benchHeading)
	if err != nil {
		t.Fatal(err)
	}
	help, _, err := runCLI(t, "bench", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(help, "compute-modest") {
		t.Errorf("bench --help still calls the default compute-modest:\n%s", help)
	}
	lines := strings.Split(section, "\n")
	// trainSeconds returns the train s cells of the key's CaLiSym row and
	// of the MLP row under it.
	trainSeconds := func(key string) (string, string) {
		last := func(row string) string {
			cells := strings.Split(strings.Trim(row, " |"), "|")
			return strings.TrimSpace(cells[len(cells)-1])
		}
		for i, l := range lines {
			if strings.HasPrefix(l, "| `"+key+"` ") && i+1 < len(lines) && strings.Contains(lines[i+1], "| MLP |") {
				return last(l), last(lines[i+1])
			}
		}
		return "", ""
	}
	for _, s := range []string{"crazyflie_gravity", "crazyflie", "double_pendulum_hw", "anymal_sim", "anymal_sim --full"} {
		t.Run(s, func(t *testing.T) {
			cal, mlp := trainSeconds(s)
			if cal == "" {
				t.Fatalf("no %s rows with train s in %s", s, publishedPage)
			}
			cost := cal + " + " + mlp + " s"
			want := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(s) + ` +` + regexp.QuoteMeta(cost))
			if s == "anymal_sim --full" {
				want = regexp.MustCompile(`--full uses the paper's configuration[^.]*` + regexp.QuoteMeta(cost) + ` \([0-9.]+ hours\) for the quadruped`)
			}
			if !want.MatchString(help) {
				t.Errorf("bench --help does not state %s's cost, %s (%s's train s)", s, cost, publishedPage)
			}
			inDocs := "`" + s + "` " + cost
			if s == "anymal_sim --full" {
				inDocs = "with `--full`,\n`anymal_sim` " + cost
			}
			if !strings.Contains(doc, inDocs) {
				t.Errorf("%s does not state %q in its cost of the defaults", publishedPage, inDocs)
			}
		})
	}
}
