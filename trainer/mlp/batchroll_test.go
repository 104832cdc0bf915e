package mlp

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBatchRoller: every row of a batch rollout has the bits of Rollout
// from its initial state under its ports, for batches smaller than,
// equal to and spread over several workers; a rollout allocates nothing;
// batches beyond the capacity and short buffers are errors.
func TestBatchRoller(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := New(pendulum, rng)
	if err := m.SetNorm(randomNorm(rng, pendulum.StateDim, pendulum.PortDim)); err != nil {
		t.Fatal(err)
	}
	nx, ne := pendulum.StateDim, pendulum.PortDim
	const h = 7
	for _, c := range []struct{ maxRows, workers, rows int }{
		{1, 1, 1}, {5, 1, 5}, {17, 3, 17}, {17, 3, 6}, {64, 4, 0},
	} {
		b := m.NewBatchRoller(c.maxRows, c.workers)
		x0, ports := randVec(rng, c.rows*nx), randVec(rng, c.rows*h*ne)
		out := make([]float64, c.rows*h*nx)
		if err := b.Rollout(x0, ports, c.rows, h, out); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, h*nx)
		for r := range c.rows {
			if err := m.Rollout(x0[r*nx:(r+1)*nx], ports[r*h*ne:(r+1)*h*ne], h, want); err != nil {
				t.Fatal(err)
			}
			if got := out[r*h*nx : (r+1)*h*nx]; !slices.Equal(got, want) {
				t.Fatalf("capacity %d, %d workers, %d rows: row %d differs from Rollout: %v, want %v", c.maxRows, c.workers, c.rows, r, got, want)
			}
		}
		if allocs := testing.AllocsPerRun(5, func() { _ = b.Rollout(x0, ports, c.rows, h, out) }); allocs != 0 {
			t.Errorf("capacity %d, %d workers: %v allocations per rollout", c.maxRows, c.workers, allocs)
		}
		b.Close()
	}
	b := m.NewBatchRoller(4, 2)
	defer b.Close()
	big := make([]float64, 5*h*nx)
	for _, c := range []struct {
		name           string
		x0, ports, out []float64
		rows           int
		want           string
	}{
		{"beyond the capacity", big, big, big, 5, "capacity 4"},
		{"short ports", make([]float64, 2*nx), make([]float64, 2*h*ne-1), make([]float64, 2*h*nx), 2, "len(ports)"},
		{"short output", make([]float64, 2*nx), make([]float64, 2*h*ne), make([]float64, h*nx), 2, "len(out)"},
	} {
		if err := b.Rollout(c.x0, c.ports, c.rows, h, c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
}

// BenchmarkBatchRollout measures a 100-step rollout of 256 trajectories
// of the ANYmal benchmark's MLP on one worker.
func BenchmarkBatchRollout(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New(quadruped, rng)
	const rows, h = 256, 100
	nx, ne := quadruped.StateDim, quadruped.PortDim
	br := m.NewBatchRoller(rows, 1)
	defer br.Close()
	x0, ports, out := randVec(rng, rows*nx), randVec(rng, rows*h*ne), make([]float64, rows*h*nx)
	b.ReportAllocs()
	for b.Loop() {
		if err := br.Rollout(x0, ports, rows, h, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*h*b.N)/b.Elapsed().Seconds(), "steps/s")
}
