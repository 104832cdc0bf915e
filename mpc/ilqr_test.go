package mpc

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
)

// linear is x' = A x + B u, a damped oscillator with two inputs.
type linear struct{ a, b []float64 }

func newLinear() *linear {
	return &linear{a: []float64{1, 0.1, -0.1, 0.95}, b: []float64{0.01, 0, 0.1, 0.05}}
}

func (l *linear) Dims() (int, int) { return 2, 2 }

func (l *linear) Linearize(x, e, next, fx, fe []float64) {
	for i := range 2 {
		next[i] = l.a[2*i]*x[0] + l.a[2*i+1]*x[1] + l.b[2*i]*e[0] + l.b[2*i+1]*e[1]
	}
	copy(fx, l.a)
	copy(fe, l.b)
}

func linearCost() Cost {
	return Cost{Target: []float64{1, 0}, Q: []float64{1, 0.1}, Qf: []float64{10, 1}, R: []float64{0.01, 0.02},
		ULo: []float64{-100, -100}, UHi: []float64{100, 100}}
}

// costGrad returns the cost of a plan under the model and its gradient
// with respect to the controls, by predictor.Linearization's VJP.
func costGrad(t *testing.T, m predictor.Linearizer, c Cost, x0, u []float64, h int) (float64, []float64) {
	t.Helper()
	nx, ne := m.Dims()
	lz := predictor.NewLinearization(m, h)
	if err := lz.Run(x0, u, h); err != nil {
		t.Fatal(err)
	}
	xs := lz.States()
	gs := make([]float64, h*nx)
	var j float64
	for k := range h {
		w := c.Q
		if k == h-1 {
			w = c.Qf
		}
		for i := range nx {
			e := xs[k*nx+i] - c.Target[i]
			j += w[i] * e * e
			gs[k*nx+i] = 2 * w[i] * e
		}
	}
	gx0, gu := make([]float64, nx), make([]float64, h*ne)
	if err := lz.VJP(gs, gx0, gu); err != nil {
		t.Fatal(err)
	}
	for k := range h {
		for i := range ne {
			uv := u[k*ne+i]
			j += c.R[i] * uv * uv
			gu[k*ne+i] += 2 * c.R[i] * uv
		}
	}
	return j, gu
}

// TestILQRLinearOptimum: on linear dynamics with a quadratic cost one
// iLQR iteration is the exact LQR solution, so the plan's cost gradient
// (computed independently, by the rollout's VJP) vanishes.
func TestILQRLinearOptimum(t *testing.T) {
	const h = 15
	m := newLinear()
	c := linearCost()
	ctl, err := NewILQR(m, h, c)
	if err != nil {
		t.Fatal(err)
	}
	x0 := []float64{-0.5, 0.3}
	u0 := make([]float64, 2)
	j0, g0 := costGrad(t, m, c, x0, make([]float64, 2*h), h)
	st, err := ctl.Solve(x0, u0, 10)
	if err != nil {
		t.Fatal(err)
	}
	j, g := costGrad(t, m, c, x0, ctl.Plan(), h)
	if math.Abs(j-st.Cost) > 1e-9*j {
		t.Errorf("Solve reports cost %v, the plan costs %v", st.Cost, j)
	}
	if !(j < j0) {
		t.Errorf("cost %v not below the zero plan's %v", j, j0)
	}
	var n0, n float64
	for i := range g {
		n0 += g0[i] * g0[i]
		n += g[i] * g[i]
	}
	if math.Sqrt(n) > 1e-8*math.Sqrt(n0) {
		t.Errorf("cost gradient at the solution %.3g (at the zero plan %.3g): not the optimum", math.Sqrt(n), math.Sqrt(n0))
	}
	if !slices.Equal(u0, ctl.Plan()[:2]) {
		t.Errorf("u0 %v is not the plan's first control %v", u0, ctl.Plan()[:2])
	}
	// Shift moves the plan by one step.
	second := slices.Clone(ctl.Plan()[2:4])
	ctl.Shift()
	if !slices.Equal(ctl.Plan()[:2], second) {
		t.Error("Shift did not advance the plan")
	}
}

// TestILQRBounds: controls stay within their bounds.
func TestILQRBounds(t *testing.T) {
	c := linearCost()
	c.ULo, c.UHi = []float64{-0.5, -0.2}, []float64{0.5, 0.2}
	ctl, err := NewILQR(newLinear(), 10, c)
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, 2)
	if _, err := ctl.Solve([]float64{-3, 0}, u, 10); err != nil {
		t.Fatal(err)
	}
	for i, v := range ctl.Plan() {
		if v < c.ULo[i%2] || v > c.UHi[i%2] {
			t.Fatalf("control %d = %v outside its bounds", i, v)
		}
	}
}

// TestConfigErrors: bad costs and horizons are refused.
func TestConfigErrors(t *testing.T) {
	for name, mod := range map[string]func(*Cost){
		"short target":   func(c *Cost) { c.Target = c.Target[:1] },
		"zero R":         func(c *Cost) { c.R[0] = 0 },
		"empty bounds":   func(c *Cost) { c.ULo[1] = c.UHi[1] },
		"negative Q":     func(c *Cost) { c.Q[0] = -1 },
		"NaN final cost": func(c *Cost) { c.Qf[1] = math.NaN() },
	} {
		c := linearCost()
		mod(&c)
		if _, err := NewILQR(newLinear(), 5, c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewILQR(newLinear(), 0, linearCost()); err == nil {
		t.Error("horizon 0 accepted")
	}
}

// TestPendulumModel: the step is the simulator's ZOH step, and the
// closed loop on the true model reaches the target.
func TestPendulumModel(t *testing.T) {
	sim := mechanics.DefaultSimConfig()
	sim.Dt = 0.05
	pm, err := NewPendulumModel(sim)
	if err != nil {
		t.Fatal(err)
	}
	x, u := []float64{0.3, -0.1, 0.2, 0.1}, []float64{1, -0.5}
	want := slices.Clone(x)
	var solver mechanics.DOP853
	if err := mechanics.ZOHStep(&sim, &solver, 0, want, [2]float64{1, -0.5}); err != nil {
		t.Fatal(err)
	}
	next, fx, fe := make([]float64, 4), make([]float64, 16), make([]float64, 8)
	pm.Linearize(x, u, next, fx, fe)
	if !slices.Equal(next, want) {
		t.Errorf("step %v, simulator %v", next, want)
	}
	// ∂q'/∂q ≈ I and ∂q'/∂p > 0 over a short step.
	if math.Abs(fx[0]-1) > 0.2 || !(fx[2] > 0) {
		t.Errorf("implausible Jacobian %v", fx)
	}
	target := []float64{0.4, -0.2, 0, 0}
	grav := sim.Params.PotentialGradient([2]float64{0.4, -0.2})
	c := Cost{Target: target, Q: []float64{10, 10, 0.1, 0.1}, Qf: []float64{50, 50, 1, 1}, R: []float64{1e-3, 1e-3},
		ULo: []float64{-15, -15}, UHi: []float64{15, 15}}
	ctl, err := NewILQR(pm, 10, c)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 10 {
		copy(ctl.Plan()[2*k:], grav[:])
	}
	plant, err := NewPendulumModel(sim)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), ctl, plant, []float64{0, 0, 0, 0}, 40, 3)
	if err != nil {
		t.Fatal(err)
	}
	last := tr.X[len(tr.X)-1]
	if e := math.Hypot(last[0]-0.4, last[1]+0.2); !(e < 0.03) {
		t.Errorf("after 2 s the true-model controller is %.3g rad from the target", e)
	}
	if len(tr.U) != 40 || len(tr.SolveTime) != 40 || len(tr.X) != 41 {
		t.Errorf("trace lengths %d, %d, %d", len(tr.U), len(tr.SolveTime), len(tr.X))
	}
}

// TestSolveAllocs: a Solve allocates nothing.
func TestSolveAllocs(t *testing.T) {
	ctl, err := NewILQR(newLinear(), 10, linearCost())
	if err != nil {
		t.Fatal(err)
	}
	x0, u := []float64{0.2, 0}, make([]float64, 2)
	if n := testing.AllocsPerRun(10, func() {
		if _, err := ctl.Solve(x0, u, 3); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Solve allocates %v times", n)
	}
}
