//go:build amd64 && !noasm

package kernel

import "golang.org/x/sys/cpu"

// hasAsm reports whether the CPU and OS support the AVX2 + FMA3 kernels.
var hasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// matVecAsm computes y = A x for m ≥ 1, n ≥ 1.
//
//go:noescape
func matVecAsm(m, n int, a *float64, lda int, x, y *float64)

// matTVecAsm computes y = Aᵀ x for m ≥ 1, n ≥ 1.
//
//go:noescape
func matTVecAsm(m, n int, a *float64, lda int, x, y *float64)

// mulNTAsm computes Y[r][l] = Σ_j X[r][j]·a_l[j] for r < R, l < k, j < n,
// where a_0..a_3 are rows of A (rows past k may repeat earlier ones) and
// Y[r] starts at y + r*ldy. R, n ≥ 1, 1 ≤ k ≤ 4.
//
//go:noescape
func mulNTAsm(R, n int, x *float64, ldx int, a0, a1, a2, a3 *float64, y *float64, ldy int, k int)

// mulNNAsm computes y_r[j] = Σ_i x_r[i]·A[i][j] for the four rows r < 4
// (x_r, y_r may repeat a row; the results are then identical), i < m, j < n.
//
//go:noescape
func mulNNAsm(m, n int, x0, x1, x2, x3 *float64, a *float64, lda int, y0, y1, y2, y3 *float64)
