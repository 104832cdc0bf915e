package mechanics

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// crazyfliePrior is the quadrotor prior of the constants qp at 100 Hz.
func crazyfliePrior(tb testing.TB, qp QuadrotorParams) *QuadrotorPrior {
	tb.Helper()
	p, err := NewQuadrotorPrior(qp, 0.01)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// crazyflieParams are the Crazyflie's constants (params/crazyflie*.yaml).
func crazyflieParams(substeps int) QuadrotorParams {
	return QuadrotorParams{Mass: 0.045, Inertia: [3]float64{2.3951e-5, 2.3951e-5, 3.2347e-5}, Gravity: 9.81, Substeps: substeps}
}

// randomQuadState returns a state of a flying Crazyflie: position within a
// metre, roll and pitch within 0.6 rad, any yaw, speeds up to 2 m/s and
// rates up to 6 rad/s.
func randomQuadState(rng *rand.Rand, qp QuadrotorParams) []float64 {
	x := make([]float64, quadDim)
	for i := range 3 {
		x[i] = 2*rng.Float64() - 1
		x[3+i] = 1.2*rng.Float64() - 0.6
		x[6+i] = qp.Mass * (4*rng.Float64() - 2)
		x[9+i] = qp.Inertia[i] * (12*rng.Float64() - 6)
	}
	x[5] = 6*rng.Float64() - 3
	return x
}

// quadScale returns each coordinate's scale for finite differences: 1 m,
// 1 rad, the momenta of 1 m/s and of 1 rad/s.
func quadScale(qp QuadrotorParams) [quadDim]float64 {
	return [quadDim]float64{1, 1, 1, 1, 1, 1, qp.Mass, qp.Mass, qp.Mass, qp.Inertia[0], qp.Inertia[1], qp.Inertia[2]}
}

// randomWrench returns a body wrench about the hover thrust.
func randomWrench(rng *rand.Rand, qp QuadrotorParams) []float64 {
	return []float64{0.01 * rng.NormFloat64(), 0.01 * rng.NormFloat64(), qp.Mass * qp.Gravity * (0.5 + rng.Float64()),
		1e-4 * rng.NormFloat64(), 1e-4 * rng.NormFloat64(), 1e-5 * rng.NormFloat64()}
}

// TestQuadrotorRHSJacobian checks the analytic Jacobian of the equations
// of motion against central differences at random flying states.
func TestQuadrotorRHSJacobian(t *testing.T) {
	qp := crazyflieParams(1)
	p := crazyfliePrior(t, qp)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		x := [quadDim]float64(randomQuadState(rng, qp))
		w := randomWrench(rng, qp)
		var a [quadDim][quadDim]float64
		p.rhs(&x, w, &a)
		scale := quadScale(qp)
		for j := range quadDim {
			h := 1e-5 * scale[j]
			xp, xm := x, x
			xp[j] += h
			xm[j] -= h
			fp, fm := p.rhs(&xp, w, nil), p.rhs(&xm, w, nil)
			var fd [quadDim]float64
			var col float64
			for i := range quadDim {
				fd[i] = (fp[i] - fm[i]) / (2 * h)
				col = max(col, math.Abs(fd[i]))
			}
			for i := range quadDim {
				// relative to the entry, with the rounding of the column's
				// largest terms allowed
				if d := math.Abs(fd[i] - a[i][j]); d > 1e-6*math.Abs(fd[i])+1e-9*col {
					t.Fatalf("trial %d: ∂f%d/∂x%d = %.10g analytic, %.10g by differences", trial, i, j, a[i][j], fd[i])
				}
			}
		}
	}
}

// TestQuadrotorPriorAdjoint checks the step's Jacobian (the Runge–Kutta
// tangent map) against central differences of the step, and that the
// adjoint is its transpose times λ, for 1 and 3 substeps.
func TestQuadrotorPriorAdjoint(t *testing.T) {
	for _, sub := range []int{1, 3} {
		qp := crazyflieParams(sub)
		p := crazyfliePrior(t, qp)
		rng := rand.New(rand.NewPCG(3, uint64(sub)))
		for trial := range 10 {
			x := randomQuadState(rng, qp)
			w := randomWrench(rng, qp)
			y, jac, err := p.Jacobian(x, w)
			if err != nil {
				t.Fatal(err)
			}
			step := make([]float64, quadDim)
			if err := p.StepTo(step, x, w); err != nil {
				t.Fatal(err)
			}
			if [quadDim]float64(step) != y {
				t.Fatalf("substeps %d: StepTo %v, Jacobian's state %v", sub, step, y)
			}
			yp, ym := make([]float64, quadDim), make([]float64, quadDim)
			scale := quadScale(qp)
			for j := range quadDim {
				h := 1e-5 * scale[j]
				xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
				xp[j] += h
				xm[j] -= h
				if err := p.StepTo(yp, xp, w); err != nil {
					t.Fatal(err)
				}
				if err := p.StepTo(ym, xm, w); err != nil {
					t.Fatal(err)
				}
				for i := range quadDim {
					fd := (yp[i] - ym[i]) / (2 * h)
					if d := math.Abs(fd - jac[i][j]); d > 1e-6*math.Abs(fd)+1e-14*max(math.Abs(yp[i]), math.Abs(ym[i]))/h {
						t.Fatalf("substeps %d, trial %d: ∂Φ%d/∂x%d = %.10g analytic, %.10g by differences", sub, trial, i, j, jac[i][j], fd)
					}
				}
			}
			lam := make([]float64, quadDim)
			for i := range lam {
				lam[i] = rng.NormFloat64()
			}
			out := make([]float64, quadDim)
			if err := p.Adjoint(out, x, w, lam); err != nil {
				t.Fatal(err)
			}
			for j := range quadDim {
				var s float64
				for i := range quadDim {
					s += jac[i][j] * lam[i]
				}
				if math.Abs(s-out[j]) > 1e-12*max(math.Abs(s), 1) {
					t.Fatalf("adjoint %d: %g, Jᵀλ %g", j, out[j], s)
				}
			}
			if a := testing.AllocsPerRun(5, func() { _ = p.Adjoint(out, x, w, lam) }); a != 0 {
				t.Errorf("%v allocations an adjoint", a)
			}
		}
	}
}

// TestQuadrotorPriorMotion checks the prior against motions known in
// closed form: free fall, hover, the body velocity seen in the yaw frame,
// a spin about a principal axis, and the energy of a free flight.
func TestQuadrotorPriorMotion(t *testing.T) {
	qp := crazyflieParams(2)
	p := crazyfliePrior(t, qp)
	m, g, dt := qp.Mass, qp.Gravity, 0.01
	step := func(x, w []float64) []float64 {
		t.Helper()
		out := make([]float64, quadDim)
		if err := p.StepTo(out, x, w); err != nil {
			t.Fatal(err)
		}
		return out
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: %.17g, want %.17g", what, got, want)
		}
	}
	zero := make([]float64, 6)
	// free fall from rest, level (Runge–Kutta is exact on polynomials)
	y := step(make([]float64, quadDim), zero)
	near("free fall z", y[2], -g*dt*dt/2, 1e-16)
	near("free fall p_z", y[8], -m*g*dt, 1e-16)
	// hover: the thrust carries the weight, tilted or not the state stays
	x := make([]float64, quadDim)
	x[5] = 1.1
	y = step(x, []float64{0, 0, m * g, 0, 0, 0})
	for i := range quadDim {
		near("hover", y[i], x[i], 1e-16)
	}
	// a body velocity forward at yaw π/2 moves the vehicle along +y; the
	// thrust cancels gravity
	x = make([]float64, quadDim)
	x[5], x[6] = math.Pi/2, m*1.0
	y = step(x, []float64{0, 0, m * g, 0, 0, 0})
	near("yawed forward flight x", y[0], 0, 1e-15)
	near("yawed forward flight y", y[1], dt, 1e-15)
	// a spin about the body z axis keeps its rate; yaw grows by ω dt
	x = make([]float64, quadDim)
	x[11] = qp.Inertia[2] * 3
	y = step(x, []float64{0, 0, m * g, 0, 0, 0})
	near("spin rate", y[11], x[11], 1e-20)
	near("spin yaw", y[5], 3*dt, 1e-15)
	// free flight (no wrench): kinetic plus potential energy is kept to
	// the integrator's error over 100 steps
	energy := func(x []float64) float64 {
		e := m * g * x[2]
		for i := range 3 {
			e += x[6+i]*x[6+i]/(2*m) + x[9+i]*x[9+i]/(2*qp.Inertia[i])
		}
		return e
	}
	// the integrator's error over 100 steps, fourth order in the substep
	drift := func(sub int) float64 {
		p = crazyfliePrior(t, crazyflieParams(sub))
		x := []float64{0, 0, 0, 0.2, -0.1, 0.3, 0.02, -0.01, 0.03, 2.3951e-5 * 2, -2.3951e-5 * 1, 3.2347e-5 * 4}
		e0 := energy(x)
		for range 100 {
			x = step(x, zero)
		}
		return math.Abs(energy(x)-e0) / e0
	}
	d2, d4 := drift(2), drift(4)
	t.Logf("free flight: relative energy change over 100 steps %.3g (2 substeps), %.3g (4)", d2, d4)
	if d2 > 1e-6 || d4 > d2/12 {
		t.Errorf("free flight: relative energy change over 100 steps %.3g (2 substeps), %.3g (4): want below 1e-6 and fourth order", d2, d4)
	}
}

// TestQuadrotorPriorSpec checks the quadrotor prior's record: the round
// trip rebuilds the same prior, and specs mixing the kinds, bad constants
// and bad steps are refused with the reason; and the refusals of a step.
func TestQuadrotorPriorSpec(t *testing.T) {
	p := crazyfliePrior(t, crazyflieParams(2))
	b, s := specRoundTrip(t, p)
	if strings.Contains(string(b), `"params"`) {
		t.Errorf("a quadrotor spec records pendulum params: %s", b)
	}
	q, err := s.New()
	if err != nil {
		t.Fatal(err)
	}
	if qq, ok := q.(*QuadrotorPrior); !ok || qq.Params != p.Params || qq.Dt != p.Dt || s.StateDim() != 12 || s.PortDim() != 6 {
		t.Fatalf("round trip: %+v (state %d, ports %d)", q, s.StateDim(), s.PortDim())
	}
	for _, tc := range []struct{ name, js, want string }{
		{"no constants", `{"kind":"quadrotor_rk4","dt":0.01}`, "quadrotor constants"},
		{"pendulum params", strings.Replace(string(b), `"dt":0.01`, `"dt":0.01,"params":{"M1":1}`, 1), "pendulum params"},
		{"constants on a pendulum", strings.Replace(string(b), `"quadrotor_rk4"`, `"pendulum_midpoint"`, 1), "quadrotor constants"},
		{"mass", strings.Replace(string(b), `"mass":0.045`, `"mass":0`, 1), "mass = 0"},
		{"substeps", strings.Replace(string(b), `"substeps":2`, `"substeps":0`, 1), "substeps = 0"},
		{"dt", strings.Replace(string(b), `"dt":0.01`, `"dt":0`, 1), "dt = 0"},
	} {
		if _, err := ParsePriorSpec([]byte(tc.js)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	out := make([]float64, quadDim)
	x := make([]float64, quadDim)
	for _, tc := range []struct {
		name   string
		x, e   []float64
		want   string
		domain bool // the state is outside the prior's domain (ErrOutOfDomain)
	}{
		{"short state", x[:6], make([]float64, 6), "state has 6", false},
		{"short wrench", x, make([]float64, 4), "4 port values", false},
		{"NaN", append(append([]float64(nil), x[:11]...), math.NaN()), make([]float64, 6), "non-finite", true},
		{"pitch π/2", []float64{0, 0, 0, 0, math.Pi / 2, 0, 0, 0, 0, 0, 0, 0}, make([]float64, 6), "singularity", true},
		{"infinite wrench", x, []float64{0, 0, math.Inf(1), 0, 0, 0}, "non-finite state", true},
	} {
		err := p.StepTo(out, tc.x, tc.e)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrOutOfDomain) != tc.domain {
			t.Errorf("%s: error %v, want one containing %q (out of the domain: %v)", tc.name, err, tc.want, tc.domain)
		}
	}
}

// quadShift is a stand-in learned map of the quadrotor's 12 states:
// x' = x + 1e-3·e₁ (the first port into every coordinate).
type quadShift struct{}

func (quadShift) Rollout(x0, ports []float64, horizon int, out []float64) error {
	ne := len(ports) / horizon
	for k := range horizon {
		for i := range quadDim {
			out[k*quadDim+i] = x0[i] + 1e-3*ports[k*ne]
		}
		x0 = out[k*quadDim : (k+1)*quadDim]
	}
	return nil
}

// TestComposedStepperQuadrotor checks the composed rollout behind the
// quadrotor prior against the two applied by hand, with 12 ports a step
// (the prior reads the first 6), and that it allocates nothing.
func TestComposedStepperQuadrotor(t *testing.T) {
	qp := crazyflieParams(2)
	prior := crazyfliePrior(t, qp)
	const H, ne = 30, 12
	c, err := NewComposedStepper(prior.Clone(), quadShift{}, ne)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x0 := randomQuadState(rng, qp)
	ports := make([]float64, H*ne)
	for k := range H {
		copy(ports[k*ne:], randomWrench(rng, qp))
		copy(ports[k*ne+6:], randomWrench(rng, qp))
	}
	out := make([]float64, H*quadDim)
	if err := c.Rollout(x0, ports, H, out); err != nil {
		t.Fatal(err)
	}
	x := append([]float64(nil), x0...)
	y := make([]float64, quadDim)
	for k := range H {
		e := ports[k*ne : (k+1)*ne]
		if err := prior.StepTo(y, x, e); err != nil {
			t.Fatal(err)
		}
		for i := range quadDim {
			x[i] = y[i] + 1e-3*e[0]
			if x[i] != out[k*quadDim+i] {
				t.Fatalf("step %d: composed %v, by hand %v", k+1, out[k*quadDim:(k+1)*quadDim], x)
			}
		}
	}
	if a := testing.AllocsPerRun(10, func() { _ = c.Rollout(x0, ports, H, out) }); a != 0 {
		t.Errorf("%v allocations a rollout", a)
	}
	if _, err := NewComposedStepper(prior, quadShift{}, 5); err == nil || !strings.Contains(err.Error(), "at least 6 ports") {
		t.Errorf("5 ports: error %v", err)
	}
}

// BenchmarkQuadrotorPriorStep measures one step of the quadrotor prior
// (2 substeps), alone and with its adjoint.
func BenchmarkQuadrotorPriorStep(b *testing.B) {
	qp := crazyflieParams(2)
	p := crazyfliePrior(b, qp)
	rng := rand.New(rand.NewPCG(7, 8))
	x, w := randomQuadState(rng, qp), randomWrench(rng, qp)
	out, lam := make([]float64, quadDim), make([]float64, quadDim)
	b.Run("step", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := p.StepTo(out, x, w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adjoint", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Adjoint(out, x, w, lam); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestQuadrotorPriorWrenchPort: with WrenchPort k the prior reads the
// body wrench from ports k…k+5 (a port history's lagged wrench) and
// ignores the ports before it: its step, Jacobian and adjoint are, bit
// for bit, those of the prior with the wrench first given ports k…k+5;
// it needs k+6 ports (its spec says so and survives the model file's
// JSON), refuses fewer and a negative index.
func TestQuadrotorPriorWrenchPort(t *testing.T) {
	qp := crazyflieParams(2)
	first := crazyfliePrior(t, qp)
	qp.WrenchPort = 6
	lag := crazyfliePrior(t, qp)
	if lag.PortDim() != 12 || lag.Spec().PortDim() != 12 || !strings.Contains(lag.Spec().Needs(), "at least 12 ports, the body wrench from port 6") {
		t.Fatalf("ports %d, spec's %d, needs %q", lag.PortDim(), lag.Spec().PortDim(), lag.Spec().Needs())
	}
	rng := rand.New(rand.NewPCG(5, 6))
	x := randomQuadState(rng, qp)
	w := randomWrench(rng, qp)
	e := append(randomWrench(rng, qp), w...) // another wrench first, then w
	a, b := make([]float64, quadDim), make([]float64, quadDim)
	if err := first.StepTo(a, x, w); err != nil {
		t.Fatal(err)
	}
	if err := lag.StepTo(b, x, e); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Fatalf("step with the wrench at port 6 %v, at port 0 %v", b, a)
	}
	ya, ja, err := first.Jacobian(x, w)
	if err != nil {
		t.Fatal(err)
	}
	yb, jb, err := lag.Jacobian(x, e)
	if err != nil || ya != yb || ja != jb {
		t.Fatalf("Jacobian differs (%v)", err)
	}
	lam := randomQuadState(rng, qp)
	if err := first.Adjoint(a, x, w, lam); err != nil {
		t.Fatal(err)
	}
	if err := lag.Adjoint(b, x, e, lam); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Fatalf("adjoint with the wrench at port 6 %v, at port 0 %v", b, a)
	}
	if err := first.StepTo(a, x, e); err != nil {
		t.Fatal(err)
	} else if slices.Equal(a, b) {
		t.Fatal("the prior without the offset stepped the same wrench")
	}
	if err := lag.StepTo(b, x, e[:11]); err == nil || !strings.Contains(err.Error(), "11 port values, want 12") {
		t.Errorf("11 ports: error %v", err)
	}
	js, s := specRoundTrip(t, lag)
	if s.Quadrotor == nil || s.Quadrotor.WrenchPort != 6 || s.PortDim() != 12 {
		t.Fatalf("%s read back as %+v", js, s)
	}
	if js0, _ := specRoundTrip(t, first); strings.Contains(string(js0), "wrench_port") {
		t.Errorf("the default wrench port is recorded: %s", js0)
	}
	qp.WrenchPort = -1
	if _, err := NewQuadrotorPrior(qp, 0.01); err == nil || !strings.Contains(err.Error(), "wrench_port = -1") {
		t.Errorf("wrench port −1: error %v", err)
	}
}

// TestPendulumPriorOutOfDomain: every pendulum prior refuses a
// non-finite state as outside its domain (ErrOutOfDomain), as a composed
// rollout that has diverged meets it, and steps a finite one.
func TestPendulumPriorOutOfDomain(t *testing.T) {
	pp := hardwareLikeParams()
	for _, kind := range PendulumPriorKinds() {
		p, err := NewPendulumPrior(kind, pp, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, 4)
		if err := p.StepTo(out, []float64{0.1, -0.2, 0.01, 0}, []float64{0.1, 0}); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		for _, x := range [][]float64{{math.NaN(), 0, 0, 0}, {0, 0, math.Inf(-1), 0}} {
			if err := p.StepTo(out, x, []float64{0, 0}); !errors.Is(err, ErrOutOfDomain) {
				t.Errorf("%s from %v: error %v, want ErrOutOfDomain", kind, x, err)
			}
		}
	}
}

// specRoundTrip writes the prior's spec as a model file records it (JSON)
// and parses it back.
func specRoundTrip(t *testing.T, p Prior) ([]byte, *PriorSpec) {
	t.Helper()
	b, err := json.Marshal(p.Spec())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParsePriorSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, s
}

// TestPriorSpecFits: a model fits behind a prior when it steps the prior's
// state and has at least its ports; the refusal names what the prior
// steps and what the model has.
func TestPriorSpecFits(t *testing.T) {
	pend := PriorSpec{Kind: PriorMidpointFriction, Dt: 0.01}
	qp := crazyflieParams(1)
	qp.WrenchPort = 6
	lag := PriorSpec{Kind: PriorQuadrotorRK4, Dt: 0.01, Quadrotor: &qp}
	for _, tc := range []struct {
		spec       PriorSpec
		nx, ne     int
		want       string // "" fits
		wantPhrase string
	}{
		{pend, 4, 2, "", ""},
		{pend, 4, 3, "", ""},
		{pend, 12, 6, "n = 6 (state size 12) and 6 ports", "a double pendulum"},
		{pend, 4, 1, "n = 2 (state size 4) and 1 ports", "at least 2 ports"},
		{lag, 12, 12, "", ""},
		{lag, 12, 11, "11 ports", "at least 12 ports, the body wrench from port 6"},
	} {
		err := tc.spec.Fits(tc.nx, tc.ne)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s, %d states, %d ports: %v", tc.spec.Kind, tc.nx, tc.ne, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.wantPhrase) {
			t.Errorf("%s, %d states, %d ports: error %v, want %q and %q", tc.spec.Kind, tc.nx, tc.ne, err, tc.want, tc.wantPhrase)
		}
	}
}
