package forecast

import (
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/internal/cputime"

	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// reportCPU reports the process's CPU time per operation ("cpu-ms/op")
// when the returned function runs: on shared cores, where wall time
// measures the other work as much as this one.
func reportCPU(b *testing.B) func() {
	c0 := cputime.Process()
	return func() { b.ReportMetric(float64(cputime.Process()-c0)/float64(b.N)/1e6, "cpu-ms/op") }
}

// BenchmarkQuadrupedForecast measures one 100-step prediction of the
// ANYmal's default layout (params/anymal.yaml: n = 18, 30 measured ports
// and their means over 10 samples, n_u = 48, n_c = 12: the 192-dim lift;
// GR-SympNet of the quadruped preset, 18 layers of width 66, random
// weights) on one goroutine: "hold", the node's hold forecast (the held
// ports and their means, then one Rollout), and "learned", the learned
// forecast in the loop (256 random features; the ports of every step from
// the state reached, then one step), and "direct", the linear direct
// policy (the ports of every step from the first state and ports). The
// difference is the forecaster's cost per prediction; none allocates.
func BenchmarkQuadrupedForecast(b *testing.B) {
	const n, a, nc, m, H = 18, 18, 12, 10, 100
	nm := a + nc
	preset, err := predictor.LookupPreset("quadruped")
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	model, err := predictor.New(predictor.Layout{N: n, NU: 2*a + nc, NC: nc}, preset.Arch, rng)
	if err != nil {
		b.Fatal(err)
	}
	predictor.NewTrainable(model).Init(rng, 0.1)
	plan, err := model.Compile()
	if err != nil {
		b.Fatal(err)
	}
	r := plan.NewRoller()
	ne := model.Layout.PortDim()
	x0 := make([]float64, 2*n)
	for i := range x0 {
		x0[i] = 0.1 * rng.NormFloat64()
	}
	m0 := make([]float64, nm)
	for i := range m0 {
		m0[i] = rng.NormFloat64()
	}
	past, _ := statemap.NewPortHistory(m, a, nc)
	for range m {
		past.Push(m0)
	}
	ports, out := make([]float64, H*ne), make([]float64, H*2*n)
	b.Run("hold", func(b *testing.B) {
		fc, _ := statemap.NewPortHistory(m, a, nc)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			fc.CopyFrom(past)
			for k := range H {
				fc.Ports(m0, ports[k*ne:(k+1)*ne])
				fc.Push(m0)
			}
			if err := r.Rollout(x0, ports, H, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	// inLoop times the rollout with pol in the loop, its weights random.
	inLoop := func(b *testing.B, pol *Learned) {
		w := make([]float64, len(pol.W))
		for i := range w {
			w[i] = 0.01 * rng.NormFloat64()
		}
		if err := pol.SetWeights(w); err != nil {
			b.Fatal(err)
		}
		fc, _ := statemap.NewPortHistory(m, a, nc)
		loop, err := NewLoop(pol, nm, H, fc)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			loop.Start(x0, m0, past)
			if err := predictor.RolloutLoop(r, loop, n, ne, x0, H, ports, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	ones := func(k int) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	b.Run("direct", func(b *testing.B) {
		// the shipped kind: a linear direct policy over the horizon
		ni := DirectInputs(n, nm)
		inLoop(b, NewDirect(n, nm, H-1, 0, 1, make([]float64, ni), ones(ni), make([]float64, nm), ones(nm)))
	})
	b.Run("learned", func(b *testing.B) {
		ni := Inputs(n, nm)
		inLoop(b, NewLearned(n, nm, 256, 1, make([]float64, ni), ones(ni), make([]float64, nm), ones(nm)))
	})
}
