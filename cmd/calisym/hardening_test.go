package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/mlp"
)

// TestTrainZeroEpochs: --epochs 0 is refused before anything is written
// (it panicked after writing an untrained model that loaded as valid).
func TestTrainZeroEpochs(t *testing.T) {
	dir := t.TempDir()
	sim := smokeData(t, dir)
	for _, kind := range []string{"gr", "mlp"} {
		out := filepath.Join(dir, "m-"+kind+".safetensors")
		args := []string{"train", "--data", filepath.Join(sim, "train"), "--model", kind, "--arch", "quadrotor", "--layers", "2", "--width", "4", "--hidden", "4", "--epochs", "0", "--quiet"}
		if kind == "mlp" {
			out = filepath.Join(dir, "m.json")
			args = slicesWithout(args, "--arch", "--layers", "--width")
		}
		_, _, err := runCLI(t, append(args, "--out", out)...)
		if err == nil || !strings.Contains(err.Error(), "--epochs 0") || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("%s --epochs 0: %v, want an error naming --epochs, its range and the value", kind, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s --epochs 0 wrote %s", kind, out)
		}
	}
}

// slicesWithout drops each named flag and the value after it.
func slicesWithout(args []string, flags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && i+1 < len(args) && containsString(flags, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestOutOfRangeFlags: a value outside a flag's documented range is an
// error that names the flag, the range and the value, before any work
// (each was accepted silently). NaN loss settings name the flag instead
// of reporting a diverged training.
func TestOutOfRangeFlags(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "no-data") // refused before it is read
	train := []string{"train", "--data", data, "--quiet", "--out", filepath.Join(dir, "m.safetensors")}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{append(train, "--loss-units", "-1"), []string{"--loss-units -1", "from 0 to 1"}},
		{append(train, "--loss-units", "2"), []string{"--loss-units 2", "from 0 to 1"}},
		{append(train, "--loss-units", "NaN"), []string{"--loss-units NaN", "from 0 to 1"}},
		{append(train, "--rollout-decay", "NaN"), []string{"--rollout-decay NaN", "at least 0"}},
		{append(train, "--w-q", "-1"), []string{"--w-q -1", "at least 0"}},
		{append(train, "--epochs", "5", "--select-horizon", "10", "--select-from", "6"), []string{"--select-from 6", "from 0 to 5"}},
		{append(train, "--lr", "NaN"), []string{"--lr NaN", "above 0"}},
		{[]string{"mpc", "--steps", "-5", "--out", dir}, []string{"--steps -5", "at least 0"}},
		{[]string{"bench", "--epochs", "-1", "--out", dir}, []string{"--epochs -1", "at least 0"}},
		{[]string{"replay", "--speed", "-1", "--out", filepath.Join(dir, "o.mcap"), "x.mcap"}, []string{"--speed -1", "at least 0"}},
		{[]string{"node", "--params", "params/pendulum_sim.yaml", "--transport", "foxglove", "--sim-pendulum", "--speed", "0"}, []string{"--speed 0", "above 0"}},
		{[]string{"replay", "--distro", "bogus", "--out", filepath.Join(dir, "o.mcap"), "x.mcap"}, []string{`--distro "bogus"`, "jazzy"}},
	} {
		_, _, err := runCLI(t, c.args...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("calisym %s: %v, want an error containing %q", strings.Join(c.args, " "), err, w)
				break
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "o.mcap")); err == nil {
		t.Error("a refused replay wrote its --out")
	}
}

// TestParamsFractionForInteger: a fraction for an integer key of the
// params (history.port_mean: 2.5) is an error naming the key, not
// truncated to 2.
func TestParamsFractionForInteger(t *testing.T) {
	path := fixtures.EditedParams(t, "anymal.yaml", "port_mean: 10", "port_mean: 2.5")
	_, err := convert.LoadSpec(path)
	if err == nil || !strings.Contains(err.Error(), "history.port_mean") || !strings.Contains(err.Error(), "2.5") {
		t.Errorf("port_mean: 2.5: %v, want an error naming convert.history.port_mean and 2.5", err)
	}
}

// TestMPCRefusesMLP: mpc --model with the MLP baseline's file says that
// mpc needs a GR or GRB model (it reported a corrupt safetensors header).
func TestMPCRefusesMLP(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mlp.json")
	net := mlp.New(mlp.Config{StateDim: 4, PortDim: 2, Hidden: []int{4}}, rand.New(rand.NewPCG(1, 2)))
	if err := trainer.SaveMLP(path, net); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, "mpc", "--quiet", "--out", dir, "--model", path)
	if err == nil || !strings.Contains(err.Error(), "mpc needs a GR or GRB model") || !strings.Contains(err.Error(), path) {
		t.Errorf("mpc --model %s: %v, want an error saying mpc needs a GR or GRB model", path, err)
	}
}

// TestExportBounds: export refuses an output that is its input (it
// overwrote the model with the graph), through another name too, and an
// unrolled rollout whose file would pass the size limit, naming the
// horizon it can write (a million steps ran out of memory).
func TestExportBounds(t *testing.T) {
	dir := t.TempDir()
	model := writePresetModels(t, dir)[1].path
	before, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(dir, "alias.safetensors")
	if err := os.Symlink(model, alias); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{model, alias, filepath.Join(dir, ".", filepath.Base(model))} {
		_, _, err := runCLI(t, "export", model, "--onnx", out)
		if err == nil || !strings.Contains(err.Error(), "is the model file") {
			t.Errorf("export %s --onnx %s: %v, want a refusal", model, out, err)
		}
	}
	after, err := os.ReadFile(model)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the model file changed: %v", err)
	}
	out := filepath.Join(dir, "m.onnx")
	_, _, err = runCLI(t, "export", model, "--onnx", out, "--horizon", "1000000", "--unroll")
	if err == nil || !strings.Contains(err.Error(), "--horizon 1000000 --unroll") || !strings.Contains(err.Error(), "limit of 256 MB") {
		t.Fatalf("a million-step unroll: %v, want a refusal naming the limit", err)
	}
	var maxH int
	if _, err := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "pass --horizon"):], "pass --horizon %d", &maxH); err != nil || maxH < 2 {
		t.Fatalf("no horizon to pass in %q", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused export wrote its output")
	}
	// the estimate holds: each unrolled step adds about the same bytes
	// (names grow by a digit now and then)
	var sizes []int64
	for _, h := range []string{"1", "2", "5"} {
		if _, _, err := runCLI(t, "export", model, "--onnx", out, "--horizon", h, "--unroll"); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	if est := sizes[0] + 4*(sizes[1]-sizes[0]); math.Abs(float64(sizes[2]-est)) > 0.05*float64(sizes[2]-sizes[0]) {
		t.Errorf("unrolled sizes %v for horizons 1, 2, 5: not one step's bytes more each", sizes)
	}
}
