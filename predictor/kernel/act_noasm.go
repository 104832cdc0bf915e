//go:build !amd64 || noasm

package kernel

// Without assembly cpuHas reports only Go, so these are never called.

func sech2AVX2(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int) {
	panic("kernel: no assembly")
}

func sech2AVX512(rows, n int, x *float64, ldx int, b, a, y *float64, ldy int) {
	panic("kernel: no assembly")
}

func tanhSech2AVX2(rows, n int, x *float64, ldx int, b, a, t *float64, ldt int, s *float64, lds int) {
	panic("kernel: no assembly")
}

func tanhSech2AVX512(rows, n int, x *float64, ldx int, b, a, t *float64, ldt int, s *float64, lds int) {
	panic("kernel: no assembly")
}

func tanhRidgeGradAVX2(k, n int, m *float64, ldm int, b, a, z, grad, t, next *float64, h float64, step int) {
	panic("kernel: no assembly")
}

func tanhRidgeGradAVX512(k, n int, m *float64, ldm int, b, a, z, grad, t, next *float64, h float64, step int) {
	panic("kernel: no assembly")
}
