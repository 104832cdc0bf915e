//go:build !amd64 || noasm

package kernel

func sech2Asm(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int) {
	panic("kernel: no assembly")
}
