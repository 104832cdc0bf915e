package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/statemap"
)

// HeavyEnv, set to 1, makes TestReadmeCommands run the documentation's
// heavy commands too (readmeHeavy); scripts/test.sh, which CI runs, sets it.
const HeavyEnv = "CALISYM_README_HEAVY"

// readmeNotRun lists the shell commands of the documentation (the README
// and docs/, fixtures.DocPages) that TestReadmeCommands does not run, and
// why: each is ROS-2-only or needs a full-size run. A command matching no
// entry runs; an entry matching no command fails the test (the table is
// kept to the pages).
var readmeNotRun = []struct {
	pattern string
	why     string
}{
	{`^bash scripts/test\.sh$`, "the test command itself: it runs this test"},
	{`^ros2 launch calisym `, "ROS 2 only (CI has no ROS 2): TestLaunchArguments (internal/rospkg) checks every `ros2 launch` line against the launch files as launch does"},
	{`^ros2 topic pub `, "ROS 2 only: needs a running ROS 2 graph with the node"},
	{`^go run \./cmd/calisym bench .*--variants `, "a study: every variant × seed at full size (6 runs of the quadruped, about 25 minutes on two cores); TestAnymalStudy (internal/experiment) runs a study of two variants and two seeds on one log at smoke size, and TestRolloutTraining the training it varies"},
	{`^go run \./cmd/calisym bench nanodrone `, "scores the saved runs of a study (its --variants command, not run here); TestNanoRealFlight (internal/experiment) trains a tiny run on a real flight and scores it, and TestNanoMetricKnownError checks the metric"},
	{`^go run \./cmd/calisym bench predictability `, "reads the saved runs of a study for their models' one-step rows (its --variants command, not run here) and writes the committed JSON; TestPendulumPredictability (internal/experiment) re-measures everything else and compares it with docs/results/double_pendulum_hw_predictability.json, TestPredictabilityFlags checks the command's flags"},
	{`^go run \./cmd/calisym bench .*--reports --check docs/benchmarks\.md`, "checks the tables of docs/benchmarks.md against the report.json files of a full default `bench` run (about 9 minutes on two cores); no smaller run can reproduce those numbers. cmd/calisym's tests of bench --reports --check run the check on fixtures"},
}

// readmeHeavy lists the commands run only when HeavyEnv=1 (scripts/test.sh
// sets it), with why.
var readmeHeavy = []struct {
	pattern string
	why     string
}{
	{`^go run \./cmd/calisym bench --out \S+ --check docs/benchmarks\.md`, "all four robots: about 9 minutes at its size; at --epochs 1 still 2–4 minutes (the simulated ANYmal's conversion, training pass and evaluation of a 316K-parameter model); run at --epochs 1 without --check, whose numbers are those of the full size"},
	{`^go run \./cmd/calisym bench --system anymal_sim`, "the quadruped: about 7 minutes at its size, 2–4 at --epochs 1"},
}

// readmeLongRunning matches the commands that serve until interrupted (a
// live node, a replay served to Foxglove in real time): they run for
// readmeServe, must not exit with an error before, and must exit 0 on
// Ctrl-C.
var readmeLongRunning = regexp.MustCompile(`--transport foxglove|--foxglove `)

const readmeServe = 3 * time.Second

// readmeCommand is one shell command of a documentation page.
type readmeCommand struct {
	line int    // of its first line
	text string // continuations joined, comment dropped
}

// readmeCommands returns the shell commands of doc: every line of its
// ```sh blocks (backslash continuations joined, comments dropped) and
// every inline code span that is a complete `go run ./cmd/calisym …`
// command.
func readmeCommands(doc string) []readmeCommand {
	var out []readmeCommand
	lines := strings.Split(doc, "\n")
	in := false
	inline := regexp.MustCompile("`(go run \\./cmd/calisym [^`]+)`")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in && strings.TrimSpace(l) == "```sh"
			continue
		}
		if !in {
			for _, m := range inline.FindAllStringSubmatch(l, -1) {
				out = append(out, readmeCommand{i + 1, strings.TrimSpace(m[1])})
			}
			continue
		}
		start := i
		// A backslash continues the command, and so does an open quote.
		for (strings.HasSuffix(strings.TrimRight(l, " "), `\`) || strings.Count(l, `"`)%2 == 1) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(strings.TrimRight(l, " "), `\`) + " " + strings.TrimSpace(lines[i])
		}
		if j := strings.Index(l, " #"); j >= 0 && !strings.ContainsAny(l[:j], `"'`) {
			l = l[:j]
		}
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, readmeCommand{start + 1, l})
		}
	}
	return out
}

// matchTable returns the reason of the first entry of table matching c.
func matchTable(table []struct{ pattern, why string }, c string, used []bool) (string, bool) {
	for i, e := range table {
		if regexp.MustCompile(e.pattern).MatchString(c) {
			used[i] = true
			return e.why, true
		}
	}
	return "", false
}

// smokeArgs rewrites a calisym command line to smoke size: out/ into the
// test's directory, the shared data where the test finds it, presets to
// smoke, epochs to 1 (and --select-from within them), Foxglove servers on a free port, and for bench
// --epochs 1 without --check (whose numbers are the full size's).
func smokeArgs(args []string, out string) []string {
	var r []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		prev := ""
		if len(r) > 0 {
			prev = r[len(r)-1]
		}
		switch {
		case prev == "--epochs":
			a = "1"
		case prev == "--select-from":
			a = "1" // within the one epoch
		case prev == "--preset":
			a = "smoke"
		case prev == "--foxglove" || prev == "--addr":
			a = "127.0.0.1:0"
		case args[0] == "bench" && a == "--check":
			i++ // and its file
			continue
		case strings.HasPrefix(a, "out/"):
			a = filepath.Join(out, strings.TrimPrefix(a, "out/"))
		case strings.HasPrefix(a, "../shared/data"):
			a = fixtures.DataDir() + strings.TrimPrefix(a, "../shared/data")
		}
		r = append(r, a)
	}
	has := func(f string) bool { return slices.Contains(r, f) }
	// A command left at its default --out (out/demo, out/pendulum-data,
	// out/bench, out/mpc) writes into the test's directory too, not into
	// the repository's out/; and a bench line without --out is then the
	// same run as one into out/bench, which the test does not repeat.
	if def, ok := readmeDefaultOut[r[0]]; ok && !has("--out") && (r[0] != "bench" || len(r) < 2 || strings.HasPrefix(r[1], "-")) {
		r = append(r, "--out", filepath.Join(out, def))
	}
	switch r[0] {
	case "demo", "sim", "mpc":
		if !has("--preset") {
			r = append(r, "--preset", "smoke")
		}
	case "bench", "train":
		// bench plot draws a study.json: it trains nothing
		if !has("--epochs") && (len(r) < 2 || r[1] != "plot") {
			r = append(r, "--epochs", "1")
		}
	case "node":
		if has("--transport") && !has("--addr") {
			r = append(r, "--addr", "127.0.0.1:0")
		}
	}
	return r
}

// readmeDefaultOut is the default --out of the commands that write a
// folder, under out/.
var readmeDefaultOut = map[string]string{"demo": "demo", "sim": "pendulum-data", "bench": "bench", "mpc": "mpc"}

// benchSystems returns the systems a bench command line runs and its
// --out.
func benchSystems(args []string) (systems []string, out string) {
	sys := "all"
	for i := 1; i < len(args); i++ {
		switch args[i-1] {
		case "--system":
			sys = args[i]
		case "--out":
			out = args[i]
		}
	}
	if sys == "all" {
		return []string{"crazyflie", "crazyflie_gravity", "double_pendulum_hw", "anymal_sim"}, out
	}
	return []string{sys}, out
}

// anymalStandIn writes, where the documented ANYmal commands expect the
// model `bench --system anymal_sim` trains (a heavy command), a stand-in:
// the quadruped preset with random parameters and the names of
// params/anymal.yaml, so that replay and node run on the real logs.
func anymalStandIn(t *testing.T, path string) {
	t.Helper()
	root := fixtures.Path(t, "anymal_sim")
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "anymal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	m := livetest.QuadrupedModel(t, "anymal stand-in (random)", smp.Coordinates(), smp.Ports())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
}

// runServing runs a command that serves until interrupted: for
// readmeServe, then Ctrl-C; it must still run then (or have exited 0) and
// exit 0.
func runServing(bin string, args []string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = fixtures.Root()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(readmeServe):
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		return out.String(), err
	}
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("still running 30 s after Ctrl-C")
	}
}

// TestReadmeCommands runs every shell command of the documentation that
// runs without ROS 2 (the README, then every page of docs/, in the order
// of fixtures.DocPages, each page's commands in its order), at smoke size
// (smokeArgs), from
// the repository root with `go run ./cmd/calisym` (and `calisym`) the CLI
// built once, and fails on a non-zero exit. The commands it does not run
// are in readmeNotRun with the reason; the heavy ones (readmeHeavy) run
// when CALISYM_README_HEAVY=1. Commands that serve (a live node, a replay
// served to Foxglove) run for a few seconds and must exit 0 on Ctrl-C. A
// file a heavy command would have made for a later one is made by a
// stand-in (anymalStandIn) when the heavy command does not run first.
func TestReadmeCommands(t *testing.T) {
	type pageCommand struct {
		page string
		readmeCommand
	}
	var cmds []pageCommand
	for _, page := range fixtures.DocPages() {
		doc, err := os.ReadFile(filepath.Join(fixtures.Root(), page))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range readmeCommands(string(doc)) {
			cmds = append(cmds, pageCommand{page, c})
		}
	}
	if len(cmds) < 20 {
		t.Fatalf("%d commands found in %v: the extraction is broken", len(cmds), fixtures.DocPages())
	}
	heavy := os.Getenv(HeavyEnv) == "1"
	bin := buildCLI(t)
	out := t.TempDir()
	usedSkip, usedHeavy := make([]bool, len(readmeNotRun)), make([]bool, len(readmeHeavy))
	var lastReplay []string // of the page, for a later "replay … --foxglove"
	lastPage := ""
	// bench runs already made, by --out and system: a later line that
	// asks for the same systems into the same directory at the same
	// (smoke) size is covered by the earlier run.
	benched := map[string]string{}
	for _, c := range cmds {
		where := fmt.Sprintf("%s:%d: %s", c.page, c.line, c.text)
		if c.page != lastPage {
			lastReplay, lastPage = nil, c.page
		}
		if why, ok := matchTable(readmeNotRun, c.text, usedSkip); ok {
			t.Logf("%s\n\tnot run: %s", where, why)
			continue
		}
		if why, ok := matchTable(readmeHeavy, c.text, usedHeavy); ok && !heavy {
			t.Logf("%s\n\tnot run without %s=1: %s", where, HeavyEnv, why)
			continue
		}
		f := strings.Fields(c.text)
		var args []string
		switch {
		case len(f) > 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/calisym":
			args = f[3:]
		case f[0] == "calisym":
			args = f[1:]
		default:
			t.Errorf("%s: neither a calisym command nor in readmeNotRun", where)
			continue
		}
		if strings.ContainsAny(c.text, `"'`) {
			t.Errorf("%s: quoted arguments, which this test does not split", where)
			continue
		}
		if i := slices.Index(args, "…"); i >= 0 {
			// "replay … --foxglove ADDR": the preceding replay's arguments.
			if args[0] != "replay" || lastReplay == nil {
				t.Errorf("%s: elided arguments (…) with no preceding replay to take them from", where)
				continue
			}
			args = slices.Concat(lastReplay, args[i+1:])
		}
		if args[0] == "replay" && !slices.Contains(args, "--foxglove") {
			lastReplay = slices.Clone(args)
		}
		args = smokeArgs(args, out)
		for i, a := range args {
			if i > 0 && (args[i-1] == "--model" || args[i-1] == "--forecaster") && strings.HasSuffix(a, filepath.Join("bench", "anymal_sim", "calisym-gr.safetensors")) {
				if _, err := os.Stat(a); err != nil {
					anymalStandIn(t, a)
					t.Logf("%s: a random stand-in for the model of `bench --system anymal_sim`", a)
				}
			}
		}
		if args[0] == "bench" {
			systems, dir := benchSystems(args)
			covered := ""
			for _, sys := range systems {
				if covered = benched[dir+"|"+sys]; covered == "" {
					break
				}
			}
			if covered != "" {
				t.Logf("%s\n\tcovered by %s (the same systems, size and --out)", where, covered)
				continue
			}
			for _, sys := range systems {
				benched[dir+"|"+sys] = fmt.Sprintf("%s:%d", c.page, c.line)
			}
		}
		start := time.Now()
		var (
			text string
			err  error
		)
		if readmeLongRunning.MatchString(strings.Join(args, " ")) && !slices.Contains(args, "--check") {
			text, err = runServing(bin, args)
		} else {
			cmd := exec.Command(bin, args...)
			cmd.Dir = fixtures.Root()
			var b []byte
			b, err = cmd.CombinedOutput()
			text = string(b)
		}
		if err != nil {
			t.Errorf("%s\n\tran as: calisym %s\n\t%v\n%s", where, strings.Join(args, " "), err, text)
			continue
		}
		t.Logf("%s\n\tran as: calisym %s (%.1f s)", where, strings.Join(args, " "), time.Since(start).Seconds())
	}
	for i, used := range usedSkip {
		if !used {
			t.Errorf("readmeNotRun entry %q matches no documented command", readmeNotRun[i].pattern)
		}
	}
	for i, used := range usedHeavy {
		if !used {
			t.Errorf("readmeHeavy entry %q matches no documented command", readmeHeavy[i].pattern)
		}
	}
}

// TestReadmeCommandsExtraction checks readmeCommands and smokeArgs on a
// small document.
func TestReadmeCommandsExtraction(t *testing.T) {
	doc := "text `go run ./cmd/calisym node --params p.yaml --check` and `calisym eval --model FILE`\n" +
		"```sh\ngo run ./cmd/calisym train --data out/d \\\n    --epochs 30 --out out/m   # comment\n\nbash scripts/test.sh\n```\n" +
		"```text\nnot a command\n```\n"
	got := readmeCommands(doc)
	want := []readmeCommand{{1, "go run ./cmd/calisym node --params p.yaml --check"},
		{3, "go run ./cmd/calisym train --data out/d --epochs 30 --out out/m"}, {6, "bash scripts/test.sh"}}
	if !slices.Equal(got, want) {
		t.Errorf("commands %+v, want %+v", got, want)
	}
	for _, c := range []struct{ in, want string }{
		{"train --data out/d --epochs 30", "train --data T/d --epochs 1"},
		{"demo --out out/demo", "demo --out T/demo --preset smoke"},
		{"sim --preset default --mcap", "sim --preset smoke --mcap --out T/pendulum-data"},
		{"bench --out out/bench --check docs/benchmarks.md", "bench --out T/bench --epochs 1"},
		{"bench --system crazyflie_gravity", "bench --system crazyflie_gravity --out T/bench --epochs 1"},
		{"demo", "demo --out T/demo --preset smoke"},
		{"mpc --preset smoke", "mpc --preset smoke --out T/mpc"},
		{"bench plot docs/results/s.json --out out/figs", "bench plot docs/results/s.json --out T/figs"},
		{"replay x --foxglove 127.0.0.1:8765", "replay x --foxglove 127.0.0.1:0"},
		{"node --params p --transport foxglove", "node --params p --transport foxglove --addr 127.0.0.1:0"},
	} {
		if got := strings.Join(smokeArgs(strings.Fields(c.in), "T"), " "); got != c.want {
			t.Errorf("smokeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestReadmeSetupNotes: the README says that the first `go run` downloads
// the Go modules, which Debian packages the test command installs with
// apt-get (every one scripts/test.sh names), and where the commands' --data differs (its meaning and
// default), as each command's --help has it.
func TestReadmeSetupNotes(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	if !strings.Contains(flat, "The first `go run` also downloads the Go modules") {
		t.Error("README.md does not say that the first `go run` downloads the Go modules")
	}
	// Every Debian package the test command installs is named.
	script, err := os.ReadFile(filepath.Join(fixtures.Root(), "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, m := range regexp.MustCompile(`apt-get install ([^>&|;\n]+)`).FindAllStringSubmatch(string(script), -1) {
		for _, f := range strings.Fields(m[1]) {
			if !strings.HasPrefix(f, "-") {
				pkgs = append(pkgs, f)
			}
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("scripts/test.sh installs no apt package: update this test")
	}
	if !strings.Contains(flat, "installs with `apt-get`") {
		t.Error("README.md does not say that the test command installs packages with apt-get")
	}
	for _, p := range pkgs {
		if !strings.Contains(flat, "`"+p+"`") {
			t.Errorf("README.md does not name %s, which scripts/test.sh installs with apt-get", p)
		}
	}
	for _, row := range []string{
		"| `convert`, `bench` | root of the logs and of the params' relative files | `$CALISYM_DATA`, else `../shared/data` |",
		"| `replay`, `node` | directory of the params' parameter files and URDFs | `$CALISYM_DATA`, else the params file's own directory |",
		"| `train`, `eval` | a dataset directory (`out/…/train`), or a split of a sharded conversion (`SHARDDIR/SPLIT`) | none: required |",
	} {
		if !strings.Contains(flat, row) {
			t.Errorf("README.md lacks the --data row %s", row)
		}
	}
	// The rows are what the commands' --help says.
	bin := buildCLI(t)
	for _, c := range []struct{ cmd, want string }{
		{"convert", "default $CALISYM_DATA, else ../shared/data"},
		{"bench", "default $CALISYM_DATA or ../shared/data"},
		{"replay", "default $CALISYM_DATA, else the params file's directory"},
		{"node", "default $CALISYM_DATA, else the params file's directory"},
		{"train", "training dataset directory, or SHARDDIR/SPLIT"},
		{"eval", "dataset directory (required)"},
	} {
		out, err := exec.Command(bin, c.cmd, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --help: %v", c.cmd, err)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s --help no longer says %q about --data; update the README's --data table", c.cmd, c.want)
		}
	}
}
