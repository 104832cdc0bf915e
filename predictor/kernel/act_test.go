package kernel

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// eachSetB runs f once for every kernel set this machine supports, with
// active set to it, and restores active.
func eachSetB(b *testing.B, f func(b *testing.B)) {
	saved := active
	defer func() { active = saved }()
	for _, s := range Supported() {
		active = s
		b.Run(s.String(), f)
	}
}

// actSizes are the row lengths and counts the bitwise tests cover: every
// tail length of 4 and 8 lanes, and the model's sizes.
var actSizes = []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 31, 33, 36, 66, 132}

// actSpecial are arguments with special behaviour: zeros, tiny values (where
// tanh needs an expm1 form), the reduction's boundaries, saturation, the
// clamp, infinities and NaN.
var actSpecial = []float64{0, math.Copysign(0, -1), 5e-324, -1e-300, 1e-17, -1e-9, 1e-8, 0.1, -0.3466, 0.3466,
	0.34657359027997264, 0.5, -1, 5, 18.7, 19.06, -19.1, 20, 36, -36.8, 37.5, 100, 340, -350, 350, 351, 400,
	1e300, math.Inf(1), math.Inf(-1), math.NaN()}

// actArgs returns rows×n arguments with leading dimension ld, NaN padding,
// of mixed scales with special values sprinkled in.
func actArgs(rng *rand.Rand, rows, n, ld int) []float64 {
	x := padded(rng, rows, n, ld)
	scales := []float64{1e-12, 1e-3, 0.3, 1, 4, 30, 400}
	for i := range x {
		if i%ld < n {
			x[i] *= scales[rng.IntN(len(scales))]
			if rng.IntN(7) == 0 {
				x[i] = actSpecial[rng.IntN(len(actSpecial))]
			}
		}
	}
	return x
}

func TestActConstants(t *testing.T) {
	for _, c := range []struct {
		v    float64
		bits uint64
	}{
		{log2e, 0x3ff71547652b82fe}, {mln2hi, 0xbfe62e42fee00000}, {mln2lo, 0xbdea39ef35793c76},
		{expShift, 0x43380000000003ff}, {expC[13], 0x3de6124613a86d09}, {expC[12], 0x3e21eed8eff8d898},
		{expC[11], 0x3e5ae64567f544e4}, {expC[10], 0x3e927e4fb7789f5c}, {expC[9], 0x3ec71de3a556c734},
		{expC[8], 0x3efa01a01a01a01a}, {expC[7], 0x3f2a01a01a01a01a}, {expC[6], 0x3f56c16c16c16c17},
		{expC[5], 0x3f81111111111111}, {expC[4], 0x3fa5555555555555}, {expC[3], 0x3fc5555555555555},
		{expC[2], 0x3fe0000000000000}, {expC[1], 0x3ff0000000000000}, {expC[0], 0x3ff0000000000000},
	} {
		if got := math.Float64bits(c.v); got != c.bits {
			t.Errorf("constant %v has bits %#x, the assembly's table %#x", c.v, got, c.bits)
		}
	}
}

// TestSech2Bitwise compares every set with the Go reference bit for bit.
func TestSech2Bitwise(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(41, 42))
		for _, rows := range []int{1, 2, 3, 5} {
			for _, n := range actSizes {
				ldx, ldy := n+rows%3, n+(rows+1)%3
				x := actArgs(rng, rows, n, ldx)
				b, a := randSlice(rng, n), randSlice(rng, n)
				b[0] = math.Copysign(0, -1)
				y := outMat(rows, n, ldy)
				Sech2(rows, n, x, ldx, b, a, y, ldy)
				for i, v := range y {
					r, j := i/ldy, i%ldy
					if j >= n {
						if v != 12345 {
							t.Fatalf("rows=%d n=%d: padding %d written", rows, n, i)
						}
						continue
					}
					if w := a[j] * sech2Ref(x[r*ldx+j]+b[j]); !sameBits(v, w) {
						t.Fatalf("rows=%d n=%d [%d][%d]: sech²(%v) = %v (%#x), Go %v (%#x)", rows, n, r, j,
							x[r*ldx+j]+b[j], v, math.Float64bits(v), w, math.Float64bits(w))
					}
				}
			}
		}
	})
}

func TestSech2(t *testing.T) {
	forEachSet(t, func(t *testing.T, _ Set) {
		rng := rand.New(rand.NewPCG(29, 30))
		special := []float64{0, 1e-300, -1e-300, 1e-8, 0.1, -0.3466, 0.3466, 0.5, 1, 5, 19, 20, -20, 36, 100, 340, 350, 351, 400, 1e300, -1e300, math.Inf(1), math.Inf(-1)}
		for _, rows := range []int{0, 1, 2, 3, 8} {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 66, 131, 1000} {
				ldx, ldy := max(n, 1)+rows%2, max(n, 1)+rows%3
				x := padded(rng, rows, n, ldx)
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

// TestTanhSech2Bitwise compares every set with the Go reference bit for bit,
// checks that S is what Sech2 returns, and runs T and S in place of X.
func TestTanhSech2Bitwise(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(43, 44))
		for _, rows := range []int{1, 2, 3, 5} {
			for _, n := range actSizes {
				ldx, ldt, lds := n+rows%3, n+(rows+1)%3, n+(rows+2)%3
				x := actArgs(rng, rows, n, ldx)
				b, a := randSlice(rng, n), randSlice(rng, n)
				th, sh, y := outMat(rows, n, ldt), outMat(rows, n, lds), outMat(rows, n, lds)
				TanhSech2(rows, n, x, ldx, b, a, th, ldt, sh, lds)
				Sech2(rows, n, x, ldx, b, a, y, lds)
				what := fmt.Sprintf("rows=%d n=%d", rows, n)
				for r := 0; r < rows; r++ {
					for j := 0; j < n; j++ {
						v := x[r*ldx+j] + b[j]
						wt, ws := tanhSech2Ref(v)
						ws *= a[j]
						if got := th[r*ldt+j]; !sameBits(got, wt) {
							t.Fatalf("%s [%d][%d]: tanh(%v) = %v, Go %v", what, r, j, v, got, wt)
						}
						if got := sh[r*lds+j]; !sameBits(got, ws) || !sameBits(got, y[r*lds+j]) {
							t.Fatalf("%s [%d][%d]: a·sech²(%v) = %v, Go %v, Sech2 %v", what, r, j, v, got, ws, y[r*lds+j])
						}
					}
				}
				for i := range th {
					if i%ldt >= n && th[i] != 12345 || i < len(sh) && i%lds >= n && sh[i] != 12345 {
						t.Fatalf("%s: padding %d written", what, i)
					}
				}
				// In place: T = X, then S = X.
				xt := append([]float64(nil), x...)
				st := outMat(rows, n, lds)
				TanhSech2(rows, n, xt, ldx, b, a, xt, ldx, st, lds)
				xs := append([]float64(nil), x...)
				tt := outMat(rows, n, ldt)
				TanhSech2(rows, n, xs, ldx, b, a, tt, ldt, xs, ldx)
				for r := 0; r < rows; r++ {
					for j := 0; j < n; j++ {
						if !sameBits(xt[r*ldx+j], th[r*ldt+j]) || !sameBits(st[r*lds+j], sh[r*lds+j]) ||
							!sameBits(xs[r*ldx+j], sh[r*lds+j]) || !sameBits(tt[r*ldt+j], th[r*ldt+j]) {
							t.Fatalf("%s [%d][%d]: in place results differ", what, r, j)
						}
					}
				}
			}
		}
	})
}

// TestTanhSech2Special checks the special values of tanh and sech².
func TestTanhSech2Special(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		nz := math.Copysign(0, -1)
		cases := []struct{ v, th, s2 float64 }{
			{0, 0, 1}, {nz, nz, 1}, {math.Inf(1), 1, 4 * math.Exp(-700) / 1}, {math.Inf(-1), -1, 0},
			{20, 1, 0}, {-25, -1, 0}, {1e300, 1, 0}, {5e-324, 5e-324, 1}, {-1e-300, -1e-300, 1},
		}
		x := make([]float64, len(cases))
		for i, c := range cases {
			x[i] = c.v
		}
		n := len(x)
		b, a := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i], b[i] = 1, nz // v + (−0) = v, also for v = −0
		}
		th, s2 := make([]float64, n), make([]float64, n)
		TanhSech2(1, n, x, n, b, a, th, n, s2, n)
		for i, c := range cases {
			if !sameBits(th[i], c.th) {
				t.Errorf("tanh(%v) = %v, want %v", c.v, th[i], c.th)
			}
			if c.s2 == 1 && s2[i] != 1 || c.s2 != 1 && (s2[i] <= 0 || s2[i] > 1e-16) {
				t.Errorf("sech²(%v) = %v", c.v, s2[i])
			}
		}
		TanhSech2(1, 1, []float64{math.NaN()}, 1, b, a, th, 1, s2, 1)
		if !math.IsNaN(th[0]) || !math.IsNaN(s2[0]) {
			t.Errorf("NaN: tanh %v, sech² %v", th[0], s2[0])
		}
	})
}

// bigExp returns e^x to about prec bits (|x| ≤ 1000).
func bigExp(x float64, prec uint) *big.Float {
	const halvings = 24
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	y.SetMantExp(y, -halvings)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := 1; i < 40; i++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(i)))
		sum.Add(sum, term)
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	return sum
}

// ulpErr returns |got − want| in units of the last place of want.
func ulpErr(got float64, want *big.Float) float64 {
	w, _ := want.Float64()
	if w == 0 {
		return math.Abs(got) / 5e-324
	}
	ulp := math.Nextafter(math.Abs(w), math.Inf(1)) - math.Abs(w)
	d := new(big.Float).SetPrec(want.Prec()).SetFloat64(got)
	d.Sub(d, want)
	df, _ := d.Float64()
	return math.Abs(df) / ulp
}

// TestActAccuracy measures sech2Ref and tanh against exact values (e^−2|v|
// to 300 bits) over |v| ≤ 350, from 1e−300 up: over 400000 samples the worst
// were 4.54 ulp for sech² and 2.74 ulp for tanh; the bound is 5 ulp.
func TestActAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	const prec = 300
	n := 20000
	if testing.Short() {
		n = 2000
	}
	var worstS, worstT float64
	var atS, atT float64
	for i := range n {
		// Log-uniform magnitudes from 1e−300 to 350, half of them negative.
		v := math.Pow(10, -300+rng.Float64()*302.544)
		if i%4 == 0 {
			v = rng.Float64() * 20
		}
		if i%2 == 1 {
			v = -v
		}
		e := bigExp(-2*math.Abs(v), prec)
		one := new(big.Float).SetPrec(prec).SetInt64(1)
		den := new(big.Float).SetPrec(prec).Add(one, e)
		s := new(big.Float).SetPrec(prec).Mul(e, big.NewFloat(4))
		s.Quo(s, den)
		s.Quo(s, den)
		// tanh|v| = (1 − e)/(1 + e); for tiny |v| use the series, since
		// 1 − e cancels (e to 300 bits still leaves enough for |v| ≥ 1e−80).
		var th *big.Float
		if math.Abs(v) < 1e-60 {
			th = new(big.Float).SetPrec(prec).SetFloat64(math.Abs(v))
		} else {
			th = new(big.Float).SetPrec(prec).Sub(one, e)
			th.Quo(th, den)
		}
		gotT, gotS := tanhSech2Ref(v)
		if d := ulpErr(gotS, s); d > worstS {
			worstS, atS = d, v
		}
		if d := ulpErr(math.Abs(gotT), th); d > worstT {
			worstT, atT = d, v
		}
		if math.Signbit(gotT) != math.Signbit(v) {
			t.Fatalf("tanh(%v) = %v: wrong sign", v, gotT)
		}
	}
	t.Logf("worst sech²: %.2f ulp at %v; worst tanh: %.2f ulp at %v", worstS, atS, worstT, atT)
	if worstS > 5 || worstT > 5 {
		t.Errorf("worst sech² %.2f ulp at %v, worst tanh %.2f ulp at %v: want ≤ 5", worstS, atS, worstT, atT)
	}
}

func TestActNoAlloc(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(47, 48))
		R, n := 5, 66
		x, b, a := randSlice(rng, R*n), randSlice(rng, n), randSlice(rng, n)
		y, u := make([]float64, R*n), make([]float64, R*n)
		m, z, g, tt := randSlice(rng, n*2*n), randSlice(rng, 2*n), make([]float64, n), make([]float64, 2*n)
		for name, f := range map[string]func(){
			"Sech2":         func() { Sech2(R, n, x, n, b, a, y, n) },
			"TanhSech2":     func() { TanhSech2(R, n, x, n, b, a, y, n, u, n) },
			"TanhRidgeGrad": func() { TanhRidgeGrad(n, 2*n, m, 2*n, b, a, z, g, tt, nil) },
		} {
			if allocs := testing.AllocsPerRun(100, f); allocs != 0 {
				t.Errorf("%s allocates %v times per call", name, allocs)
			}
		}
	})
}

func TestActPanics(t *testing.T) {
	x := make([]float64, 6)
	v := make([]float64, 3)
	for name, f := range map[string]func(){
		"Sech2 short y":     func() { Sech2(2, 3, x, 3, v, v, x[:5], 3) },
		"Sech2 short a":     func() { Sech2(2, 3, x, 3, v, v[:2], x, 3) },
		"TanhSech2 short x": func() { TanhSech2(2, 3, x[:5], 3, v, v, x, 3, x, 3) },
		"TanhSech2 short s": func() { TanhSech2(2, 3, x, 3, v, v, x, 3, x[:4], 3) },
		"TanhSech2 ldt":     func() { TanhSech2(2, 3, x, 3, v, v, x, 2, x, 3) },
		"TanhSech2 short b": func() { TanhSech2(2, 3, x, 3, v[:1], v, x, 3, x, 3) },
		"TanhSech2 rows":    func() { TanhSech2(-1, 3, x, 3, v, v, x, 3, x, 3) },
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

func benchAct(b *testing.B, tanh bool) {
	for _, n := range []int{8, 66, 8 * 66} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			eachSetB(b, func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				x, bb, a, y, s := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), make([]float64, n), make([]float64, n)
				rows, cols := max(1, n/66), min(n, 66)
				b.ReportAllocs()
				for b.Loop() {
					if tanh {
						TanhSech2(rows, cols, x, cols, bb, a, y, cols, s, cols)
					} else {
						Sech2(rows, cols, x, cols, bb, a, y, cols)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
			})
		})
	}
}

func BenchmarkSech2(b *testing.B)     { benchAct(b, false) }
func BenchmarkTanhSech2(b *testing.B) { benchAct(b, true) }
