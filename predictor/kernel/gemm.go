package kernel

// kBlock bounds the inner dimension of one pass of the panel kernel, so that
// a panel of B (kBlock × 12) stays in the L1 cache while the register tiles
// walk down the rows of C.
const kBlock = 256

// Gemm computes C = alpha·op(A)·op(B) + beta·C, where op(A) is A, or Aᵀ when
// transA is set, and likewise for B. op(A) is m×k, op(B) is k×n and C is m×n;
// all three are row-major with leading dimensions lda, ldb and ldc. A is
// stored m×k (lda ≥ max(1, k)) or, transposed, k×m (lda ≥ max(1, m)); B is
// stored k×n (ldb ≥ max(1, n)) or, transposed, n×k (ldb ≥ max(1, k)); and
// ldc ≥ max(1, n).
//
// As in BLAS, C is not read when beta is 0 (so NaN there is overwritten), and
// A and B are not read when alpha or k is 0. C must not overlap A or B.
//
// The products NN (A·B), TN (Aᵀ·B) and NT (A·Bᵀ) run SIMD kernels: NN and
// TN broadcast elements of A against row panels of B in 4×12 register tiles,
// NT forms dot products of rows in 4×3 tiles, and single-row products use the
// matrix–vector kernels. TT (Aᵀ·Bᵀ) runs portable code.
func Gemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if !matOK(ar, ac, len(a), lda) || !matOK(br, bc, len(b), ldb) || !matOK(m, n, len(c), ldc) {
		checkMat("Gemm", "a", ar, ac, a, lda)
		checkMat("Gemm", "b", br, bc, b, ldb)
		checkMat("Gemm", "c", m, n, c, ldc)
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		if beta != 1 {
			scaleMat(m, n, beta, c, ldc)
		}
		return
	}
	acc := 1
	switch beta {
	case 0:
		acc = 0
	case 1:
	default:
		scaleMat(m, n, beta, c, ldc)
	}
	if active == Go {
		gemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc, acc)
		return
	}
	switch {
	case transA && transB:
		gemmGo(true, true, m, n, k, alpha, a, lda, b, ldb, c, ldc, acc)
	case transB:
		if m == 1 {
			matVecAsm(n, k, &b[0], ldb, &a[0], &c[0], alpha, acc)
			return
		}
		for j := 0; j < n; j += 3 {
			w := min(3, n-j)
			b0 := &b[j*ldb]
			b1, b2 := b0, b0
			if w > 1 {
				b1, b2 = &b[(j+1)*ldb], &b[(j+1)*ldb]
			}
			if w > 2 {
				b2 = &b[(j+2)*ldb]
			}
			dotTileAsm(m, k, &a[0], lda, b0, b1, b2, &c[j], ldc, w, alpha, acc)
		}
	default:
		if m == 1 && !transA {
			matTVecAsm(k, n, &b[0], ldb, &a[0], &c[0], alpha, acc)
			return
		}
		rs, cs := lda, 1
		if transA {
			rs, cs = 1, lda
		}
		nk := (k + kBlock - 1) / kBlock
		kb := (k + nk - 1) / nk
		for p := 0; p < k; p += kb {
			kk := min(kb, k-p)
			for j := 0; j < n; {
				w := panelWidth(n - j)
				panelAsm(m, kk, &a[p*cs], rs, cs, &b[p*ldb+j], ldb, &c[j], ldc, alpha, acc, w)
				j += w
			}
			acc = 1
		}
	}
}

// panelWidth returns the width of the next column panel when r columns
// remain: 12 (three vectors), 5..8 (two, the second masked) or 1..4 (one,
// masked).
func panelWidth(r int) int {
	if r >= 12 {
		return 12
	}
	return min(r, 8)
}

// scaleMat sets C = beta·C for the m×n matrix C; beta = 0 zeroes C without
// reading it.
func scaleMat(m, n int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}
