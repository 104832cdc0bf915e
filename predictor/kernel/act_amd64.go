//go:build amd64 && !noasm

package kernel

// sech2Asm computes Y[r][j] = a[j]·sech²(X[r][j]+b[j]) for r < rows, j < n,
// X[r] starting at x + r*ldx and Y[r] at y + r*ldy; rows, n ≥ 1.
//
//go:noescape
func sech2Asm(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int)
