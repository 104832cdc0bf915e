package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer/optim"
)

// quadrupedStep builds the quadruped preset's learner, a pool of the given
// workers for batches of 2048 and Muon, and a fill that deals a fixed
// random batch to the shards.
func quadrupedStep(b *testing.B, workers int) (*Symplectic, *pool, optimizer, shardFill) {
	b.Helper()
	p, _ := predictor.LookupPreset("quadruped")
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := predictor.New(p.Layout, p.Arch, rng)
	if err != nil {
		b.Fatal(err)
	}
	s := &Symplectic{T: predictor.NewTrainable(m), W: LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Fc: 5}}
	const batch = 2048
	nx, ne := p.Layout.StateDim(), p.Layout.PortDim()
	pl, err := newPool(s, workers, batch, 1, nx, ne, nil)
	if err != nil {
		b.Fatal(err)
	}
	data := newBatch(batch, nx, ne)
	for _, v := range [][]float64{data.X, data.XNext, data.E} {
		for i := range v {
			v[i] = rng.NormFloat64()
		}
	}
	for i := range data.W {
		data.W[i] = 1
	}
	fill := func(sh int, bt *Batch) []float64 {
		lo, hi := sh*pl.rows, min((sh+1)*pl.rows, batch)
		bt.N = hi - lo
		copy(bt.X, data.X[lo*nx:hi*nx])
		copy(bt.XNext, data.XNext[lo*nx:hi*nx])
		copy(bt.E, data.E[lo*ne:hi*ne])
		copy(bt.W, data.W[lo:hi])
		return nil
	}
	cfg := DefaultConfig()
	cfg.Optimizer, cfg.MuonLR = "muon", 0.02
	opt, err := newOptimizer(s, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return s, pl, opt, fill
}

// BenchmarkTrainStep measures one optimiser step of the quadruped preset
// (316,008 parameters) at batch 2048 (64 shards) with Muon, by parts:
//
//   - shards: every shard's forward and backward pass and the reduction
//     tree (pool.run), on the given number of workers;
//   - optimizer: the averaged gradient's scaling, clipping, the Muon step
//     (Newton–Schulz of the 72 matrices, on GOMAXPROCS goroutines) and
//     SetParams.
//
// With -cpu 1 the optimizer part splits further (optimizer/serial: what
// runs on one goroutine whatever the cores: the scaling, clipping, AdamW
// of the vectors and SetParams), which gives the serial fraction
// serial/(shards at 1 worker + optimizer) that Amdahl's law turns into the
// speedup at 16 and 64 workers.
func BenchmarkTrainStep(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("shards/workers=%d", workers), func(b *testing.B) {
			_, pl, _, fill := quadrupedStep(b, workers)
			grad := make([]float64, pl.np)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := pl.run(fill, grad, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(2048*b.N)/b.Elapsed().Seconds(), "transitions/s")
		})
	}
	b.Run("optimizer", func(b *testing.B) {
		s, pl, opt, fill := quadrupedStep(b, runtime.GOMAXPROCS(0))
		grad := make([]float64, pl.np)
		if _, _, err := pl.run(fill, grad, false); err != nil {
			b.Fatal(err)
		}
		bo := opt.(*boundOptimizer)
		var serial time.Duration
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			for i := range grad {
				grad[i] /= 2048
			}
			copy(bo.grad, grad)
			optim.ClipGradNorm(bo.ts, 100)
			t1 := time.Now()
			bo.opt.Step(1)
			t2 := time.Now()
			if err := s.SetParams(bo.theta); err != nil {
				b.Fatal(err)
			}
			serial += t1.Sub(t0) + time.Since(t2)
		}
		b.ReportMetric(float64(serial.Microseconds())/1e3/float64(b.N), "serial-ms/op")
	})
}

// BenchmarkShardRows measures one worker's forward and backward pass over
// a shard of the quadruped preset against its rows: the cost per row that
// decides how small a shard can be.
func BenchmarkShardRows(b *testing.B) {
	for _, rows := range []int{16, 32, 64, 256} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			s, pl, _, fill := quadrupedStep(b, 1)
			w := s.NewWorker(rows)
			bt := newBatch(rows, s.Model().Layout.StateDim(), s.Model().Layout.PortDim())
			fill(0, &bt)
			if rows > pl.rows {
				fill2 := newBatch(rows, s.Model().Layout.StateDim(), s.Model().Layout.PortDim())
				for k := 0; k*pl.rows < rows; k++ {
					fill(k, &fill2)
				}
			}
			bt.N = rows
			for i := range bt.W {
				bt.W[i] = 1
			}
			grad := make([]float64, pl.np)
			b.ReportAllocs()
			for b.Loop() {
				w.LossGrad(bt, grad, nil)
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "transitions/s")
		})
	}
}

// quadrupedData is a synthetic quadruped-sized dataset (n = 18, n_u = 18,
// n_c = 12) of episodes of 2,000 samples, windows of 100 every 50.
func quadrupedData(episodes int) *dataset.Dataset {
	const n, nu, nc, L = 18, 18, 12, 2000
	ds := &dataset.Dataset{Meta: dataset.Meta{FormatVersion: 1, N: n, NU: nu, NC: nc, Dt: 0.01, WindowLen: 100, Stride: 50, Split: "train"}}
	rng := rand.New(rand.NewPCG(1, 2))
	nx, ne := 2*n, nu+nc
	for e := range episodes {
		x, u := make([]float64, L*nx), make([]float64, L*ne)
		ph := rng.Float64() * 6
		for k := range L {
			t := float64(k) * 0.01
			for i := range nx {
				x[k*nx+i] = 0.5 * math.Sin(t*(1+0.1*float64(i))+ph+float64(i))
			}
			for i := range ne {
				u[k*ne+i] = 0.3*math.Cos(t*(0.5+0.07*float64(i))+ph) + 0.01*rng.NormFloat64()
			}
		}
		ds.Episodes = append(ds.Episodes, dataset.Episode{Name: "synthetic", Len: L, Offset: e * L, X: x, E: u})
	}
	return ds
}

// BenchmarkTrainPhases trains one epoch of the quadruped preset (316,008
// parameters) at batch 2048 with Muon on 16 synthetic quadruped-sized
// episodes (31,984 transitions: 16 steps), with the validation loss and
// the selection by the AR MSE at 100 steps, on GOMAXPROCS workers, and
// reports where the epoch's time went per optimiser step (Phases): what
// more workers share and what Amdahl's law counts as serial.
func BenchmarkTrainPhases(b *testing.B) {
	train, val := quadrupedData(16), quadrupedData(16)
	p, _ := predictor.LookupPreset("quadruped")
	for b.Loop() {
		m, err := predictor.New(p.Layout, p.Arch, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		s := &Symplectic{T: predictor.NewTrainable(m), W: LossWeights{Q: 10, P: 5, Sec: 5, Mu: 5, Fc: 5}}
		st, err := Stats(train)
		if err != nil {
			b.Fatal(err)
		}
		m.Norm = st.Normalization(p.Layout)
		cfg := DefaultConfig()
		cfg.Epochs, cfg.BatchSize, cfg.Optimizer, cfg.LR, cfg.Workers = 1, 2048, "muon", 1e-2, runtime.GOMAXPROCS(0)
		cfg.SelectHorizon = 100
		var ph Phases
		cfg.Phases = &ph
		if _, err := Train(context.Background(), s, train, val, cfg); err != nil {
			b.Fatal(err)
		}
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(ph.Steps) }
		b.ReportMetric(per(ph.Total), "total-ms/step")
		for _, x := range ph.list() {
			if x.d > 0 {
				b.ReportMetric(per(x.d), x.name+"-ms/step")
			}
		}
	}
}
