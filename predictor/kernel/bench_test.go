package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"

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

// impls lists the implementations to compare: this package's (asm when
// available, and pure Go) and gonum's.
func impls(b *testing.B, run func(b *testing.B, impl string)) {
	saved := useAsm
	defer func() { useAsm = saved }()
	for _, impl := range []string{"asm", "go", "gonum"} {
		if impl == "asm" && !hasAsm {
			continue
		}
		useAsm = impl == "asm"
		b.Run(impl, func(b *testing.B) { run(b, impl) })
	}
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
