package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/cputime"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

type benchShape struct{ R, m, n int }

var (
	vecShapes   = []benchShape{{1, 66, 132}, {1, 36, 36}, {1, 2, 12}}
	batchShapes = []benchShape{
		{8, 66, 132}, {16, 66, 132}, {128, 66, 132},
		{8, 36, 36}, {16, 36, 36}, {128, 36, 36},
	}
)

func (s benchShape) String() string {
	if s.R == 1 {
		return fmt.Sprintf("%dx%d", s.m, s.n)
	}
	return fmt.Sprintf("R%d_%dx%d", s.R, s.m, s.n)
}

// bench runs f b.N times and reports GFLOPS for 2·R·m·n flops per call.
func bench(b *testing.B, s benchShape, f func()) {
	b.ReportAllocs()
	f()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.ReportMetric(2*float64(s.R*s.m*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// impls lists the implementations to compare: this package's kernel sets
// the machine supports (go, avx2, avx512) and gonum's.
func impls(b *testing.B, run func(b *testing.B, impl string)) {
	saved := active
	defer func() { active = saved }()
	for _, s := range Supported() {
		active = s
		b.Run(s.String(), func(b *testing.B) { run(b, s.String()) })
	}
	b.Run("gonum", func(b *testing.B) { run(b, "gonum") })
}

func benchData(s benchShape) (x, a, y []float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	k := max(s.m, s.n)
	return randSlice(rng, s.R*k), randSlice(rng, s.m*s.n), randSlice(rng, s.R*k)
}

func BenchmarkMatVec(b *testing.B) {
	for _, s := range vecShapes {
		b.Run(s.String(), func(b *testing.B) {
			impls(b, func(b *testing.B, impl string) {
				x, a, y := benchData(s)
				if impl == "gonum" {
					A := blas64.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: a}
					bench(b, s, func() {
						blas64.Gemv(blas.NoTrans, 1, A, blas64.Vector{N: s.n, Inc: 1, Data: x}, 0, blas64.Vector{N: s.m, Inc: 1, Data: y})
					})
					return
				}
				bench(b, s, func() { MatVec(s.m, s.n, a, s.n, x, y) })
			})
		})
	}
}

func BenchmarkMatTVec(b *testing.B) {
	for _, s := range vecShapes {
		b.Run(s.String(), func(b *testing.B) {
			impls(b, func(b *testing.B, impl string) {
				x, a, y := benchData(s)
				if impl == "gonum" {
					A := blas64.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: a}
					bench(b, s, func() {
						blas64.Gemv(blas.Trans, 1, A, blas64.Vector{N: s.m, Inc: 1, Data: x}, 0, blas64.Vector{N: s.n, Inc: 1, Data: y})
					})
					return
				}
				bench(b, s, func() { MatTVec(s.m, s.n, a, s.n, x, y) })
			})
		})
	}
}

func BenchmarkMulNT(b *testing.B) {
	for _, s := range batchShapes {
		b.Run(s.String(), func(b *testing.B) {
			impls(b, func(b *testing.B, impl string) {
				x, a, y := benchData(s)
				if impl == "gonum" {
					X := blas64.General{Rows: s.R, Cols: s.n, Stride: s.n, Data: x}
					A := blas64.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: a}
					Y := blas64.General{Rows: s.R, Cols: s.m, Stride: s.m, Data: y}
					bench(b, s, func() { blas64.Gemm(blas.NoTrans, blas.Trans, 1, X, A, 0, Y) })
					return
				}
				bench(b, s, func() { MulNT(s.R, s.m, s.n, x, s.n, a, s.n, y, s.m) })
			})
		})
	}
}

func BenchmarkMulNN(b *testing.B) {
	for _, s := range batchShapes {
		b.Run(s.String(), func(b *testing.B) {
			impls(b, func(b *testing.B, impl string) {
				x, a, y := benchData(s)
				if impl == "gonum" {
					X := blas64.General{Rows: s.R, Cols: s.m, Stride: s.m, Data: x}
					A := blas64.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: a}
					Y := blas64.General{Rows: s.R, Cols: s.n, Stride: s.n, Data: y}
					bench(b, s, func() { blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, X, A, 0, Y) })
					return
				}
				bench(b, s, func() { MulNN(s.R, s.m, s.n, x, s.m, a, s.n, y, s.n) })
			})
		})
	}
}

// gemmShape is one product C (m×n) = op(A)·op(B) with inner dimension k.
type gemmShape struct {
	tA, tB  bool
	m, n, k int
}

func (s gemmShape) String() string {
	t := func(b bool) string {
		if b {
			return "T"
		}
		return "N"
	}
	return fmt.Sprintf("%s%s_%dx%dx%d", t(s.tA), t(s.tB), s.m, s.n, s.k)
}

// gemmShapes are the products of the predictor: the rollout of a block of 8
// quadruped trajectories (NT then NN with the folded 66×264 layer matrix) and
// the training passes over a batch of 256 (forward NT/NN, weight gradient TN);
// the NN products of one layer of the batch rollout on blocks of 128 rows.
var gemmShapes = []gemmShape{
	{false, true, 8, 66, 264}, {false, false, 8, 264, 66},
	{false, true, 128, 66, 264}, {false, false, 128, 264, 66},
	{false, true, 256, 132, 132}, {false, false, 256, 132, 132}, {true, false, 132, 132, 256},
	{true, false, 36, 36, 1024},
	{false, true, 256, 66, 66}, {false, false, 256, 66, 66}, {true, false, 66, 66, 256},
	// the batch rollout's layer of the quadruped (blocks of 128 rows)
	{false, false, 128, 66, 132}, {false, false, 128, 132, 66},
}

func BenchmarkGemm(b *testing.B) {
	for _, s := range gemmShapes {
		b.Run(s.String(), func(b *testing.B) {
			impls(b, func(b *testing.B, impl string) {
				rng := rand.New(rand.NewPCG(1, 1))
				a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), randSlice(rng, s.m*s.n)
				lda, ldb := s.k, s.n
				if s.tA {
					lda = s.m
				}
				if s.tB {
					ldb = s.k
				}
				bs := benchShape{R: s.m, m: s.n, n: s.k}
				if impl == "gonum" {
					tr := func(t bool) blas.Transpose {
						if t {
							return blas.Trans
						}
						return blas.NoTrans
					}
					ar, ac, br, bc := s.m, s.k, s.k, s.n
					if s.tA {
						ar, ac = ac, ar
					}
					if s.tB {
						br, bc = bc, br
					}
					A := blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a}
					B := blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: bb}
					C := blas64.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: c}
					bench(b, bs, func() { blas64.Gemm(tr(s.tA), tr(s.tB), 1, A, B, 1, C) })
					return
				}
				bench(b, bs, func() { Gemm(s.tA, s.tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 1, c, s.n) })
			})
		})
	}
}

// BenchmarkDependentAdds times a chain of float64 additions, each waiting
// for the one before, and reports the clock it implies for an addition
// latency of 3 cycles (Zen 2 to Zen 4; 2 on Intel since Golden Cove): the
// core's clock while the kernel benchmarks run, to turn their times into
// cycles and to tell a slower clock from a busier core.
func BenchmarkDependentAdds(b *testing.B) {
	const chain = 1 << 16
	x := 0.0
	for b.Loop() {
		x = addChain(x, 1e-9, chain)
	}
	if x < 0 {
		b.Fatal(x) // keeps x live
	}
	b.ReportMetric(3*float64(chain)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GHz@3")
}

// addChain returns x + n·y added one y at a time, x in a register.
//
//go:noinline
func addChain(x, y float64, n int) float64 {
	for range n {
		x += y
	}
	return x
}

// BenchmarkFloor measures what bounds the quadruped's step from below on
// this core, for the two layouts of GR-SympNet 18×66: the paper's
// (132 columns, rows padded to 136: 1.29 MB of fused layer matrices) and
// params/anymal.yaml's with the port history (192 columns: 1.82 MB).
// "peak" is the FLOP rate of the Gemm kernel on blocks that stay in L1
// (48×48×48), the most this code gets from the core's FMA units; "stream"
// reads the 18 matrices once each with MatVec, in order, as a step does
// (the bytes a step must bring from beyond L2 when they do not fit it),
// and reports GB/s; "resident" reads one matrix 18 times (from L1/L2);
// "step" runs the fused layer (TanhRidgeStep, as Plan does) over the 18
// matrices in order and "step-resident" over one of them 18 times, and
// report the CPU time per layer: what a layer costs streaming its
// weights, and what it would cost were they all in L2.
// The floor of a step is the larger of its FLOPs at the peak and its
// bytes at the stream rate (docs/performance.md). The rates are per
// second of the process's CPU time (wall time where that is unavailable),
// which a machine shared with other work disturbs less than wall time.
func BenchmarkFloor(b *testing.B) {
	const layers, k = 18, 66
	b.Run("peak", func(b *testing.B) {
		eachSetB(b, func(b *testing.B) {
			const n = 48
			rng := rand.New(rand.NewPCG(3, 3))
			a, bb, c := randSlice(rng, n*n), randSlice(rng, n*n), make([]float64, n*n)
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				Gemm(false, false, n, n, n, 1, a, n, bb, n, 0, c, n)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/cpuSeconds(b, c0)/1e9, "GFLOPS")
		})
	})
	for _, c := range []struct {
		name  string
		n, ld int
	}{{"paper", 132, 136}, {"port_history", 192, 192}} {
		rng := rand.New(rand.NewPCG(2, 2))
		ms := make([][]float64, layers)
		for l := range ms {
			ms[l] = alignedPadded(rng, k, c.n, c.ld)
		}
		x, y := randSlice(rng, c.n), make([]float64, k)
		bb, a, g, t := randSlice(rng, k), randSlice(rng, k), make([]float64, k), make([]float64, c.n)
		for _, mode := range []string{"step", "step-resident"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				eachSetB(b, func(b *testing.B) {
					z := randSlice(rand.New(rand.NewPCG(4, 4)), c.n)
					b.ReportAllocs()
					c0 := cputime.Process()
					for b.Loop() {
						for l := range ms {
							m, next := ms[l], ms[(l+1)%layers]
							if mode == "step-resident" {
								m, next = ms[0], ms[0]
							}
							TanhRidgeStep(k, c.n/2, m, c.ld, bb, a, 1e-3, z, g, t, next)
						}
					}
					b.ReportMetric(cpuSeconds(b, c0)*1e9/float64(b.N*layers), "cpu-ns/layer")
				})
			})
		}
		for _, mode := range []string{"stream", "resident"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				eachSetB(b, func(b *testing.B) {
					b.ReportAllocs()
					c0 := cputime.Process()
					for b.Loop() {
						for l := range ms {
							m := ms[l]
							if mode == "resident" {
								m = ms[0]
							}
							MatVec(k, c.n, m, c.ld, x, y)
						}
					}
					b.ReportMetric(float64(layers*k*c.ld*8)*float64(b.N)/cpuSeconds(b, c0)/1e9, "GB/s")
				})
			})
		}
	}
}

// cpuSeconds returns the process's CPU time since c0 in seconds, or the
// benchmark's wall time where the CPU time is unavailable.
func cpuSeconds(b *testing.B, c0 time.Duration) float64 {
	if c := cputime.Process() - c0; c > 0 {
		return c.Seconds()
	}
	return b.Elapsed().Seconds()
}
