package kernel

import "math"

// Sech2 sets Y[r][j] = a[j]·sech²(X[r][j] + b[j]) for r < rows, j < n: the
// derivative of a[j]·tanh(x + b[j]), the gradient of a layer of tanh ridge
// units, for a batch of rows. X and Y are rows×n with leading dimensions
// ldx, ldy ≥ max(1, n); b and a have n elements.
//
// It is computed as 4u/(1+u)² with u = exp(−2|x+b|), which is accurate to a
// few ulp relative to the result for all arguments (|x+b| is clamped at 350,
// where sech² is below 1e−303). NaN propagates. Y may be X (same leading
// dimension); otherwise it must not overlap the inputs.
func Sech2(rows, n int, x []float64, ldx int, b, a, y []float64, ldy int) {
	checkMat("Sech2", "x", rows, n, x, ldx)
	checkMat("Sech2", "y", rows, n, y, ldy)
	checkVec("Sech2", "b", n, b)
	checkVec("Sech2", "a", n, a)
	if rows == 0 || n == 0 {
		return
	}
	if active != Go {
		sech2Asm(rows, n, &x[0], ldx, &b[0], &a[0], &y[0], ldy)
		return
	}
	sech2Go(rows, n, x, ldx, b, a, y, ldy)
}

func sech2Go(rows, n int, x []float64, ldx int, b, a, y []float64, ldy int) {
	b, a = b[:n], a[:n]
	for r := 0; r < rows; r++ {
		xr, yr := x[r*ldx:r*ldx+n], y[r*ldy:r*ldy+n]
		for j := range yr {
			yr[j] = a[j] * sech2(xr[j]+b[j])
		}
	}
}

// sech2 returns sech²(v) the way sech2Asm computes it.
func sech2(v float64) float64 {
	av := math.Abs(v)
	if av > 350 {
		av = 350
	}
	u := math.Exp(-2 * av)
	s := 1 + u
	return 4 * u / (s * s)
}
