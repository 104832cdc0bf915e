//go:build !amd64 || noasm

package kernel

// Without the assembly, cpuHas reports only Go and these are never called.

func dotAvx2(R, C, k int, x *float64, ldx int, b *float64, ldb int, y *float64, ldy int, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func matVecAvx2(R, C, k int, x *float64, ldx int, b *float64, ldb int, y *float64, ldy int, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func panelAvx2(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int) {
	panic("kernel: no assembly")
}

func rowChainAvx2(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int) {
	panic("kernel: no assembly")
}

func dotAvx512(R, C, k int, x *float64, ldx int, b *float64, ldb int, y *float64, ldy int, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func matVecAvx512(R, C, k int, x *float64, ldx int, b *float64, ldb int, y *float64, ldy int, alpha float64, acc int) {
	panic("kernel: no assembly")
}

func panelAvx512(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int) {
	panic("kernel: no assembly")
}

func rowChainAvx512(m, k int, a *float64, rsA, csA int, b *float64, ldb int, c *float64, ldc int, alpha float64, acc, w int) {
	panic("kernel: no assembly")
}
