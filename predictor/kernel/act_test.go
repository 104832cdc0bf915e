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
