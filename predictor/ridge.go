package predictor

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/predictor/kernel"
)

// view is a row-major matrix: element (i, j) is data[i*stride+j].
type view struct {
	rows, cols, stride int
	data               []float64
}

// gen wraps a row-major slice as a matrix view.
func gen(data []float64, rows, cols, stride int) view {
	return view{rows: rows, cols: cols, stride: stride, data: data}
}

// Transpose flags of gemm.
const (
	noTrans = false
	trans   = true
)

// gemm computes C = alpha·op(A)·op(B) + beta·C on row-major views, where
// op(X) is Xᵀ when the flag is trans. Every matrix product of the package
// goes through it, to the allocation-free kernels of package kernel; as in
// BLAS, C is not read when beta is 0.
func gemm(tA, tB bool, alpha float64, a, b view, beta float64, c view) {
	m, k := a.rows, a.cols
	if tA {
		m, k = k, m
	}
	kb, n := b.rows, b.cols
	if tB {
		kb, n = n, kb
	}
	if m != c.rows || n != c.cols || k != kb {
		panic(fmt.Sprintf("predictor: gemm shapes %d×%d · %d×%d → %d×%d", m, k, kb, n, c.rows, c.cols))
	}
	kernel.Gemm(tA, tB, m, n, k, alpha, a.data, a.stride, b.data, b.stride, beta, c.data, c.stride)
}

// tanhRidge is the scalar function K(x) = Σ_j a_j tanh(w_j·x + b_j) on an
// in-dimensional input. Its parameters are stored as W (width×in, row major),
// b (width) and a (width).
type tanhRidge struct{ in, width int }

func (r tanhRidge) nParams() int { return r.width*r.in + 2*r.width }

func (r tanhRidge) split(p []float64) (w, b, a []float64) {
	nw := r.width * r.in
	return p[:nw], p[nw : nw+r.width], p[nw+r.width : nw+2*r.width]
}

// grad writes g = ∇K(x) for n rows of x (n×in), caching t = tanh(z) and
// s = a ⊙ sech²(z) (both n×width), z = W x + b.
func (r tanhRidge) grad(p []float64, n int, x, g, t, s []float64) {
	w, b, a := r.split(p)
	W := gen(w, r.width, r.in, r.in)
	gemm(noTrans, trans, 1, gen(x, n, r.in, r.in), W, 0, gen(t, n, r.width, r.width))
	kernel.TanhSech2(n, r.width, t, r.width, b, a, t, r.width, s, r.width)
	gemm(noTrans, noTrans, 1, gen(s, n, r.width, r.width), W, 0, gen(g, n, r.in, r.in))
}

// hvp writes out = ∇²K(x)·v for n rows, using the cached t and scratch u (n×width).
func (r tanhRidge) hvp(p []float64, n int, t, v, out, u []float64) {
	w, _, a := r.split(p)
	W := gen(w, r.width, r.in, r.in)
	U := gen(u, n, r.width, r.width)
	gemm(noTrans, trans, 1, gen(v, n, r.in, r.in), W, 0, U)
	for i := range n {
		tr := t[i*r.width : (i+1)*r.width]
		ur := u[i*r.width : (i+1)*r.width]
		for j, tv := range tr {
			ur[j] *= a[j] * (-2 * tv * (1 - tv*tv))
		}
	}
	gemm(noTrans, noTrans, 1, U, W, 0, gen(out, n, r.in, r.in))
}

// backward takes gbar, the adjoint of g = ∇K(x), writes xbar = ∇²K(x)·gbar and
// accumulates the parameter gradient of ⟨gbar, ∇K(x)⟩ into dp. u and s are
// n×width scratch.
func (r tanhRidge) backward(p, dp []float64, n int, x, t, gbar, xbar, u, s []float64) {
	w, _, a := r.split(p)
	dw, db, da := r.split(dp)
	W := gen(w, r.width, r.in, r.in)
	U := gen(u, n, r.width, r.width)
	S := gen(s, n, r.width, r.width)
	gemm(noTrans, trans, 1, gen(gbar, n, r.in, r.in), W, 0, U)
	for i := range n {
		tr := t[i*r.width : (i+1)*r.width]
		ur := u[i*r.width : (i+1)*r.width]
		sr := s[i*r.width : (i+1)*r.width]
		for j, tv := range tr {
			sech := 1 - tv*tv
			uv := ur[j]
			da[j] += sech * uv
			sp := -2 * tv * sech
			v := a[j] * sp * uv
			db[j] += v
			ur[j] = v
			sr[j] = a[j] * sech
		}
	}
	dW := gen(dw, r.width, r.in, r.in)
	// W̄ += Sᵀ gbar + Vᵀ x, with V stored in u.
	gemm(trans, noTrans, 1, S, gen(gbar, n, r.in, r.in), 1, dW)
	gemm(trans, noTrans, 1, U, gen(x, n, r.in, r.in), 1, dW)
	gemm(noTrans, noTrans, 1, U, W, 0, gen(xbar, n, r.in, r.in))
}

// value returns K(x) for a single input.
func (r tanhRidge) value(p, x []float64) float64 {
	w, b, a := r.split(p)
	var k float64
	for j := range r.width {
		z := b[j]
		for i, xi := range x {
			z += w[j*r.in+i] * xi
		}
		k += a[j] * math.Tanh(z)
	}
	return k
}

// splineRidge is the tensor-product cubic B-spline K(η) = Σ_α c_α Π_j B_{α_j}(η_j)
// on an m-dimensional input; its parameters are the (Intervals+3)^m coefficients.
type splineRidge struct {
	m  int
	sp Spline
}

func (r splineRidge) nParams() int {
	n := 1
	for range r.m {
		n *= r.sp.NumBasis()
	}
	return n
}

// splineRow holds the per-dimension basis evaluations of one input.
type splineRow struct {
	first      [maxRidgeDim]int
	b, db, d2b [maxRidgeDim][4]float64
	ok         bool
}

// maxRidgeDim bounds the ridge dimension m of GRB layers.
const maxRidgeDim = 4

func (r splineRidge) eval(eta []float64, row *splineRow) {
	row.ok = true
	for j := range r.m {
		f, ok := r.sp.Eval(eta[j], &row.b[j], &row.db[j], &row.d2b[j])
		row.first[j] = f
		if !ok {
			row.ok = false
		}
	}
}

// numTerms returns the number of local tensor terms, 4^m.
func (r splineRidge) numTerms() int { return 1 << (2 * r.m) }

// term decodes local term c into its coefficient index and, per dimension,
// which of the four local basis functions it uses. ok is false when the term
// falls outside the coefficient grid.
func (r splineRidge) term(row *splineRow, c int, digits *[maxRidgeDim]int) (alpha int, ok bool) {
	nb := r.sp.NumBasis()
	for j := range r.m {
		dgt := (c >> (2 * j)) & 3
		idx := row.first[j] + dgt
		if idx < 0 || idx >= nb {
			return 0, false
		}
		digits[j] = dgt
		alpha = alpha*nb + idx
	}
	return alpha, true
}

// prodExcept returns Π_{i≠j,l} B_i for the given digits (use l = -1 for one exclusion).
func (r splineRidge) prodExcept(row *splineRow, digits *[maxRidgeDim]int, j, l int) float64 {
	p := 1.0
	for i := range r.m {
		if i != j && i != l {
			p *= row.b[i][digits[i]]
		}
	}
	return p
}

// gradHess accumulates ∇K(η) into g (m values) and, if hess is non-nil, the
// Hessian into hess (m×m).
func (r splineRidge) gradHess(c []float64, row *splineRow, g, hess []float64) {
	if !row.ok {
		return
	}
	if r.m == 2 {
		r.gradHess2(c, row, g, hess)
		return
	}
	var digits [maxRidgeDim]int
	for t := range r.numTerms() {
		alpha, ok := r.term(row, t, &digits)
		if !ok {
			continue
		}
		ca := c[alpha]
		if ca == 0 {
			continue
		}
		for j := range r.m {
			pj := r.prodExcept(row, &digits, j, -1)
			g[j] += ca * row.db[j][digits[j]] * pj
			if hess == nil {
				continue
			}
			hess[j*r.m+j] += ca * row.d2b[j][digits[j]] * pj
			for l := j + 1; l < r.m; l++ {
				v := ca * row.db[j][digits[j]] * row.db[l][digits[l]] * r.prodExcept(row, &digits, j, l)
				hess[j*r.m+l] += v
				hess[l*r.m+j] += v
			}
		}
	}
}

// paramGrad accumulates ∂⟨gbar, ∇K(η)⟩/∂c into dc.
func (r splineRidge) paramGrad(dc []float64, row *splineRow, gbar []float64) {
	if !row.ok {
		return
	}
	var digits [maxRidgeDim]int
	for t := range r.numTerms() {
		alpha, ok := r.term(row, t, &digits)
		if !ok {
			continue
		}
		var v float64
		for j := range r.m {
			v += gbar[j] * row.db[j][digits[j]] * r.prodExcept(row, &digits, j, -1)
		}
		dc[alpha] += v
	}
}

// value returns K(η).
func (r splineRidge) value(c []float64, row *splineRow) float64 {
	if !row.ok {
		return 0
	}
	var k float64
	var digits [maxRidgeDim]int
	for t := range r.numTerms() {
		if alpha, ok := r.term(row, t, &digits); ok {
			k += c[alpha] * r.prodExcept(row, &digits, -1, -1)
		}
	}
	return k
}

// gradHess2 is gradHess for the common m = 2, unrolled over the 4×4 local terms.
func (r splineRidge) gradHess2(c []float64, row *splineRow, g, hess []float64) {
	nb := r.sp.NumBasis()
	b0, db0, d2b0 := &row.b[0], &row.db[0], &row.d2b[0]
	b1, db1, d2b1 := &row.b[1], &row.db[1], &row.d2b[1]
	var g0, g1, h00, h01, h11 float64
	for i := range 4 {
		ii := row.first[0] + i
		if ii < 0 || ii >= nb {
			continue
		}
		// s* are the inner sums over the second dimension.
		var sb, sdb, sd2b float64
		for j := range 4 {
			jj := row.first[1] + j
			if jj < 0 || jj >= nb {
				continue
			}
			cij := c[ii*nb+jj]
			sb += cij * b1[j]
			sdb += cij * db1[j]
			sd2b += cij * d2b1[j]
		}
		g0 += db0[i] * sb
		g1 += b0[i] * sdb
		h00 += d2b0[i] * sb
		h01 += db0[i] * sdb
		h11 += b0[i] * sd2b
	}
	g[0] += g0
	g[1] += g1
	if hess != nil {
		hess[0] += h00
		hess[1] += h01
		hess[2] += h01
		hess[3] += h11
	}
}
