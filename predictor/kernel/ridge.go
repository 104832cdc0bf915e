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
	tanhRidge("TanhRidgeGrad", k, n, m, ldm, b, a, z, g, t, next, 0, false)
}

// tanhRidge is TanhRidgeGrad, and with step TanhRidgeStep (n = 2d), for
// the function name.
func tanhRidge(name string, k, n int, m []float64, ldm int, b, a, z, g, t, next []float64, h float64, step bool) {
	checkMat(name, "m", k, n, m, ldm)
	checkVec(name, "b", k, b)
	checkVec(name, "a", k, a)
	checkVec(name, "z", n, z)
	checkVec(name, "g", k, g)
	checkVec(name, "t", n, t)
	if !(active == AVX512 && n <= avx512RegT && k >= 8) {
		// Every path but the AVX-512 one that holds t in registers (and
		// zeroes them itself) accumulates into t.
		clear(t[:n])
	}
	if k == 0 || n == 0 || active == Go {
		if k > 0 {
			tanhRidgeGradGo(k, n, m, ldm, b, a, z, g, t)
		}
		if step {
			SymplecticUpdate(n/2, h, z, t)
		}
		return
	}
	var np *float64
	if len(next) > 0 {
		np = &next[0]
	}
	st := 0
	if step {
		st = 1
	}
	if active == AVX512 {
		tanhRidgeGradAVX512(k, n, &m[0], ldm, &b[0], &a[0], &z[0], &g[0], &t[0], np, h, st)
	} else {
		tanhRidgeGradAVX2(k, n, &m[0], ldm, &b[0], &a[0], &z[0], &g[0], &t[0], np, h, st)
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

// TanhRidgeStep applies one GR-SympNet layer to the lifted state z = (Q, P)
// (n = 2d elements) in place: with g and t = Mᵀ g as TanhRidgeGrad computes
// them at z (the same bits), it sets
//
//	P[j] −= h·t[j],  Q[j] += h·t[d+j]   for j < d
//
// each a rounded product then a rounded sum, the exact flow of the layer for
// a step h when the rows of M = [B | A] are isotropic. On return g and t
// hold the layer's gradient and Mᵀ g. next is TanhRidgeGrad's prefetch hint.
// One call replaces TanhRidgeGrad and the update loop of a caller, so that
// the update runs on vectors in the same assembly.
func TanhRidgeStep(k, d int, m []float64, ldm int, b, a []float64, h float64, z, g, t, next []float64) {
	tanhRidge("TanhRidgeStep", k, 2*d, m, ldm, b, a, z, g, t, next, h, true)
}

// SymplecticUpdate applies the update of TanhRidgeStep to z = (Q, P) (2d
// elements) for a t computed by other means: P[j] −= h·t[j], then
// Q[j] += h·t[d+j], for j < d, each a rounded product then a rounded sum.
// It is the reference of the assembly's update, and runs in Go in every
// set.
func SymplecticUpdate(d int, h float64, z, t []float64) {
	checkVec("SymplecticUpdate", "z", 2*d, z)
	checkVec("SymplecticUpdate", "t", 2*d, t)
	zq, zp := z[:d:d], z[d:2*d:2*d]
	tq, tp := t[:d:d], t[d:2*d:2*d]
	for j := range zp {
		zp[j] -= float64(h * tq[j])
	}
	for j := range zq {
		zq[j] += float64(h * tp[j])
	}
}

// avx512RegT is the longest t (n) the AVX-512 kernel keeps in registers,
// 17 vectors; with k ≥ 8 it then neither reads t nor needs it zeroed
// (asmgen/act/ridge.go, regLoop).
const avx512RegT = 136
