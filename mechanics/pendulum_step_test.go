package mechanics

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// hardwareLikeParams is the identified model 2.0 of the real pendulum
// (data/double_pendulum_hw), inertias about the centres of mass, so the
// tests run without the data directory.
func hardwareLikeParams() PendulumParams {
	return PendulumParams{
		M1: 0.7586436245588385, M2: 0.33693688400430855, L1: 0.2, L2: 0.3, R1: 0.2, R2: 0.4684380078598044,
		I1: 0.042111626356002546 - 0.7586436245588385*0.04, I2: 0.0510352807011669 - 0.33693688400430855*0.4684380078598044*0.4684380078598044,
		B1: 0.003690870343196907, B2: 0.0006450852127932183, Cf1: 0.17467189894350432, Cf2: 0.10999997753612206,
		G: 9.81, Ir: 6.287203962819607e-05, Gr: 6,
	}
}

// randomStates draws states of the real pendulum's range: any angles,
// momenta up to ±0.6 kg·m²/s (the swing-ups reach about that), torques up
// to ±2.5 N·m.
func randomStates(rng *rand.Rand, n int) ([][4]float64, [][2]float64) {
	xs, us := make([][4]float64, n), make([][2]float64, n)
	for i := range xs {
		xs[i] = [4]float64{(2*rng.Float64() - 1) * math.Pi, (2*rng.Float64() - 1) * math.Pi, (2*rng.Float64() - 1) * 0.6, (2*rng.Float64() - 1) * 0.6}
		us[i] = [2]float64{(2*rng.Float64() - 1) * 2.5, (2*rng.Float64() - 1) * 2.5}
	}
	return xs, us
}

// TestHamiltonianHessianFD checks the analytic Hessian of H against
// central differences of its analytic gradient, for the paper's and the
// hardware's parameters.
func TestHamiltonianHessianFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		pp   PendulumParams
	}{{"paper", PaperPendulum()}, {"hardware", hardwareLikeParams()}} {
		t.Run(tc.name, func(t *testing.T) {
			xs, _ := randomStates(rng, 20)
			for _, x := range xs {
				h := tc.pp.HamiltonianHessian([2]float64{x[0], x[1]}, [2]float64{x[2], x[3]})
				for j := range 4 {
					const eps = 1e-6
					xp, xm := x, x
					xp[j] += eps
					xm[j] -= eps
					gp, gm := tc.pp.hamGrad(xp, [2]float64{}), tc.pp.hamGrad(xm, [2]float64{})
					for i := range 4 {
						// ∇H̃ lists ∂H/∂q then ∂H/∂p
						fd := (gp[i] - gm[i]) / (2 * eps)
						if d := math.Abs(fd - h[i][j]); d > 1e-6*max(1, math.Abs(fd)) {
							t.Fatalf("x %v: ∂²H/∂x%d∂x%d analytic %.12g, central differences %.12g", x, i, j, h[i][j], fd)
						}
					}
				}
				for i := range 4 {
					for j := range 4 {
						if h[i][j] != h[j][i] {
							t.Fatalf("Hessian not symmetric at (%d, %d): %g vs %g", i, j, h[i][j], h[j][i])
						}
					}
				}
			}
		})
	}
}

// symplecticResidual returns max |JᵀΩJ − Ω| for the 4×4 Jacobian jac.
func symplecticResidual(jac [4][4]float64) float64 {
	omega := [4][4]float64{{0, 0, 1, 0}, {0, 0, 0, 1}, {-1, 0, 0, 0}, {0, -1, 0, 0}}
	var res float64
	for i := range 4 {
		for j := range 4 {
			var s float64
			for k := range 4 {
				for l := range 4 {
					s += jac[k][i] * omega[k][l] * jac[l][j]
				}
			}
			res = max(res, math.Abs(s-omega[i][j]))
		}
	}
	return res
}

// TestMidpointStepSymplectic checks the implicit-midpoint step Φ₀ of the
// identified model: it solves its defining equation to round-off, its
// Jacobian (implicit function theorem) matches central differences of
// the step, and the Jacobian is symplectic to 1e-13, at states across the
// real pendulum's range, with torques held, at the data's 10 ms and at a
// coarse 50 ms step.
func TestMidpointStepSymplectic(t *testing.T) {
	pp := hardwareLikeParams()
	rng := rand.New(rand.NewPCG(3, 4))
	xs, us := randomStates(rng, 200)
	var worst float64
	for _, h := range []float64{0.01, 0.05} {
		for i, x := range xs {
			tau := us[i]
			next, jac, err := pp.MidpointJacobian(x, tau, h)
			if err != nil {
				t.Fatal(err)
			}
			if step, err := pp.MidpointStep(x, tau, h); err != nil || step != next {
				t.Fatalf("MidpointStep %v (%v) and MidpointJacobian %v differ", step, err, next)
			}
			// x' − x − h J ∇H̃((x + x')/2) = 0
			m := [4]float64{(x[0] + next[0]) / 2, (x[1] + next[1]) / 2, (x[2] + next[2]) / 2, (x[3] + next[3]) / 2}
			g := pp.hamGrad(m, tau)
			r := [4]float64{next[0] - x[0] - h*g[2], next[1] - x[1] - h*g[3], next[2] - x[2] + h*g[0], next[3] - x[3] + h*g[1]}
			for _, v := range r {
				if math.Abs(v) > 1e-14 {
					t.Fatalf("h %g, x %v: implicit-midpoint residual %v", h, x, r)
				}
			}
			res := symplecticResidual(jac)
			worst = max(worst, res)
			if res > 1e-13 {
				t.Fatalf("h %g, x %v: symplecticity residual %.3g > 1e-13", h, x, res)
			}
			for j := range 4 {
				const eps = 1e-6
				xp, xm := x, x
				xp[j] += eps
				xm[j] -= eps
				yp, err1 := pp.MidpointStep(xp, tau, h)
				ym, err2 := pp.MidpointStep(xm, tau, h)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				for k := range 4 {
					fd := (yp[k] - ym[k]) / (2 * eps)
					if d := math.Abs(fd - jac[k][j]); d > 1e-6*max(1, math.Abs(fd)) {
						t.Fatalf("h %g, x %v: ∂x'%d/∂x%d analytic %.12g, central differences %.12g", h, x, k, j, jac[k][j], fd)
					}
				}
			}
		}
	}
	t.Logf("largest symplecticity residual %.3g", worst)
}

// TestMidpointEnergy checks the energy behaviour of the frictionless
// midpoint step: unforced, the energy error stays bounded (no drift) over
// 20,000 steps of a swing-up-like state, and one step agrees with the
// exact flow (DOP853 at 1e-12) to O(h³).
func TestMidpointEnergy(t *testing.T) {
	pp := hardwareLikeParams()
	pp.B1, pp.B2, pp.Cf1, pp.Cf2 = 0, 0, 0, 0
	x := [4]float64{2.5, -1, 0.2, 0.1}
	h0 := pp.Hamiltonian([2]float64{x[0], x[1]}, [2]float64{x[2], x[3]})
	var firstHalf, secondHalf float64
	const steps = 20000
	for k := range steps {
		var err error
		if x, err = pp.MidpointStep(x, [2]float64{}, 0.01); err != nil {
			t.Fatal(err)
		}
		d := math.Abs(pp.Hamiltonian([2]float64{x[0], x[1]}, [2]float64{x[2], x[3]}) - h0)
		if k < steps/2 {
			firstHalf = max(firstHalf, d)
		} else {
			secondHalf = max(secondHalf, d)
		}
	}
	if firstHalf > 5e-3*h0 || secondHalf > 2*firstHalf+1e-12 {
		t.Errorf("energy error %.3g in the first half, %.3g in the second (H0 = %.4g): not bounded", firstHalf, secondHalf, h0)
	}
	// one step against the exact flow: the local error shrinks as h³
	var tau [2]float64
	f := pp.HamiltonianODE(&tau)
	x0 := [4]float64{1, 0.5, 0.3, -0.2}
	var errs []float64
	for _, h := range []float64{0.02, 0.01} {
		y := x0[:]
		y = append([]float64(nil), y...)
		ode := DOP853{RTol: 1e-12, ATol: 1e-12}
		if err := ode.Integrate(f, 0, h, y); err != nil {
			t.Fatal(err)
		}
		m, err := pp.MidpointStep(x0, tau, h)
		if err != nil {
			t.Fatal(err)
		}
		var e float64
		for i := range 4 {
			e = max(e, math.Abs(m[i]-y[i]))
		}
		errs = append(errs, e)
	}
	if ratio := errs[0] / errs[1]; ratio < 6 || ratio > 10 {
		t.Errorf("local errors %.3g at h = 0.02 and %.3g at 0.01: ratio %.3g, want about 8 (third order)", errs[0], errs[1], ratio)
	}
}

// TestFrictionStep checks the backward-Euler friction factor: it solves
// its equation, leaves q alone and never adds energy.
func TestFrictionStep(t *testing.T) {
	pp := hardwareLikeParams()
	rng := rand.New(rand.NewPCG(5, 6))
	xs, _ := randomStates(rng, 100)
	for _, x := range xs {
		y, err := pp.FrictionStep(x, 0.005)
		if err != nil {
			t.Fatal(err)
		}
		q := [2]float64{x[0], x[1]}
		if y[0] != x[0] || y[1] != x[1] {
			t.Fatalf("friction moved q: %v → %v", x, y)
		}
		f := pp.Friction(pp.Velocity(q, [2]float64{y[2], y[3]}))
		if r := math.Max(math.Abs(y[2]+0.005*f[0]-x[2]), math.Abs(y[3]+0.005*f[1]-x[3])); r > 1e-15 {
			t.Fatalf("x %v: backward-Euler residual %.3g", x, r)
		}
		if e0, e1 := pp.Hamiltonian(q, [2]float64{x[2], x[3]}), pp.Hamiltonian(q, [2]float64{y[2], y[3]}); e1 > e0+1e-15 {
			t.Fatalf("x %v: friction raised the energy %.17g → %.17g", x, e0, e1)
		}
	}
}

// TestPendulumPriorRollout checks every prior kind: Rollout is Step
// repeated with the torques of each port row (extra port values ignored),
// the friction-aware midpoint stays close to the DOP853 reference, and
// rollouts allocate nothing.
func TestPendulumPriorRollout(t *testing.T) {
	pp := hardwareLikeParams()
	const H, ne = 50, 3
	ports := make([]float64, H*ne)
	for k := range H {
		ports[k*ne], ports[k*ne+1], ports[k*ne+2] = math.Sin(0.1*float64(k)), 0.5*math.Cos(0.2*float64(k)), 99
	}
	x0 := []float64{0.3, -0.4, 0.05, 0.02}
	outs := map[PriorKind][]float64{}
	for _, k := range PendulumPriorKinds() {
		p, err := NewPendulumPrior(k, pp, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, 4*H)
		if err := p.Rollout(x0, ports, H, out); err != nil {
			t.Fatal(err)
		}
		x := [4]float64(x0)
		for s := range H {
			if x, err = p.Clone().(*PendulumPrior).Step(x, [2]float64{ports[s*ne], ports[s*ne+1]}); err != nil {
				t.Fatal(err)
			}
			if [4]float64(out[4*s:4*s+4]) != x {
				t.Fatalf("%s: step %d of the rollout %v, stepped %v", k, s+1, out[4*s:4*s+4], x)
			}
		}
		if a := testing.AllocsPerRun(5, func() { _ = p.Rollout(x0, ports, H, out) }); a != 0 {
			t.Errorf("%s: %v allocations a rollout", k, a)
		}
		outs[k] = out
	}
	diff := func(a, b []float64) float64 {
		var d float64
		for i := range a {
			d = max(d, math.Abs(a[i]-b[i]))
		}
		return d
	}
	if d := diff(outs[PriorMidpointFriction], outs[PriorDOP853]); d > 2e-2 {
		t.Errorf("midpoint with friction and DOP853 differ by %.3g over %d steps", d, H)
	}
	if d := diff(outs[PriorMidpoint], outs[PriorDOP853NoFriction]); d > 2e-3 {
		t.Errorf("frictionless midpoint and DOP853 differ by %.3g over %d steps", d, H)
	}
	if d := diff(outs[PriorMidpoint], outs[PriorMidpointFriction]); d < 5e-2 {
		t.Errorf("friction changed the rollout by only %.3g", d)
	}
}

// TestPriorSpec checks the JSON a composed model's file records: the round
// trip rebuilds the same prior bit for bit, and bad specs are refused with
// the reason.
func TestPriorSpec(t *testing.T) {
	p, err := NewPendulumPrior(PriorMidpointFriction, hardwareLikeParams(), 0.01)
	if err != nil {
		t.Fatal(err)
	}
	b, s := specRoundTrip(t, p)
	if *s != p.Spec() {
		t.Fatalf("round trip: %+v, want %+v", *s, p.Spec())
	}
	for _, tc := range []struct{ name, js, want string }{
		{"kind", strings.Replace(string(b), string(PriorMidpointFriction), "pendulum_euler", 1), "prior kind"},
		{"dt", strings.Replace(string(b), `"dt":0.01`, `"dt":-1`, 1), "dt = -1"},
		{"mass", strings.Replace(string(b), `"M1":0.7586436245588385`, `"M1":0`, 1), "m1 = 0"},
		{"unknown key", strings.Replace(string(b), `"dt"`, `"step":1,"dt"`, 1), "unknown field"},
		{"trailing", string(b) + "{}", "trailing"},
	} {
		if _, err := ParsePriorSpec([]byte(tc.js)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// BenchmarkPendulumPriorStep measures one prior step of each kind.
func BenchmarkPendulumPriorStep(b *testing.B) {
	for _, k := range PendulumPriorKinds() {
		b.Run(string(k), func(b *testing.B) {
			p, err := NewPendulumPrior(k, hardwareLikeParams(), 0.01)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			x := [4]float64{0.3, -0.4, 0.05, 0.02}
			for b.Loop() {
				if _, err := p.Step(x, [2]float64{0.5, -0.2}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPendulumPriorAdjoint checks the Jacobians of the implicit-midpoint
// priors (the midpoint step alone, and between the friction half steps)
// against central differences of the step at states in and out of the
// Coulomb term's steep region, that the adjoint is their transpose times
// λ and allocates nothing, and that the DOP853 kinds have none.
func TestPendulumPriorAdjoint(t *testing.T) {
	pp := hardwareLikeParams()
	for _, kind := range PendulumPriorKinds() {
		p, err := NewPendulumPrior(kind, pp, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if want := kind == PriorMidpoint || kind == PriorMidpointFriction; HasAdjoint(p) != want {
			t.Errorf("%s: HasAdjoint %v", kind, HasAdjoint(p))
		}
		out := make([]float64, 4)
		if !HasAdjoint(p) {
			if err := p.Adjoint(out, []float64{0.1, 0.2, 0.01, 0.02}, []float64{0, 0}, []float64{1, 0, 0, 0}); !errors.Is(err, ErrNoAdjoint) {
				t.Errorf("%s: adjoint error %v, want ErrNoAdjoint", kind, err)
			}
			continue
		}
		for _, c := range []struct {
			x   [4]float64
			tau [2]float64
		}{
			{[4]float64{0.3, -0.4, 0.05, 0.02}, [2]float64{0.5, -0.2}},
			{[4]float64{2.1, 0.7, -0.3, 0.12}, [2]float64{-1, 0.3}},
			{[4]float64{-0.2, 0.1, 0.002, -0.001}, [2]float64{0.05, 0.02}}, // slow: the steep Coulomb region
		} {
			_, jac, err := p.Jacobian(c.x, c.tau)
			if err != nil {
				t.Fatal(err)
			}
			for j := range 4 {
				h := 1e-7
				xp, xm := c.x, c.x
				xp[j] += h
				xm[j] -= h
				yp, err := p.Step(xp, c.tau)
				if err != nil {
					t.Fatal(err)
				}
				ym, err := p.Step(xm, c.tau)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 4 {
					fd := (yp[i] - ym[i]) / (2 * h)
					if d := math.Abs(fd - jac[i][j]); d > 1e-6*math.Abs(fd)+1e-8 {
						t.Errorf("%s at %v: ∂Φ%d/∂x%d = %.10g analytic, %.10g by differences", kind, c.x, i, j, jac[i][j], fd)
					}
				}
			}
			lam := []float64{0.3, -1.2, 2.5, 0.7}
			if err := p.Adjoint(out, c.x[:], c.tau[:], lam); err != nil {
				t.Fatal(err)
			}
			for j := range 4 {
				var s float64
				for i := range 4 {
					s += jac[i][j] * lam[i]
				}
				if math.Abs(s-out[j]) > 1e-14*max(math.Abs(s), 1) {
					t.Errorf("%s: adjoint %d = %g, Jᵀλ %g", kind, j, out[j], s)
				}
			}
			x, tau := c.x[:], c.tau[:]
			if a := testing.AllocsPerRun(5, func() { _ = p.Adjoint(out, x, tau, lam) }); a != 0 {
				t.Errorf("%s: %v allocations an adjoint", kind, a)
			}
		}
	}
}
