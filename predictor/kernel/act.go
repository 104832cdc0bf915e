package kernel

import "math"

//go:generate sh -c "cd asmgen && go run ./act -out ../act_amd64.s -stubs ../act_stubs_amd64.go -pkg kernel"

// Sech2 sets Y[r][j] = a[j]·sech²(X[r][j] + b[j]) for r < rows, j < n: the
// derivative of a[j]·tanh(x + b[j]), the gradient of a layer of tanh ridge
// units, for a batch of rows. X and Y are rows×n with leading dimensions
// ldx, ldy ≥ max(1, n); b and a have n elements.
//
// It is computed as 4u/(1+u)² with u = exp(−2|x+b|) (see sech2Ref), which is
// accurate to a few ulp relative to the result for all arguments (|x+b| is
// clamped at 350, where sech² is below 1e−303). NaN propagates. Every kernel
// set returns the same bits. Y may be X (same leading dimension); otherwise
// it must not overlap the inputs.
func Sech2(rows, n int, x []float64, ldx int, b, a, y []float64, ldy int) {
	checkMat("Sech2", "x", rows, n, x, ldx)
	checkMat("Sech2", "y", rows, n, y, ldy)
	checkVec("Sech2", "b", n, b)
	checkVec("Sech2", "a", n, a)
	if rows == 0 || n == 0 {
		return
	}
	switch active {
	case AVX512:
		sech2AVX512(rows, n, &x[0], ldx, &b[0], &a[0], &y[0], ldy)
	case AVX2:
		sech2AVX2(rows, n, &x[0], ldx, &b[0], &a[0], &y[0], ldy)
	default:
		sech2Go(rows, n, x, ldx, b, a, y, ldy)
	}
}

func sech2Go(rows, n int, x []float64, ldx int, b, a, y []float64, ldy int) {
	b, a = b[:n], a[:n]
	for r := 0; r < rows; r++ {
		xr, yr := x[r*ldx:r*ldx+n], y[r*ldy:r*ldy+n]
		for j := range yr {
			yr[j] = a[j] * sech2Ref(xr[j]+b[j])
		}
	}
}

// TanhSech2 sets T[r][j] = tanh(X[r][j] + b[j]) and S[r][j] =
// a[j]·sech²(X[r][j] + b[j]) for r < rows, j < n: the output of a layer of
// tanh ridge units and its derivative, from one exponential per element. X,
// T and S are rows×n with leading dimensions ldx, ldt, lds ≥ max(1, n); b
// and a have n elements.
//
// S has the bits Sech2 returns for the same arguments. T is accurate to a few
// ulp for all arguments, tiny ones included (it is computed as −e/(2+e)
// with e = expm1(−2|v|), see tanhSech2Ref): tanh(±0) = ±0, tanh(±Inf) = ±1,
// and it saturates to exactly ±1 for large |v|. NaN propagates to both
// outputs. Every kernel set returns the same bits.
//
// T may be X, or S may be X (same leading dimension, not both); otherwise the
// outputs must not overlap the inputs or each other.
func TanhSech2(rows, n int, x []float64, ldx int, b, a, t []float64, ldt int, s []float64, lds int) {
	checkMat("TanhSech2", "x", rows, n, x, ldx)
	checkMat("TanhSech2", "t", rows, n, t, ldt)
	checkMat("TanhSech2", "s", rows, n, s, lds)
	checkVec("TanhSech2", "b", n, b)
	checkVec("TanhSech2", "a", n, a)
	if rows == 0 || n == 0 {
		return
	}
	switch active {
	case AVX512:
		tanhSech2AVX512(rows, n, &x[0], ldx, &b[0], &a[0], &t[0], ldt, &s[0], lds)
	case AVX2:
		tanhSech2AVX2(rows, n, &x[0], ldx, &b[0], &a[0], &t[0], ldt, &s[0], lds)
	default:
		tanhSech2Go(rows, n, x, ldx, b, a, t, ldt, s, lds)
	}
}

func tanhSech2Go(rows, n int, x []float64, ldx int, b, a, t []float64, ldt int, s []float64, lds int) {
	b, a = b[:n], a[:n]
	for r := 0; r < rows; r++ {
		xr, tr, sr := x[r*ldx:r*ldx+n], t[r*ldt:r*ldt+n], s[r*lds:r*lds+n]
		for j := range xr {
			th, s2 := tanhSech2Ref(xr[j] + b[j])
			tr[j], sr[j] = th, a[j]*s2
		}
	}
}

// Constants of the exponential shared by every set (the assembly's table
// holds the same bits).
const (
	sechClamp = 350.0
	log2e     = 1.4426950408889634      // 0x3ff71547652b82fe
	mln2hi    = -0.6931471803691238     // −ln 2, high part: 0xbfe62e42fee00000
	mln2lo    = -1.9082149292705877e-10 // −ln 2 − mln2hi: 0xbdea39ef35793c76
	// expShift = 1.5·2⁵² + 1023: adding it to a value of magnitude below 2⁵¹
	// rounds it to an integer n and leaves n + 1023 in the low bits, which
	// shifted left by 52 are the bits of 2ⁿ.
	expShift = 0x1.8p52 + 1023
)

// expC holds the Taylor coefficients 1/i! of exp, c0 … c13.
var expC = [14]float64{
	1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664,
	0.008333333333333333, 0.001388888888888889, 0.0001984126984126984,
	2.48015873015873e-05, 2.7557319223985893e-06, 2.755731922398589e-07,
	2.505210838544172e-08, 2.08767569878681e-09, 1.6059043836821613e-10,
}

// expParts returns, for w = −2·min(|v|, 350) (NaN stays NaN), the pieces of
// exp(w) = 2ⁿ·(1 + q): the power 2ⁿ, the reduced argument's polynomial
// without its constant term q (exp(r) − 1), and p = 1 + q as the polynomial
// itself rounds it. The operations are those of the assembly, in order:
//
//	kf = fma(w, log2e, shift); 2ⁿ = bits(kf) << 52; nf = kf − shift
//	r = fma(nf, mln2lo, fma(nf, mln2hi, w))
//	Estrin's scheme for Σ c_i r^i, i ≤ 13 (pairs, then r², r⁴, r⁸)
//
// with |r| ≤ ln2/2 the Taylor remainder is below 0.03 ulp.
func expParts(v float64) (twoN, p, q float64) {
	av := math.Abs(v)
	if sechClamp < av { // VMINPD: a NaN |v| passes through
		av = sechClamp
	}
	w := -2 * av
	kf := math.FMA(w, log2e, expShift)
	twoN = math.Float64frombits(math.Float64bits(kf) << 52)
	nf := kf - expShift
	r := math.FMA(nf, mln2hi, w)
	r = math.FMA(nf, mln2lo, r)
	r2 := r * r
	c := &expC
	p1213 := math.FMA(r, c[13], c[12])
	p1011 := math.FMA(r, c[11], c[10])
	p89 := math.FMA(r, c[9], c[8])
	p67 := math.FMA(r, c[7], c[6])
	p45 := math.FMA(r, c[5], c[4])
	q811 := math.FMA(p1011, r2, p89)
	q47 := math.FMA(p67, r2, p45)
	p23 := math.FMA(r, c[3], c[2])
	p01 := math.FMA(r, c[1], c[0])
	p03 := math.FMA(p23, r2, p01)
	q03 := math.FMA(p23, r2, r) // p03 − 1: c1 = 1, so r·c1 = r
	r4 := r2 * r2
	q813 := math.FMA(p1213, r4, q811)
	p07 := math.FMA(q47, r4, p03)
	q07 := math.FMA(q47, r4, q03)
	r8 := r4 * r4
	p = math.FMA(q813, r8, p07)
	q = math.FMA(q813, r8, q07)
	return twoN, p, q
}

// sech2Ref returns sech²(v) = 4u/(1+u)² with u = exp(−2·min(|v|, 350)), by
// the operations every kernel set runs (see expParts). It is accurate to a
// few ulp relative to the result (measured: ≤ 4.6 ulp, see TestActAccuracy).
func sech2Ref(v float64) float64 {
	twoN, p, _ := expParts(v)
	u := float64(p * twoN) // explicit rounding: no fusion into 1 + u
	s := 1 + u
	s = float64(s * s)
	return 4 * u / s
}

// tanhSech2Ref returns tanh(v) and sech2Ref(v) from one exponential: with
// e = expm1(−2|v|) = fma(2ⁿ, q, 2ⁿ − 1) (2ⁿ − 1 is exact for n ≥ −53, and
// e rounds to −1 below), tanh|v| = −e/(2+e), and the sign of v is restored.
func tanhSech2Ref(v float64) (th, s2 float64) {
	twoN, p, q := expParts(v)
	u := float64(p * twoN)
	s := 1 + u
	s = float64(s * s)
	s2 = 4 * u / s
	em := math.FMA(twoN, q, twoN-1)
	ta := em / (2 + em) // −tanh|v|, or a NaN
	th = math.Float64frombits(math.Float64bits(ta)&^(1<<63) | math.Float64bits(v)&(1<<63))
	return th, s2
}
