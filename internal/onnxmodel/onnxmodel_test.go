package onnxmodel

import (
	"testing"

	"github.com/calisym/calisym/predictor"
)

// grbTensors compiles a GRB model with random parameters.
func grbTensors(t *testing.T, layers, m, intervals int) predictor.PlanTensors {
	t.Helper()
	mod, err := predictor.New(predictor.Layout{N: 2, NU: 2, NC: 1}, predictor.Arch{Kind: predictor.KindGRB, Layers: layers, Width: 4, RidgeDim: m,
		Spline: predictor.Spline{Intervals: intervals, Lo: -2, Hi: 2}, StepSize: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mod.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return p.Tensors()
}

// maxGRBLayerNodes bounds the operators of one GRB layer of the step
// graph for a ridge dimension m ≤ 3, without and with the Jacobian's
// tangents (the dense spline this replaced took about 2,000 operators a
// step for the pendulum preset's GRB, a number that grew with the knots).
var maxGRBLayerNodes = map[bool]int{false: 35, true: 50}

// TestGRBGraphSize: the operators of a GRB step graph do not depend on
// the spline's knots (4, 16 and 64 intervals give the same count), and
// one layer takes at most maxGRBLayerNodes of them.
func TestGRBGraphSize(t *testing.T) {
	for _, m := range []int{1, 2, 3} {
		for _, jac := range []bool{false, true} {
			count := func(layers, intervals int) int {
				g, err := Symplectic(grbTensors(t, layers, m, intervals), Options{Jacobian: jac})
				if err != nil {
					t.Fatal(err)
				}
				return g.Graph.Nodes()
			}
			base := count(2, 4)
			for _, iv := range []int{16, 64} {
				if n := count(2, iv); n != base {
					t.Errorf("m = %d, Jacobian %v: %d operators with 4 intervals, %d with %d", m, jac, base, n, iv)
				}
			}
			perLayer := (count(6, 4) - base) / 4
			t.Logf("m = %d, Jacobian %v: %d operators for 2 layers, %d per layer", m, jac, base, perLayer)
			if perLayer > maxGRBLayerNodes[jac] {
				t.Errorf("m = %d, Jacobian %v: %d operators per layer, want ≤ %d", m, jac, perLayer, maxGRBLayerNodes[jac])
			}
		}
	}
}
