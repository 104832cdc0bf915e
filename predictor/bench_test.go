package predictor

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/internal/cputime"
)

// BenchmarkRolloutStep measures one step of the gauge-fixed rollout (lift,
// map, projection) per trajectory, for every preset: single trajectories
// (one core) and batches of 16 and 256 on one worker (one core) and on two.
// ns/traj-step is wall time per trajectory-step.
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
		type shape struct{ rows, workers int }
		for _, sh := range []shape{{1, 1}, {16, 1}, {16, 2}, {256, 1}, {256, 2}} {
			rows := sh.rows
			label := fmt.Sprintf("%s/batch=%d", name, rows)
			if rows > 1 {
				label += fmt.Sprintf("/workers=%d", sh.workers)
			}
			b.Run(label, func(b *testing.B) {
				x0 := randVec(rng, rows*l.StateDim(), 0.5)
				ports := randVec(rng, rows*horizon*l.PortDim(), 0.5)
				out := make([]float64, rows*horizon*l.StateDim())
				var run func() error
				if rows == 1 {
					r := plan.NewRoller()
					run = func() error { return r.Rollout(x0, ports, horizon, out) }
				} else {
					br := plan.NewBatchRoller(rows, sh.workers)
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

// BenchmarkTrainStep measures one training pass over a batch of 256 lifted
// states: Forward on a tape, then Backward with the parameter gradient.
// ns/row is per batch row.
func BenchmarkTrainStep(b *testing.B) {
	const rows = 256
	for _, name := range PresetNames() {
		b.Run(name, func(b *testing.B) {
			m := testModel(b, name, 0.5, 62)
			tr := NewTrainable(m)
			rng := rand.New(rand.NewPCG(2, 2))
			d2 := m.Layout.Dim()
			z0 := randVec(rng, rows*d2, 0.5)
			z := make([]float64, rows*d2)
			zbar := make([]float64, rows*d2)
			grad := make([]float64, m.NumParams())
			tape := tr.NewTape(rows)
			b.ReportAllocs()
			for b.Loop() {
				copy(z, z0)
				tr.Forward(tape, z, rows)
				copy(zbar, z)
				clear(grad)
				tr.Backward(tape, zbar, grad)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkQuadrupedRollout measures the node's rollout alone: one
// trajectory of horizon 100 through Roller.Rollout on one core, for the
// quadruped's two layouts with GR-SympNet 18×66: "paper" (n_u = 18, the
// 132-dim lift) and "port_history" (n_u = 48, the 192-dim lift of
// params/anymal.yaml). The ANYmal's six floating-base ports (control
// values 0–5, and 18–23 of the port history's means) are zero, as in its
// logs. It reports wall time per rollout (ns/op) and the process's CPU
// time per rollout (cpu-ns/op, from getrusage; 0 where unavailable).
func BenchmarkQuadrupedRollout(b *testing.B) {
	for _, name := range []string{"paper", "port_history"} {
		b.Run(name, func(b *testing.B) {
			const horizon = 100
			l, base := anymalLayout(name == "port_history")
			m, err := New(l, Arch{Kind: KindGR, Layers: 18, Width: 66, StepSize: 1}, rand.New(rand.NewPCG(5, 5)))
			if err != nil {
				b.Fatal(err)
			}
			plan, err := m.Compile()
			if err != nil {
				b.Fatal(err)
			}
			x0, ports := zeroPortInputs(l, horizon, base, 1)
			out := make([]float64, horizon*l.StateDim())
			r := plan.NewRoller()
			b.ReportAllocs()
			c0 := cputime.Process()
			for b.Loop() {
				if err := r.Rollout(x0, ports, horizon, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
