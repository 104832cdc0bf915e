package predictor

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// linCase is a model the rollout Jacobian tests run on: every preset (GRB
// pendulum, GR quadrotor and quadruped) with random parameters and
// normalisation, and the small GR and GRB models of the gradient tests.
type linCase struct {
	name  string
	model func(t testing.TB) *Model
}

func linCases() []linCase {
	var cs []linCase
	for i, name := range PresetNames() {
		cs = append(cs, linCase{name, func(t testing.TB) *Model { return testModel(t, name, 0.5, uint64(80+i)) }})
	}
	cs = append(cs,
		linCase{"small-gr", func(t testing.TB) *Model { return smallModel(t, KindGR, 81) }},
		linCase{"small-grb", func(t testing.TB) *Model { return smallModel(t, KindGRB, 82) }})
	return cs
}

// frobRel returns ‖a − b‖_F / ‖b‖_F.
func frobRel(a, b []float64) float64 {
	var num, den float64
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// fdJacobian returns the central-difference Jacobian (rows outputs × len(in)
// columns, row major) of f at in.
func fdJacobian(in []float64, rows int, f func(in, out []float64)) []float64 {
	cols := len(in)
	jac := make([]float64, rows*cols)
	x := slices.Clone(in)
	plus, minus := make([]float64, rows), make([]float64, rows)
	for c := range cols {
		h := 1e-5 * math.Max(1, math.Abs(in[c]))
		x[c] = in[c] + h
		f(x, plus)
		x[c] = in[c] - h
		f(x, minus)
		x[c] = in[c]
		for r := range rows {
			jac[r*cols+c] = (plus[r] - minus[r]) / (2 * h)
		}
	}
	return jac
}

// TestLinearizeStep checks one step's state and Jacobians: the state has
// the bits of Roller's step, and ∂F/∂x and ∂F/∂e match central
// differences of Roller's step to 1e-6 relative (Frobenius).
func TestLinearizeStep(t *testing.T) {
	for _, c := range linCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.model(t)
			plan, err := m.Compile()
			if err != nil {
				t.Fatal(err)
			}
			l := m.Layout
			nx, ne := l.StateDim(), l.PortDim()
			rng := rand.New(rand.NewPCG(5, 5))
			for trial := range 3 {
				x := randVec(rng, nx, 0.7)
				e := randVec(rng, ne, 0.7)
				lin := plan.NewLinearizer()
				next, fx, fe := make([]float64, nx), make([]float64, nx*nx), make([]float64, nx*ne)
				lin.Linearize(x, e, next, fx, fe)
				roller := plan.NewRoller()
				want := make([]float64, nx)
				if err := roller.Rollout(x, e, 1, want); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(next, want) {
					t.Fatalf("trial %d: Linearize's state %v differs from Roller's %v", trial, next[:min(4, nx)], want[:min(4, nx)])
				}
				in := append(slices.Clone(x), e...)
				fd := fdJacobian(in, nx, func(in, out []float64) {
					if err := roller.Rollout(in[:nx], in[nx:], 1, out); err != nil {
						t.Fatal(err)
					}
				})
				got := make([]float64, nx*(nx+ne))
				for o := range nx {
					copy(got[o*(nx+ne):], fx[o*nx:(o+1)*nx])
					copy(got[o*(nx+ne)+nx:], fe[o*ne:(o+1)*ne])
				}
				if e := frobRel(got, fd); !(e <= 1e-6) {
					t.Errorf("trial %d: step Jacobian differs from finite differences by %.3g relative", trial, e)
				}
				// The forward mode gives the same Jacobian to rounding.
				fwd := plan.NewLinearizer()
				fwd.forwardMode = true
				next2, fx2, fe2 := make([]float64, nx), make([]float64, nx*nx), make([]float64, nx*ne)
				fwd.Linearize(x, e, next2, fx2, fe2)
				if !slices.Equal(next2, next) {
					t.Errorf("trial %d: the forward mode's step differs", trial)
				}
				if e := frobRel(append(fx2, fe2...), append(slices.Clone(fx), fe...)); !(e <= 1e-13) {
					t.Errorf("trial %d: forward and reverse mode differ by %.3g relative", trial, e)
				}
			}
		})
	}
}

// TestLinearizationRollout checks an H-step rollout's Jacobians with
// respect to the initial state and the port sequence (Dense) against
// central differences of Roller.Rollout, the recorded states against
// Roller's bits, and VJP against the transposed dense Jacobian.
func TestLinearizationRollout(t *testing.T) {
	const horizon = 4
	for _, c := range linCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.model(t)
			plan, err := m.Compile()
			if err != nil {
				t.Fatal(err)
			}
			l := m.Layout
			nx, ne := l.StateDim(), l.PortDim()
			rng := rand.New(rand.NewPCG(6, 6))
			x0 := randVec(rng, nx, 0.5)
			ports := randVec(rng, horizon*ne, 0.5)
			lz := NewLinearization(plan.NewLinearizer(), horizon)
			if err := lz.Run(x0, ports, horizon); err != nil {
				t.Fatal(err)
			}
			roller := plan.NewRoller()
			want := make([]float64, horizon*nx)
			if err := roller.Rollout(x0, ports, horizon, want); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lz.States(), want) {
				t.Fatal("the linearised rollout's states differ from Roller's")
			}
			dx0 := make([]float64, horizon*nx*nx)
			dports := make([]float64, horizon*nx*horizon*ne)
			if err := lz.Dense(dx0, dports); err != nil {
				t.Fatal(err)
			}
			in := append(slices.Clone(x0), ports...)
			fd := fdJacobian(in, horizon*nx, func(in, out []float64) {
				if err := roller.Rollout(in[:nx], in[nx:], horizon, out); err != nil {
					t.Fatal(err)
				}
			})
			cols := nx + horizon*ne
			got := make([]float64, horizon*nx*cols)
			for r := range horizon * nx {
				copy(got[r*cols:], dx0[r*nx:(r+1)*nx])
				copy(got[r*cols+nx:], dports[r*horizon*ne:(r+1)*horizon*ne])
			}
			if e := frobRel(got, fd); !(e <= 1e-6) {
				t.Errorf("rollout Jacobian differs from finite differences by %.3g relative", e)
			}
			// Causality: ∂x̂_{k+1}/∂e_j = 0 exactly for j > k.
			for k := range horizon {
				for i := range nx {
					for j := (k + 1) * ne; j < horizon*ne; j++ {
						if v := dports[(k*nx+i)*horizon*ne+j]; v != 0 {
							t.Fatalf("∂x̂_%d/∂e[%d] = %v, want 0", k+1, j, v)
						}
					}
				}
			}
			g := randVec(rng, horizon*nx, 1)
			gx0, gp := make([]float64, nx), make([]float64, horizon*ne)
			if err := lz.VJP(g, gx0, gp); err != nil {
				t.Fatal(err)
			}
			wantG := make([]float64, cols)
			for r := range horizon * nx {
				for c := range cols {
					wantG[c] += g[r] * got[r*cols+c]
				}
			}
			if e := frobRel(append(slices.Clone(gx0), gp...), wantG); !(e <= 1e-12) {
				t.Errorf("VJP differs from the transposed dense Jacobian by %.3g relative", e)
			}
		})
	}
}

// TestLinearizationErrors checks the length checks.
func TestLinearizationErrors(t *testing.T) {
	m := smallModel(t, KindGR, 3)
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	lz := NewLinearization(plan.NewLinearizer(), 2)
	nx, ne := m.Layout.StateDim(), m.Layout.PortDim()
	for _, c := range []struct {
		name      string
		x0, ports []float64
		h         int
	}{
		{"horizon too long", make([]float64, nx), make([]float64, 3*ne), 3},
		{"negative horizon", make([]float64, nx), nil, -1},
		{"short state", make([]float64, nx-1), make([]float64, 2*ne), 2},
		{"short ports", make([]float64, nx), make([]float64, 2*ne-1), 2},
	} {
		if err := lz.Run(c.x0, c.ports, c.h); err == nil {
			t.Errorf("%s: Run accepted it", c.name)
		}
	}
	if err := lz.Run(make([]float64, nx), make([]float64, 2*ne), 2); err != nil {
		t.Fatal(err)
	}
	if err := lz.VJP(make([]float64, nx), make([]float64, nx), make([]float64, 2*ne)); err == nil {
		t.Error("VJP accepted a gradient of one step for a rollout of two")
	}
	if err := lz.Dense(make([]float64, 1), make([]float64, 1)); err == nil {
		t.Error("Dense accepted short outputs")
	}
}

// BenchmarkLinearize measures the derivatives a planner asks for, per
// preset: "step" is one Linearize (the step and its 2n×(2n+n_u+n_c)
// Jacobian, reverse mode), "step-forward" the same in forward mode,
// "rollout100" a Run of H = 100 steps (states and every step's
// Jacobians, what iLQR needs) and "vjp100" the reverse pass over it (the
// gradient of a cost with respect to x₀ and the 100 ports, what shooting
// needs). ns/step is per step of the rollout.
func BenchmarkLinearize(b *testing.B) {
	const horizon = 100
	for _, name := range PresetNames() {
		m := testModel(b, name, 0.5, 61)
		plan, err := m.Compile()
		if err != nil {
			b.Fatal(err)
		}
		nx, ne := m.Layout.StateDim(), m.Layout.PortDim()
		rng := rand.New(rand.NewPCG(1, 1))
		x0 := randVec(rng, nx, 0.5)
		ports := randVec(rng, horizon*ne, 0.5)
		for _, mode := range []string{"step", "step-forward"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				lin := plan.NewLinearizer()
				lin.forwardMode = mode == "step-forward"
				next, fx, fe := make([]float64, nx), make([]float64, nx*nx), make([]float64, nx*ne)
				b.ReportAllocs()
				for b.Loop() {
					lin.Linearize(x0, ports[:ne], next, fx, fe)
				}
			})
		}
		lz := NewLinearization(plan.NewLinearizer(), horizon)
		b.Run(name+"/rollout100", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := lz.Run(x0, ports, horizon); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/horizon, "ns/step")
		})
		b.Run(name+"/vjp100", func(b *testing.B) {
			if err := lz.Run(x0, ports, horizon); err != nil {
				b.Fatal(err)
			}
			g := randVec(rng, horizon*nx, 1)
			gx0, gp := make([]float64, nx), make([]float64, horizon*ne)
			b.ReportAllocs()
			for b.Loop() {
				if err := lz.VJP(g, gx0, gp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLinearizationAllocs: Linearize, Run, VJP and Dense allocate nothing.
func TestLinearizationAllocs(t *testing.T) {
	for _, kind := range []Kind{KindGR, KindGRB} {
		m := smallModel(t, kind, 9)
		plan, err := m.Compile()
		if err != nil {
			t.Fatal(err)
		}
		const h = 3
		nx, ne := m.Layout.StateDim(), m.Layout.PortDim()
		lz := NewLinearization(plan.NewLinearizer(), h)
		x0, ports := make([]float64, nx), make([]float64, h*ne)
		g, gx0, gp := make([]float64, h*nx), make([]float64, nx), make([]float64, h*ne)
		dx0, dp := make([]float64, h*nx*nx), make([]float64, h*nx*h*ne)
		if n := testing.AllocsPerRun(10, func() {
			if lz.Run(x0, ports, h) != nil || lz.VJP(g, gx0, gp) != nil || lz.Dense(dx0, dp) != nil {
				t.Fatal("unexpected error")
			}
		}); n != 0 {
			t.Errorf("%s: Run, VJP and Dense allocate %v times", kind, n)
		}
	}
}
