package mechanics

import (
	"context"
	"testing"
)

// BenchmarkSimulateTrajectory measures one default 10 s trajectory (1000
// ZOH intervals at rtol = atol = 1e-10).
func BenchmarkSimulateTrajectory(b *testing.B) {
	cfg := DefaultSimConfig()
	for i := 0; b.Loop(); i++ {
		if _, err := SimulateTrajectory(context.Background(), cfg, i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPendulumHamiltonianRHS measures one evaluation of the vector field.
func BenchmarkPendulumHamiltonianRHS(b *testing.B) {
	pp := PaperPendulum()
	x := [4]float64{0.3, -0.2, 1, 0.5}
	tau := [2]float64{0.1, 0.2}
	var sink [4]float64
	for b.Loop() {
		sink = pp.HamiltonianRHS(x, tau)
	}
	_ = sink
}
