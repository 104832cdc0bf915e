package kernel

import "math"

// TanhRidgeGrad computes, for a layer of k tanh ridge units with weights M
// (k×n, row-major, leading dimension ldm ≥ max(1, n)), biases b and output
// scales a (k elements each), at the point z (n elements):
//
//	g[i] = a[i]·sech²(M[i]·z + b[i])   for i < k
//	t[j] = Σ_i M[i][j]·g[i]            for j < n  (t = Mᵀ g)
//
// which is the whole matrix work of one GR-SympNet layer at batch 1. It reads
// M once: a block of rows is multiplied by z, passed through the activation
// and multiplied back into t while it is still in the L1 cache.
//
// The operations follow order.go: M[i]·z in dot order, g[i] =
// a[i]·sech2Ref(M[i]·z + b[i]), and each t[j] one chain of fused
// multiply–adds over i increasing, from +0 (so t is zero when k is 0). Every
// kernel set returns the same bits. g and t must not overlap each other or
// the inputs.
//
// next is a hint, nil for none: the matrix (leading dimension ldm) of the
// call that will follow this one, such as the next layer's. While the
// assembly sets add the last full block of rows into t (rows already in
// L1, with no products of a next block to stream beside them), they
// prefetch next's first block of rows: its products open the next call,
// and would otherwise wait on memory with nothing to overlap. It changes
// no result, and prefetches never fault, so next need not hold a whole
// block.
func TanhRidgeGrad(k, n int, m []float64, ldm int, b, a, z, g, t, next []float64) {
	checkMat("TanhRidgeGrad", "m", k, n, m, ldm)
	checkVec("TanhRidgeGrad", "b", k, b)
	checkVec("TanhRidgeGrad", "a", k, a)
	checkVec("TanhRidgeGrad", "z", n, z)
	checkVec("TanhRidgeGrad", "g", k, g)
	checkVec("TanhRidgeGrad", "t", n, t)
	if !(active == AVX512 && n <= avx512RegT && k >= 8) {
		// Every path but the AVX-512 one that holds t in registers (and
		// zeroes them itself) accumulates into t.
		clear(t[:n])
	}
	if k == 0 {
		return
	}
	if n == 0 || active == Go {
		tanhRidgeGradGo(k, n, m, ldm, b, a, z, g, t)
		return
	}
	var np *float64
	if len(next) > 0 {
		np = &next[0]
	}
	if active == AVX512 {
		tanhRidgeGradAVX512(k, n, &m[0], ldm, &b[0], &a[0], &z[0], &g[0], &t[0], np)
	} else {
		tanhRidgeGradAVX2(k, n, &m[0], ldm, &b[0], &a[0], &z[0], &g[0], &t[0], np)
	}
}

// tanhRidgeGradGo is TanhRidgeGrad in Go, the reference of the assembly; t
// is zero on entry.
func tanhRidgeGradGo(k, n int, m []float64, ldm int, b, a, z, g, t []float64) {
	z, t = z[:n], t[:n]
	b, a, g = b[:k], a[:k], g[:k]
	for i := range g {
		var row []float64 // empty when n is 0: the dot product is +0
		if n > 0 {
			row = m[i*ldm : i*ldm+n]
		}
		gi := a[i] * sech2Ref(dotRef(row, z)+b[i])
		g[i] = gi
		for j, v := range row {
			t[j] = math.FMA(v, gi, t[j])
		}
	}
}

// avx512RegT is the longest t (n) the AVX-512 kernel keeps in registers,
// 17 vectors; with k ≥ 8 it then neither reads t nor needs it zeroed
// (asmgen/act/ridge.go, regLoop).
const avx512RegT = 136
