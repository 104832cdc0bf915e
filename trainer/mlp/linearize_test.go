package mlp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calisym/calisym/predictor"
)

// linearizeNet is an MLP with a random normalisation and weights large
// enough that the tanh layers are far from linear.
func linearizeNet(t *testing.T, cfg Config, seed uint64) *MLP {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 3))
	m := New(cfg, rng)
	for i := range m.Theta() {
		m.Theta()[i] *= 2
	}
	if err := m.SetNorm(randomNorm(rng, cfg.StateDim, cfg.PortDim)); err != nil {
		t.Fatal(err)
	}
	return m
}

// fdRolloutJacobian returns the central-difference Jacobian of the
// horizon-step Rollout with respect to (x0, ports), row major.
func fdRolloutJacobian(t *testing.T, m *MLP, x0, ports []float64, horizon int) []float64 {
	t.Helper()
	nx := len(x0)
	in := append(slices.Clone(x0), ports...)
	rows, cols := horizon*nx, len(in)
	jac := make([]float64, rows*cols)
	plus, minus := make([]float64, rows), make([]float64, rows)
	for c := range cols {
		h := 1e-5 * math.Max(1, math.Abs(in[c]))
		v := in[c]
		in[c] = v + h
		if err := m.Rollout(in[:nx], in[nx:], horizon, plus); err != nil {
			t.Fatal(err)
		}
		in[c] = v - h
		if err := m.Rollout(in[:nx], in[nx:], horizon, minus); err != nil {
			t.Fatal(err)
		}
		in[c] = v
		for r := range rows {
			jac[r*cols+c] = (plus[r] - minus[r]) / (2 * h)
		}
	}
	return jac
}

// TestLinearize checks the MLP's step and rollout Jacobians against
// central differences of Step and Rollout (1e-6 relative, Frobenius), its
// states against their bits, and the rollout's VJP against the dense
// Jacobian, for the pendulum's and the quadruped's shapes.
func TestLinearize(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"pendulum", Config{StateDim: 4, PortDim: 2, Hidden: []int{16, 16}}},
		{"quadruped", Config{StateDim: 36, PortDim: 30, Hidden: []int{32, 24, 32}}},
		{"no-hidden", Config{StateDim: 4, PortDim: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := linearizeNet(t, c.cfg, 9)
			nx, ne := c.cfg.StateDim, c.cfg.PortDim
			rng := rand.New(rand.NewPCG(4, 4))
			for _, horizon := range []int{1, 3} {
				x0, ports := randVec(rng, nx), randVec(rng, horizon*ne)
				lz := predictor.NewLinearization(m.NewLinearizer(), horizon)
				if err := lz.Run(x0, ports, horizon); err != nil {
					t.Fatal(err)
				}
				want := make([]float64, horizon*nx)
				if err := m.Rollout(x0, ports, horizon, want); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(lz.States(), want) {
					t.Fatalf("H=%d: the linearised states differ from Rollout's", horizon)
				}
				dx0, dp := make([]float64, horizon*nx*nx), make([]float64, horizon*nx*horizon*ne)
				if err := lz.Dense(dx0, dp); err != nil {
					t.Fatal(err)
				}
				cols := nx + horizon*ne
				got := make([]float64, horizon*nx*cols)
				for r := range horizon * nx {
					copy(got[r*cols:], dx0[r*nx:(r+1)*nx])
					copy(got[r*cols+nx:], dp[r*horizon*ne:(r+1)*horizon*ne])
				}
				fd := fdRolloutJacobian(t, m, x0, ports, horizon)
				var num, den float64
				for i := range fd {
					num += (got[i] - fd[i]) * (got[i] - fd[i])
					den += fd[i] * fd[i]
				}
				if e := math.Sqrt(num / den); !(e <= 1e-6) {
					t.Errorf("H=%d: Jacobian differs from finite differences by %.3g relative", horizon, e)
				}
				g := randVec(rng, horizon*nx)
				gx0, gp := make([]float64, nx), make([]float64, horizon*ne)
				if err := lz.VJP(g, gx0, gp); err != nil {
					t.Fatal(err)
				}
				vjp := append(gx0, gp...)
				for c := range cols {
					var w float64
					for r := range horizon * nx {
						w += g[r] * got[r*cols+c]
					}
					if math.Abs(vjp[c]-w) > 1e-12*math.Max(1, math.Abs(w)) {
						t.Fatalf("H=%d: VJP[%d] = %v, dense Jacobian gives %v", horizon, c, vjp[c], w)
					}
				}
			}
		})
	}
}

// BenchmarkLinearize measures one MLP Linearize (the step and its
// StateDim×(StateDim+PortDim) Jacobian) for the quadruped's dimensions
// with the baseline's default hidden widths.
func BenchmarkLinearize(b *testing.B) {
	cfg := Config{StateDim: 36, PortDim: 30, Hidden: []int{96, 96}}
	rng := rand.New(rand.NewPCG(1, 1))
	m := New(cfg, rng)
	lz := m.NewLinearizer()
	x, e := randVec(rng, 36), randVec(rng, 30)
	next, fx, fe := make([]float64, 36), make([]float64, 36*36), make([]float64, 36*30)
	b.ReportAllocs()
	for b.Loop() {
		lz.Linearize(x, e, next, fx, fe)
	}
}
