package trainer

import (
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/predictor"
)

// BenchmarkLossGrad measures training throughput per core: forward and
// backward of the one-step loss over a batch of transitions on one worker.
// transitions/s is the figure for the README.
func BenchmarkLossGrad(b *testing.B) {
	for _, name := range predictor.PresetNames() {
		b.Run(name, func(b *testing.B) {
			p, _ := predictor.LookupPreset(name)
			rng := rand.New(rand.NewPCG(1, 2))
			m, err := predictor.New(p.Layout, p.Arch, rng)
			if err != nil {
				b.Fatal(err)
			}
			s := &Symplectic{T: predictor.NewTrainable(m), W: LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Fc: 5}}
			const n = 256
			nx, ne := p.Layout.StateDim(), p.Layout.PortDim()
			batch := newBatch(n, nx, ne)
			batch.N = n
			for i := range batch.X {
				batch.X[i], batch.XNext[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			for i := range batch.E {
				batch.E[i] = rng.NormFloat64()
			}
			for i := range batch.W {
				batch.W[i] = 1
			}
			w := s.NewWorker(n)
			grad := make([]float64, m.NumParams())
			b.ReportAllocs()
			for b.Loop() {
				w.LossGrad(batch, grad, nil)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "transitions/s")
		})
	}
}
