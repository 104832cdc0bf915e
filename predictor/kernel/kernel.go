// Package kernel provides fast float64 dense kernels for the inference hot
// path of small neural networks: matrix–vector products with a matrix or its
// transpose, and products of a small batch of row vectors with a matrix or its
// transpose.
//
// All matrices are row-major with explicit leading dimensions (the distance,
// in elements, between the starts of consecutive rows). On amd64 CPUs with
// AVX2 and FMA3 the kernels run hand-written assembly; elsewhere, or when
// built with the noasm tag, they run portable Go code. Results of the two
// paths agree to rounding (FMA and a different summation order change the
// last bits).
//
// The kernels never allocate. Slice lengths are validated once per call and a
// call with too short slices or invalid leading dimensions panics. Outputs
// must not overlap the inputs.
package kernel

import "fmt"

// useAsm selects the assembly kernels. It is true when the CPU supports them;
// tests switch it off to exercise the portable Go code.
var useAsm = hasAsm

// Accelerated reports whether the kernels run the SIMD assembly code on this
// machine.
func Accelerated() bool { return useAsm }

func checkMat(fn, name string, rows, cols int, s []float64, ld int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("kernel.%s: negative dimension %d×%d", fn, rows, cols))
	}
	if ld < cols || ld < 1 {
		panic(fmt.Sprintf("kernel.%s: leading dimension of %s is %d, want ≥ max(1, %d)", fn, name, ld, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("kernel.%s: %s has length %d, need %d for %d×%d with leading dimension %d",
			fn, name, len(s), need, rows, cols, ld))
	}
}

func checkVec(fn, name string, n int, s []float64) {
	if len(s) < n {
		panic(fmt.Sprintf("kernel.%s: %s has length %d, need %d", fn, name, len(s), n))
	}
}

// MatVec sets y[i] = Σ_j a[i*lda+j]·x[j] for i < m, j < n (y = A x), where A
// is m×n with leading dimension lda ≥ max(1, n). When n is 0, y[:m] is zeroed.
func MatVec(m, n int, a []float64, lda int, x, y []float64) {
	if useAsm && m > 0 && n > 0 && lda >= n && len(x) >= n && len(y) >= m && len(a) >= (m-1)*lda+n {
		matVecAsm(m, n, &a[0], lda, &x[0], &y[0])
		return
	}
	checkMat("MatVec", "a", m, n, a, lda)
	checkVec("MatVec", "x", n, x)
	checkVec("MatVec", "y", m, y)
	if m == 0 {
		return
	}
	if n == 0 {
		clear(y[:m])
		return
	}
	if useAsm {
		matVecAsm(m, n, &a[0], lda, &x[0], &y[0])
		return
	}
	matVecGo(m, n, a, lda, x, y)
}

// MatTVec sets y[j] = Σ_i a[i*lda+j]·x[i] for j < n, i < m (y = Aᵀ x), where A
// is m×n with leading dimension lda ≥ max(1, n). When m is 0, y[:n] is zeroed.
func MatTVec(m, n int, a []float64, lda int, x, y []float64) {
	if useAsm && m > 0 && n > 0 && lda >= n && len(x) >= m && len(y) >= n && len(a) >= (m-1)*lda+n {
		matTVecAsm(m, n, &a[0], lda, &x[0], &y[0])
		return
	}
	checkMat("MatTVec", "a", m, n, a, lda)
	checkVec("MatTVec", "x", m, x)
	checkVec("MatTVec", "y", n, y)
	if n == 0 {
		return
	}
	if m == 0 {
		clear(y[:n])
		return
	}
	if useAsm {
		matTVecAsm(m, n, &a[0], lda, &x[0], &y[0])
		return
	}
	matTVecGo(m, n, a, lda, x, y)
}

// MulNT sets Y[r][i] = Σ_j X[r][j]·A[i][j] for r < R, i < m, j < n
// (Y = X Aᵀ). X is R×n with leading dimension ldx ≥ max(1, n), A is m×n with
// leading dimension lda ≥ max(1, n) and Y is R×m with leading dimension
// ldy ≥ max(1, m). When n is 0, Y is zeroed.
func MulNT(R, m, n int, x []float64, ldx int, a []float64, lda int, y []float64, ldy int) {
	checkMat("MulNT", "x", R, n, x, ldx)
	checkMat("MulNT", "a", m, n, a, lda)
	checkMat("MulNT", "y", R, m, y, ldy)
	if R == 0 || m == 0 {
		return
	}
	if n == 0 {
		for r := 0; r < R; r++ {
			clear(y[r*ldy : r*ldy+m])
		}
		return
	}
	if !useAsm {
		mulNTGo(R, m, n, x, ldx, a, lda, y, ldy)
		return
	}
	for i := 0; i < m; i += 4 {
		k := min(4, m-i)
		a0 := &a[i*lda]
		a1, a2, a3 := a0, a0, a0
		if k > 1 {
			a1, a2, a3 = &a[(i+1)*lda], &a[(i+1)*lda], &a[(i+1)*lda]
		}
		if k > 2 {
			a2, a3 = &a[(i+2)*lda], &a[(i+2)*lda]
		}
		if k > 3 {
			a3 = &a[(i+3)*lda]
		}
		mulNTAsm(R, n, &x[0], ldx, a0, a1, a2, a3, &y[i], ldy, k)
	}
}

// MulNN sets Y[r][j] = Σ_i X[r][i]·A[i][j] for r < R, i < m, j < n
// (Y = X A). X is R×m with leading dimension ldx ≥ max(1, m), A is m×n with
// leading dimension lda ≥ max(1, n) and Y is R×n with leading dimension
// ldy ≥ max(1, n). When m is 0, Y is zeroed.
func MulNN(R, m, n int, x []float64, ldx int, a []float64, lda int, y []float64, ldy int) {
	checkMat("MulNN", "x", R, m, x, ldx)
	checkMat("MulNN", "a", m, n, a, lda)
	checkMat("MulNN", "y", R, n, y, ldy)
	if R == 0 || n == 0 {
		return
	}
	if m == 0 {
		for r := 0; r < R; r++ {
			clear(y[r*ldy : r*ldy+n])
		}
		return
	}
	if !useAsm {
		mulNNGo(R, m, n, x, ldx, a, lda, y, ldy)
		return
	}
	for r := 0; r < R; r += 4 {
		k := min(4, R-r)
		x0, y0 := &x[r*ldx], &y[r*ldy]
		x1, y1 := x0, y0
		if k > 1 {
			x1, y1 = &x[(r+1)*ldx], &y[(r+1)*ldy]
		}
		x2, y2 := x1, y1
		if k > 2 {
			x2, y2 = &x[(r+2)*ldx], &y[(r+2)*ldy]
		}
		x3, y3 := x2, y2
		if k > 3 {
			x3, y3 = &x[(r+3)*ldx], &y[(r+3)*ldy]
		}
		mulNNAsm(m, n, x0, x1, x2, x3, &a[0], lda, y0, y1, y2, y3)
	}
}
