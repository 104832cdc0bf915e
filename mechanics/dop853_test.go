package mechanics

import (
	"errors"
	"math"
	"testing"
)

type odeCase struct {
	name  string
	f     ODEFunc
	y0    []float64
	t0    float64
	t1    float64
	exact func(t float64) []float64
}

func odeCases() []odeCase {
	const lambda = 0.7
	const omega = 2.3
	return []odeCase{
		{
			name:  "exponential decay",
			f:     func(_ float64, y, d []float64) { d[0] = -lambda * y[0] },
			y0:    []float64{1.5},
			t0:    0,
			t1:    10,
			exact: func(t float64) []float64 { return []float64{1.5 * math.Exp(-lambda*t)} },
		},
		{
			name: "harmonic oscillator",
			f: func(_ float64, y, d []float64) {
				d[0] = y[1]
				d[1] = -omega * omega * y[0]
			},
			y0: []float64{1, 0},
			t0: 0,
			t1: 10,
			exact: func(t float64) []float64 {
				return []float64{math.Cos(omega * t), -omega * math.Sin(omega*t)}
			},
		},
		{
			// y' = A y with A = [[-0.5, 2], [-2, -0.5]]: damped rotation.
			name: "linear system",
			f: func(_ float64, y, d []float64) {
				d[0] = -0.5*y[0] + 2*y[1]
				d[1] = -2*y[0] - 0.5*y[1]
			},
			y0: []float64{1, -1},
			t0: 0,
			t1: 6,
			exact: func(t float64) []float64 {
				e := math.Exp(-0.5 * t)
				c, s := math.Cos(2*t), math.Sin(2*t)
				return []float64{e * (c*1 + s*(-1)), e * (-s*1 + c*(-1))}
			},
		},
		{
			name: "backwards in time",
			f:    func(t float64, y, d []float64) { d[0] = math.Cos(t) },
			y0:   []float64{math.Sin(3)},
			t0:   3,
			t1:   -2,
			exact: func(t float64) []float64 {
				return []float64{math.Sin(t)}
			},
		},
	}
}

func TestDOP853ClosedForm(t *testing.T) {
	for _, tc := range odeCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := &DOP853{RTol: 1e-12, ATol: 1e-12}
			y := append([]float64(nil), tc.y0...)
			if err := s.Integrate(tc.f, tc.t0, tc.t1, y); err != nil {
				t.Fatal(err)
			}
			want := tc.exact(tc.t1)
			for i := range y {
				if d := math.Abs(y[i] - want[i]); d > 1e-10 {
					t.Errorf("y[%d]=%.15g want %.15g (err %.3g)", i, y[i], want[i], d)
				}
			}
			st := s.Stats()
			if st.NAccepted == 0 || st.NFev == 0 {
				t.Errorf("stats not recorded: %+v", st)
			}
		})
	}
}

// TestDOP853Order checks the observed global order of convergence with fixed
// steps: halving h must divide the error by about 2^8.
func TestDOP853Order(t *testing.T) {
	for _, tc := range odeCases()[:3] {
		t.Run(tc.name, func(t *testing.T) {
			errAt := func(h float64) float64 {
				s := &DOP853{FixedStep: h}
				y := append([]float64(nil), tc.y0...)
				if err := s.Integrate(tc.f, tc.t0, tc.t1, y); err != nil {
					t.Fatal(err)
				}
				want := tc.exact(tc.t1)
				e := 0.0
				for i := range y {
					e = math.Max(e, math.Abs(y[i]-want[i]))
				}
				return e
			}
			// Steps large enough that the error sits well above round-off.
			h := map[string]float64{"exponential decay": 1, "harmonic oscillator": 0.1, "linear system": 0.25}[tc.name]
			e1, e2 := errAt(h), errAt(h/2)
			order := math.Log2(e1 / e2)
			t.Logf("h=%g err=%.3g, h/2 err=%.3g, order %.3f", h, e1, e2, order)
			if order < 7.5 || order > 8.7 {
				t.Errorf("observed order %.3f, want ≈ 8", order)
			}
		})
	}
}

func TestDOP853Tolerance(t *testing.T) {
	tc := odeCases()[1]
	prevErr := math.Inf(1)
	prevFev := 0
	for _, tol := range []float64{1e-4, 1e-6, 1e-8, 1e-10} {
		s := &DOP853{RTol: tol, ATol: tol}
		y := append([]float64(nil), tc.y0...)
		if err := s.Integrate(tc.f, tc.t0, tc.t1, y); err != nil {
			t.Fatal(err)
		}
		want := tc.exact(tc.t1)
		e := math.Max(math.Abs(y[0]-want[0]), math.Abs(y[1]-want[1])/2.3)
		st := s.Stats()
		t.Logf("tol %g: err %.3g, %+v", tol, e, st)
		// Global error over ~4 periods stays within a modest multiple of tol.
		if e > 100*tol {
			t.Errorf("tol %g: error %.3g exceeds 100·tol", tol, e)
		}
		if e > prevErr*1.01 {
			t.Errorf("tol %g: error %.3g did not decrease (previous %.3g)", tol, e, prevErr)
		}
		if st.NFev <= prevFev {
			t.Errorf("tol %g: %d evaluations, not more than %d", tol, st.NFev, prevFev)
		}
		prevErr, prevFev = e, st.NFev
	}
}

func TestDOP853Errors(t *testing.T) {
	cases := []struct {
		name string
		s    DOP853
		f    ODEFunc
		y0   []float64
		want error
	}{
		{
			name: "max steps",
			s:    DOP853{MaxSteps: 5},
			f:    func(_ float64, y, d []float64) { d[0] = y[1]; d[1] = -400 * y[0] },
			y0:   []float64{1, 0},
			want: ErrMaxSteps,
		},
		{
			name: "finite-time blow-up",
			s:    DOP853{},
			f:    func(_ float64, y, d []float64) { d[0] = y[0] * y[0] },
			y0:   []float64{1}, // y = 1/(1-t) blows up at t = 1
			want: ErrStepUnderflow,
		},
		{
			name: "non-finite derivative",
			s:    DOP853{},
			f:    func(_ float64, y, d []float64) { d[0] = math.NaN() },
			y0:   []float64{1},
			want: ErrNonFinite,
		},
		{
			name: "non-finite initial state",
			s:    DOP853{},
			f:    func(_ float64, y, d []float64) { d[0] = 0 },
			y0:   []float64{math.Inf(1)},
			want: ErrNonFinite,
		},
		{
			name: "fixed step blow-up",
			s:    DOP853{FixedStep: 0.5},
			f:    func(_ float64, y, d []float64) { d[0] = y[0] * y[0] * y[0] },
			y0:   []float64{100},
			want: ErrNonFinite,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			y := append([]float64(nil), tc.y0...)
			err := s.Integrate(tc.f, 0, 2, y)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDOP853NoAllocAfterFirstUse(t *testing.T) {
	f := func(_ float64, y, d []float64) { d[0] = y[1]; d[1] = -y[0] }
	s := &DOP853{}
	y := []float64{1, 0}
	if err := s.Integrate(f, 0, 1, y); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(10, func() {
		y[0], y[1] = 1, 0
		if err := s.Integrate(f, 0, 1, y); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Integrate after first use", allocs)
	}
}
