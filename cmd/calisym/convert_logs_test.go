package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
)

// pendulumParamsYAML is a dfki model_parameters.yml.
const pendulumParamsYAML = "m1: 0.6\nm2: 0.5\nl1: 0.2\nl2: 0.3\nr1: 0.2\nr2: 0.25\nI1: 0.03\nI2: 0.04\ng: 9.81\n"

// noInputsParams is a params file without inputs, for LOG arguments: a
// double pendulum whose parameters file is relative to the data root,
// CSVs at 200 Hz to 100 Hz windows of 20 samples every 10, and c.csv
// split off as ood.
const noInputsParams = `convert:
  robot: csv_pendulum
  clock: {column: time}
  state:
    kind: joints
    joints:
      - {name: a, position: q1, velocity: v1}
      - {name: b, position: q2, velocity: v2}
  model:
    kind: double_pendulum
    pendulum: {params_file: pend/model_parameters.yml}
  control: {kind: direct, channels: [tau1, tau2]}
  resample: {rate: 100, work_rate: 200}
  window: {length: 20, stride: 10}
  validate: {max_gap: 0.05}
  split:
    by: file
    rules: [{split: ood, files: [c.csv]}]
`

// writePendulumCSV writes 2 s of a swinging pendulum at 200 Hz (401
// rows, 19 windows); edit may change row i's time.
func writePendulumCSV(t *testing.T, path string, edit func(i int, t *float64)) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("time,q1,q2,v1,v2,tau1,tau2\n")
	for i := range 401 {
		tk := float64(i) / 200
		q1, q2 := 0.5*math.Sin(4*tk), 0.3*math.Cos(3*tk)
		v1, v2 := 2*math.Cos(4*tk), -0.9*math.Sin(3*tk)
		tt := tk
		if edit != nil {
			edit(i, &tt)
		}
		fmt.Fprintf(&b, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", tt, q1, q2, v1, v2, 0.1*math.Sin(tk), -0.1*math.Cos(tk))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// convertLogsFixture is a data root with the pendulum parameters, a
// params file without inputs in its own folder, and logs in a third.
type convertLogsFixture struct {
	dir, root, params string
	a, b, c           string // good logs
}

func newConvertLogsFixture(t *testing.T) *convertLogsFixture {
	t.Helper()
	t.Setenv("CALISYM_DATA", "")
	dir := t.TempDir()
	f := &convertLogsFixture{dir: dir, root: filepath.Join(dir, "root"), params: filepath.Join(dir, "conf", "robot.yaml")}
	for _, d := range []string{filepath.Join(f.root, "pend"), filepath.Join(dir, "conf"), filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.root, "pend", "model_parameters.yml"), []byte(pendulumParamsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.params, []byte(noInputsParams), 0o644); err != nil {
		t.Fatal(err)
	}
	f.a = writePendulumCSV(t, filepath.Join(dir, "logs", "a.csv"), nil)
	f.b = writePendulumCSV(t, filepath.Join(dir, "logs", "b.csv"), nil)
	f.c = writePendulumCSV(t, filepath.Join(dir, "logs", "c.csv"), nil)
	return f
}

// convert runs `calisym convert --quiet --params … --data ROOT --out OUT
// args…`.
func (f *convertLogsFixture) convert(t *testing.T, out string, args ...string) (string, error) {
	t.Helper()
	stdout, _, err := runCLI(t, append([]string{"convert", "--quiet", "--params", f.params, "--data", f.root, "--out", out}, args...)...)
	return stdout, err
}

// splitDirs returns the dataset folders in dir.
func splitDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "meta.json")); e.IsDir() && err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestConvertLogArgsWithoutInputs: a params file without inputs converts
// the LOG arguments, its relative parameters file resolved against
// --data; without LOGs, or without the right --data, the error says
// what to give.
func TestConvertLogArgsWithoutInputs(t *testing.T) {
	f := newConvertLogsFixture(t)
	out := filepath.Join(f.dir, "out")
	stdout, err := f.convert(t, out, f.a, f.b, f.c)
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, stdout)
	}
	for _, want := range []string{"3 files, 57 of 57 windows kept", f.c + ": 2.0 s", "split id: 38 windows", "split ood: 19 windows"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if got := strings.Join(splitDirs(t, out), ","); got != "id,ood" {
		t.Errorf("splits %s, want id,ood", got)
	}

	_, err = f.convert(t, filepath.Join(f.dir, "out2"))
	if !errors.Is(err, convert.ErrSpec) || !strings.Contains(err.Error(), "convert.inputs") || !strings.Contains(err.Error(), "command line") {
		t.Errorf("no LOG and no inputs: %v", err)
	}

	// The parameters file is relative to --data, not to the params file
	// or the current directory; the default root does not have it.
	_, _, err = runCLI(t, "convert", "--quiet", "--params", f.params, "--out", filepath.Join(f.dir, "out3"), f.a)
	for _, want := range []string{"model.pendulum.params_file", `"pend/model_parameters.yml"`, defaultDataRoot, "neither --data nor $CALISYM_DATA", "give --data DIR"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("default data root: err = %v, want it to mention %q", err, want)
		}
	}
	// A copy beside the params file is pointed at.
	conf := filepath.Dir(f.params)
	os.MkdirAll(filepath.Join(conf, "pend"), 0o755)
	os.WriteFile(filepath.Join(conf, "pend", "model_parameters.yml"), []byte(pendulumParamsYAML), 0o644)
	_, _, err = runCLI(t, "convert", "--quiet", "--params", f.params, "--data", filepath.Join(f.dir, "nowhere"), "--out", filepath.Join(f.dir, "out3"), f.a)
	if err == nil || !strings.Contains(err.Error(), "--data "+conf) || !strings.Contains(err.Error(), "(--data)") {
		t.Errorf("params file's directory: err = %v, want it to suggest --data %s", err, conf)
	}
}

// TestConvertCorruptTimes: t = 1e300 in a CSV is an error naming the file
// and line (it panicked in signal.Clock); time going backwards is a
// warning in the output.
func TestConvertCorruptTimes(t *testing.T) {
	f := newConvertLogsFixture(t)
	bad := writePendulumCSV(t, filepath.Join(f.dir, "logs", "bad.csv"), func(i int, t *float64) {
		if i == 200 {
			*t = 1e300
		}
	})
	_, err := f.convert(t, filepath.Join(f.dir, "out"), f.a, bad)
	for _, want := range []string{bad, `time column "time" at line 202`, "1e+300", "corrupt time value"} {
		if !errors.Is(err, convert.ErrTime) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want ErrTime mentioning %q", err, want)
		}
	}
	back := writePendulumCSV(t, filepath.Join(f.dir, "logs", "back.csv"), func(i int, t *float64) {
		if i == 100 {
			*t -= 0.1
		}
	})
	stdout, err := f.convert(t, filepath.Join(f.dir, "out"), back)
	if err != nil || !strings.Contains(stdout, `warning: time goes backwards at 1 of 401 samples, first at time column "time" at line 102: 0.4 s after 0.495 s`) {
		t.Errorf("time going backwards: %v\n%s", err, stdout)
	}
}

// TestConvertSkipBad: --skip-bad leaves out a corrupt file among good ones
// and lists it with the reason; without it the command stops; with no
// good file it fails still.
func TestConvertSkipBad(t *testing.T) {
	f := newConvertLogsFixture(t)
	bad := writePendulumCSV(t, filepath.Join(f.dir, "logs", "bad.csv"), func(i int, t *float64) {
		if i == 200 {
			*t = 1e300
		}
	})
	garbage := filepath.Join(f.dir, "logs", "garbage.csv")
	os.WriteFile(garbage, []byte("time,q1\n0,1,2,3\n"), 0o644)
	out := filepath.Join(f.dir, "out")

	if _, err := f.convert(t, out, f.a, bad, f.c); !errors.Is(err, convert.ErrTime) {
		t.Errorf("without --skip-bad: err = %v, want the corrupt file's ErrTime", err)
	}
	stdout, err := f.convert(t, out, "--skip-bad", f.a, bad, garbage, f.c)
	if err != nil {
		t.Fatalf("--skip-bad: %v\n%s", err, stdout)
	}
	for _, want := range []string{"2 files (2 more skipped), 38 of 38 windows kept", "skipped " + bad + ": corrupt time value: " + `time column "time" at line 202`, "skipped " + garbage + ": ", "line 2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	var rep convert.Report
	raw, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Skipped) != 2 || rep.Skipped[0].Path != bad || !strings.Contains(rep.Skipped[0].Error, "1e+300") || len(rep.Files) != 2 {
		t.Errorf("report.json: %v, skipped %+v", err, rep.Skipped)
	}

	_, err = f.convert(t, filepath.Join(f.dir, "out2"), "--skip-bad", bad, garbage)
	if !errors.Is(err, convert.ErrAllSkipped) || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), "garbage.csv") {
		t.Errorf("nothing converts: err = %v, want ErrAllSkipped listing both files", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "out2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed conversion wrote its output: %v", err)
	}
}

// TestConvertSplitOverrideAndStaleSplits: --split puts every window into
// one split; converting again into the same --out with another split
// layout removes the earlier splits and says so; a dataset folder that no
// conversion wrote is refused, not removed.
func TestConvertSplitOverrideAndStaleSplits(t *testing.T) {
	f := newConvertLogsFixture(t)
	out := filepath.Join(f.dir, "out")
	if stdout, err := f.convert(t, out, f.a, f.c); err != nil || strings.Contains(stdout, "removed") {
		t.Fatalf("first conversion: %v\n%s", err, stdout)
	}
	if got := strings.Join(splitDirs(t, out), ","); got != "id,ood" {
		t.Fatalf("splits %s, want id,ood", got)
	}
	// A file of the user's beside a split folder stays, and so does the
	// folder.
	os.WriteFile(filepath.Join(out, "ood", "notes.txt"), []byte("mine"), 0o644)

	stdout, err := f.convert(t, out, "--split", "train", f.a, f.c)
	if err != nil {
		t.Fatalf("--split train: %v\n%s", err, stdout)
	}
	for _, want := range []string{"split train: 38 windows", "removed the stale split " + filepath.Join(out, "id") + " (an earlier conversion's", "removed the stale split " + filepath.Join(out, "ood") + " ("} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if got := strings.Join(splitDirs(t, out), ","); got != "train" {
		t.Errorf("splits after --split train: %s, want train alone", got)
	}
	if _, err := os.Stat(filepath.Join(out, "id")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale id folder is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "ood", "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("the user's file in a stale split folder: %v", err)
	}
	d, err := dataset.Load(filepath.Join(out, "train"))
	if err != nil || d.Split != "train" || len(d.Windows()) != 38 {
		t.Errorf("train split: %v", err)
	}

	if _, err := f.convert(t, out, "--split", "../x", f.a); err == nil || !strings.Contains(err.Error(), "--split") {
		t.Errorf("--split ../x: err = %v", err)
	}

	// A dataset no conversion wrote (no report in its meta.json).
	foreign := filepath.Join(f.dir, "sim")
	os.MkdirAll(filepath.Join(foreign, "train"), 0o755)
	os.WriteFile(filepath.Join(foreign, "train", "meta.json"), []byte(`{"format_version": 1, "n": 2}`), 0o644)
	_, err = f.convert(t, foreign, f.a, f.c)
	if !errors.Is(err, convert.ErrOutput) || !strings.Contains(err.Error(), "train") {
		t.Errorf("foreign dataset: err = %v, want ErrOutput naming train", err)
	}
	if got := strings.Join(splitDirs(t, foreign), ","); got != "train" {
		t.Errorf("after the refusal %s holds %s, want train alone", foreign, got)
	}
}
