//go:build !amd64 || noasm

package kernel

const hasAsm = false

func matVecAsm(m, n int, a *float64, lda int, x, y *float64) { panic("kernel: no assembly") }

func matTVecAsm(m, n int, a *float64, lda int, x, y *float64) { panic("kernel: no assembly") }

func mulNTAsm(R, n int, x *float64, ldx int, a0, a1, a2, a3 *float64, y *float64, ldy int, k int) {
	panic("kernel: no assembly")
}

func mulNNAsm(m, n int, x0, x1, x2, x3 *float64, a *float64, lda int, y0, y1, y2, y3 *float64) {
	panic("kernel: no assembly")
}
