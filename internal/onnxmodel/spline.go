package onnxmodel

import (
	"github.com/calisym/calisym/internal/onnx"
	"github.com/calisym/calisym/predictor"
)

// The GRB spline in a graph. A GRB layer needs the gradient (and, for the
// Jacobian's tangents, the Hessian) of a tensor-product cubic B-spline S
// at the ridge coordinates η (N×m). Both ways below look the spline up
// rather than evaluating every basis function, so that the operators per
// layer depend on m, not on the number of knots:
//
//   - The table (m ≤ maxTableRidge): each knot cell's derivatives are
//     polynomials in the local coordinates u_j ∈ [0, 1) of its m
//     dimensions, whose coefficients in the monomials u_0^e_0 ⋯ u_{m−1}^e_{m−1}
//     (e_j ≤ 3) the graph holds as one row per cell. One Gather fetches the
//     rows of the N cells, products with the monomials (spread from the
//     powers u, u², u³ by matrix products with 0/1 matrices, which copy
//     values exactly) weigh them, and a matrix product sums them. The
//     table has (NumBasis + 5)^m · c · 4^m entries for c derivatives, so
//     it is kept for m ≤ 2.
//   - The coefficients (m > maxTableRidge): the knot interval of every
//     dimension gives the flat index of the 4^m coefficients whose basis
//     functions do not vanish there (the cell), one Gather fetches them,
//     and they are weighed with products of the local polynomials of each
//     dimension (or their derivatives).
//
// The one-step map of a table-path layer fuses the rest of the layer into
// the lookup (grbFast): one Gemm gives the knot coordinates, one the
// tail's pre-activations, and two add the spline's and the tail's
// gradients, times N, to Z: 20 operators a layer for m = 2, where the
// coefficient path takes about 30 (TestGRBGraphSize).

// splinePad is the number of zero coefficients the coefficient path adds
// on each side of every dimension of a spline's coefficients: the four
// basis functions of a clamped knot interval then always index the padded
// array.
const splinePad = 4

// tableShift is what the table path adds to the knot coordinate
// t = (η − lo)/h: cells k ∈ [−tableShift, NumBasis] of every dimension
// are the table's rows 0 … NumBasis + tableShift, t + tableShift is
// clamped to that range (so that casting it to an integer floors it), and
// the first and last cell lie wholly beyond the grid, where every basis
// function vanishes, as in predictor.Spline.Eval (which gives zero
// outside −3 ≤ t < intervals + 3).
const tableShift = 4

// maxTableRidge is the largest ridge dimension m the table path serves.
const maxTableRidge = 2

// lazy returns a function that makes a constant on its first call and
// returns its name after.
func lazy(mk func() string) func() string {
	name := ""
	return func() string {
		if name == "" {
			name = mk()
		}
		return name
	}
}

// splineGraph evaluates a GRB layer's spline in a graph (see above).
type splineGraph struct {
	g     *onnx.Graph
	sp    predictor.Spline
	m, nb int
	h, ih float64
	// table chooses the table path (m ≤ maxTableRidge).
	table bool
	// elem holds the coefficient path's shared constants, made once.
	elem *elemConsts
	// weights and tables cache the contraction constants of both paths by
	// whether the Hessian is wanted.
	weights map[bool]*splineWeights
	tables  map[bool]*tableWeights
	// sumCache caches sumConsts by the number of contractions.
	sumCache map[int][4]string
}

// elemConsts are the coefficient path's shared constants.
type elemConsts struct {
	side       int // the padded array's side
	lo, h      string
	kmin, kmax string
	strides    string // real m×1: the padded array's strides
	offsets    string // int64 1×4^m: the cell's flat offsets, padding included
}

// splineWeights are the coefficient path's constants of the contractions:
// with the gradient only (c = m: ∂_j) or the Hessian too (c = m + m²:
// then ∂_j∂_l, row major). spread (3m × m·c·4^m) and bias (m·c·4^m) give,
// at column (dimension j, contraction, cell index α), the local
// polynomial α_j of dimension j or its derivative that the contraction
// takes, as a function of the powers (u_0, …, u_{m−1}, u_0², …,
// u_{m−1}³); split cuts them into the m dimensions; tile (4^m × c·4^m)
// repeats the cell for every contraction.
type splineWeights struct {
	spread, bias, split, tile string
}

// tableWeights are the table path's constants: the clamp's bounds, the
// table's strides (int64, m), the monomials' selectors sel[j] (3m × c·4^m,
// a 0/1 matrix) and bias[j] (c·4^m) that give u_j^e_j at the column
// (contraction, e) from the powers (u_0, …, u_{m−1}, u_0², …, u_{m−1}³),
// and (made by eval) scale and shift: t + tableShift = η·scale + shift.
type tableWeights struct {
	zero, top    string
	strides      string // real m×1: the table's strides in cells
	flat         string // the shape [−1]
	sel, bias    []string
	scale, shift string
}

func newSplineGraph(g *onnx.Graph, sp predictor.Spline, m int) *splineGraph {
	h := (sp.Hi - sp.Lo) / float64(sp.Intervals)
	return &splineGraph{g: g, sp: sp, m: m, nb: sp.NumBasis(), h: h, ih: 1 / h, table: m <= maxTableRidge,
		weights: map[bool]*splineWeights{}, tables: map[bool]*tableWeights{}}
}

// contractions returns the derivative order of every dimension of each
// contraction: the m first derivatives, then (with the Hessian) the m²
// second ones ∂_j∂_l, row major.
func contractions(m int, hess bool) [][]int {
	var out [][]int
	for j := range m {
		o := make([]int, m)
		o[j] = 1
		out = append(out, o)
	}
	if hess {
		for j := range m {
			for l := range m {
				o := make([]int, m)
				o[j]++
				o[l]++
				out = append(out, o)
			}
		}
	}
	return out
}

// digits returns the m base-b digits of a, the first the slowest.
func digits(a, b, m int) []int {
	idx := make([]int, m)
	for j := m - 1; j >= 0; j-- {
		idx[j] = a % b
		a /= b
	}
	return idx
}

// cellIndex returns (i_0, …, i_{m−1}) of the cell's a-th coefficient.
func cellIndex(a, m int) []int { return digits(a, 4, m) }

func pow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// localPoly holds the coefficients of u⁰ … u³ of the d-th derivative in
// η (before the factor (1/h)^d) of the four local polynomials (1−u)³/6,
// (3u³ − 6u² + 4)/6, (−3u³ + 3u² + 3u + 1)/6 and u³/6: localPoly[d][i][p].
var localPoly = [3][4][4]float64{
	{{1.0 / 6, -3.0 / 6, 3.0 / 6, -1.0 / 6}, {4.0 / 6, 0, -1, 3.0 / 6}, {1.0 / 6, 3.0 / 6, 3.0 / 6, -3.0 / 6}, {0, 0, 0, 1.0 / 6}},
	{{-0.5, 1, -0.5, 0}, {0, -2, 1.5, 0}, {0.5, 1, -1.5, 0}, {0, 0, 0.5, 0}},
	{{1, -1, 0, 0}, {-2, 3, 0, 0}, {1, -3, 0, 0}, {0, 1, 0, 0}},
}

// splineLayer is one layer's spline: its coefficients (NumBasis^m,
// dimension 0 slowest) and the constants made of them, once each.
type splineLayer struct {
	s      *splineGraph
	prefix string
	coef   []float64
	flat   func() string
	tables map[bool]string
}

// layer returns layer's spline, named by prefix.
func (s *splineGraph) layer(prefix string, coef []float64) *splineLayer {
	l := &splineLayer{s: s, prefix: prefix, coef: coef, tables: map[bool]string{}}
	l.flat = lazy(func() string { return s.coefficients(prefix+"spline", coef) })
	return l
}

// table returns the layer's table of the contractions (see tableData).
func (l *splineLayer) table(hess bool) string {
	if name, ok := l.tables[hess]; ok {
		return name
	}
	s := l.s
	c := len(contractions(s.m, hess))
	name := s.g.Const(l.prefix+"spline_table", s.tableDims(c*pow(4, s.m)), s.tableData(l.coef, contractions(s.m, hess), nil))
	l.tables[hess] = name
	return name
}

// tableDims returns the shape of a table of cols columns: a row for each
// of the (NumBasis + 1 + tableShift)^m cells.
func (s *splineGraph) tableDims(cols int) []int64 {
	return []int64{int64(pow(s.nb+1+tableShift, s.m)), int64(cols)}
}

// tableData returns the table of the contractions: at row κ (the cell
// (k_0, …, k_{m−1}) ∈ [−tableShift, NumBasis]^m, k_j + tableShift the
// digits, dimension 0 slowest) and column (contraction, e) (e ∈ {0..3}^m,
// dimension 0 slowest) the coefficient of u_0^e_0 ⋯ u_{m−1}^e_{m−1} in the
// contraction's derivative Σ_α C[k + α] Π_j ∂^o_j B_α_j(u_j) on that cell
// (C beyond the coefficients being zero); fold[j], when given, is added to
// every cell's constant (e = 0) of contraction j.
func (s *splineGraph) tableData(coef []float64, con [][]int, fold []float64) []float64 {
	m, nb, q := s.m, s.nb, pow(4, s.m)
	side := nb + 1 + tableShift
	c := len(con)
	cols := c * q
	cells := pow(side, m)
	// lp[ci][j][α][e]: the local polynomial α's derivative of dimension
	// j's order under contraction ci, scaled by (1/h)^order.
	lp := make([][][4][4]float64, c)
	for ci, o := range con {
		lp[ci] = make([][4][4]float64, m)
		for j := range m {
			sc := 1.0
			for range o[j] {
				sc *= s.ih
			}
			for a := range 4 {
				for e := range 4 {
					lp[ci][j][a][e] = localPoly[o[j]][a][e] * sc
				}
			}
		}
	}
	alpha := make([][]int, q)
	for a := range q {
		alpha[a] = cellIndex(a, m)
	}
	out := make([]float64, cells*cols)
	cc := make([]float64, q)
	for cell := range cells {
		k := digits(cell, side, m)
		for a := range q {
			cc[a] = 0
			flat, in := 0, true
			for j := range m {
				i := k[j] - tableShift + alpha[a][j]
				if i < 0 || i >= nb {
					in = false
					break
				}
				flat = flat*nb + i
			}
			if in {
				cc[a] = coef[flat]
			}
		}
		row := out[cell*cols : (cell+1)*cols]
		for ci := range c {
			for e := range q {
				var sum float64
				for a := range q {
					if cc[a] == 0 {
						continue
					}
					p := cc[a]
					for j := range m {
						p *= lp[ci][j][alpha[a][j]][alpha[e][j]]
					}
					sum += p
				}
				row[ci*q+e] = sum
			}
		}
		for ci, f := range fold {
			row[ci*q] += f
		}
	}
	return out
}

// tableConsts returns (making them once) the table path's constants.
func (s *splineGraph) tableConsts(hess bool) *tableWeights {
	if w, ok := s.tables[hess]; ok {
		return w
	}
	g, m, q := s.g, s.m, pow(4, s.m)
	con := contractions(m, hess)
	c := len(con)
	cols := c * q
	w := &tableWeights{}
	w.zero, w.top = g.Scalar(0), g.Scalar(float64(s.nb+tableShift))
	strides := make([]float64, m)
	st := 1
	for j := m - 1; j >= 0; j-- {
		strides[j] = float64(st)
		st *= s.nb + 1 + tableShift
	}
	w.strides = g.Const("spline_strides", []int64{int64(m), 1}, strides)
	w.flat = g.Int64s("flat", []int64{1}, -1)
	for j := range m {
		sel, bias := make([]float64, 3*m*cols), make([]float64, cols)
		for ci := range c {
			for e := range q {
				col := ci*q + e
				if p := cellIndex(e, m)[j]; p == 0 {
					bias[col] = 1
				} else {
					sel[((p-1)*m+j)*cols+col] = 1
				}
			}
		}
		w.sel = append(w.sel, g.Const("monomial_select", []int64{int64(3 * m), int64(cols)}, sel))
		w.bias = append(w.bias, g.Const("monomial_bias", []int64{int64(cols)}, bias))
	}
	s.tables[hess] = w
	return w
}

// sumConsts adds the constants that sum each contraction's columns (c·4^m
// × c) and cut the gradient and the Hessian out of the sums.
func (s *splineGraph) sumConsts(c int) (sum, gradIdx, hessIdx, sq string) {
	g, m, q := s.g, s.m, pow(4, s.m)
	cols := c * q
	sm := make([]float64, cols*c)
	for ci := range c {
		for a := range q {
			sm[(ci*q+a)*c+ci] = 1
		}
	}
	sum = g.Const("spline_sum", []int64{int64(cols), int64(c)}, sm)
	if c > m {
		gi, hi := make([]int64, m), make([]int64, m*m)
		for j := range m {
			gi[j] = int64(j)
		}
		for k := range m * m {
			hi[k] = int64(m + k)
		}
		gradIdx = g.Int64s("grad_index", []int64{int64(m)}, gi...)
		hessIdx = g.Int64s("hess_index", []int64{int64(m * m)}, hi...)
		sq = g.Int64s("square", []int64{3}, 0, int64(m), int64(m))
	}
	return sum, gradIdx, hessIdx, sq
}

// lookup returns, for the shifted knot coordinates t (N×m, t + tableShift
// in every dimension) and a table, every sample's table row times its
// monomials (N × c·4^m), which summed over each contraction's 4^m
// columns give the contractions.
func (s *splineGraph) lookup(t, table string, hess bool) string {
	g := s.g
	op := func(o string, in ...string) string { return g.Op(o, in) }
	w := s.tableConsts(hess)
	tc := op("Clip", t, w.zero, w.top)
	k := op("Floor", tc)
	u := op("Sub", tc, k)
	u2 := op("Mul", u, u)
	pw := g.Op("Concat", []string{u, u2, op("Mul", u2, u)}, onnx.IntAttr("axis", 1))
	// The flat cell (k·strides, N×1), as a vector.
	idx := g.Op("Cast", []string{op("Reshape", op("Gemm", k, w.strides), w.flat)}, onnx.IntAttr("to", 7))
	p := g.Op("Gather", []string{table, idx}, onnx.IntAttr("axis", 0))
	for j := range s.m {
		p = op("Mul", p, op("Gemm", pw, w.sel[j], w.bias[j]))
	}
	return p
}

// grbFast holds one layer's constants for the fused one-step map
// (fastStep) Z' = Z + (∇S(M Z) + (a ⊙ sech²(W M Z + b)) W) N, written as
// t = Z tIn + tInB (the shifted knot coordinates), pre = Z preW + preB
// (the tail's pre-activations) and Z' = P out + (tanh²(pre) outTail + Z),
// three Gemms, where P is the lookup of t in the table, which holds the
// spline's gradient with the tail's constant part (a W)_j folded into
// contraction j's constant monomial (the tail's gradient a ⊙ (1 − tanh²)
// W is that constant less the tanh² part outTail = −diag(a) W N carries),
// and out repeats row j of N for contraction j's columns.
type grbFast struct {
	tIn, tInB   string
	preW, preB  string
	table, out  string
	outTail     string
	width, cols int
}

// fastLayer makes a layer's grbFast constants from its tensors and Mᵀ
// (2d × m).
func (s *splineGraph) fastLayer(prefix string, lt predictor.PlanLayerTensors, mt []float64, d2, w int) grbFast {
	g, m, q := s.g, s.m, pow(4, s.m)
	f := grbFast{width: w, cols: m * q}
	tIn, tInB := make([]float64, d2*m), make([]float64, m)
	for i, v := range mt {
		tIn[i] = v / s.h
	}
	for j := range m {
		tInB[j] = tableShift - s.sp.Lo/s.h
	}
	f.tIn = g.Const(prefix+"knot_in", []int64{int64(d2), int64(m)}, tIn)
	f.tInB = g.Const(prefix+"knot_shift", []int64{int64(m)}, tInB)
	// fold[j] = Σ_i a_i W_ij, WN[i] = Σ_r W_ir N_r.
	fold := make([]float64, m)
	wn := make([]float64, w*d2)
	for i := range w {
		for r := range m {
			fold[r] += lt.TailA[i] * lt.TailW[i*m+r]
			for c := range d2 {
				wn[i*d2+c] += lt.TailW[i*m+r] * lt.N[r*d2+c]
			}
		}
	}
	f.table = g.Const(prefix+"spline_table", s.tableDims(f.cols), s.tableData(lt.Coef, contractions(m, false), fold))
	out := make([]float64, f.cols*d2)
	for j := range m {
		for e := range q {
			copy(out[(j*q+e)*d2:(j*q+e+1)*d2], lt.N[j*d2:(j+1)*d2])
		}
	}
	f.out = g.Const(prefix+"update", []int64{int64(f.cols), int64(d2)}, out)
	if w > 0 {
		ot := make([]float64, w*d2)
		for i := range ot {
			ot[i] = -lt.TailA[i/d2] * wn[i]
		}
		f.outTail = g.Const(prefix+"tail_update", []int64{int64(w), int64(d2)}, ot)
		pre := make([]float64, d2*w)
		for c := range d2 {
			for j := range w {
				for r := range m {
					pre[c*w+j] += mt[c*m+r] * lt.TailW[j*m+r]
				}
			}
		}
		f.preW = g.Const(prefix+"tail_in", []int64{int64(d2), int64(w)}, pre)
		f.preB = g.Const(prefix+"tailb", []int64{int64(w)}, lt.TailB)
	}
	return f
}

// fastStep applies a table-path layer to Z (N×2d) in the fused form of
// grbFast.
func (s *splineGraph) fastStep(z string, f grbFast) string {
	g := s.g
	op := func(o string, in ...string) string { return g.Op(o, in) }
	p := s.lookup(op("Gemm", z, f.tIn, f.tInB), f.table, false)
	if f.width > 0 {
		th := op("Tanh", op("Gemm", z, f.preW, f.preB))
		z = op("Gemm", op("Mul", th, th), f.outTail, z)
	}
	return op("Gemm", p, f.out, z)
}

// elemConsts returns (making them once) the coefficient path's shared
// constants.
func (s *splineGraph) elemConsts() *elemConsts {
	if s.elem != nil {
		return s.elem
	}
	g, m, nb := s.g, s.m, s.nb
	e := &elemConsts{side: nb + 2*splinePad}
	e.lo, e.h = g.Scalar(s.sp.Lo), g.Scalar(s.h)
	e.kmin, e.kmax = g.Scalar(-splinePad), g.Scalar(float64(nb))
	strides := make([]int64, m)
	st, sum := int64(1), int64(0)
	for j := m - 1; j >= 0; j-- {
		strides[j] = st
		sum += st
		st *= int64(e.side)
	}
	sf := make([]float64, m)
	for j, v := range strides {
		sf[j] = float64(v)
	}
	e.strides = g.Const("spline_strides", []int64{int64(m), 1}, sf)
	// Offsets of the combinations (i_0, …, i_{m−1}) ∈ {0..3}^m, i_0
	// slowest, plus the padding's.
	q := pow(4, m)
	offs := make([]int64, q)
	for a := range q {
		offs[a] = splinePad * sum
		for j, i := range cellIndex(a, m) {
			offs[a] += int64(i) * strides[j]
		}
	}
	e.offsets = g.Int64s("spline_offsets", []int64{1, int64(q)}, offs...)
	s.elem = e
	return e
}

// weightConsts returns (making them once) the coefficient path's
// contraction constants.
func (s *splineGraph) weightConsts(hess bool) *splineWeights {
	if w, ok := s.weights[hess]; ok {
		return w
	}
	g, m := s.g, s.m
	con := contractions(m, hess)
	c, q := len(con), pow(4, m)
	cols := c * q
	spread, bias := make([]float64, 3*m*m*cols), make([]float64, m*cols)
	for j := range m {
		for ci, orders := range con {
			d := orders[j]
			scale := 1.0
			for range d {
				scale *= s.ih
			}
			for a := range q {
				i := cellIndex(a, m)[j]
				col := j*cols + ci*q + a
				bias[col] = localPoly[d][i][0] * scale
				for p := 1; p <= 3; p++ {
					spread[((p-1)*m+j)*m*cols+col] = localPoly[d][i][p] * scale
				}
			}
		}
	}
	w := &splineWeights{}
	w.spread = g.Const("spline_spread", []int64{int64(3 * m), int64(m * cols)}, spread)
	w.bias = g.Const("spline_bias", []int64{int64(m * cols)}, bias)
	if m > 1 {
		sizes := make([]int64, m)
		for j := range sizes {
			sizes[j] = int64(cols)
		}
		w.split = g.Int64s("split", []int64{int64(m)}, sizes...)
	}
	tile := make([]float64, q*cols)
	for ci := range c {
		for a := range q {
			tile[a*cols+ci*q+a] = 1
		}
	}
	w.tile = g.Const("spline_tile", []int64{int64(q), int64(cols)}, tile)
	s.weights[hess] = w
	return w
}

// coefficients adds a layer's coefficients (NumBasis^m, dimension 0
// slowest) padded with zeros as a flat constant.
func (s *splineGraph) coefficients(prefix string, coef []float64) string {
	m, nb, side := s.m, s.nb, s.elemConsts().side
	out := make([]float64, pow(side, m))
	idx := make([]int, m)
	for a, v := range coef {
		rest := a
		for j := m - 1; j >= 0; j-- {
			idx[j] = rest % nb
			rest /= nb
		}
		flat := 0
		for j := range m {
			flat = flat*side + idx[j] + splinePad
		}
		out[flat] = v
	}
	return s.g.Const(prefix, []int64{int64(len(out))}, out)
}

// eval returns ∇S(η) (N×m) and, when hess is set, ∇²S(η) (N×m×m) for η
// (N×m) and a layer's spline, by the table or the coefficients.
func (s *splineGraph) eval(eta string, l *splineLayer, hess bool) (grad, hm string) {
	g := s.g
	op := func(o string, in ...string) string { return g.Op(o, in) }
	c := len(contractions(s.m, hess))
	var prod string
	if s.table {
		w := s.tableConsts(hess)
		if w.scale == "" {
			w.scale, w.shift = g.Scalar(s.ih), g.Scalar(tableShift-s.sp.Lo/s.h)
		}
		prod = s.lookup(op("Add", op("Mul", eta, w.scale), w.shift), l.table(hess), hess)
	} else {
		e := s.elemConsts()
		w := s.weightConsts(hess)
		// The knot interval and local coordinate of every dimension, as
		// predictor.Spline.Eval computes them, and the powers of u.
		t := op("Div", op("Sub", eta, e.lo), e.h)
		k := op("Floor", t)
		u := op("Sub", t, k)
		u2 := op("Mul", u, u)
		pw := g.Op("Concat", []string{u, u2, op("Mul", u2, u)}, onnx.IntAttr("axis", 1)) // N×3m
		// The 4^m coefficients of the cell: one Gather at flat indices,
		// repeated for every contraction.
		base := g.Op("Cast", []string{op("MatMul", op("Clip", k, e.kmin, e.kmax), e.strides)}, onnx.IntAttr("to", 7))
		prod = op("MatMul", op("Gather", l.flat(), op("Add", base, e.offsets)), w.tile) // N×c·4^m
		factors := []string{op("Add", op("MatMul", pw, w.spread), w.bias)}
		if s.m > 1 {
			factors = g.OpN("Split", []string{factors[0], w.split}, s.m, onnx.IntAttr("axis", 1))
		}
		for _, f := range factors {
			prod = op("Mul", prod, f)
		}
	}
	sum, gradIdx, hessIdx, sq := s.sums(c)
	all := op("MatMul", prod, sum) // N×c
	if !hess {
		return all, ""
	}
	grad = g.Op("Gather", []string{all, gradIdx}, onnx.IntAttr("axis", 1))
	return grad, op("Reshape", g.Op("Gather", []string{all, hessIdx}, onnx.IntAttr("axis", 1)), sq)
}

// sums returns (making them once per c) sumConsts.
func (s *splineGraph) sums(c int) (sum, gradIdx, hessIdx, sq string) {
	if s.sumCache == nil {
		s.sumCache = map[int][4]string{}
	}
	if v, ok := s.sumCache[c]; ok {
		return v[0], v[1], v[2], v[3]
	}
	sum, gradIdx, hessIdx, sq = s.sumConsts(c)
	s.sumCache[c] = [4]string{sum, gradIdx, hessIdx, sq}
	return sum, gradIdx, hessIdx, sq
}
