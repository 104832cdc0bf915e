package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// ridgeCase holds the arguments of one TanhRidgeGrad call; g and t are
// longer than k and n, with sentinels after them.
type ridgeCase struct {
	k, n, ldm    int
	m, b, a, z   []float64
	gWant, tWant []float64
}

const ridgeSentinel = 12345

func newRidgeCase(rng *rand.Rand, k, n, ldm int, special bool) *ridgeCase {
	c := &ridgeCase{k: k, n: n, ldm: ldm}
	c.m = padded(rng, k, n, ldm)
	c.b, c.a, c.z = randSlice(rng, k), randSlice(rng, k), randSlice(rng, n)
	for i := range c.b {
		c.b[i] *= 2
	}
	if special {
		vals := []float64{0, math.Copysign(0, -1), 1e-200, -1e-200, 1e300, math.Inf(1), math.NaN()}
		c.m[rng.IntN(len(c.m))] = vals[rng.IntN(len(vals))]
		c.z[rng.IntN(n)] = vals[rng.IntN(len(vals))]
		c.b[rng.IntN(k)] = vals[rng.IntN(len(vals))]
	}
	c.gWant, c.tWant = make([]float64, k), make([]float64, n)
	tanhRidgeGradGo(k, n, c.m, ldm, c.b, c.a, c.z, c.gWant, c.tWant)
	return c
}

// run calls TanhRidgeGrad and compares g and t bit for bit with the Go
// reference, with no prefetch hint, with the matrix itself as the hint,
// and with a hint shorter than a block (next's prefetches may run past it).
func (c *ridgeCase) run(t *testing.T) {
	t.Helper()
	for _, hint := range []struct {
		name string
		next []float64
	}{{"nil", nil}, {"m", c.m}, {"short", []float64{1}}} {
		g, tt := make([]float64, c.k+3), make([]float64, c.n+3)
		for i := range g {
			g[i] = ridgeSentinel
		}
		for i := range tt {
			tt[i] = ridgeSentinel // t is an output only: its old value must not matter
		}
		TanhRidgeGrad(c.k, c.n, c.m, c.ldm, c.b, c.a, c.z, g, tt, hint.next)
		what := fmt.Sprintf("k=%d n=%d ldm=%d next=%s", c.k, c.n, c.ldm, hint.name)
		checkRidgeOut(t, what, "g", g, c.gWant)
		checkRidgeOut(t, what, "t", tt, c.tWant)
		if c.n%2 == 0 {
			c.runStep(t, what, hint.next)
		}
	}
}

// runStep calls TanhRidgeStep on a copy of z (n even) and compares z, g and
// t bit for bit with the Go reference of the ridge and the update.
func (c *ridgeCase) runStep(t *testing.T, what string, next []float64) {
	t.Helper()
	const h = 0.37
	d := c.n / 2
	zWant := append([]float64(nil), c.z...)
	SymplecticUpdate(d, h, zWant, c.tWant)
	z, g, tt := make([]float64, c.n+3), make([]float64, c.k+3), make([]float64, c.n+3)
	copy(z, c.z)
	for _, s := range [][]float64{z[c.n:], g, tt} {
		for i := range s {
			s[i] = ridgeSentinel
		}
	}
	TanhRidgeStep(c.k, d, c.m, c.ldm, c.b, c.a, h, z, g, tt, next)
	what += " step"
	checkRidgeOut(t, what, "z", z, zWant)
	checkRidgeOut(t, what, "g", g, c.gWant)
	checkRidgeOut(t, what, "t", tt, c.tWant)
}

// TestSymplecticUpdateValues checks SymplecticUpdate, the reference of
// TanhRidgeStep's update, against its formula: P −= h t_Q and Q += h t_P.
func TestSymplecticUpdateValues(t *testing.T) {
	z := []float64{1, 2, 3, 10, 20, 30}
	tv := []float64{0.5, -1, 2, 4, 8, -16}
	SymplecticUpdate(3, 0.25, z, tv)
	want := []float64{1 + 1, 2 + 2, 3 - 4, 10 - 0.125, 20 + 0.25, 30 - 0.5}
	for i := range want {
		if z[i] != want[i] {
			t.Fatalf("z = %v, want %v", z, want)
		}
	}
}

// checkRidgeOut fails unless got starts with want's bits and keeps
// ridgeSentinel after them.
func checkRidgeOut(t *testing.T, what, name string, got, want []float64) {
	t.Helper()
	for i, v := range got {
		if i >= len(want) {
			if v != ridgeSentinel {
				t.Fatalf("%s: %s[%d] written", what, name, i)
			}
		} else if !sameBits(v, want[i]) {
			t.Fatalf("%s: %s[%d] = %v (%#x), Go %v (%#x)", what, name, i, v, math.Float64bits(v), want[i], math.Float64bits(want[i]))
		}
	}
}

// TestTanhRidgeGradBitwise compares every set with the Go reference bit for
// bit over all the sizes of actSizes, with and without NaN padding.
func TestTanhRidgeGradBitwise(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(51, 52))
		for _, k := range actSizes {
			for _, n := range actSizes {
				for _, pad := range []int{0, 3} {
					newRidgeCase(rng, k, n, n+pad, false).run(t)
				}
			}
		}
		// Rows longer than the AVX-512 kernel holds in registers (136)
		// take its memory path.
		for _, k := range []int{0, 1, 5, 24, 25, 40} {
			for _, n := range []int{0, 1, 8, 11, 136, 137, 144, 203} {
				newRidgeCase(rng, k, n, max(n, 1)+1, false).run(t)
			}
		}
	})
}

// TestTanhRidgeGradSpecial puts zeros, tiny and huge values, infinities and
// NaN into M, z and b.
func TestTanhRidgeGradSpecial(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(53, 54))
		for range 200 {
			k, n := actSizes[rng.IntN(len(actSizes))], actSizes[rng.IntN(len(actSizes))]
			newRidgeCase(rng, k, n, n+rng.IntN(3), true).run(t)
		}
		// Products that underflow to −0 in some lanes of the dot product.
		k, n := 9, 13
		c := newRidgeCase(rng, k, n, n, false)
		for i := range c.m {
			c.m[i] = -1e-200
		}
		for j := range c.z {
			c.z[j] = 1e-200
		}
		for i := range c.b {
			c.b[i] = math.Copysign(0, -1)
		}
		clear(c.tWant)
		tanhRidgeGradGo(k, n, c.m, n, c.b, c.a, c.z, c.gWant, c.tWant)
		c.run(t)
	})
}

// TestTanhRidgeGradValues checks the reference against plain formulas.
func TestTanhRidgeGradValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 56))
	k, n := 66, 132
	c := newRidgeCase(rng, k, n, n+1, false)
	for i := range k {
		var y float64
		for j := range n {
			y += c.m[i*c.ldm+j] * c.z[j]
		}
		ch := math.Cosh(y + c.b[i])
		if w := c.a[i] / (ch * ch); math.Abs(c.gWant[i]-w) > 1e-12 {
			t.Fatalf("g[%d] = %v, want %v", i, c.gWant[i], w)
		}
	}
	for j := range n {
		var w, scale float64
		for i := range k {
			w += c.m[i*c.ldm+j] * c.gWant[i]
			scale += math.Abs(c.m[i*c.ldm+j] * c.gWant[i])
		}
		if math.Abs(c.tWant[j]-w) > 1e-14*scale {
			t.Fatalf("t[%d] = %v, want %v", j, c.tWant[j], w)
		}
		// In chain order, finished with alpha = 1, the bits are the same.
		if r := finish(chainRef(k, c.m[j:], c.ldm, c.gWant, 1), 1, 0, 0); !sameBits(r, c.tWant[j]) {
			t.Fatalf("t[%d] = %v, chain order %v", j, c.tWant[j], r)
		}
	}
}

func TestTanhRidgeGradPanics(t *testing.T) {
	m := make([]float64, 6)
	v := make([]float64, 3)
	for name, f := range map[string]func(){
		"short m":  func() { TanhRidgeGrad(2, 3, m[:5], 3, v, v, v, v, v, nil) },
		"ldm":      func() { TanhRidgeGrad(2, 3, m, 2, v, v, v, v, v, nil) },
		"short b":  func() { TanhRidgeGrad(2, 3, m, 3, v[:1], v, v, v, v, nil) },
		"short a":  func() { TanhRidgeGrad(2, 3, m, 3, v, v[:1], v, v, v, nil) },
		"short z":  func() { TanhRidgeGrad(2, 3, m, 3, v, v, v[:2], v, v, nil) },
		"short g":  func() { TanhRidgeGrad(2, 3, m, 3, v, v, v, v[:1], v, nil) },
		"short t":  func() { TanhRidgeGrad(2, 3, m, 3, v, v, v, v, v[:2], nil) },
		"negative": func() { TanhRidgeGrad(-1, 3, m, 3, v, v, v, v, v, nil) },
		"step z":   func() { TanhRidgeStep(1, 2, m, 4, v, v, 1, v, v, make([]float64, 4), nil) },
		"step t":   func() { TanhRidgeStep(1, 2, m, 4, v, v, 1, make([]float64, 4), v, v, nil) },
		"update z": func() { SymplecticUpdate(2, 1, v, make([]float64, 4)) },
		"update t": func() { SymplecticUpdate(2, 1, make([]float64, 4), v) },
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

func BenchmarkTanhRidgeGrad(b *testing.B) {
	for _, sh := range []struct{ k, n int }{{66, 132}, {36, 72}, {16, 128}} {
		b.Run(fmt.Sprintf("%dx%d", sh.k, sh.n), func(b *testing.B) {
			eachSetB(b, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				m, bb, a, z := randSlice(rng, sh.k*sh.n), randSlice(rng, sh.k), randSlice(rng, sh.k), randSlice(rng, sh.n)
				g, t := make([]float64, sh.k), make([]float64, sh.n)
				b.ReportAllocs()
				for b.Loop() {
					TanhRidgeGrad(sh.k, sh.n, m, sh.n, bb, a, z, g, t, nil)
				}
				b.ReportMetric(4*float64(sh.k*sh.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		})
	}
}

// BenchmarkTanhRidgeGrad18 is the quadruped model's step at batch 1: 18
// layers of 66×132 matrices in sequence, with the rows padded to 136 as
// Plan stores them (1.29 MB, more than a 1 MB L2): as Plan runs them
// (step: TanhRidgeStep with the next layer as the prefetch hint, z updated
// in place), fused with the hint and no update, fused without a hint, and
// unfused (MatVec, Sech2, MatTVec). It reports the time per layer, to set
// beside BenchmarkTanhRidgeGradRows's single layer, which stays in L2.
func BenchmarkTanhRidgeGrad18(b *testing.B) {
	const layers, k, n, ld = 18, 66, 132, 136
	rng := rand.New(rand.NewPCG(2, 2))
	ms := make([][]float64, layers)
	for l := range ms {
		ms[l] = alignedPadded(rng, k, n, ld)
	}
	bb, a, z := randSlice(rng, k), randSlice(rng, k), randSlice(rng, n)
	y, g, t := make([]float64, k), make([]float64, k), make([]float64, n)
	for _, mode := range []string{"step", "fused", "fused-nohint", "unfused"} {
		b.Run(mode, func(b *testing.B) {
			eachSetB(b, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for l, m := range ms {
						switch mode {
						case "step": // as Plan runs it, z updated in place
							TanhRidgeStep(k, n/2, m, ld, bb, a, 1e-3, z, g, t, ms[(l+1)%layers])
						case "fused":
							TanhRidgeGrad(k, n, m, ld, bb, a, z, g, t, ms[(l+1)%layers])
						case "fused-nohint":
							TanhRidgeGrad(k, n, m, ld, bb, a, z, g, t, nil)
						default:
							MatVec(k, n, m, ld, z, y)
							Sech2(1, k, y, k, bb, a, g, k)
							MatTVec(k, n, m, ld, g, t)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*layers), "ns/layer")
				b.ReportMetric(4*float64(layers*k*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		})
	}
}

// BenchmarkTanhRidgeGradRows is one fused layer of 132 columns (rows padded
// to 136) with 24 to 128 rows, reported per row: 24 rows (26 KB) stay in
// the 32 KB L1 of a Zen 4, 66 (the quadruped's, 72 KB) and 128 stream
// from L2 on every call. Equal times per row say that streaming M from L2
// costs nothing extra.
func BenchmarkTanhRidgeGradRows(b *testing.B) {
	const n, ld = 132, 136
	for _, k := range []int{24, 66, 128} {
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			eachSetB(b, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				m, bb, a, z := alignedPadded(rng, k, n, ld), randSlice(rng, k), randSlice(rng, k), randSlice(rng, n)
				g, t := make([]float64, k), make([]float64, n)
				b.ReportAllocs()
				for b.Loop() {
					TanhRidgeGrad(k, n, m, ld, bb, a, z, g, t, nil)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*k), "ns/row")
			})
		})
	}
}

// alignedPadded is padded starting on a 64-byte boundary, so that with ld a
// multiple of 8 every row starts on a cache line, as in Plan's slab.
func alignedPadded(rng *rand.Rand, rows, cols, ld int) []float64 {
	src := padded(rng, rows, cols, ld)
	buf := make([]float64, len(src)+7)
	off := 0
	for uintptr(unsafe.Pointer(&buf[off]))%64 != 0 {
		off++
	}
	return append(buf[off:off], src...)
}
