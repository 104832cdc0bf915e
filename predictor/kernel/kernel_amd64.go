//go:build amd64 && !noasm

package kernel

// In all matrix kernels below the accumulated products are multiplied by
// alpha; when acc is non-zero they are then added to the output, otherwise
// the output is overwritten without being read.

// matVecAsm computes y = alpha·A x (+ y) for m ≥ 1, n ≥ 1.
//
//go:noescape
func matVecAsm(m, n int, a *float64, lda int, x, y *float64, alpha float64, acc int)

// matTVecAsm computes y = alpha·Aᵀ x (+ y) for m ≥ 1, n ≥ 1.
//
//go:noescape
func matTVecAsm(m, n int, a *float64, lda int, x, y *float64, alpha float64, acc int)

// dotTileAsm computes Y[r][l] = alpha·Σ_j X[r][j]·b_l[j] (+ Y[r][l]) for
// r < R, l < k, j < n, where b_0..b_2 are rows of B (rows past k may repeat
// earlier ones) and Y[r] starts at y + r*ldy. R, n ≥ 1, 1 ≤ k ≤ 3.
//
//go:noescape
func dotTileAsm(R, n int, x *float64, ldx int, b0, b1, b2 *float64, y *float64, ldy int, k int, alpha float64, acc int)

// panelAsm computes C[i][j] = alpha·Σ_p a[i*rsA+p*csA]·b[p*ldb+j] (+ C[i][j])
// for i < m, j < w, p < k, C[i] starting at c + i*ldc. m, k ≥ 1; w is 12 or
// 1..8.
//
//go:noescape
func panelAsm(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int)
