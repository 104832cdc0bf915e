package kernel

//go:generate sh -c "cd asmgen && go run ./gemm -out ../gemm_amd64.s -stubs ../gemm_stubs_amd64.go -pkg kernel"

// kBlock bounds the inner dimension of one pass of the chain-order Gemm
// products (NN, TN, TT): an inner dimension k > kBlock is split into
// ⌈k/kBlock⌉ nearly equal blocks (see kBlocks and order.go), so that a panel
// of B stays in the cache while the register tiles walk down the rows of C.
// It is part of the order of operations: changing it changes the results.
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
// NT (A·Bᵀ) sums in dot order; NN, TN and TT sum in chain order with the
// inner dimension split into blocks of at most kBlock (see order.go). A beta
// other than 0 and 1 first scales C. Every kernel set returns the same bits.
// With SIMD, NN and TN broadcast elements of A against row panels of B in
// register tiles, NT forms dot products of rows of A and B in register
// tiles, and TT (Aᵀ·Bᵀ) runs portable code.
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
	switch active {
	case AVX512, AVX2:
		gemmSIMD(active, transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc, acc)
	default:
		gemmGo(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc, acc)
	}
}

// gemmSIMD is Gemm's product C = alpha·op(A)·op(B) (+ C when acc ≠ 0) with
// the assembly kernels of set s (AVX2 or AVX512); all sizes are ≥ 1.
func gemmSIMD(s Set, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, acc int) {
	switch {
	case transA && transB:
		gemmGo(true, true, m, n, k, alpha, a, lda, b, ldb, c, ldc, acc)
	case transB:
		dotSIMD(s, m, n, k, &a[0], lda, &b[0], ldb, &c[0], ldc, alpha, acc)
	default:
		rs, cs := lda, 1
		if transA {
			rs, cs = 1, lda
		}
		kb := kBlocks(k)
		for p := 0; p < k; p += kb {
			kk := min(kb, k-p)
			if m == 1 {
				rowChainSIMD(s, kk, n, &a[p*cs], cs, b[p*ldb:], ldb, c, alpha, acc)
			} else {
				panelSIMD(s, m, n, kk, &a[p*cs], rs, cs, b[p*ldb:], ldb, c, ldc, alpha, acc)
			}
			acc = 1
		}
	}
}

// dotSIMD sets Y[r][c] = alpha·Σ_j X[r][j]·B[c][j] (+ Y[r][c] when acc ≠ 0)
// for r < R, c < C, j < k in dot order, with the kernels of set s.
func dotSIMD(s Set, R, C, k int, x *float64, ldx int, b *float64, ldb int, y *float64, ldy int, alpha float64, acc int) {
	switch {
	case s == AVX512 && R == 1:
		matVecAvx512(1, C, k, x, ldx, b, ldb, y, ldy, alpha, acc)
	case s == AVX512:
		dotAvx512(R, C, k, x, ldx, b, ldb, y, ldy, alpha, acc)
	case R == 1:
		matVecAvx2(1, C, k, x, ldx, b, ldb, y, ldy, alpha, acc)
	default:
		dotAvx2(R, C, k, x, ldx, b, ldb, y, ldy, alpha, acc)
	}
}

// panelSIMD sets C[i][j] = alpha·Σ_p A(i,p)·B[p][j] (+ C[i][j] when acc ≠ 0)
// for i < m, j < n, p < k in chain order, A(i,p) = a[i*rs + p*cs], with the
// panel kernel of set s over column panels of B.
func panelSIMD(s Set, m, n, k int, a *float64, rs, cs int, b []float64, ldb int, c []float64, ldc int, alpha float64, acc int) {
	for j := 0; j < n; {
		if s == AVX512 {
			w := min(n-j, 24)
			panelAvx512(m, k, a, rs, cs, &b[j], ldb, &c[j], ldc, alpha, acc, w)
			j += w
			continue
		}
		w := 12 // three vectors, or two with the second masked
		if n-j < 12 {
			w = min(n-j, 8)
		}
		panelAvx2(m, k, a, rs, cs, &b[j], ldb, &c[j], ldc, alpha, acc, w)
		j += w
	}
}

// rowChainSIMD sets c[j] = alpha·Σ_p a[p*cs]·B[p][j] (+ c[j] when acc ≠ 0)
// for j < n, p < k in chain order, with set s. The columns are split into
// nearly equal blocks of at most as many vectors as the kernel holds in
// registers, so that enough chains run side by side.
func rowChainSIMD(s Set, k, n int, a *float64, cs int, b []float64, ldb int, c []float64, alpha float64, acc int) {
	lanes, most := 4, 12
	if s == AVX512 {
		lanes, most = 8, 24
	}
	nv := (n + lanes - 1) / lanes
	nb := (nv + most - 1) / most
	w := (nv + nb - 1) / nb * lanes
	for j := 0; j < n; j += w {
		ww := min(w, n-j)
		if s == AVX512 {
			rowChainAvx512(1, k, a, 0, cs, &b[j], ldb, &c[j], 0, alpha, acc, ww)
		} else {
			rowChainAvx2(1, k, a, 0, cs, &b[j], ldb, &c[j], 0, alpha, acc, ww)
		}
	}
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
