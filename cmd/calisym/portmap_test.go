package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// TestPortMapRoundTrip requires `calisym sim`'s datasets to record the
// port map params/pendulum_sim.yaml computes from its logs, converts the
// simulator's log with those params, trains a CaLiSym model and the MLP on it (one
// epoch) and requires the dataset and both model files to record the
// params' port map (statemap.PortMapKey); `eval` then refuses a dataset
// whose ports were computed otherwise, `replay` refuses the model under
// params that scale a torque channel, and serves a model that records no
// port map with a warning on stderr.
func TestPortMapRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--mcap", "--out", sim); err != nil {
		t.Fatal(err)
	}
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	spec, err := convert.LoadSpec(params)
	if err != nil {
		t.Fatal(err)
	}
	want := spec.PortMap()
	if !strings.Contains(want, `"control":"direct"`) || !strings.Contains(want, "/torque_command.data[1]") {
		t.Fatalf("pendulum_sim.yaml's port map %s", want)
	}
	// the simulator's own datasets record the map its logs convert with
	simDS, err := dataset.Load(filepath.Join(sim, "train"))
	if err != nil {
		t.Fatal(err)
	}
	if got := simDS.Source[statemap.PortMapKey]; got != want {
		t.Errorf("calisym sim's dataset records port map %q, want %q", got, want)
	}
	conv := filepath.Join(dir, "conv")
	if out, _, err := runCLI(t, "convert", "--params", params, "--out", conv, "--split", "train", filepath.Join(sim, "id.mcap")); err != nil {
		t.Fatalf("convert: %v\n%s", err, out)
	}
	data := filepath.Join(conv, "train")
	ds, err := dataset.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := ds.Source[statemap.PortMapKey]; got != want {
		t.Fatalf("dataset source port_map %q, want %q", got, want)
	}
	sym, mlp := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "m.json")
	for _, c := range [][]string{{"--model", "grb", "--arch", "grb:1x4", "--out", sym}, {"--model", "mlp", "--hidden", "4", "--out", mlp}} {
		if out, _, err := runCLI(t, append([]string{"train", "--data", data, "--epochs", "1", "--batch", "256", "--quiet"}, c...)...); err != nil {
			t.Fatalf("train %v: %v\n%s", c, err, out)
		}
	}
	for _, f := range []string{sym, mlp} {
		sv, err := trainer.OpenModel(f)
		if err != nil {
			t.Fatal(err)
		}
		if sv.PortMap != want || !sv.ChecksumVerified {
			t.Errorf("%s: port map %q (checksum verified %v), want %q", f, sv.PortMap, sv.ChecksumVerified, want)
		}
	}
	sv, err := trainer.OpenModel(sym)
	if err != nil {
		t.Fatal(err)
	}
	if got := sv.Model.Meta.Provenance[statemap.PortMapKey]; got != want {
		t.Errorf("provenance port_map %q, want %q", got, want)
	}

	// a dataset converted with a torque channel scaled by 2
	scaled := *spec
	scaled.Control.Channels = []statemap.Channel{{Name: "/torque_command.data[0]", Scale: 2}, {Name: "/torque_command.data[1]"}}
	other := rewriteDataset(t, data, filepath.Join(dir, "scaled"), func(d *dataset.Dataset) { d.Source[statemap.PortMapKey] = scaled.PortMap() })
	for _, f := range []string{sym, mlp} {
		_, _, err := runCLI(t, "eval", "--model", f, "--data", other, "--horizon", "5")
		if !errors.Is(err, trainer.ErrModelData) || !strings.Contains(err.Error(), "control.channels[0]: trained with /torque_command.data[0], params give /torque_command.data[0] (scale 2)") {
			t.Errorf("eval %s on the scaled dataset: %v", f, err)
		}
		if _, _, err := runCLI(t, "eval", "--model", f, "--data", data, "--horizon", "5"); err != nil {
			t.Errorf("eval %s on its own dataset: %v", f, err)
		}
	}

	raw, err := os.ReadFile(params)
	if err != nil {
		t.Fatal(err)
	}
	scaledParams := filepath.Join(dir, "scaled.yaml")
	text := strings.Replace(string(raw), "- /torque_command.data[0]", `- {name: "/torque_command.data[0]", scale: 2}`, 1)
	if text == string(raw) {
		t.Fatal("pendulum_sim.yaml no longer lists /torque_command.data[0] as the test expects")
	}
	if err := os.WriteFile(scaledParams, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	log, out := filepath.Join(sim, "id.mcap"), filepath.Join(dir, "pred.mcap")
	_, _, err = runCLI(t, "replay", "--params", scaledParams, "--model", sym, log, "--out", out)
	if !errors.Is(err, node.ErrModel) || !strings.Contains(err.Error(), "(scale 2)") || !strings.Contains(err.Error(), "retrain") {
		t.Errorf("replay under scaled params: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused replay wrote its output")
	}
	if _, stderr, err := runCLI(t, "replay", "--params", params, "--model", sym, log, "--out", out); err != nil || strings.Contains(stderr, "port map") {
		t.Errorf("replay under its own params: %v\n%s", err, stderr)
	}
	// a model from before port maps were recorded
	sv.Model.Meta.Provenance = nil
	old := filepath.Join(dir, "old.safetensors")
	if err := sv.Model.Save(old); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, "replay", "--params", scaledParams, "--model", old, log, "--out", out)
	if err != nil || !strings.Contains(stderr, "warning: "+old+": "+node.PortMapWarning) {
		t.Errorf("replay of a model without a port map: %v\n%s", err, stderr)
	}
}
