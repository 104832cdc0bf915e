package main

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// TestExportRefusesPrior: a composed model (a physics prior recorded in
// its file, trainer.Composed) is not exported to ONNX, whose graph would
// hold the learned map without the prior; nothing is written.
func TestExportRefusesPrior(t *testing.T) {
	dir := t.TempDir()
	m, err := predictor.New(predictor.Layout{N: 2, NU: 2}, predictor.Arch{Kind: predictor.KindGR, Layers: 2, Width: 4, StepSize: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := mechanics.NewPendulumPrior(mechanics.PriorMidpoint, mechanics.PaperPendulum(), 0.01)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(p.Spec())
	if err != nil {
		t.Fatal(err)
	}
	m.Meta.Provenance = map[string]string{trainer.PriorKey: string(js)}
	model := filepath.Join(dir, "composed.safetensors")
	if err := m.Save(model); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.onnx")
	_, _, err = runCLI(t, "export", model, "--onnx", out)
	if !errors.Is(err, trainer.ErrPriorUnsupported) {
		t.Errorf("export of a composed model: %v, want trainer.ErrPriorUnsupported", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused export wrote its output")
	}
}
