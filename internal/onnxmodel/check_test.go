package onnxmodel

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/onnx"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer/mlp"
)

// TestEveryGraphIsValid builds every graph kind export writes, with the
// metadata export passes (Options.Meta: names, dt, the port history's m),
// and requires onnx.Model.Check's validation, onnx.checker's for what
// this package writes: each metadata key once (the port-history graph
// carried calisym.port_mean twice, which onnx.checker rejects), every
// value assigned once and defined before it is read, initializers of
// their shape's size.
func TestEveryGraphIsValid(t *testing.T) {
	meta := [][2]string{{"calisym.coordinates", `["q1","q2"]`}, {"calisym.dt", "0.01"}, {"calisym.port_mean", "5"}}
	gr, err := predictor.New(predictor.Layout{N: 2, NU: 2, NC: 1}, predictor.Arch{Kind: predictor.KindGR, Layers: 2, Width: 4, StepSize: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	grPlan, err := gr.Compile()
	if err != nil {
		t.Fatal(err)
	}
	net := mlp.New(mlp.Config{StateDim: 4, PortDim: 3, Hidden: []int{8, 8}}, rand.New(rand.NewPCG(1, 2)))
	type build func(Options) (*onnx.Model, error)
	kinds := map[string]build{
		"grb":          func(o Options) (*onnx.Model, error) { return Symplectic(grbTensors(t, 2, 2, 4), o) },
		"grb m=3":      func(o Options) (*onnx.Model, error) { return Symplectic(grbTensors(t, 2, 3, 4), o) },
		"gr":           func(o Options) (*onnx.Model, error) { return Symplectic(grPlan.Tensors(), o) },
		"mlp":          func(o Options) (*onnx.Model, error) { return MLP(net, o) },
		"port history": func(o Options) (*onnx.Model, error) { return PortHistory(5, 2, 1, o) },
	}
	forms := map[string]Options{
		"step":             {},
		"step batch 3":     {Batch: 3},
		"jacobian":         {Jacobian: true},
		"loop":             {Horizon: 4},
		"unrolled":         {Horizon: 3, Unroll: true, Batch: 2},
		"float32 step":     {Float32: true},
		"float32 loop":     {Float32: true, Horizon: 4},
		"float32 jacobian": {Float32: true, Jacobian: true},
	}
	for kind, b := range kinds {
		for form, o := range forms {
			if kind == "port history" && (o.Horizon > 0 || o.Jacobian) {
				continue // export refuses these
			}
			o.Meta = meta
			m, err := b(o)
			if err != nil {
				if kind == "mlp" && o.Jacobian {
					continue // the MLP has no Jacobian graph
				}
				t.Fatalf("%s %s: %v", kind, form, err)
			}
			if err := m.Check(); err != nil {
				t.Errorf("%s %s: %v", kind, form, err)
			}
		}
	}
	// A contradicting entry is an error, not a second key.
	if _, err := PortHistory(5, 2, 1, Options{Meta: [][2]string{{"calisym.port_mean", "4"}}}); err == nil || !strings.Contains(err.Error(), "calisym.port_mean") {
		t.Errorf("port history with port_mean 4 in the options: %v", err)
	}
}
