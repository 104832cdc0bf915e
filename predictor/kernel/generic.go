package kernel

import "math"

// Portable Go implementations, in the orders of order.go, used by the Go
// kernel set and for the products the assembly leaves to Go (Gemm TT).
// Arguments are validated by the exported wrappers; all sizes are ≥ 1. As in
// the assembly kernels, the products are scaled by alpha and added to the
// output when acc ≠ 0, or overwrite it when acc = 0.

// dot8 returns Σ x[j]·y[j] over j < len(x) in dot order: the operations of
// dotRef with the eight partial sums in variables.
func dot8(x, y []float64) float64 {
	y = y[:len(x)]
	var p0, p1, p2, p3, p4, p5, p6, p7 float64
	j := 0
	for ; j+8 <= len(x); j += 8 {
		xs, ys := x[j:j+8:j+8], y[j:j+8:j+8]
		p0 = math.FMA(xs[0], ys[0], p0)
		p1 = math.FMA(xs[1], ys[1], p1)
		p2 = math.FMA(xs[2], ys[2], p2)
		p3 = math.FMA(xs[3], ys[3], p3)
		p4 = math.FMA(xs[4], ys[4], p4)
		p5 = math.FMA(xs[5], ys[5], p5)
		p6 = math.FMA(xs[6], ys[6], p6)
		p7 = math.FMA(xs[7], ys[7], p7)
	}
	if r := len(x) - j; r > 0 {
		xs, ys := x[j:], y[j:]
		p0 = math.FMA(xs[0], ys[0], p0)
		if r > 1 {
			p1 = math.FMA(xs[1], ys[1], p1)
		}
		if r > 2 {
			p2 = math.FMA(xs[2], ys[2], p2)
		}
		if r > 3 {
			p3 = math.FMA(xs[3], ys[3], p3)
		}
		if r > 4 {
			p4 = math.FMA(xs[4], ys[4], p4)
		}
		if r > 5 {
			p5 = math.FMA(xs[5], ys[5], p5)
		}
		if r > 6 {
			p6 = math.FMA(xs[6], ys[6], p6)
		}
	}
	return ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7))
}

// matVecGo sets y[i] = alpha·dot(A[i], x) (+ y[i]) for i < m.
func matVecGo(m, n int, a []float64, lda int, x, y []float64, alpha float64, acc int) {
	x = x[:n]
	for i := 0; i < m; i++ {
		y[i] = finish(dot8(a[i*lda:i*lda+n], x), alpha, acc, y[i])
	}
}

// matTVecGo sets y[j] = alpha·Σ_i x[i]·A[i][j] (+ y[j]) for j < n in chain
// order.
func matTVecGo(m, n int, a []float64, lda int, x, y []float64, alpha float64, acc int) {
	chainGo(1, n, m, x, 0, 1, a, lda, y, 0, alpha, acc)
}

// chainCols is the number of columns chainGo sums side by side.
const chainCols = 128

// chainGo sets C[i][j] = alpha·Σ_p A(i,p)·B[p][j] (+ C[i][j]) for i < m,
// j < n, p < k in chain order, where A(i,p) = a[i*rs+p*cs]. The partial sums
// of up to chainCols columns live in an array on the stack.
func chainGo(m, n, k int, a []float64, rs, cs int, b []float64, ldb int, c []float64, ldc int, alpha float64, acc int) {
	var buf [chainCols]float64
	for i := 0; i < m; i++ {
		for j0 := 0; j0 < n; j0 += chainCols {
			w := min(chainCols, n-j0)
			s := buf[:w]
			clear(s)
			for p := 0; p < k; p++ {
				av := a[i*rs+p*cs]
				bp := b[p*ldb+j0 : p*ldb+j0+w]
				for j, bv := range bp {
					s[j] = math.FMA(av, bv, s[j])
				}
			}
			ci := c[i*ldc+j0 : i*ldc+j0+w]
			for j, v := range s {
				ci[j] = finish(v, alpha, acc, ci[j])
			}
		}
	}
}

// gemmGo computes C = alpha·op(A)·op(B) (+ C) in the orders of order.go.
func gemmGo(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, acc int) {
	if !transA && transB {
		for i := 0; i < m; i++ {
			matVecGo(n, k, b, ldb, a[i*lda:i*lda+k], c[i*ldc:i*ldc+n], alpha, acc)
		}
		return
	}
	rs, cs := lda, 1
	if transA {
		rs, cs = 1, lda
	}
	kb := kBlocks(k)
	for p := 0; p < k; p += kb {
		kk := min(kb, k-p)
		if !transB {
			chainGo(m, n, kk, a[p*cs:], rs, cs, b[p*ldb:], ldb, c, ldc, alpha, acc)
		} else {
			// TT: C[i][j] = Σ_p A[p][i]·B[j][p], one chain per entry.
			for i := 0; i < m; i++ {
				ci := c[i*ldc : i*ldc+n]
				for j := range ci {
					bj := b[j*ldb+p : j*ldb+p+kk]
					var s float64
					for q, bv := range bj {
						s = math.FMA(a[(p+q)*lda+i], bv, s)
					}
					ci[j] = finish(s, alpha, acc, ci[j])
				}
			}
		}
		acc = 1
	}
}
