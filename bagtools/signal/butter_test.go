package signal

import (
	"errors"
	"math"
	"math/cmplx"
	"strings"
	"testing"
)

// polyMul multiplies polynomials in z⁻¹ given highest power first.
func polyMul(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

// transfer multiplies out the cascade into one numerator and denominator,
// dropping trailing zero coefficients of first-order sections.
func transfer(s SOS) (b, a []float64) {
	b, a = []float64{1}, []float64{1}
	for _, sec := range s {
		bs, as := sec[:3], sec[3:]
		if sec[2] == 0 {
			bs = sec[:2]
		}
		if sec[5] == 0 {
			as = sec[3:5]
		}
		b = polyMul(b, bs)
		a = polyMul(a, as)
	}
	return b, a
}

func TestButterKnownCoefficients(t *testing.T) {
	// Second order, Wn = 0.2: the textbook bilinear-transform formulas with
	// K = tan(π·Wn/2) give b = K²/D·[1, 2, 1], a = [1, 2(K²−1)/D,
	// (1 − √2K + K²)/D], D = 1 + √2K + K²; the rounded numbers are the
	// widely published output of butter(2, 0.2) (MATLAB and scipy).
	K := math.Tan(math.Pi * 0.2 / 2)
	D := 1 + math.Sqrt2*K + K*K
	bw := []float64{K * K / D, 2 * K * K / D, K * K / D}
	aw := []float64{1, 2 * (K*K - 1) / D, (1 - math.Sqrt2*K + K*K) / D}
	// Third order, Wn = 0.2: the published ba form of butter(3, 0.2).
	b3 := []float64{0.0181, 0.0543, 0.0543, 0.0181}
	a3 := []float64{1, -1.7600, 1.1829, -0.2781}
	tests := []struct {
		name     string
		order    int
		fc, fs   float64
		sections int
		b, a     []float64
		tol      float64
	}{
		{"N2 formula", 2, 0.2, 2, 1, bw, aw, 1e-15},
		{"N2 published", 2, 0.2, 2, 1, []float64{0.06745527, 0.13491055, 0.06745527}, []float64{1, -1.1429805, 0.4128016}, 5e-9},
		{"N3 published", 3, 0.2, 2, 2, b3, a3, 5e-5},
		{"N2 in hertz", 2, 20, 200, 1, bw, aw, 1e-15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Butter(tc.order, tc.fc, tc.fs)
			if err != nil {
				t.Fatal(err)
			}
			if len(s) != tc.sections {
				t.Fatalf("%d sections, want %d", len(s), tc.sections)
			}
			b, a := transfer(s)
			for i := range tc.b {
				if math.Abs(b[i]-tc.b[i]) > tc.tol || math.Abs(a[i]-tc.a[i]) > tc.tol {
					t.Fatalf("b = %v a = %v, want %v %v (tol %g)", b, a, tc.b, tc.a, tc.tol)
				}
			}
		})
	}
}

func TestButterOddOrderPairing(t *testing.T) {
	// scipy's zpk2sos(pairing="nearest") pads an odd filter with a pole and
	// a zero at the origin: the real pole p_r = (1−K)/(1+K) gets the zeros
	// {−1, −1} in the first section (with the gain), the complex pair gets
	// {0, −1} in the last: butter(3, 0.2, output="sos") is
	// [[k, 2k, k, 1, −p_r, 0], [1, 1, 0, 1, a1, a2]].
	s, err := Butter(3, 0.2, 2)
	if err != nil {
		t.Fatal(err)
	}
	K := math.Tan(math.Pi * 0.1)
	pr := (1 - K) / (1 + K)
	if s[0][1] != 2*s[0][0] || s[0][2] != s[0][0] || s[0][5] != 0 || math.Abs(s[0][4]+pr) > 1e-15 {
		t.Errorf("first section %v, want [k, 2k, k, 1, %v, 0]", s[0], -pr)
	}
	if s[1][0] != 1 || s[1][1] != 1 || s[1][2] != 0 {
		t.Errorf("last section %v, want numerator [1, 1, 0]", s[1])
	}
	// Analog pair s = ωa·(−½ ± i√3/2), ωa = 4K, mapped by z = (4+s)/(4−s).
	sa := complex(4*K, 0) * complex(-0.5, math.Sqrt(3)/2)
	p := (4 + sa) / (4 - sa)
	if math.Abs(s[1][4]+2*real(p)) > 1e-15 || math.Abs(s[1][5]-real(p*cmplx.Conj(p))) > 1e-15 {
		t.Errorf("last section %v, want a1 = %v, a2 = %v", s[1], -2*real(p), real(p*cmplx.Conj(p)))
	}
	if got := s.PadLen(); got != 12 {
		t.Errorf("PadLen = %d, want 12 (ntaps 2·2+1 less one first-order section, times 3)", got)
	}
}

func TestButterMagnitude(t *testing.T) {
	// The bilinear transform with prewarping maps the analog Butterworth
	// response exactly: |H|² = 1/(1 + (tan(πf/fs)/tan(πfc/fs))^{2N}).
	tests := []struct {
		order  int
		fc, fs float64
	}{
		{1, 10, 100}, {2, 0.2, 2}, {3, 5, 48}, {4, 30, 400}, {5, 1, 7}, {6, 18, 400}, {6, 18, 100}, {8, 100, 1000},
	}
	for _, tc := range tests {
		s, err := Butter(tc.order, tc.fc, tc.fs)
		if err != nil {
			t.Fatal(err)
		}
		if want := (tc.order + 1) / 2; len(s) != want {
			t.Errorf("N=%d: %d sections, want %d", tc.order, len(s), want)
		}
		for _, frac := range []float64{0, 0.01, 0.1, 0.25, 0.4, 0.49} {
			f := frac * tc.fs
			r := math.Tan(math.Pi*f/tc.fs) / math.Tan(math.Pi*tc.fc/tc.fs)
			want := 1 / (1 + math.Pow(r, 2*float64(tc.order)))
			got := s.Gain(f, tc.fs)
			if math.Abs(got*got-want) > 1e-12 {
				t.Errorf("N=%d fc=%g fs=%g: |H(%g Hz)|² = %.15g, want %.15g", tc.order, tc.fc, tc.fs, f, got*got, want)
			}
		}
		if g := s.Gain(tc.fc, tc.fs); math.Abs(g*g-0.5) > 1e-12 {
			t.Errorf("N=%d: |H(fc)|² = %v, want ½", tc.order, g*g)
		}
		if g := s.Gain(tc.fs/2, tc.fs); g > 1e-12 {
			t.Errorf("N=%d: |H(Nyquist)| = %v, want 0", tc.order, g)
		}
		// Poles mapped back to the s-plane lie on the circle of radius
		// ωa = 4·tan(πfc/fs) in the left half plane at the Butterworth angles.
		wa := 4 * math.Tan(math.Pi*tc.fc/tc.fs)
		var found int
		for _, z := range s.Poles() {
			if z == 0 {
				continue // padding pole of an odd-order first section
			}
			found++
			if cmplx.Abs(z) >= 1 {
				t.Errorf("N=%d: pole %v outside the unit circle", tc.order, z)
			}
			sp := 4 * (z - 1) / (z + 1)
			if math.Abs(cmplx.Abs(sp)-wa) > 1e-9*wa || real(sp) >= 0 {
				t.Errorf("N=%d: pole %v maps to s = %v, want |s| = %v in the left half plane", tc.order, z, sp, wa)
			}
			// angle from the negative real axis is a multiple of π/(2N) with
			// the parity of N−1.
			k := math.Abs(cmplx.Phase(-sp)) / (math.Pi / float64(2*tc.order))
			if math.Abs(k-math.Round(k)) > 1e-6 || int(math.Round(k))%2 != (tc.order-1)%2 {
				t.Errorf("N=%d: pole angle %v·π/2N is not a Butterworth angle", tc.order, k)
			}
		}
		if found != tc.order {
			t.Errorf("N=%d: %d poles, want %d", tc.order, found, tc.order)
		}
	}
}

func TestButterErrors(t *testing.T) {
	tests := []struct {
		name      string
		order     int
		fc, fs    float64
		wantInMsg string
	}{
		{"zero order", 0, 1, 10, "order 0"},
		{"too high order", MaxButterOrder + 1, 1, 10, "order"},
		{"cutoff at Nyquist", 2, 5, 10, "Nyquist"},
		{"negative cutoff", 2, -1, 10, "cutoff"},
		{"bad rate", 2, 1, math.NaN(), "sample rate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Butter(tc.order, tc.fc, tc.fs)
			if !errors.Is(err, ErrDesign) {
				t.Fatalf("err = %v, want ErrDesign", err)
			}
			if !strings.Contains(err.Error(), tc.wantInMsg) {
				t.Errorf("err = %q, want it to mention %q", err, tc.wantInMsg)
			}
		})
	}
}

func BenchmarkButter(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Butter(6, 18, 400); err != nil {
			b.Fatal(err)
		}
	}
}
