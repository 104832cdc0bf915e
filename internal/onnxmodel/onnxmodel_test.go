package onnxmodel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/internal/onnx"
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
// graph by whether the layer looks its spline up in a table (ridge
// dimension m ≤ maxTableRidge) or by its coefficients (m = 3), without
// and with the Jacobian's tangents. The dense spline of the first export
// took about 2,000 operators a step for the pendulum preset's GRB, a
// number that grew with the knots; the coefficient lookup about 30 a
// layer, the fused table lookup 20.
var maxGRBLayerNodes = map[bool]map[bool]int{
	true:  {false: 20, true: 45},
	false: {false: 35, true: 50},
}

// TestGRBGraphSize: the operators of a GRB step graph do not depend on
// the spline's knots (4, 16 and 64 intervals give the same count), and
// one layer takes at most maxGRBLayerNodes of them (20 for the pendulum
// preset's m = 2, where the coefficient lookup took 30).
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
			if max := maxGRBLayerNodes[m <= maxTableRidge][jac]; perLayer > max {
				t.Errorf("m = %d, Jacobian %v: %d operators per layer, want ≤ %d", m, jac, perLayer, max)
			}
		}
	}
}

// TestSplineTable evaluates the table path's monomial tables in Go, as
// the graph does (the cell from the clamped, shifted knot coordinate, the
// row times the monomials of the local coordinates), and requires the
// gradient and the Hessian of predictor.Spline.Eval's tensor-product
// spline to 1e-13 relative, at points on the grid and beyond it on both
// sides, for m = 1 and 2.
func TestSplineTable(t *testing.T) {
	sp := predictor.Spline{Intervals: 5, Lo: -1.5, Hi: 2}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2} {
		s := newSplineGraph(onnx.NewGraph("t"), sp, m)
		nb, q := sp.NumBasis(), pow(4, m)
		coef := make([]float64, pow(nb, m))
		for i := range coef {
			coef[i] = rng.NormFloat64()
		}
		con := contractions(m, true)
		tab := s.tableData(coef, con, nil)
		side, cols := nb+1+tableShift, len(con)*q
		for range 200 {
			eta := make([]float64, m)
			for j := range eta {
				eta[j] = sp.Lo - 1.5 + (sp.Hi-sp.Lo+3)*rng.Float64()
			}
			// The graph's lookup.
			row, u := 0, make([]float64, m)
			for j, e := range eta {
				tc := min(max((e-sp.Lo)/s.h+tableShift, 0), float64(nb+tableShift))
				k := math.Floor(tc)
				row, u[j] = row*side+int(k), tc-k
			}
			got := make([]float64, len(con))
			for ci := range con {
				for e := range q {
					p := tab[row*cols+ci*q+e]
					for j, d := range cellIndex(e, m) {
						p *= math.Pow(u[j], float64(d))
					}
					got[ci] += p
				}
			}
			// predictor.Spline.Eval's basis functions.
			var b, db, d2b [4][4]float64
			first := make([]int, m)
			for j, e := range eta {
				first[j], _ = sp.Eval(e, &b[j], &db[j], &d2b[j])
			}
			want := make([]float64, len(con))
			for ci, o := range con {
				for a := range q {
					flat, p := 0, 1.0
					for j, i := range cellIndex(a, m) {
						c := first[j] + i
						if c < 0 || c >= nb {
							p = 0
							break
						}
						flat = flat*nb + c
						p *= [3][4][4]float64{b, db, d2b}[o[j]][j][i]
					}
					if p != 0 {
						want[ci] += p * coef[flat]
					}
				}
			}
			for ci := range con {
				if d := math.Abs(got[ci] - want[ci]); !(d <= 1e-13*(1+math.Abs(want[ci]))) {
					t.Fatalf("m = %d, η = %v, contraction %v: table %v, Spline.Eval %v", m, eta, con[ci], got[ci], want[ci])
				}
			}
		}
	}
}
