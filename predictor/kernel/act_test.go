package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSech2Agreement compares the assembly and Go paths element by element.
func TestSech2Agreement(t *testing.T) {
	if !cpuHas(AVX2) {
		t.Skip("no assembly kernels on this machine")
	}
	saved := active
	defer func() { active = saved }()
	rng := rand.New(rand.NewPCG(31, 32))
	const n = 4099
	x := make([]float64, n)
	for i := range x {
		x[i] = 30 * (2*rng.Float64() - 1)
		if i%3 == 0 {
			x[i] /= 30
		}
	}
	zero, one := make([]float64, n), make([]float64, n)
	for i := range one {
		one[i] = 1
	}
	var out [2][]float64
	for k, asm := range []bool{false, true} {
		active = setFor(asm)
		out[k] = make([]float64, n)
		Sech2(1, n, x, n, zero, one, out[k], n)
	}
	for i := range x {
		if d := math.Abs(out[0][i] - out[1][i]); d > 1e-15*out[0][i] {
			t.Fatalf("sech²(%v): Go %v, asm %v", x[i], out[0][i], out[1][i])
		}
	}
}

func BenchmarkSech2(b *testing.B) {
	for _, n := range []int{8, 66, 8 * 66} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			saved := active
			defer func() { active = saved }()
			for _, impl := range []string{"asm", "go"} {
				if impl == "asm" && !cpuHas(AVX2) {
					continue
				}
				active = setFor(impl == "asm")
				b.Run(impl, func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 1))
					x, bb, a, y := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), make([]float64, n)
					b.ReportAllocs()
					for b.Loop() {
						Sech2(max(1, n/66), min(n, 66), x, 66, bb, a, y, 66)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
				})
			}
		})
	}
}

func TestSech2(t *testing.T) {
	paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(29, 30))
		special := []float64{0, 1e-300, -1e-300, 1e-8, 0.1, -0.3466, 0.3466, 0.5, 1, 5, 19, 20, -20, 36, 100, 340, 350, 351, 400, 1e300, -1e300, math.Inf(1), math.Inf(-1)}
		for _, rows := range []int{0, 1, 2, 3, 8} {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 66, 131, 1000} {
				ldx, ldy := max(n, 1)+rows%2, max(n, 1)+rows%3
				x := mat(rng, rows, n, ldx)
				b := randSlice(rng, n)
				a := randSlice(rng, n)
				for i := range x {
					if i%ldx < n {
						x[i] *= 8
						if i%5 == 0 {
							x[i] = special[(i/5+n)%len(special)]
						}
					}
				}
				for j := range b {
					b[j] *= 0.5
				}
				y := outMat(rows, n, ldy)
				Sech2(rows, n, x, ldx, b, a, y, ldy)
				what := fmt.Sprintf("rows=%d n=%d ldx=%d ldy=%d", rows, n, ldx, ldy)
				// The reference 1/cosh² is itself accurate to a few ulp.
				want := func(r, j int) float64 {
					v := x[r*ldx+j] + b[j]
					ch := math.Cosh(math.Min(math.Abs(v), 350))
					return a[j] / (ch * ch)
				}
				checkOutTol(t, what, rows, n, ldy, y, want, func(r, j int) float64 { return math.Abs(want(r, j)) }, 2e-15)
				// In place.
				if rows > 0 && n > 0 {
					z := append([]float64(nil), x...)
					Sech2(rows, n, z, ldx, b, a, z, ldx)
					for i, v := range z {
						r, j := i/ldx, i%ldx
						if j >= n {
							if !math.IsNaN(v) {
								t.Fatalf("%s in place: padding written", what)
							}
							continue
						}
						if w := want(r, j); math.Abs(v-w) > 2e-15*math.Abs(w) {
							t.Fatalf("%s in place: [%d][%d] = %v, want %v", what, r, j, v, w)
						}
					}
				}
			}
		}
		y := []float64{0, 0, 0, 0, 0}
		Sech2(1, 5, []float64{math.NaN(), 1, 2, 3, math.NaN()}, 5, make([]float64, 5), []float64{1, 1, 1, 1, 1}, y, 5)
		if !math.IsNaN(y[0]) || !math.IsNaN(y[4]) || math.IsNaN(y[1]) {
			t.Errorf("NaN handling: %v", y)
		}
	})
}
