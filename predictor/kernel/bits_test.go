package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sameBits reports whether a and b are the same float64, NaN matching any
// NaN.
func sameBits(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

// padNaN is the value in the padding of every operand; a kernel that reads
// it shows NaN in its results, one that writes it changes its bits.
var padNaN = math.Float64frombits(0x7ff8_dead_beef_0001)

// padded returns a rows×cols matrix with leading dimension ld, of minimal
// length, random entries and padNaN in the padding.
func padded(rng *rand.Rand, rows, cols, ld int) []float64 {
	if rows == 0 || cols == 0 {
		return nil
	}
	s := make([]float64, (rows-1)*ld+cols)
	for i := range s {
		if i%ld < cols {
			s[i] = 2*rng.Float64() - 1
		} else {
			s[i] = padNaN
		}
	}
	return s
}

// refGemm returns C after Gemm computed from the reference orders of
// order.go (dotRef, chainRef, kBlocks, finish), element by element.
func refGemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) []float64 {
	c = append([]float64(nil), c...)
	if m == 0 || n == 0 {
		return c
	}
	acc := 1
	if k == 0 || alpha == 0 || beta != 1 {
		for i := range m {
			for j := range n {
				if beta == 0 {
					c[i*ldc+j] = 0
				} else {
					c[i*ldc+j] *= beta
				}
			}
		}
		if k == 0 || alpha == 0 {
			return c
		}
		if beta == 0 {
			acc = 0
		}
	}
	if !tA && tB {
		for i := range m {
			for j := range n {
				s := dotRef(a[i*lda:i*lda+k], b[j*ldb:j*ldb+k])
				c[i*ldc+j] = finish(s, alpha, acc, c[i*ldc+j])
			}
		}
		return c
	}
	kb := kBlocks(k)
	for p := 0; p < k; p += kb {
		kk := min(kb, k-p)
		for i := range m {
			for j := range n {
				var ai, bj []float64
				sa, sb := 1, ldb
				if tA {
					ai, sa = a[p*lda+i:], lda
				} else {
					ai = a[i*lda+p:]
				}
				if tB {
					bj, sb = b[j*ldb+p:], 1
				} else {
					bj = b[p*ldb+j:]
				}
				s := chainRef(kk, ai, sa, bj, sb)
				c[i*ldc+j] = finish(s, alpha, acc, c[i*ldc+j])
			}
		}
		acc = 1
	}
	return c
}

// gemmDims returns the stored shapes of A (ar×ac) and B (br×bc) of a Gemm
// with the given transposes and m, n, k, and leading dimensions that exceed
// the widths by 0–2 elements as pad selects.
func gemmDims(tA, tB bool, m, n, k, pad int) (ar, ac, br, bc, lda, ldb, ldc int) {
	ar, ac = m, k
	if tA {
		ar, ac = k, m
	}
	br, bc = k, n
	if tB {
		br, bc = n, k
	}
	return ar, ac, br, bc, max(ac, 1) + pad%3, max(bc, 1) + (pad/3)%3, max(n, 1) + (pad/9)%3
}

// bitsCase runs Gemm on the active set and compares C, padding included,
// with refGemm bit for bit.
func bitsCase(t *testing.T, rng *rand.Rand, tA, tB bool, m, n, k int, alpha, beta float64, pad int) {
	t.Helper()
	ar, ac, br, bc, lda, ldb, ldc := gemmDims(tA, tB, m, n, k, pad)
	a := padded(rng, ar, ac, lda)
	b := padded(rng, br, bc, ldb)
	c := padded(rng, m, n, ldc)
	if beta == 0 {
		for i := range c {
			if i%ldc < n {
				c[i] = math.NaN() // not read when beta is 0
			}
		}
	}
	want := refGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	for i := range c {
		if !sameBits(c[i], want[i]) || (i%ldc >= n && math.Float64bits(c[i]) != math.Float64bits(padNaN)) {
			t.Fatalf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v lda=%d ldb=%d ldc=%d: c[%d] (row %d, col %d) = %v (%#x), want %v (%#x)",
				tA, tB, m, n, k, alpha, beta, lda, ldb, ldc, i, i/ldc, i%ldc, c[i], math.Float64bits(c[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

var (
	bitsAlphas = []float64{1, -0.5, 2.5}
	bitsBetas  = []float64{0, 1, 0.3}
)

// TestGemmBits checks every set against the reference orders bit for bit
// over the shapes of dims, all transpose combinations, every alpha and beta
// (cycled over the shapes) and padded leading dimensions.
func TestGemmBits(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(41, 42))
		idx := 0
		for _, tc := range transCases {
			for _, m := range dims {
				for _, n := range dims {
					for _, k := range dims {
						if testing.Short() && m*n*k > 20000 {
							continue
						}
						alpha := bitsAlphas[idx%3]
						beta := bitsBetas[(idx/3)%3]
						idx++
						bitsCase(t, rng, tc.tA, tc.tB, m, n, k, alpha, beta, idx)
					}
				}
			}
		}
	})
}

// TestGemmBitsLongK covers inner dimensions beyond kBlock (several chain
// blocks) and every alpha and beta.
func TestGemmBitsLongK(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(43, 44))
		idx := 0
		for _, tc := range transCases {
			for _, k := range []int{255, 256, 257, 300, 513, 600} {
				for _, mn := range [][2]int{{1, 1}, {1, 37}, {5, 13}, {13, 36}, {36, 25}, {9, 66}} {
					for _, alpha := range bitsAlphas {
						for _, beta := range bitsBetas {
							idx++
							bitsCase(t, rng, tc.tA, tc.tB, mn[0], mn[1], k, alpha, beta, idx)
						}
					}
				}
			}
		}
	})
}

// TestGemmBitsModel covers the products of the predictor.
func TestGemmBitsModel(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		rng := rand.New(rand.NewPCG(45, 46))
		for i, g := range gemmShapes {
			bitsCase(t, rng, g.tA, g.tB, g.m, g.n, g.k, bitsAlphas[i%3], bitsBetas[(i/3)%3], i)
		}
	})
}

// TestSetsAgree runs random products on every set and compares the outputs
// with the Go set's bit for bit.
func TestSetsAgree(t *testing.T) {
	saved := active
	defer func() { active = saved }()
	rng := rand.New(rand.NewPCG(51, 52))
	for range 200 {
		tc := transCases[rng.IntN(4)]
		m, n, k := 1+rng.IntN(40), 1+rng.IntN(80), 1+rng.IntN(300)
		alpha, beta := bitsAlphas[rng.IntN(3)], bitsBetas[rng.IntN(3)]
		// pad 16: lda = ac+1, ldb = bc+2, ldc = n+1.
		ar, ac, br, bc, lda, ldb, ldc := gemmDims(tc.tA, tc.tB, m, n, k, 16)
		a, b, c0 := padded(rng, ar, ac, lda), padded(rng, br, bc, ldb), padded(rng, m, n, ldc)
		var ref []float64
		for _, s := range Supported() {
			active = s
			c := append([]float64(nil), c0...)
			Gemm(tc.tA, tc.tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			if ref == nil {
				ref = c
				continue
			}
			for i := range c {
				if !sameBits(c[i], ref[i]) {
					t.Fatalf("%s: %s m=%d n=%d k=%d: c[%d] = %v, go %v", s, fmt.Sprint(tc), m, n, k, i, c[i], ref[i])
				}
			}
		}
	}
}
