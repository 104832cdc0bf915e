package predictor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRolloutStep measures one step of the gauge-fixed rollout (lift,
// map, projection) per trajectory, for every preset, single trajectories and
// batches of 16 and 256 (two workers). ns/step is per trajectory-step.
func BenchmarkRolloutStep(b *testing.B) {
	const horizon = 100
	for _, name := range PresetNames() {
		m := testModel(b, name, 0.5, 61)
		plan, err := m.Compile()
		if err != nil {
			b.Fatal(err)
		}
		l := m.Layout
		rng := rand.New(rand.NewPCG(1, 1))
		for _, rows := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", name, rows), func(b *testing.B) {
				x0 := randVec(rng, rows*l.StateDim(), 0.5)
				ports := randVec(rng, rows*horizon*l.PortDim(), 0.5)
				out := make([]float64, rows*horizon*l.StateDim())
				var run func() error
				if rows == 1 {
					r := plan.NewRoller()
					run = func() error { return r.Rollout(x0, ports, horizon, out) }
				} else {
					br := plan.NewBatchRoller(rows, 2)
					defer br.Close()
					run = func() error { return br.Rollout(x0, ports, rows, horizon, out) }
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/horizon/float64(rows), "ns/traj-step")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
