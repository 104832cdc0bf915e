package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
)

// readmeCommands returns the documentation's `go run ./cmd/calisym` lines
// (the README's and docs/'s, fixtures.DocPages) that start with one of
// prefixes, as calisym arguments, in the pages' order.
func readmeCommands(t *testing.T, prefixes ...string) [][]string {
	t.Helper()
	var out [][]string
	for _, page := range fixtures.DocPages() {
		raw, err := os.ReadFile(filepath.Join(fixtures.Root(), page))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			for _, p := range prefixes {
				if strings.HasPrefix(line, p) {
					out = append(out, strings.Fields(strings.TrimPrefix(line, "go run ./cmd/calisym")))
				}
			}
		}
	}
	return out
}

// inRepo maps the documented relative paths into a test: out/… into dir,
// params/… into the repository; globs are expanded as the shell would.
func inRepo(t *testing.T, dir string, args []string) []string {
	t.Helper()
	var out []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "out/"):
			a = filepath.Join(dir, a)
		case strings.HasPrefix(a, "params/"):
			a = filepath.Join(fixtures.Root(), a)
		}
		if strings.ContainsAny(a, "*?[") {
			m, err := filepath.Glob(a)
			if err != nil || len(m) == 0 {
				t.Fatalf("%s matches nothing: %v", a, err)
			}
			out = append(out, m...)
			continue
		}
		out = append(out, a)
	}
	return out
}

// TestReadmeSimConvertRoundTrip runs the documented sim → convert round trip
// as printed and checks that the converted windows are the simulator's.
func TestReadmeSimConvertRoundTrip(t *testing.T) {
	cmds := readmeCommands(t, "go run ./cmd/calisym sim --preset smoke", "go run ./cmd/calisym convert --params params/pendulum_sim.yaml")
	if len(cmds) != 2 || cmds[0][0] != "sim" || cmds[1][0] != "convert" {
		t.Fatalf("the documented round trip: %q, want one sim and one convert line", cmds)
	}
	dir := t.TempDir()
	for _, c := range cmds {
		args := inRepo(t, dir, c)
		if out, errOut, err := runCLI(t, args...); err != nil {
			t.Fatalf("calisym %s: %v\n%s\n%s", strings.Join(c, " "), err, out, errOut)
		}
	}
	sim, conv := filepath.Join(dir, "out", "sim"), filepath.Join(dir, "out", "sim-conv")
	entries, err := os.ReadDir(conv)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		got, err := dataset.Load(filepath.Join(conv, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		want, err := dataset.Load(filepath.Join(sim, e.Name()))
		if err != nil {
			t.Fatalf("converted split %s has no simulator split: %v", e.Name(), err)
		}
		gw, ww := got.Windows(), want.Windows()
		if len(gw) != len(ww) || len(gw) == 0 {
			t.Fatalf("split %s: %d windows, simulator %d", e.Name(), len(gw), len(ww))
		}
		for i := range gw {
			ge, we := got.Episodes[gw[i].Episode], want.Episodes[ww[i].Episode]
			for k := range 4 * ww[i].Len {
				if d := ge.X[4*gw[i].Start+k] - we.X[4*ww[i].Start+k]; d > 1e-12 || d < -1e-12 {
					t.Fatalf("split %s window %d value %d differs by %g", e.Name(), i, k, d)
				}
			}
		}
		compared++
	}
	if compared == 0 {
		t.Fatalf("%s holds no split", conv)
	}
}

// TestConvertRefusesSimulatorSplits converts into a folder that holds a
// dataset of the simulator's under the name of the split convert writes
// (id, the params' split, or --split train, ood), and nothing else: no
// conversion wrote it, so convert refuses and leaves it as it was (it used
// to replace it silently; only dataset folders of other names were
// refused).
func TestConvertRefusesSimulatorSplits(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if out, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatalf("sim: %v\n%s", err, out)
	}
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	for _, split := range []string{"", "train", "ood"} {
		args := []string{"convert", "--params", params, "--quiet"}
		name := "id" // the params' split
		if split != "" {
			args, name = append(args, "--split", split), split
		}
		out := filepath.Join(dir, "out-"+name)
		copyTree(t, filepath.Join(sim, name), filepath.Join(out, name))
		meta := filepath.Join(out, name, "meta.json")
		before, err := os.ReadFile(meta)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = runCLI(t, append(args, "--out", out, filepath.Join(sim, "id.mcap"))...)
		if !errors.Is(err, convert.ErrOutput) || !strings.Contains(err.Error(), "folder "+name+",") {
			t.Errorf("convert into the simulator's %s: err = %v, want ErrOutput naming %s", name, err, name)
		}
		if after, err := os.ReadFile(meta); err != nil || !bytes.Equal(after, before) {
			t.Errorf("the simulator's %s was changed: %v", meta, err)
		}
		if _, err := os.Stat(filepath.Join(out, "report.json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("report.json written beside the simulator's split: %v", err)
		}
	}
}
