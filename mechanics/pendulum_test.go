package mechanics

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// hardwareLike is a pendulum with every term switched on (motor inertia,
// Coulomb friction, springs), close to the identified dfki model 1.0.
func hardwareLike() PendulumParams {
	return PendulumParams{
		M1: 0.52, M2: 0.63, L1: 0.2, L2: 0.3, R1: 0.2, R2: 0.256,
		I1: 0.011, I2: 0.010, K1: 0.1, K2: 0.05, B1: 0.01, B2: 0.02, G: 9.81,
		Ir: 6.3e-5, Gr: 6, Cf1: 0.16, Cf2: 0.12,
	}
}

func pendulumCases() []struct {
	name string
	pp   PendulumParams
} {
	return []struct {
		name string
		pp   PendulumParams
	}{
		{"paper", PaperPendulum()},
		{"hardware-like", hardwareLike()},
	}
}

func randState(rng *rand.Rand) ([2]float64, [2]float64) {
	return [2]float64{rng.Float64()*6 - 3, rng.Float64()*6 - 3},
		[2]float64{rng.Float64()*4 - 2, rng.Float64()*4 - 2}
}

func TestPendulumValidate(t *testing.T) {
	bad := func(mod func(*PendulumParams)) PendulumParams {
		pp := PaperPendulum()
		mod(&pp)
		return pp
	}
	cases := []struct {
		name string
		pp   PendulumParams
		ok   bool
	}{
		{"paper", PaperPendulum(), true},
		{"hardware-like", hardwareLike(), true},
		{"zero mass", bad(func(p *PendulumParams) { p.M1 = 0 }), false},
		{"negative damping", bad(func(p *PendulumParams) { p.B2 = -1 }), false},
		{"NaN gravity", bad(func(p *PendulumParams) { p.G = math.NaN() }), false},
		{"indefinite mass matrix", bad(func(p *PendulumParams) { p.I1 = -2; p.I2 = -0.5 }), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.pp.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestPendulumMassMatrix(t *testing.T) {
	pp := PaperPendulum()
	// Hand values at q2 = 0: J1 = 1.1+2.1·0.04 = 1.184, J2 = 0.7+1.3·0.4225 = 1.24925,
	// m2 l1² = 0.208, h = 1.3·0.4·0.65 = 0.338.
	m := pp.MassMatrix([2]float64{0.3, 0})
	want := [2][2]float64{{1.184 + 1.24925 + 0.208 + 2*0.338, 1.24925 + 0.338}, {1.24925 + 0.338, 1.24925}}
	for i := range 2 {
		for j := range 2 {
			if math.Abs(m[i][j]-want[i][j]) > 1e-12 {
				t.Errorf("M[%d][%d]=%.15g want %.15g", i, j, m[i][j], want[i][j])
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range pendulumCases() {
		for range 20 {
			q, v := randState(rng)
			mm := tc.pp.MassMatrix(q)
			mi := tc.pp.InverseMassMatrix(q)
			for i := range 2 {
				for j := range 2 {
					s := mm[i][0]*mi[0][j] + mm[i][1]*mi[1][j]
					if want := b2f(i == j); math.Abs(s-want) > 1e-12 {
						t.Errorf("%s: (M·M⁻¹)[%d][%d]=%g", tc.name, i, j, s)
					}
				}
			}
			p := tc.pp.Momentum(q, v)
			v2 := tc.pp.Velocity(q, p)
			if math.Abs(v2[0]-v[0]) > 1e-12 || math.Abs(v2[1]-v[1]) > 1e-12 {
				t.Errorf("%s: Velocity(Momentum(v)) = %v, want %v", tc.name, v2, v)
			}
			// Kinetic energy agrees between velocity and momentum forms.
			if d := tc.pp.Energy(q, v) - tc.pp.Hamiltonian(q, p); math.Abs(d) > 1e-12 {
				t.Errorf("%s: Energy − Hamiltonian = %g", tc.name, d)
			}
			// ∂M/∂q2 against central differences.
			dm := tc.pp.MassMatrixDerivative(q)
			const eps = 1e-6
			mp := tc.pp.MassMatrix([2]float64{q[0], q[1] + eps})
			mn := tc.pp.MassMatrix([2]float64{q[0], q[1] - eps})
			for i := range 2 {
				for j := range 2 {
					fd := (mp[i][j] - mn[i][j]) / (2 * eps)
					if math.Abs(fd-dm[i][j]) > 1e-8 {
						t.Errorf("%s: dM/dq2[%d][%d]=%g, FD %g", tc.name, i, j, dm[i][j], fd)
					}
				}
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestPendulumGradientsFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const eps = 1e-6
	for _, tc := range pendulumCases() {
		t.Run(tc.name, func(t *testing.T) {
			for range 50 {
				q, v := randState(rng)
				p := tc.pp.Momentum(q, v)
				dH := tc.pp.HamiltonianGradQ(q, p)
				dV := tc.pp.PotentialGradient(q)
				for i := range 2 {
					qp, qn := q, q
					qp[i] += eps
					qn[i] -= eps
					fdH := (tc.pp.Hamiltonian(qp, p) - tc.pp.Hamiltonian(qn, p)) / (2 * eps)
					fdV := (tc.pp.PotentialEnergy(qp) - tc.pp.PotentialEnergy(qn)) / (2 * eps)
					if math.Abs(fdH-dH[i]) > 1e-7*(1+math.Abs(dH[i])) {
						t.Errorf("∂H/∂q%d = %.10g, FD %.10g", i+1, dH[i], fdH)
					}
					if math.Abs(fdV-dV[i]) > 1e-7*(1+math.Abs(dV[i])) {
						t.Errorf("∂V/∂q%d = %.10g, FD %.10g", i+1, dV[i], fdV)
					}
				}
				// ∂H/∂p = q̇.
				for i := range 2 {
					pp, pn := p, p
					pp[i] += eps
					pn[i] -= eps
					fd := (tc.pp.Hamiltonian(q, pp) - tc.pp.Hamiltonian(q, pn)) / (2 * eps)
					if math.Abs(fd-v[i]) > 1e-7*(1+math.Abs(v[i])) {
						t.Errorf("∂H/∂p%d = %.10g, want q̇ = %.10g", i+1, fd, v[i])
					}
				}
			}
		})
	}
}

// TestPendulumFormsAgree checks the Hamiltonian and Lagrangian vector fields
// pointwise (ṗ = M q̈ + Ṁ q̇) and after integration.
func TestPendulumFormsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range pendulumCases() {
		t.Run(tc.name, func(t *testing.T) {
			for range 50 {
				q, v := randState(rng)
				tau := [2]float64{rng.NormFloat64(), rng.NormFloat64()}
				p := tc.pp.Momentum(q, v)
				dh := tc.pp.HamiltonianRHS([4]float64{q[0], q[1], p[0], p[1]}, tau)
				dl := tc.pp.LagrangianRHS([4]float64{q[0], q[1], v[0], v[1]}, tau)
				m := tc.pp.MassMatrix(q)
				dm := tc.pp.MassMatrixDerivative(q)
				for i := range 2 {
					pdot := m[i][0]*dl[2] + m[i][1]*dl[3] + v[1]*(dm[i][0]*v[0]+dm[i][1]*v[1])
					if math.Abs(dh[i]-dl[i]) > 1e-12 || math.Abs(dh[2+i]-pdot) > 1e-10*(1+math.Abs(pdot)) {
						t.Errorf("component %d: Hamiltonian %v vs Lagrangian-derived (%g, %g)", i, dh, dl[i], pdot)
					}
				}
			}
			q := [2]float64{1.0, -0.5}
			v := [2]float64{0.3, 2}
			p := tc.pp.Momentum(q, v)
			tau := [2]float64{0.4, -0.2}
			yh := []float64{q[0], q[1], p[0], p[1]}
			yl := []float64{q[0], q[1], v[0], v[1]}
			s := &DOP853{RTol: 1e-12, ATol: 1e-12}
			if err := s.Integrate(tc.pp.HamiltonianODE(&tau), 0, 3, yh); err != nil {
				t.Fatal(err)
			}
			if err := s.Integrate(tc.pp.LagrangianODE(&tau), 0, 3, yl); err != nil {
				t.Fatal(err)
			}
			pl := tc.pp.Momentum([2]float64{yl[0], yl[1]}, [2]float64{yl[2], yl[3]})
			got := []float64{yl[0], yl[1], pl[0], pl[1]}
			for i := range got {
				if math.Abs(got[i]-yh[i]) > 1e-8 {
					t.Errorf("state %d after 3 s: Lagrangian %.12g, Hamiltonian %.12g", i, got[i], yh[i])
				}
			}
		})
	}
}

func TestPendulumEnergyConservation(t *testing.T) {
	for _, tc := range pendulumCases() {
		t.Run(tc.name, func(t *testing.T) {
			pp := tc.pp
			pp.B1, pp.B2, pp.Cf1, pp.Cf2 = 0, 0, 0, 0
			q := [2]float64{2.0, -1.2}
			p := pp.Momentum(q, [2]float64{1.5, -2.5})
			h0 := pp.Hamiltonian(q, p)
			var tau [2]float64
			y := []float64{q[0], q[1], p[0], p[1]}
			s := &DOP853{RTol: 1e-13, ATol: 1e-13}
			f := pp.HamiltonianODE(&tau)
			maxDrift := 0.0
			for k := range 100 {
				if err := s.Integrate(f, float64(k)*0.1, float64(k+1)*0.1, y); err != nil {
					t.Fatal(err)
				}
				h := pp.Hamiltonian([2]float64{y[0], y[1]}, [2]float64{y[2], y[3]})
				maxDrift = math.Max(maxDrift, math.Abs(h-h0))
			}
			t.Logf("H0 = %.6g J, max |H − H0| over 10 s = %.3g", h0, maxDrift)
			if maxDrift > 1e-9 {
				t.Errorf("energy drift %.3g > 1e-9", maxDrift)
			}
		})
	}
}

// TestPendulumEnergyBalance integrates the power qdotᵀτ − qdotᵀF(qdot)
// alongside the state and checks H(T) − H(0) against it.
func TestPendulumEnergyBalance(t *testing.T) {
	for _, tc := range pendulumCases() {
		t.Run(tc.name, func(t *testing.T) {
			pp := tc.pp
			tauOf := func(t float64) [2]float64 {
				return [2]float64{1.5 * math.Sin(2.1*t), -0.8 * math.Cos(3.3*t+0.4)}
			}
			f := func(t float64, y, d []float64) {
				tau := tauOf(t)
				dx := pp.HamiltonianRHS([4]float64{y[0], y[1], y[2], y[3]}, tau)
				copy(d, dx[:])
				v := [2]float64{dx[0], dx[1]}
				fr := pp.Friction(v)
				d[4] = v[0]*(tau[0]-fr[0]) + v[1]*(tau[1]-fr[1])
			}
			q := [2]float64{0.5, 1.0}
			p := pp.Momentum(q, [2]float64{-1, 0.5})
			h0 := pp.Hamiltonian(q, p)
			y := []float64{q[0], q[1], p[0], p[1], 0}
			s := &DOP853{RTol: 1e-12, ATol: 1e-12}
			if err := s.Integrate(f, 0, 5, y); err != nil {
				t.Fatal(err)
			}
			h1 := pp.Hamiltonian([2]float64{y[0], y[1]}, [2]float64{y[2], y[3]})
			t.Logf("ΔH = %.9g, ∫power = %.9g", h1-h0, y[4])
			if math.Abs(h1-h0-y[4]) > 1e-8 {
				t.Errorf("energy balance violated: ΔH = %.12g, work = %.12g", h1-h0, y[4])
			}
			// And pointwise: dH/dt = ∂H/∂q·q̇ + ∂H/∂p·ṗ = q̇ᵀτ − q̇ᵀF.
			tau := tauOf(0.3)
			dx := pp.HamiltonianRHS([4]float64{q[0], q[1], p[0], p[1]}, tau)
			dHq := pp.HamiltonianGradQ(q, p)
			v := [2]float64{dx[0], dx[1]}
			fr := pp.Friction(v)
			dHdt := dHq[0]*dx[0] + dHq[1]*dx[1] + v[0]*dx[2] + v[1]*dx[3]
			power := v[0]*(tau[0]-fr[0]) + v[1]*(tau[1]-fr[1])
			if math.Abs(dHdt-power) > 1e-12 {
				t.Errorf("dH/dt = %.15g, power = %.15g", dHdt, power)
			}
		})
	}
}

func TestParsePendulumParamsYAML(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"ok", "m1: 1\nm2: 1\nl1: 0.5\nl2: 0.5\nr1: 0.5\nr2: 0.5\nI1: 0.3\nI2: 0.3\ng: 9.81\nb1: 0.1\n", ""},
		{"missing key", "m1: 1\nm2: 1\nl1: 0.5\nl2: 0.5\nr1: 0.5\nI1: 0.3\nI2: 0.3\ng: 9.81\n", `missing key "r2"`},
		{"bad value", "m1: heavy\n", "cannot unmarshal"},
		{"empty", "", "empty"},
		{"invalid", "m1: -1\nm2: 1\nl1: 0.5\nl2: 0.5\nr1: 0.5\nr2: 0.5\nI1: 0.3\nI2: 0.3\ng: 9.81\n", "must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pp, err := ParsePendulumParamsYAML(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if j := pp.PivotInertia(); math.Abs(j[0]-0.3) > 1e-15 || pp.B1 != 0.1 {
				t.Errorf("got %+v (pivot inertia %v)", pp, j)
			}
		})
	}
}

func TestLoadPendulumParamsYAMLHardware(t *testing.T) {
	dir := fixtures.Path(t, "double_pendulum_hw", "identified_parameters")
	files, err := filepath.Glob(filepath.Join(dir, "*", "model_parameters.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no model_parameters.yml under %s (%v)", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			pp, err := LoadPendulumParamsYAML(f)
			if err != nil {
				t.Fatal(err)
			}
			if pp.L1 != 0.2 || pp.L2 != 0.3 || pp.Gr != 6 || pp.G != 9.81 || pp.TorqueLimit[0] != 10 {
				t.Errorf("unexpected values %+v", pp)
			}
			// dfki's mass matrix uses the pivot inertia I (as in the file):
			// M22 = I2 + gr² Ir at any q.
			m := pp.MassMatrix([2]float64{0, 1})
			j := pp.PivotInertia()
			if math.Abs(m[1][1]-(j[1]+36*pp.Ir)) > 1e-15 {
				t.Errorf("M22 = %g, want %g", m[1][1], j[1]+36*pp.Ir)
			}
		})
	}
	if _, err := LoadPendulumParamsYAML(filepath.Join(dir, "no-such-file.yml")); err == nil {
		t.Error("missing file: no error")
	}
}
