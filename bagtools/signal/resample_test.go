package signal

import (
	"errors"
	"math"
	"testing"

	"github.com/calisym/calisym/mechanics"
)

func TestClock(t *testing.T) {
	tests := []struct {
		start, end, rate float64
		n                int
	}{
		{0, 1, 100, 101}, {0, 0.999, 100, 100}, {2, 2, 10, 1}, {0, 58.59, 100, 5860}, {0, 1, 0, 0}, {1, 0, 10, 0},
		// Absurd spans (a corrupt time value) give no clock rather than
		// a panic or an allocation of every byte there is.
		{0, 1e300, 500, 0}, {-1e300, 1e300, 1, 0}, {0, math.MaxFloat64, 1e3, 0},
		{0, float64(MaxClockLen) / 1000, 1000, 0}, // one tick too many
	}
	for _, tc := range tests {
		c := Clock(tc.start, tc.end, tc.rate)
		if len(c) != tc.n {
			t.Errorf("Clock(%g, %g, %g) has %d ticks, want %d", tc.start, tc.end, tc.rate, len(c), tc.n)
		}
		if len(c) > 0 && (c[0] != tc.start || c[len(c)-1] != tc.start+float64(len(c)-1)/tc.rate) {
			t.Errorf("Clock(%g, %g, %g) = [%v … %v]", tc.start, tc.end, tc.rate, c[0], c[len(c)-1])
		}
	}
}

func TestResampleLinearAndHold(t *testing.T) {
	// Irregular samples of the line (3t + 1, −t).
	ts := []float64{0, 0.013, 0.02, 0.041, 0.05, 0.0777, 0.1}
	x := make([]float64, 0, 2*len(ts))
	for _, v := range ts {
		x = append(x, 3*v+1, -v)
	}
	tq := []float64{-0.01, 0, 0.005, 0.02, 0.03, 0.09, 0.1, 0.11}
	lin, err := Resample(nil, ts, x, 2, tq, Linear)
	if err != nil {
		t.Fatal(err)
	}
	hold, err := Resample(nil, ts, x, 2, tq, Hold)
	if err != nil {
		t.Fatal(err)
	}
	for k, q := range tq {
		if q < 0 || q > 0.1 {
			if !math.IsNaN(lin[2*k]) || !math.IsNaN(hold[2*k]) {
				t.Errorf("t = %v outside the samples: %v %v, want NaN", q, lin[2*k], hold[2*k])
			}
			continue
		}
		if math.Abs(lin[2*k]-(3*q+1)) > 1e-14 || math.Abs(lin[2*k+1]+q) > 1e-14 {
			t.Errorf("linear at %v = %v, want (%v, %v)", q, lin[2*k:2*k+2], 3*q+1, -q)
		}
		// hold: latest sample at or before q
		var last float64
		for _, v := range ts {
			if v <= q {
				last = v
			}
		}
		if hold[2*k] != 3*last+1 {
			t.Errorf("hold at %v = %v, want the sample at %v", q, hold[2*k], last)
		}
	}
	if _, err := Resample(nil, ts, x[:5], 2, tq, Linear); err == nil {
		t.Error("ragged values accepted")
	}
}

func TestResampleSlerp(t *testing.T) {
	// Rotation about a fixed axis at a constant rate: slerp reproduces the
	// angle exactly between samples, also across the q/−q sign flip and
	// for non-unit inputs (|q| = 1.014, as in real logs).
	axis := mechanics.Vec3{1, 2, 2}.Scale(1.0 / 3)
	rate := 2.0 // rad/s, so that |ω·t| < π over the samples
	ts := []float64{0, 0.1, 0.25, 0.4, 1.3}
	var q []float64
	for i, v := range ts {
		r := mechanics.QuatFromRotationVector(axis.Scale(rate * v))
		s := 1.014
		if i%2 == 1 {
			s = -0.99 // same rotation, other hemisphere
		}
		q = append(q, s*r.W, s*r.X, s*r.Y, s*r.Z)
	}
	tq := Clock(0, 1.3, 20)
	out, err := Resample(nil, ts, q, 4, tq, Slerp)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range tq {
		got := mechanics.Quat{W: out[4*k], X: out[4*k+1], Y: out[4*k+2], Z: out[4*k+3]}
		if math.Abs(got.Norm()-1) > 1e-14 {
			t.Fatalf("t=%v: |q| = %v", v, got.Norm())
		}
		w := mechanics.LogSO3(got.Rotation())
		want := axis.Scale(rate * v)
		if w.Sub(want).Norm() > 1e-12 {
			t.Errorf("t=%v: rotation vector %v, want %v", v, w, want)
		}
	}
	if _, err := Resample(nil, ts, q[:12], 3, tq[:1], Slerp); err == nil {
		t.Error("slerp with width 3 accepted")
	}
}

func TestDownsampleAndDecimate(t *testing.T) {
	x := []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}
	got, err := Downsample(nil, x, 2, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1, 4, 4}
	if len(got) != len(want) {
		t.Fatalf("Downsample = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Downsample = %v, want %v", got, want)
		}
	}
	// 400 → 100 Hz: a 3 Hz sine survives (gain > 0.999 at 3 Hz for an
	// 8th-order filter at 40 Hz), a 120 Hz tone is removed before it
	// could alias to 20 Hz.
	n := 4000
	sig := make([]float64, n)
	for i := range sig {
		tt := float64(i) / 400
		sig[i] = math.Sin(2*math.Pi*3*tt) + 0.5*math.Sin(2*math.Pi*120*tt)
	}
	y, err := Decimate(sig, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(y) != n/4 {
		t.Fatalf("%d samples, want %d", len(y), n/4)
	}
	var worst float64
	for k := 50; k < len(y)-50; k++ {
		worst = math.Max(worst, math.Abs(y[k]-math.Sin(2*math.Pi*3*float64(k)/100)))
	}
	if worst > 2e-3 {
		t.Errorf("decimated 3 Hz sine off by %.3g", worst)
	}
	if _, err := Decimate(sig, 0, 8); err == nil {
		t.Error("factor 0 accepted")
	}
}

func TestAlign(t *testing.T) {
	f := func(t float64) float64 { return math.Sin(2*t) + 0.5*t }
	// Stream a: 100 Hz with jitter; stream b: 33 Hz, out of order, with a
	// duplicate and a 0.3 s dropout; stream c: quaternion at 50 Hz.
	var a, b Stream
	a = Stream{Name: "a", Width: 1}
	for k := range 400 {
		tk := float64(k)/100 + 0.002*math.Sin(float64(k))
		a.Time = append(a.Time, tk)
		a.Values = append(a.Values, f(tk))
	}
	b = Stream{Name: "b", Width: 2, Interp: Linear}
	for k := 132; k >= 1; k-- {
		tk := float64(k) / 33
		if tk > 2 && tk < 2.3 {
			continue
		}
		b.Time = append(b.Time, tk)
		b.Values = append(b.Values, tk, -tk)
	}
	b.Time = append(b.Time, 1)
	b.Values = append(b.Values, 1, -1)
	c := Stream{Name: "c", Width: 4, Interp: Slerp}
	for k := range 200 {
		tk := float64(k) / 50
		q := mechanics.QuatFromRotationVector(mechanics.Vec3{0, 0, tk})
		c.Time = append(c.Time, tk)
		c.Values = append(c.Values, q.W, q.X, q.Y, q.Z)
	}
	al, err := Align([]Stream{a, b, c}, AlignOptions{Rate: 40, MaxGap: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	// Span: latest start (b: 1/33 s) to earliest end (c: 3.98 s).
	if al.Time[0] != 1.0/33 || al.Time[len(al.Time)-1] > 3.98 {
		t.Fatalf("clock [%v, %v], want [1/33, ≤ 3.98]", al.Time[0], al.Time[len(al.Time)-1])
	}
	if len(al.Gaps) != 1 || al.Gaps[0].Stream != "b" || al.Gaps[0].From > 2 || al.Gaps[0].To < 2.3 {
		t.Fatalf("gaps %+v, want one in b around (2, 2.3)", al.Gaps)
	}
	for k, tk := range al.Time {
		inGap := tk > al.Gaps[0].From && tk < al.Gaps[0].To
		if al.Valid[k] == inGap {
			t.Errorf("t=%v: valid %v, gap %v", tk, al.Valid[k], inGap)
		}
		if math.Abs(al.Values[0][k]-f(tk)) > 2e-3 {
			t.Errorf("t=%v: a = %v, want %v", tk, al.Values[0][k], f(tk))
		}
		if math.Abs(al.Values[1][2*k]-tk) > 1e-12 || math.Abs(al.Values[1][2*k+1]+tk) > 1e-12 {
			t.Errorf("t=%v: b = %v", tk, al.Values[1][2*k:2*k+2])
		}
		if yaw := 2 * math.Atan2(al.Values[2][4*k+3], al.Values[2][4*k]); math.Abs(yaw-tk) > 1e-12 {
			t.Errorf("t=%v: c yaw = %v", tk, yaw)
		}
	}
}

func TestAlignErrors(t *testing.T) {
	one := Stream{Name: "x", Time: []float64{0, 1}, Values: []float64{0, 1}, Width: 1}
	late := Stream{Name: "y", Time: []float64{2, 3}, Values: []float64{0, 1}, Width: 1}
	tests := []struct {
		name    string
		streams []Stream
		opt     AlignOptions
	}{
		{"no streams", nil, AlignOptions{Rate: 10}},
		{"no rate", []Stream{one}, AlignOptions{}},
		{"no overlap", []Stream{one, late}, AlignOptions{Rate: 10}},
		{"ragged", []Stream{{Name: "z", Time: []float64{0, 1}, Values: []float64{0}, Width: 1}}, AlignOptions{Rate: 10}},
		{"empty", []Stream{{Name: "z", Width: 1}}, AlignOptions{Rate: 10}},
		{"NaN time", []Stream{{Name: "z", Time: []float64{0, math.NaN()}, Values: []float64{0, 1}, Width: 1}}, AlignOptions{Rate: 10}},
		// The garbage rows of a real log (UR10e, ur-20_02_19_15harm50secLoad.csv
		// lines 2–10) are stamped -0.12 s … 2.7e154 s: an error, not a
		// clock of 1e156 samples.
		{"corrupt time", []Stream{{Name: "z", Time: []float64{-0.1231, 2.68e154, 3048.059, 3048.069}, Values: []float64{0, 1, 2, 3}, Width: 1}}, AlignOptions{Rate: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Align(tc.streams, tc.opt); !errors.Is(err, ErrAlign) {
				t.Errorf("err = %v, want ErrAlign", err)
			}
		})
	}
}

// TestAlignAbsurdSpan: a corrupt time value (1e300 s among times of a few
// seconds) would need a clock longer than memory; Align reports it as
// ErrClockLength instead of panicking in Clock (makeslice).
func TestAlignAbsurdSpan(t *testing.T) {
	corrupt := Stream{Name: "time", Time: []float64{0, 0.01, 1e300, 0.02}, Values: []float64{0, 1, 2, 3}, Width: 1}
	for _, tc := range []struct {
		name    string
		streams []Stream
		opt     AlignOptions
	}{
		{"corrupt sample", []Stream{corrupt, corrupt}, AlignOptions{Rate: 500}},
		{"bounds", []Stream{{Name: "x", Time: []float64{0, 1}, Values: []float64{0, 1}, Width: 1}}, AlignOptions{Rate: 500, Start: -1e12, End: 1e12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Align(tc.streams, tc.opt)
			if !errors.Is(err, ErrAlign) || !errors.Is(err, ErrClockLength) {
				t.Fatalf("err = %v, want ErrAlign and ErrClockLength", err)
			}
			t.Log(err)
		})
	}
}

func BenchmarkResampleLinear(b *testing.B) {
	n := 5000
	ts := make([]float64, n)
	x := make([]float64, 3*n)
	for i := range ts {
		ts[i] = float64(i)*0.002 + 0.0003*math.Sin(float64(i))
		x[3*i], x[3*i+1], x[3*i+2] = math.Sin(ts[i]), math.Cos(ts[i]), ts[i]
	}
	tq := Clock(ts[0], ts[n-1], 400)
	dst := make([]float64, 3*len(tq))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = Resample(dst, ts, x, 3, tq, Linear); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResampleSlerp(b *testing.B) {
	n := 5000
	ts := make([]float64, n)
	x := make([]float64, 4*n)
	for i := range ts {
		ts[i] = float64(i) * 0.01
		q := mechanics.QuatFromRotationVector(mechanics.Vec3{0.1 * ts[i], 0.2, ts[i]})
		x[4*i], x[4*i+1], x[4*i+2], x[4*i+3] = q.W, q.X, q.Y, q.Z
	}
	tq := Clock(0, ts[n-1], 100)
	dst := make([]float64, 4*len(tq))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = Resample(dst, ts, x, 4, tq, Slerp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAlign(b *testing.B) {
	var streams []Stream
	for s := range 8 {
		st := Stream{Name: "s", Width: 1}
		for i := range 5000 {
			tk := float64(i)*0.002 + 0.0001*float64(s)
			st.Time = append(st.Time, tk)
			st.Values = append(st.Values, math.Sin(tk))
		}
		streams = append(streams, st)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Align(streams, AlignOptions{Rate: 500, MaxGap: 0.01}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHoldToleratesClockRounding(t *testing.T) {
	// Logged times accumulated in steps of 0.01 drift below k/100 by
	// rounding; a hold on the clock start + k/100 must still pick sample k.
	n := 3000
	ts := make([]float64, n)
	x := make([]float64, n)
	acc := -9.8e-16
	for i := range ts {
		ts[i] = acc
		x[i] = float64(i)
		acc += 0.01
	}
	clock := Clock(ts[0], ts[n-1], 100)
	y, err := Resample(nil, ts, x, 1, clock, Hold)
	if err != nil {
		t.Fatal(err)
	}
	for k := range clock {
		if y[k] != float64(k) {
			t.Fatalf("tick %d (t=%.17g, sample at %.17g): held sample %v", k, clock[k], ts[k], y[k])
		}
	}
}
