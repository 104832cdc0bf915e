package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveGemm returns alpha·op(A)·op(B) + beta·C (C read only when beta ≠ 0)
// and, per element, the scale Σ|alpha·terms| + |beta·C| for the tolerance.
func naiveGemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) (want, scale []float64) {
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, abs float64
			for p := range k {
				var av, bv float64
				if tA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
				abs += math.Abs(av * bv)
			}
			s *= alpha
			abs *= math.Abs(alpha)
			if beta != 0 {
				s += beta * c[i*ldc+j]
				abs += math.Abs(beta * c[i*ldc+j])
			}
			want[i*n+j], scale[i*n+j] = s, abs
		}
	}
	return want, scale
}

// gemmCase runs one Gemm and checks it against the naive product: every
// element within 1e-13 of the scale, padding of C untouched, and NaN in C
// overwritten when beta is 0.
func gemmCase(t *testing.T, rng *rand.Rand, tA, tB bool, m, n, k int, alpha, beta float64, pad int) {
	t.Helper()
	ar, ac, br, bc, lda, ldb, ldc := gemmDims(tA, tB, m, n, k, pad)
	a := padded(rng, ar, ac, lda)
	b := padded(rng, br, bc, ldb)
	var c []float64
	if m > 0 && n > 0 {
		c = make([]float64, (m-1)*ldc+n)
		for i := range c {
			switch {
			case i%ldc >= n:
				c[i] = 12345
			case beta == 0:
				c[i] = math.NaN()
			default:
				c[i] = 2*rng.Float64() - 1
			}
		}
	}
	want, scale := naiveGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	what := fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v lda=%d ldb=%d ldc=%d", tA, tB, m, n, k, alpha, beta, lda, ldb, ldc)
	checkOut(t, what, m, n, ldc, c,
		func(r, col int) float64 { return want[r*n+col] },
		func(r, col int) float64 { return scale[r*n+col] })
}

var transCases = []struct{ tA, tB bool }{{false, false}, {true, false}, {false, true}, {true, true}}

func TestGemmShapes(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		sizes := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 16, 20, 25, 33}
		coefs := [][2]float64{{1, 0}, {1, 1}, {-0.7, 0}, {0.3, 1}, {1.5, -0.5}}
		for _, tc := range transCases {
			for _, m := range sizes {
				for _, n := range sizes {
					for _, k := range []int{0, 1, 2, 3, 5, 8, 13} {
						ab := coefs[(m+n+k)%len(coefs)]
						gemmCase(t, rng, tc.tA, tc.tB, m, n, k, ab[0], ab[1], m+2*n+k)
					}
				}
			}
		}
	})
}

// TestGemmModelShapes covers the shapes of the predictor (lifted dimensions
// 12, 36, 132, widths 8, 36, 66, batches up to a thousand rows, inner
// dimensions beyond the K block) with random transpose, alpha and beta.
func TestGemmModelShapes(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 24))
		for _, tc := range transCases {
			for _, s := range [][3]int{
				{8, 66, 264}, {8, 264, 66}, {17, 66, 264}, {1, 264, 66}, {1, 66, 264},
				{132, 132, 257}, {132, 132, 600}, {36, 36, 1000}, {130, 131, 7},
				{256, 36, 36}, {1023, 132, 13}, {5, 12, 24}, {3, 2, 24}, {2, 24, 2},
			} {
				for _, ab := range [][2]float64{{1, 0}, {1, 1}, {-0.5, 1}, {2, -3}} {
					gemmCase(t, rng, tc.tA, tc.tB, s[0], s[1], s[2], ab[0], ab[1], rng.IntN(27))
				}
			}
		}
	})
}

// TestGemmRandom draws random shapes, strides and coefficients.
func TestGemmRandom(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		for range 400 {
			tc := transCases[rng.IntN(4)]
			m, n, k := 1+rng.IntN(70), 1+rng.IntN(70), 1+rng.IntN(300)
			alpha := []float64{1, -1, 0.25, 2 * rng.Float64()}[rng.IntN(4)]
			beta := []float64{0, 1, -1, 0.5}[rng.IntN(4)]
			gemmCase(t, rng, tc.tA, tc.tB, m, n, k, alpha, beta, rng.IntN(27))
		}
	})
}

func TestGemmZeroAlpha(t *testing.T) {
	paths(t, func(t *testing.T) {
		for _, beta := range []float64{0, 1, 0.5} {
			// A and B hold NaN and must not be read when alpha is 0.
			a := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
			c := []float64{math.NaN(), 2, 3, 4}
			if beta != 0 {
				c[0] = 1
			}
			Gemm(false, false, 2, 2, 2, 0, a, 2, a, 2, beta, c, 2)
			for i, v := range c {
				if want := beta * float64(i+1); v != want {
					t.Errorf("beta=%v: c[%d] = %v, want %v", beta, i, v, want)
				}
			}
		}
	})
}

func TestGemmPanics(t *testing.T) {
	a := make([]float64, 6)
	c := make([]float64, 4)
	for name, f := range map[string]func(){
		"short a":       func() { Gemm(false, false, 2, 2, 3, 1, a[:5], 3, a, 2, 0, c, 2) },
		"short aT":      func() { Gemm(true, false, 2, 2, 3, 1, a[:5], 2, a, 2, 0, c, 2) },
		"short b":       func() { Gemm(false, true, 2, 2, 3, 1, a, 3, a[:5], 3, 0, c, 2) },
		"short c":       func() { Gemm(false, false, 2, 2, 3, 1, a, 3, a, 2, 0, c[:3], 2) },
		"small lda":     func() { Gemm(false, false, 2, 2, 3, 1, a, 2, a, 2, 0, c, 2) },
		"small ldc":     func() { Gemm(false, false, 2, 2, 3, 1, a, 3, a, 2, 0, c, 1) },
		"negative":      func() { Gemm(false, false, -1, 2, 3, 1, a, 3, a, 2, 0, c, 2) },
		"Sech2 short y": func() { Sech2(1, 3, a, 3, a, a, c[:2], 3) },
		"Sech2 short b": func() { Sech2(2, 3, a, 3, a[:2], a, a, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestGemmNoAlloc(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(27, 28))
		const ld = 300
		m, n := 300, 66
		a := randSlice(rng, ld*ld)
		b := randSlice(rng, ld*ld)
		c := make([]float64, ld*ld)
		for _, tc := range transCases {
			f := func() { Gemm(tc.tA, tc.tB, m, n, 66, 0.5, a, ld, b, ld, 1, c, ld) }
			if allocs := testing.AllocsPerRun(10, f); allocs != 0 {
				t.Errorf("Gemm(%v, %v) allocates %v times per call", tc.tA, tc.tB, allocs)
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { Sech2(8, n, a, ld, b, c, c, ld) }); allocs != 0 {
			t.Errorf("Sech2 allocates %v times per call", allocs)
		}
	})
}
