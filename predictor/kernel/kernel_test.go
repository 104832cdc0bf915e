package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// forEachSet runs f as a subtest once per kernel set this machine supports,
// with active switched to it, and restores active afterwards.
func forEachSet(t *testing.T, f func(t *testing.T, s Set)) {
	t.Helper()
	saved := active
	defer func() { active = saved }()
	for _, s := range Supported() {
		active = s
		t.Run(s.String(), func(t *testing.T) { f(t, s) })
	}
}

// paths runs f once per supported kernel set, with active switched to it.
func paths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	forEachSet(t, func(t *testing.T, _ Set) { f(t) })
}

var dims = []int{0, 1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 17, 31, 33, 36, 66, 132}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 2*rng.Float64() - 1
	}
	return s
}

// outMat returns a rows×cols output matrix filled with a sentinel.
func outMat(rows, cols, ld int) []float64 {
	if rows == 0 || cols == 0 {
		return nil
	}
	s := make([]float64, (rows-1)*ld+cols)
	for i := range s {
		s[i] = 12345
	}
	return s
}

// checkOut compares got[r*ld+c] with want (computed as Σ terms, with absSum
// the sum of |terms|) and verifies the padding was not written.
func checkOut(t *testing.T, what string, rows, cols, ld int, got []float64, want, absSum func(r, c int) float64) {
	t.Helper()
	checkOutTol(t, what, rows, cols, ld, got, want, absSum, 1e-13)
}

// checkOutTol is checkOut with the relative tolerance tol.
func checkOutTol(t *testing.T, what string, rows, cols, ld int, got []float64, want, absSum func(r, c int) float64, tol float64) {
	t.Helper()
	for i, v := range got {
		r, c := i/ld, i%ld
		if c >= cols {
			if v != 12345 {
				t.Fatalf("%s: padding element %d written: %v", what, i, v)
			}
			continue
		}
		w, s := want(r, c), absSum(r, c)
		if math.IsNaN(v) || math.Abs(v-w) > tol*s+1e-300 {
			t.Fatalf("%s: [%d][%d] = %v, want %v (diff %g, scale %g)", what, r, c, v, w, v-w, s)
		}
	}
}

func lds(n int) []int {
	if n == 0 {
		return []int{1, 3}
	}
	return []int{n, n + 1, n + 3}
}

// TestMatVec checks MatVec on every set against the naive sum (to rounding)
// and against dotRef (bit for bit).
func TestMatVec(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, m := range append(dims, 264) {
			for _, n := range append(dims, 264) {
				for _, lda := range lds(n) {
					a := padded(rng, m, n, lda)
					x := randSlice(rng, n)
					y := outMat(1, m+1, m+1)
					MatVec(m, n, a, lda, x, y)
					what := fmt.Sprintf("m=%d n=%d lda=%d", m, n, lda)
					for i := range m {
						want := 0.0
						if n > 0 {
							want = dotRef(a[i*lda:i*lda+n], x)
						}
						if !sameBits(y[i], want) {
							t.Fatalf("%s: y[%d] = %v, dot order gives %v", what, i, y[i], want)
						}
					}
					sum := func(abs bool) func(_, i int) float64 {
						return func(_, i int) float64 {
							s := 0.0
							for j := 0; j < n; j++ {
								p := a[i*lda+j] * x[j]
								if abs {
									p = math.Abs(p)
								}
								s += p
							}
							return s
						}
					}
					checkOut(t, what, 1, m, m+1, y, sum(false), sum(true))
				}
			}
		}
	})
}

// TestMatTVec checks MatTVec on every set against the naive sum (to
// rounding) and against chainRef (bit for bit).
func TestMatTVec(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, m := range append(dims, 264, 600) {
			for _, n := range append(dims, 264, 300) {
				for _, lda := range lds(n) {
					a := padded(rng, m, n, lda)
					x := randSlice(rng, m)
					y := outMat(1, n+1, n+1)
					MatTVec(m, n, a, lda, x, y)
					what := fmt.Sprintf("m=%d n=%d lda=%d", m, n, lda)
					for j := range n {
						want := 0.0
						if m > 0 {
							want = chainRef(m, x, 1, a[j:], lda)
						}
						if !sameBits(y[j], want) {
							t.Fatalf("%s: y[%d] = %v, chain order gives %v", what, j, y[j], want)
						}
					}
					sum := func(abs bool) func(_, j int) float64 {
						return func(_, j int) float64 {
							s := 0.0
							for i := 0; i < m; i++ {
								p := a[i*lda+j] * x[i]
								if abs {
									p = math.Abs(p)
								}
								s += p
							}
							return s
						}
					}
					checkOut(t, what, 1, n, n+1, y, sum(false), sum(true))
				}
			}
		}
	})
}

var batches = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 33}

func TestMulNT(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, R := range batches {
			for _, m := range dims {
				for _, n := range dims {
					ldx, lda, ldy := max(n, 1)+R%3, max(n, 1)+m%2, max(m, 1)+n%3
					x := padded(rng, R, n, ldx)
					a := padded(rng, m, n, lda)
					y := outMat(R, m, ldy)
					MulNT(R, m, n, x, ldx, a, lda, y, ldy)
					what := fmt.Sprintf("R=%d m=%d n=%d ldx=%d lda=%d ldy=%d", R, m, n, ldx, lda, ldy)
					sum := func(abs bool) func(r, i int) float64 {
						return func(r, i int) float64 {
							s := 0.0
							for j := 0; j < n; j++ {
								p := x[r*ldx+j] * a[i*lda+j]
								if abs {
									p = math.Abs(p)
								}
								s += p
							}
							return s
						}
					}
					checkOut(t, what, R, m, ldy, y, sum(false), sum(true))
				}
			}
		}
	})
}

func TestMulNN(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, R := range batches {
			for _, m := range dims {
				for _, n := range dims {
					ldx, lda, ldy := max(m, 1)+R%3, max(n, 1)+m%2, max(n, 1)+n%3
					x := padded(rng, R, m, ldx)
					a := padded(rng, m, n, lda)
					y := outMat(R, n, ldy)
					MulNN(R, m, n, x, ldx, a, lda, y, ldy)
					what := fmt.Sprintf("R=%d m=%d n=%d ldx=%d lda=%d ldy=%d", R, m, n, ldx, lda, ldy)
					sum := func(abs bool) func(r, j int) float64 {
						return func(r, j int) float64 {
							s := 0.0
							for i := 0; i < m; i++ {
								p := x[r*ldx+i] * a[i*lda+j]
								if abs {
									p = math.Abs(p)
								}
								s += p
							}
							return s
						}
					}
					checkOut(t, what, R, n, ldy, y, sum(false), sum(true))
				}
			}
		}
	})
}

func TestAgreement(t *testing.T) {
	saved := active
	defer func() { active = saved }()
	rng := rand.New(rand.NewPCG(9, 10))
	R, m, n := 19, 66, 132
	x := randSlice(rng, R*n)
	a := randSlice(rng, m*n)
	var ref []float64
	for _, s := range Supported() {
		active = s
		y := make([]float64, R*m)
		MulNT(R, m, n, x, n, a, n, y, m)
		if ref == nil {
			ref = y
			continue
		}
		for i := range ref {
			if !sameBits(y[i], ref[i]) {
				t.Fatalf("%s and go disagree at %d: %v vs %v", s, i, y[i], ref[i])
			}
		}
	}
}

func TestNoAlloc(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		R, m, n := 9, 66, 132
		a := randSlice(rng, m*n)
		x := randSlice(rng, R*max(m, n))
		y := make([]float64, R*max(m, n))
		for name, f := range map[string]func(){
			"MatVec":  func() { MatVec(m, n, a, n, x, y) },
			"MatTVec": func() { MatTVec(m, n, a, n, x, y) },
			"MulNT":   func() { MulNT(R, m, n, x, n, a, n, y, m) },
			"MulNN":   func() { MulNN(R, m, n, x, m, a, n, y, n) },
		} {
			if allocs := testing.AllocsPerRun(100, f); allocs != 0 {
				t.Errorf("%s allocates %v times per call", name, allocs)
			}
		}
	})
}

func TestPanics(t *testing.T) {
	a := make([]float64, 6)
	x := make([]float64, 3)
	y := make([]float64, 2)
	for name, f := range map[string]func(){
		"short a":       func() { MatVec(2, 3, a[:5], 3, x, y) },
		"short x":       func() { MatVec(2, 3, a, 3, x[:2], y) },
		"short y":       func() { MatVec(2, 3, a, 3, x, y[:1]) },
		"small lda":     func() { MatTVec(2, 3, a, 2, y, x) },
		"negative":      func() { MatVec(-1, 3, a, 3, x, y) },
		"MulNT short y": func() { MulNT(2, 2, 3, a, 3, a, 3, y, 2) },
		"MulNN short x": func() { MulNN(2, 3, 2, x, 3, a, 2, a, 2) },
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
