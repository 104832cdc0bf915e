package kernel

// Portable Go implementations, used when the assembly kernels are not
// available. Arguments are validated by the exported wrappers; m, n, R ≥ 1.

func dot(a, x []float64) float64 {
	x = x[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		s0 += a[j] * x[j]
		s1 += a[j+1] * x[j+1]
		s2 += a[j+2] * x[j+2]
		s3 += a[j+3] * x[j+3]
	}
	for ; j < len(a); j++ {
		s0 += a[j] * x[j]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	j := 0
	for ; j+4 <= len(x); j += 4 {
		y[j] += alpha * x[j]
		y[j+1] += alpha * x[j+1]
		y[j+2] += alpha * x[j+2]
		y[j+3] += alpha * x[j+3]
	}
	for ; j < len(x); j++ {
		y[j] += alpha * x[j]
	}
}

func matVecGo(m, n int, a []float64, lda int, x, y []float64) {
	x = x[:n]
	for i := 0; i < m; i++ {
		y[i] = dot(a[i*lda:i*lda+n], x)
	}
}

func matTVecGo(m, n int, a []float64, lda int, x, y []float64) {
	y = y[:n]
	clear(y)
	for i := 0; i < m; i++ {
		axpy(x[i], a[i*lda:i*lda+n], y)
	}
}

func mulNTGo(R, m, n int, x []float64, ldx int, a []float64, lda int, y []float64, ldy int) {
	for r := 0; r < R; r++ {
		matVecGo(m, n, a, lda, x[r*ldx:r*ldx+n], y[r*ldy:r*ldy+m])
	}
}

func mulNNGo(R, m, n int, x []float64, ldx int, a []float64, lda int, y []float64, ldy int) {
	for r := 0; r < R; r++ {
		matTVecGo(m, n, a, lda, x[r*ldx:r*ldx+m], y[r*ldy:r*ldy+n])
	}
}
