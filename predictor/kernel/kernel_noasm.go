//go:build !amd64 || noasm

package kernel

func matVecAsm(m, n int, a *float64, lda int, x, y *float64, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func matTVecAsm(m, n int, a *float64, lda int, x, y *float64, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func dotTileAsm(R, n int, x *float64, ldx int, b0, b1, b2 *float64, y *float64, ldy int, k int, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func panelAsm(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int) {
	panic("kernel: no assembly")
}
