package predictor

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// linearStepper is x_{t+1} = A x_t + B e_t, a stand-in model whose
// one-step residuals are known exactly.
type linearStepper struct {
	a, b  []float64 // nx×nx, nx×ne
	nx, n int
}

func (s *linearStepper) Rollout(x0, ports []float64, horizon int, out []float64) error {
	ne := len(s.b) / s.nx
	prev := x0
	for k := range horizon {
		next := out[k*s.nx : (k+1)*s.nx]
		for i := range s.nx {
			var v float64
			for j := range s.nx {
				v += s.a[i*s.nx+j] * prev[j]
			}
			for j := range ne {
				v += s.b[i*ne+j] * ports[k*ne+j]
			}
			next[i] = v
		}
		prev = next
	}
	return nil
}

// TestForceEstimatorRecoversConstantForce: a system that is the model plus
// a constant impulse c on p leaves residuals c; the estimate is c, and the
// corrected rollout is the system's trajectory, with c fading by Decay.
func TestForceEstimatorRecoversConstantForce(t *testing.T) {
	const n, ne, nx = 2, 1, 4
	rng := rand.New(rand.NewPCG(3, 4))
	s := &linearStepper{a: make([]float64, nx*nx), b: make([]float64, nx*ne), nx: nx, n: n}
	for i := range s.a {
		s.a[i] = 0.2 * rng.NormFloat64()
		if i%(nx+1) == 0 {
			s.a[i] += 0.9
		}
	}
	for i := range s.b {
		s.b[i] = rng.NormFloat64()
	}
	c := []float64{0.3, -0.7} // the unmodelled impulse per step on p
	truth := func(x, e []float64) []float64 {
		out := make([]float64, nx)
		_ = s.Rollout(x, e, 1, out)
		out[2] += c[0]
		out[3] += c[1]
		return out
	}
	for _, tc := range []struct {
		name   string
		cfg    ForceEstimate
		decay  float64
		needed int // samples before the estimate is c
	}{
		{"window 1, held", ForceEstimate{Window: 1, Decay: 1}, 1, 2},
		{"window 4, decay 0.9", ForceEstimate{Window: 4, Decay: 0.9}, 0.9, 2},
		{"window 10, decay 0.5", ForceEstimate{Window: 10, Decay: 0.5}, 0.5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewForceEstimator(s, n, ne, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			x := []float64{0.1, -0.2, 0.05, 0.3}
			for k := range 15 {
				e := []float64{math.Sin(float64(k))}
				if err := f.Observe(x, e); err != nil {
					t.Fatal(err)
				}
				x = truth(x, e)
			}
			if got, want := f.Residuals(), min(14, tc.cfg.Window); got != want {
				t.Errorf("residuals %d, want %d", got, want)
			}
			d := f.Offset(nil)
			for j := range c {
				if math.Abs(d[j]-c[j]) > 1e-12 {
					t.Fatalf("estimate %v, want %v", d, c)
				}
			}
			// The corrected rollout: the model's step plus decay^(k−1)·c.
			const H = 6
			ports := make([]float64, H*ne)
			for k := range ports {
				ports[k] = 0.1 * float64(k)
			}
			got := make([]float64, H*nx)
			if err := f.Rollout(x, ports, H, got); err != nil {
				t.Fatal(err)
			}
			want := append([]float64(nil), x...)
			scale := 1.0
			for k := range H {
				next := make([]float64, nx)
				_ = s.Rollout(want, ports[k*ne:(k+1)*ne], 1, next)
				next[2] += scale * c[0]
				next[3] += scale * c[1]
				scale *= tc.decay
				for i := range nx {
					if math.Abs(got[k*nx+i]-next[i]) > 1e-12 {
						t.Fatalf("step %d: x[%d] = %v, want %v", k+1, i, got[k*nx+i], next[i])
					}
				}
				want = next
			}
			if tc.decay == 1 {
				// held, the estimate makes the rollout the system's own
				xs := append([]float64(nil), x...)
				for k := range H {
					xs = truth(xs, ports[k*ne:(k+1)*ne])
					for i := range nx {
						if math.Abs(got[k*nx+i]-xs[i]) > 1e-12 {
							t.Fatalf("step %d: x[%d] = %v, the system %v", k+1, i, got[k*nx+i], xs[i])
						}
					}
				}
			}
		})
	}
}

// TestForceEstimatorWindow: the estimate is the mean of the last Window
// residuals only, and Reset forgets them.
func TestForceEstimatorWindow(t *testing.T) {
	hold := holdStepper{nx: 2}
	f, err := NewForceEstimator(hold, 1, 0, ForceEstimate{Window: 3, Decay: 1})
	if err != nil {
		t.Fatal(err)
	}
	// p = 0, 1, 3, 6, 10: residuals 1, 2, 3, 4
	for _, p := range []float64{0, 1, 3, 6, 10} {
		if err := f.Observe([]float64{0, p}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := f.Offset(nil); d[0] != 3 { // (2+3+4)/3
		t.Errorf("estimate %v, want the mean of the last three residuals, 3", d[0])
	}
	f.Reset()
	if f.Residuals() != 0 || f.Offset(nil)[0] != 0 {
		t.Errorf("after Reset: %d residuals, estimate %v", f.Residuals(), f.Offset(nil))
	}
	if err := f.Observe([]float64{0, math.NaN()}, nil); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN sample: %v, want ErrNotFinite", err)
	}
	if err := f.Observe([]float64{0}, nil); !errors.Is(err, ErrLayout) {
		t.Errorf("short sample: %v, want ErrLayout", err)
	}
	for _, bad := range []ForceEstimate{{Window: 0, Decay: 0.9}, {Window: 3, Decay: 1.5}, {Window: 3, Decay: math.NaN()}, {Window: 3, Decay: -0.1}} {
		if _, err := NewForceEstimator(hold, 1, 0, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// holdStepper predicts that the state stays where it is.
type holdStepper struct{ nx int }

func (h holdStepper) Rollout(x0, _ []float64, horizon int, out []float64) error {
	for k := range horizon {
		copy(out[k*h.nx:(k+1)*h.nx], x0)
	}
	return nil
}

// TestForceCorrectedStepIsTranslation: on a compiled model, the corrected
// step differs from the model's by the estimate on p and nothing on q: a
// translation, so the corrected map's Jacobian is the model's and it stays
// exactly symplectic. Without an estimate the rollout is the model's.
func TestForceCorrectedStepIsTranslation(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			m := testModel(t, name, 0.3, 5)
			plan, err := m.Compile()
			if err != nil {
				t.Fatal(err)
			}
			l := m.Layout
			n2, ne := l.StateDim(), l.PortDim()
			rng := rand.New(rand.NewPCG(8, 9))
			x := make([]float64, n2)
			for i := range x {
				x[i] = m.Norm.Mu[i] + 0.1*m.Norm.Scale[i]*rng.NormFloat64()
			}
			e := randVec(rng, ne, 0.1)
			r := plan.NewRoller()
			f, err := NewForceEstimator(r, l.N, ne, ForceEstimate{Window: 5, Decay: 0.9})
			if err != nil {
				t.Fatal(err)
			}
			plain, corrected := make([]float64, 3*n2), make([]float64, 3*n2)
			ports := append(append(append([]float64(nil), e...), e...), e...)
			if err := r.Rollout(x, ports, 3, plain); err != nil {
				t.Fatal(err)
			}
			if err := f.Rollout(x, ports, 3, corrected); err != nil {
				t.Fatal(err)
			}
			for i := range plain {
				if math.Abs(plain[i]-corrected[i]) > 1e-12*math.Max(1, math.Abs(plain[i])) {
					t.Fatalf("without residuals, x[%d] = %v corrected, %v plain", i, corrected[i], plain[i])
				}
			}
			// one residual: observe x, then the model's own next state moved by c
			c := randVec(rng, l.N, 0.05)
			next := make([]float64, n2)
			_ = r.Rollout(x, e, 1, next)
			for j := range c {
				next[l.N+j] += c[j]
			}
			if err := f.Observe(x, e); err != nil {
				t.Fatal(err)
			}
			if err := f.Observe(next, e); err != nil {
				t.Fatal(err)
			}
			step := make([]float64, n2)
			base := make([]float64, n2)
			_ = r.Rollout(next, e, 1, base)
			if err := f.Rollout(next, e, 1, step); err != nil {
				t.Fatal(err)
			}
			for i := range step {
				want := base[i]
				if i >= l.N {
					want += c[i-l.N]
				}
				if math.Abs(step[i]-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Fatalf("corrected step x[%d] = %v, want the model's %v plus the estimate", i, step[i], want)
				}
			}
			if a := testing.AllocsPerRun(20, func() {
				_ = f.Observe(next, e)
				_ = f.Rollout(next, ports, 3, corrected)
			}); a != 0 {
				t.Errorf("Observe and Rollout allocate %v times", a)
			}
		})
	}
}
