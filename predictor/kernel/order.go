package kernel

import "math"

// Order of operations. Every kernel set (Go, AVX2, AVX512) computes each
// output with the same sequence of IEEE-754 operations, so the sets agree
// bit for bit and a model trains to the same bits on any CPU:
//
//   - Dot order (MatVec; Gemm with op(A) = A and op(B) = Bᵀ; the first
//     product of TanhRidgeGrad): s = Σ_j x_j·y_j over j < n keeps eight
//     partial sums; lane l (0 ≤ l < 8) takes the j ≡ l (mod 8) in increasing
//     j, each step a fused multiply–add p_l = fma(x_j, y_j, p_l) from +0; then
//     s = ((p0+p4) + (p2+p6)) + ((p1+p5) + (p3+p7)). See dotRef.
//   - Chain order (MatTVec; Gemm NN, TN and TT; the second product of
//     TanhRidgeGrad): an entry s = Σ_p a_p·b_p is one chain of fused
//     multiply–adds in increasing p from +0. Gemm splits an inner dimension
//     k > kBlock into ⌈k/kBlock⌉ consecutive blocks of ⌈k/⌈k/kBlock⌉⌉ (the
//     last shorter) and finishes each block before the next, accumulating.
//     See chainRef.
//   - Finishing (every matrix kernel): the output becomes alpha·s or, when
//     accumulating, out + alpha·s, as two rounded operations (exact for
//     alpha = 1). See finish.
//   - Activations: elementwise, each a fixed sequence of operations (see
//     sech2Ref), so the vector width does not matter.
//
// The assembly reproduces these orders with vector lanes: a dot product
// holds its eight partial sums in one 512-bit register or two 256-bit ones
// (lanes 0–3 and 4–7) and reduces them by the same tree; a chain keeps each
// output in a lane of its own.

// dotRef returns Σ x[j]·y[j] over j < len(x) in dot order.
func dotRef(x, y []float64) float64 {
	y = y[:len(x)]
	var p [8]float64
	j := 0
	for ; j+8 <= len(x); j += 8 {
		for l := range 8 {
			p[l] = math.FMA(x[j+l], y[j+l], p[l])
		}
	}
	for l := 0; j < len(x); j, l = j+1, l+1 {
		p[l] = math.FMA(x[j], y[j], p[l])
	}
	return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]))
}

// chainRef returns Σ_p a[p·sa]·b[p·sb] over p < n in chain order.
func chainRef(n int, a []float64, sa int, b []float64, sb int) float64 {
	var s float64
	for p := range n {
		s = math.FMA(a[p*sa], b[p*sb], s)
	}
	return s
}

// finish returns alpha·s, plus out when acc is non-zero. The conversion
// keeps the product rounded: Go may otherwise fuse it with the addition.
func finish(s, alpha float64, acc int, out float64) float64 {
	v := float64(alpha * s)
	if acc != 0 {
		v = out + v
	}
	return v
}

// kBlocks returns the block length Gemm uses for an inner dimension k in
// chain order: k itself when k ≤ kBlock, else ⌈k/⌈k/kBlock⌉⌉.
func kBlocks(k int) int {
	nk := (k + kBlock - 1) / kBlock
	return (k + nk - 1) / nk
}
