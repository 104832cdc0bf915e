package kernel

import "math"

// TEMPORARY: replaced by the generated kernels on merge.

// TanhRidgeGrad sets g = a ⊙ sech²(M z + b) and t = Mᵀ g.
func TanhRidgeGrad(k, n int, m []float64, ldm int, b, a, z, g, t []float64) {
	MatVec(k, n, m, ldm, z, g)
	Sech2(1, k, g, k, b, a, g, k)
	MatTVec(k, n, m, ldm, g, t)
}

// TanhSech2 sets t = tanh(x+b), s = a ⊙ sech²(x+b).
func TanhSech2(rows, n int, x []float64, ldx int, b, a, t []float64, ldt int, s []float64, lds int) {
	Sech2(rows, n, x, ldx, b, a, s, lds)
	for r := range rows {
		for j := range n {
			v := x[r*ldx+j] + b[j]
			t[r*ldt+j] = math.Tanh(v)
		}
	}
}
