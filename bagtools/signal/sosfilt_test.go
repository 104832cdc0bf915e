package signal

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// refFiltFilt is a literal transcription of scipy's sosfiltfilt (odd
// extension, sosfilt_zi initial conditions, reversals) used to check the
// in-place implementation.
func refFiltFilt(s SOS, x []float64) []float64 {
	pad := s.PadLen()
	n := len(x)
	var ext []float64
	for i := pad; i >= 1; i-- {
		ext = append(ext, 2*x[0]-x[i])
	}
	ext = append(ext, x...)
	for i := n - 2; i >= n-1-pad; i-- {
		ext = append(ext, 2*x[n-1]-x[i])
	}
	zi := s.Zi()
	scaled := func(c float64) [][2]float64 {
		out := make([][2]float64, len(zi))
		for j := range zi {
			out[j] = [2]float64{zi[j][0] * c, zi[j][1] * c}
		}
		return out
	}
	y := s.Filter(nil, ext, scaled(ext[0]))
	slices.Reverse(y)
	y = s.Filter(nil, y, scaled(y[0]))
	slices.Reverse(y)
	return y[pad : pad+n]
}

func TestFilterImpulseMatchesDifferenceEquation(t *testing.T) {
	for _, order := range []int{1, 2, 3, 4, 6} {
		s, err := Butter(order, 7, 50)
		if err != nil {
			t.Fatal(err)
		}
		b, a := transfer(s)
		x := make([]float64, 64)
		x[0] = 1
		got := s.Filter(nil, x, nil)
		// y[n] = Σ b_k x[n−k] − Σ_{k≥1} a_k y[n−k]
		want := make([]float64, len(x))
		for n := range x {
			var v float64
			for k := range b {
				if n-k >= 0 {
					v += b[k] * x[n-k]
				}
			}
			for k := 1; k < len(a); k++ {
				if n-k >= 0 {
					v -= a[k] * want[n-k]
				}
			}
			want[n] = v
		}
		for n := range x {
			if math.Abs(got[n]-want[n]) > 1e-13 {
				t.Fatalf("N=%d: y[%d] = %v, want %v", order, n, got[n], want[n])
			}
		}
	}
}

func TestZiSteadyState(t *testing.T) {
	for _, order := range []int{1, 2, 3, 6, 8} {
		s, err := Butter(order, 18, 400)
		if err != nil {
			t.Fatal(err)
		}
		const c = 2.5
		zi := s.Zi()
		for j := range zi {
			zi[j][0] *= c
			zi[j][1] *= c
		}
		x := make([]float64, 200)
		for i := range x {
			x[i] = c
		}
		y := s.Filter(nil, x, zi)
		for i, v := range y {
			if math.Abs(v-c) > 1e-12 {
				t.Fatalf("N=%d: step from steady state: y[%d] = %v, want %v", order, i, v, c)
			}
		}
	}
}

func TestFiltFilt(t *testing.T) {
	const fs = 400.0
	sos, err := Butter(6, 18, fs)
	if err != nil {
		t.Fatal(err)
	}
	n := 2000
	tt := make([]float64, n)
	for i := range tt {
		tt[i] = float64(i) / fs
	}
	gen := func(f func(float64) float64) []float64 {
		x := make([]float64, n)
		for i, v := range tt {
			x[i] = f(v)
		}
		return x
	}
	tests := []struct {
		name   string
		x      []float64
		want   func(float64) float64
		margin int // samples ignored at each end
		tol    float64
	}{
		// A constant is reproduced exactly: the odd extension continues it
		// and zi starts both passes in steady state.
		{"constant", gen(func(float64) float64 { return -3.25 }), func(float64) float64 { return -3.25 }, 0, 1e-12},
		// A ramp passes undelayed away from the ends (the zero-phase
		// impulse response is symmetric with unit sum); near the ends the
		// forward pass starts with a constant's steady state, not a ramp's.
		{"ramp", gen(func(t float64) float64 { return 2*t - 1 }), func(t float64) float64 { return 2*t - 1 }, 200, 1e-8},
		// A sinusoid comes out with gain |H(f)|² and no phase shift.
		{"5 Hz", gen(func(t float64) float64 { return math.Sin(2 * math.Pi * 5 * t) }), func(t float64) float64 {
			g := sos.Gain(5, fs)
			return g * g * math.Sin(2*math.Pi*5*t)
		}, 200, 1e-6},
		{"18 Hz (cutoff, gain ½)", gen(func(t float64) float64 { return math.Cos(2 * math.Pi * 18 * t) }), func(t float64) float64 {
			return 0.5 * math.Cos(2*math.Pi*18*t)
		}, 200, 1e-6},
		{"40 Hz (gain 2.4e-4)", gen(func(t float64) float64 { return math.Sin(2 * math.Pi * 40 * t) }), func(t float64) float64 {
			g := sos.Gain(40, fs)
			return g * g * math.Sin(2*math.Pi*40*t)
		}, 200, 1e-6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, err := FiltFilt(sos, tc.x)
			if err != nil {
				t.Fatal(err)
			}
			ref := refFiltFilt(sos, tc.x)
			for i := range y {
				if math.Abs(y[i]-ref[i]) > 1e-12 {
					t.Fatalf("y[%d] = %v, literal sosfiltfilt gives %v", i, y[i], ref[i])
				}
			}
			var worst float64
			for i := tc.margin; i < n-tc.margin; i++ {
				worst = math.Max(worst, math.Abs(y[i]-tc.want(tt[i])))
			}
			if worst > tc.tol {
				t.Errorf("max |y − expected| = %.3g over the interior, want ≤ %g", worst, tc.tol)
			}
		})
	}
	// The 40 Hz gain check is not vacuous: |H(40)|² = 1/(1+(tan(π·40/400)/tan(π·18/400))^12).
	r := math.Tan(math.Pi*40/fs) / math.Tan(math.Pi*18/fs)
	if g := sos.Gain(40, fs); math.Abs(g*g-1/(1+math.Pow(r, 12))) > 1e-15 {
		t.Errorf("|H(40 Hz)|² = %v", g*g)
	}
}

func TestFiltFiltTooShort(t *testing.T) {
	sos, _ := Butter(6, 18, 400)
	for _, n := range []int{0, 1, 21} {
		_, err := FiltFilt(sos, make([]float64, n))
		if !errors.Is(err, ErrTooShort) {
			t.Errorf("n = %d: err = %v, want ErrTooShort", n, err)
		}
	}
	if _, err := FiltFilt(sos, make([]float64, 22)); err != nil {
		t.Errorf("n = 22 (padlen 21 + 1): %v", err)
	}
}

func TestZeroPhaseReuse(t *testing.T) {
	sos, _ := Butter(4, 10, 100)
	zp := NewZeroPhase(sos)
	x := make([]float64, 300)
	for i := range x {
		x[i] = math.Sin(float64(i) / 7)
	}
	want := refFiltFilt(sos, x)
	var dst []float64
	for range 3 {
		var err error
		dst, err = zp.Apply(dst, x)
		if err != nil {
			t.Fatal(err)
		}
	}
	// In place.
	y := append([]float64(nil), x...)
	if _, err := zp.Apply(y, y); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if dst[i] != want[i] || y[i] != want[i] {
			t.Fatalf("sample %d: reused %v, in place %v, want %v", i, dst[i], y[i], want[i])
		}
	}
}

func BenchmarkFiltFilt(b *testing.B) {
	sos, _ := Butter(6, 18, 400)
	x := make([]float64, 10000)
	for i := range x {
		x[i] = math.Sin(float64(i)/9) + 0.1*math.Sin(float64(i))
	}
	zp := NewZeroPhase(sos)
	dst := make([]float64, len(x))
	b.ReportAllocs()
	b.SetBytes(int64(8 * len(x)))
	for b.Loop() {
		var err error
		if dst, err = zp.Apply(dst, x); err != nil {
			b.Fatal(err)
		}
	}
}
