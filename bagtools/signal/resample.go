package signal

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/mechanics"
)

// MaxClockLen bounds the ticks of a clock (Clock, Align): 2²⁸, 74 hours
// at 1 kHz and 2 GiB for the times alone. A longer clock does not come
// from a robot log but from a corrupt time value (1e300 s, a zero stamp
// among Unix times, a time column in the wrong unit).
const MaxClockLen = 1 << 28

// clockLen returns the number of ticks of Clock(start, end, rate) as a
// float64: +Inf or NaN where the span overflows.
func clockLen(start, end, rate float64) float64 {
	return math.Floor((end-start)*rate+1e-9) + 1
}

// Clock returns the uniform clock start, start+1/rate, … up to and including
// end (within 1e-9 of a period, the last tick then pinned to end). Times
// are computed as start + k/rate, never by accumulation, so long clocks do
// not drift. It returns nil when rate is not positive, end precedes start
// or the clock would have more than MaxClockLen ticks.
func Clock(start, end, rate float64) []float64 {
	if !(rate > 0) || !(end >= start) || math.IsInf(end-start, 0) {
		return nil
	}
	f := clockLen(start, end, rate)
	if !(f <= MaxClockLen) {
		return nil
	}
	n := int(f)
	t := make([]float64, n)
	for k := range t {
		t[k] = start + float64(k)/rate
	}
	// The tolerance above admits a last tick a rounding error past end;
	// pin it to end so that it stays inside the data.
	t[n-1] = math.Min(t[n-1], end)
	return t
}

// Interp selects how a stream is interpolated between its samples.
type Interp int

// Interpolation methods.
const (
	// Linear interpolates every component linearly (Euclidean coordinates).
	Linear Interp = iota
	// Slerp interpolates unit quaternions stored as (w, x, y, z) along the
	// shorter great arc; inputs are normalised first.
	Slerp
	// Hold keeps the latest sample at or before the query time (zero-order
	// hold), as for commands that stay in force until the next one.
	Hold
)

// String returns the method's name.
func (m Interp) String() string {
	switch m {
	case Linear:
		return "linear"
	case Slerp:
		return "slerp"
	case Hold:
		return "hold"
	}
	return fmt.Sprintf("Interp(%d)", int(m))
}

// HoldTolerance is how far after a query time a sample may lie and still
// count as at that time for Hold: clock ticks computed as start + k/rate
// and logged times that are meant to coincide differ by rounding, and a
// hold must not fall back a whole sample for it.
const HoldTolerance = 1e-6 // seconds

// Resample interpolates the samples (t, x) of a signal of the given width
// (x row-major, len(x) = len(t)·width) at the query times tq and returns
// the len(tq)·width values in dst, grown as needed. t must be
// non-decreasing and tq increasing. Query times outside [t[0], t[n−1]] get
// NaN. With Slerp the width must be 4 and rows are (w, x, y, z)
// quaternions; a row whose norm is zero or not finite yields NaN.
func Resample(dst []float64, t, x []float64, width int, tq []float64, m Interp) ([]float64, error) {
	if width < 1 || len(x) != len(t)*width {
		return dst, fmt.Errorf("signal: resample: %d values for %d samples of width %d", len(x), len(t), width)
	}
	if m == Slerp && width != 4 {
		return dst, fmt.Errorf("signal: resample: slerp needs width 4 (w, x, y, z), got %d", width)
	}
	dst = grow(dst, len(tq)*width)
	n := len(t)
	var eps float64
	if m == Hold {
		eps = HoldTolerance
	}
	j := 0 // first index with t[j] > tq (+ eps)
	for k, tk := range tq {
		out := dst[k*width : (k+1)*width]
		for j < n && t[j] <= tk+eps {
			j++
		}
		i := j - 1
		switch {
		case n == 0 || i < 0 || (j >= n && tk > t[n-1]):
			fill(out, math.NaN())
			continue
		case m == Hold || j >= n || t[i] == tk:
			copy(out, x[i*width:(i+1)*width])
			if m == Slerp {
				normalizeQuat(out)
			}
			continue
		}
		a := x[i*width : (i+1)*width]
		b := x[j*width : (j+1)*width]
		u := (tk - t[i]) / (t[j] - t[i])
		if m == Slerp {
			slerpRow(out, a, b, u)
			continue
		}
		for c := range width {
			out[c] = a[c] + u*(b[c]-a[c])
		}
	}
	return dst, nil
}

func fill(v []float64, x float64) {
	for i := range v {
		v[i] = x
	}
}

// normalizeQuat scales a (w, x, y, z) row to unit norm, or fills it with
// NaN when its norm is zero or not finite.
func normalizeQuat(q []float64) {
	n := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
	if !(n > 0) || math.IsInf(n, 0) {
		fill(q, math.NaN())
		return
	}
	for i := range q {
		q[i] /= n
	}
}

func slerpRow(out, a, b []float64, u float64) {
	qa, err1 := mechanics.Quat{W: a[0], X: a[1], Y: a[2], Z: a[3]}.Normalized()
	qb, err2 := mechanics.Quat{W: b[0], X: b[1], Y: b[2], Z: b[3]}.Normalized()
	if err1 != nil || err2 != nil {
		fill(out, math.NaN())
		return
	}
	q := mechanics.Slerp(qa, qb, u)
	out[0], out[1], out[2], out[3] = q.W, q.X, q.Y, q.Z
}

// Downsample keeps every factor-th row of x (width values per row),
// starting with row offset, and returns them in dst, grown as needed. It
// does not filter: low-pass x first (FiltFilt) to avoid aliasing, or use
// Decimate.
func Downsample(dst, x []float64, width, factor, offset int) ([]float64, error) {
	if width < 1 || factor < 1 || offset < 0 || len(x)%width != 0 {
		return dst, fmt.Errorf("signal: downsample: width %d, factor %d, offset %d for %d values", width, factor, offset, len(x))
	}
	rows := len(x) / width
	if offset >= rows {
		return dst[:0], nil
	}
	n := (rows - offset + factor - 1) / factor
	dst = grow(dst, n*width)
	for k := range n {
		r := offset + k*factor
		copy(dst[k*width:(k+1)*width], x[r*width:(r+1)*width])
	}
	return dst, nil
}

// Decimate reduces the rate of a single-channel signal by an integer factor:
// a zero-phase Butterworth low-pass of the given order with its cutoff at
// 0.8 of the new Nyquist frequency (scipy.signal.decimate's choice, with a
// Butterworth in place of its Chebyshev filter), then every factor-th
// sample from the first. A factor of 1 returns a copy of x.
func Decimate(x []float64, factor, order int) ([]float64, error) {
	if factor < 1 {
		return nil, fmt.Errorf("signal: decimate: factor %d must be at least 1", factor)
	}
	if factor == 1 {
		return append([]float64(nil), x...), nil
	}
	sos, err := Butter(order, 0.8/float64(factor)/2, 1)
	if err != nil {
		return nil, fmt.Errorf("signal: decimate: %w", err)
	}
	y, err := FiltFilt(sos, x)
	if err != nil {
		return nil, fmt.Errorf("signal: decimate: %w", err)
	}
	return Downsample(y[:0:0], y, 1, factor, 0)
}
