// Package kernel provides fast float64 dense kernels for the hot paths of
// small neural networks: matrix–vector products with a matrix or its
// transpose, general matrix products C = alpha·op(A)·op(B) + beta·C sized for
// batches of up to about a thousand rows and inner dimensions of a few
// hundred, and the tanh-ridge activation derivative a·sech²(x + b).
//
// All matrices are row-major with explicit leading dimensions (the distance,
// in elements, between the starts of consecutive rows).
//
// Each kernel exists in three sets (see Set): portable Go, AVX2 with FMA3
// and AVX-512 assembly (generated with avo, see asmgen). The fastest set the
// CPU supports is chosen when the package is initialised, capped by the
// environment variable CALISYM_KERNELS; the noasm build tag leaves only Go.
// All sets compute every output with the same sequence of IEEE-754
// operations (fused multiply–adds in a fixed order, see order.go), so they
// return the same bits on every machine.
//
// The kernels never allocate and never start goroutines. Slice lengths are
// validated once per call and a call with too short slices or invalid leading
// dimensions panics. Outputs must not overlap the inputs (Sech2 may work in
// place).
package kernel

import "fmt"

// matOK reports whether a slice of length n holds a rows×cols matrix with
// leading dimension ld.
func matOK(rows, cols, n, ld int) bool {
	return rows >= 0 && cols >= 0 && ld >= max(cols, 1) && (rows == 0 || cols == 0 || n >= (rows-1)*ld+cols)
}

// checkMat panics unless s holds a rows×cols matrix with leading dimension ld.
func checkMat(fn, name string, rows, cols int, s []float64, ld int) {
	if !matOK(rows, cols, len(s), ld) {
		badMat(fn, name, rows, cols, len(s), ld)
	}
}

//go:noinline
func badMat(fn, name string, rows, cols, length, ld int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("kernel.%s: negative dimension %d×%d", fn, rows, cols))
	}
	if ld < cols || ld < 1 {
		panic(fmt.Sprintf("kernel.%s: leading dimension of %s is %d, want ≥ max(1, %d)", fn, name, ld, cols))
	}
	panic(fmt.Sprintf("kernel.%s: %s has length %d, need %d for %d×%d with leading dimension %d",
		fn, name, length, (rows-1)*ld+cols, rows, cols, ld))
}

func checkVec(fn, name string, n int, s []float64) {
	if len(s) < n {
		badVec(fn, name, n, s)
	}
}

//go:noinline
func badVec(fn, name string, n int, s []float64) {
	panic(fmt.Sprintf("kernel.%s: %s has length %d, need %d", fn, name, len(s), n))
}

// MatVec sets y[i] = Σ_j a[i*lda+j]·x[j] for i < m, j < n (y = A x), where A
// is m×n with leading dimension lda ≥ max(1, n). When n is 0, y[:m] is zeroed.
// Each y[i] is summed in dot order (see order.go).
func MatVec(m, n int, a []float64, lda int, x, y []float64) {
	if m <= 0 || n <= 0 || lda < n || len(x) < n || len(y) < m || len(a) < (m-1)*lda+n {
		checkMat("MatVec", "a", m, n, a, lda)
		checkVec("MatVec", "x", n, x)
		checkVec("MatVec", "y", m, y)
		if m > 0 {
			clear(y[:m]) // n == 0
		}
		return
	}
	switch active {
	case AVX512:
		matVecAvx512(1, m, n, &x[0], n, &a[0], lda, &y[0], m, 1, 0)
	case AVX2:
		matVecAvx2(1, m, n, &x[0], n, &a[0], lda, &y[0], m, 1, 0)
	default:
		matVecGo(m, n, a, lda, x, y, 1, 0)
	}
}

// MatTVec sets y[j] = Σ_i a[i*lda+j]·x[i] for j < n, i < m (y = Aᵀ x), where A
// is m×n with leading dimension lda ≥ max(1, n). When m is 0, y[:n] is zeroed.
// Each y[j] is one chain of fused multiply–adds over i (chain order, see
// order.go).
func MatTVec(m, n int, a []float64, lda int, x, y []float64) {
	if m <= 0 || n <= 0 || lda < n || len(x) < m || len(y) < n || len(a) < (m-1)*lda+n {
		checkMat("MatTVec", "a", m, n, a, lda)
		checkVec("MatTVec", "x", m, x)
		checkVec("MatTVec", "y", n, y)
		if n > 0 {
			clear(y[:n]) // m == 0
		}
		return
	}
	switch active {
	case AVX512:
		rowChainSIMD(AVX512, m, n, &x[0], 1, a, lda, y, 1, 0)
	case AVX2:
		rowChainSIMD(AVX2, m, n, &x[0], 1, a, lda, y, 1, 0)
	default:
		matTVecGo(m, n, a, lda, x, y, 1, 0)
	}
}

// MulNT sets Y[r][i] = Σ_j X[r][j]·A[i][j] for r < R, i < m, j < n
// (Y = X Aᵀ). X is R×n with leading dimension ldx ≥ max(1, n), A is m×n with
// leading dimension lda ≥ max(1, n) and Y is R×m with leading dimension
// ldy ≥ max(1, m). When n is 0, Y is zeroed. It is Gemm(false, true, R, m, n,
// 1, x, ldx, a, lda, 0, y, ldy).
func MulNT(R, m, n int, x []float64, ldx int, a []float64, lda int, y []float64, ldy int) {
	Gemm(false, true, R, m, n, 1, x, ldx, a, lda, 0, y, ldy)
}

// MulNN sets Y[r][j] = Σ_i X[r][i]·A[i][j] for r < R, i < m, j < n
// (Y = X A). X is R×m with leading dimension ldx ≥ max(1, m), A is m×n with
// leading dimension lda ≥ max(1, n) and Y is R×n with leading dimension
// ldy ≥ max(1, n). When m is 0, Y is zeroed. It is Gemm(false, false, R, n,
// m, 1, x, ldx, a, lda, 0, y, ldy).
func MulNN(R, m, n int, x []float64, ldx int, a []float64, lda int, y []float64, ldy int) {
	Gemm(false, false, R, n, m, 1, x, ldx, a, lda, 0, y, ldy)
}
