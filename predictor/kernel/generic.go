package kernel

// Portable Go implementations, used when the assembly kernels are not
// available. Arguments are validated by the exported wrappers; all sizes are
// ≥ 1. As in the assembly kernels, the products are scaled by alpha and added
// to the output when acc ≠ 0, or overwrite it when acc = 0.

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

func matVecGo(m, n int, a []float64, lda int, x, y []float64, alpha float64, acc int) {
	x = x[:n]
	for i := 0; i < m; i++ {
		v := alpha * dot(a[i*lda:i*lda+n], x)
		if acc != 0 {
			v += y[i]
		}
		y[i] = v
	}
}

func matTVecGo(m, n int, a []float64, lda int, x, y []float64, alpha float64, acc int) {
	y = y[:n]
	if acc == 0 {
		clear(y)
	}
	for i := 0; i < m; i++ {
		axpy(alpha*x[i], a[i*lda:i*lda+n], y)
	}
}

// gemmGo computes C = alpha·op(A)·op(B) (+ C).
func gemmGo(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, acc int) {
	switch {
	case !transA && !transB:
		for i := 0; i < m; i++ {
			matTVecGo(k, n, b, ldb, a[i*lda:i*lda+k], c[i*ldc:i*ldc+n], alpha, acc)
		}
	case transA && !transB:
		if acc == 0 {
			scaleMat(m, n, 0, c, ldc)
		}
		for p := 0; p < k; p++ {
			bp := b[p*ldb : p*ldb+n]
			ap := a[p*lda : p*lda+m]
			for i, v := range ap {
				axpy(alpha*v, bp, c[i*ldc:i*ldc+n])
			}
		}
	case !transA && transB:
		for i := 0; i < m; i++ {
			matVecGo(n, k, b, ldb, a[i*lda:i*lda+k], c[i*ldc:i*ldc+n], alpha, acc)
		}
	default:
		for i := 0; i < m; i++ {
			ci := c[i*ldc : i*ldc+n]
			for j := range ci {
				bj := b[j*ldb : j*ldb+k]
				var s float64
				for p, v := range bj {
					s += a[p*lda+i] * v
				}
				s *= alpha
				if acc != 0 {
					s += ci[j]
				}
				ci[j] = s
			}
		}
	}
}
