package trainer

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer/mlp"
)

// BenchmarkLossGrad measures training throughput per core: forward and
// backward of the one-step loss over a batch of transitions on one worker.
// transitions/s is the figure of docs/performance.md.
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

// BenchmarkLossGradSeq measures K-step training throughput per core: the
// forward rollout and back-propagation through it over 32 sequences of K
// steps (a shard's worth) on one worker, for the quadruped preset and the
// MLP of its size. transitions/s counts every step of every sequence, to
// compare with BenchmarkLossGrad's one-step figure.
func BenchmarkLossGradSeq(b *testing.B) {
	p, _ := predictor.LookupPreset("quadruped")
	nx, ne := p.Layout.StateDim(), p.Layout.PortDim()
	for _, kind := range []string{"gr", "mlp"} {
		for _, K := range []int{1, 4, 10, 25} {
			b.Run(fmt.Sprintf("quadruped/%s/K=%d", kind, K), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				var l Learner
				switch kind {
				case "gr":
					m, err := predictor.New(p.Layout, p.Arch, rng)
					if err != nil {
						b.Fatal(err)
					}
					l = &Symplectic{T: predictor.NewTrainable(m), W: LossWeights{Q: 0.5, P: 0.5, Sec: 0.01, Mu: 1, Fc: 1, Units: 1}}
				case "mlp":
					cfg := mlp.Config{StateDim: nx, PortDim: ne, Hidden: []int{512, 512}}
					l = &MLP{Net: mlp.New(cfg, rng), W: LossWeights{Q: 0.5, P: 0.5, Units: 1}}
				}
				const n = ShardRows
				batch := newSeqBatch(n, K, nx, ne)
				batch.N = n
				for _, v := range [][]float64{batch.X, batch.E, batch.XNext} {
					for i := range v {
						v[i] = 0.1 * rng.NormFloat64()
					}
				}
				for i := range batch.W {
					batch.W[i] = 1
				}
				w := l.NewWorker(n)
				grad := make([]float64, l.NumParams())
				w.LossGrad(batch, grad, nil)
				b.ReportAllocs()
				for b.Loop() {
					w.LossGrad(batch, grad, nil)
				}
				b.ReportMetric(float64(n*K*b.N)/b.Elapsed().Seconds(), "transitions/s")
			})
		}
	}
}
