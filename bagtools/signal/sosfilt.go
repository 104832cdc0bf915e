package signal

import (
	"errors"
	"fmt"
)

// ErrTooShort reports a signal too short for zero-phase filtering: it must
// be longer than the padding (SOS.PadLen).
var ErrTooShort = errors.New("signal: input too short")

// Filter applies the cascade to x causally (scipy.signal.sosfilt, direct
// form II transposed) and returns the output in dst, grown as needed; dst
// may be x itself. zi holds each section's two delay-line states: nil
// starts from rest; otherwise it must have one entry per section and is
// updated in place to the final states (sosfilt's zf).
func (s SOS) Filter(dst, x []float64, zi [][2]float64) []float64 {
	dst = grow(dst, len(x))
	var local [][2]float64
	if zi == nil {
		local = make([][2]float64, len(s))
		zi = local
	}
	for i, v := range x {
		for j := range s {
			sec := &s[j]
			st := &zi[j]
			y := sec[0]*v + st[0]
			st[0] = sec[1]*v - sec[4]*y + st[1]
			st[1] = sec[2]*v - sec[5]*y
			v = y
		}
		dst[i] = v
	}
	return dst
}

// Zi returns the initial states for the steady state of a unit step
// (scipy.signal.sosfilt_zi): filtering a constant c from states c·Zi()
// outputs c·H(1) from the first sample on.
func (s SOS) Zi() [][2]float64 {
	zi := make([][2]float64, len(s))
	scale := 1.0
	for i, sec := range s {
		b0, b1, b2, a0, a1, a2 := sec[0], sec[1], sec[2], sec[3], sec[4], sec[5]
		if a0 != 1 {
			b0, b1, b2, a1, a2 = b0/a0, b1/a0, b2/a0, a1/a0, a2/a0
		}
		// lfilter_zi: solve (I − Aᵀ) z = b[1:] − a[1:]·b0 with A the
		// companion matrix of a, i.e. (1+a1) z0 − z1 = B0, a2 z0 + z1 = B1.
		B0 := b1 - a1*b0
		B1 := b2 - a2*b0
		z0 := (B0 + B1) / (1 + a1 + a2)
		zi[i] = [2]float64{scale * z0, scale * (B1 - a2*z0)}
		scale *= (b0 + b1 + b2) / (1 + a1 + a2)
	}
	return zi
}

// PadLen returns the number of samples FiltFilt adds by odd extension at
// each end, scipy's default 3·ntaps with ntaps = 2·len(s)+1, less one for
// each section that is first order in both numerator and denominator.
func (s SOS) PadLen() int {
	ntaps := 2*len(s) + 1
	var nb, na int
	for _, sec := range s {
		if sec[2] == 0 {
			nb++
		}
		if sec[5] == 0 {
			na++
		}
	}
	ntaps -= min(nb, na)
	return 3 * ntaps
}

// FiltFilt filters x forward and backward with zero phase, exactly as
// scipy.signal.sosfiltfilt(s, x) with its defaults: x is extended at both
// ends by PadLen samples of odd extension (2·x[0] − x[k], 2·x[n−1] −
// x[n−1−k]), each pass starts from Zi scaled by its first input sample,
// and the extension is cut off again. The magnitude response is |H|². x
// must be longer than PadLen.
func FiltFilt(s SOS, x []float64) ([]float64, error) {
	return NewZeroPhase(s).Apply(nil, x)
}

// ZeroPhase is a reusable zero-phase filter (FiltFilt) that keeps its
// working buffers between calls, so that filtering many channels of the
// same length allocates nothing after the first. A ZeroPhase is not safe
// for concurrent use.
type ZeroPhase struct {
	sos SOS
	zi  [][2]float64
	st  [][2]float64
	ext []float64
	pad int
}

// NewZeroPhase returns a zero-phase filter for the cascade s.
func NewZeroPhase(s SOS) *ZeroPhase {
	return &ZeroPhase{sos: s, zi: s.Zi(), st: make([][2]float64, len(s)), pad: s.PadLen()}
}

// PadLen returns the odd-extension length; see SOS.PadLen.
func (z *ZeroPhase) PadLen() int { return z.pad }

// Apply filters x forward and backward (see FiltFilt) into dst, grown as
// needed, and returns it; dst may be x itself.
func (z *ZeroPhase) Apply(dst, x []float64) ([]float64, error) {
	n := len(x)
	pad := z.pad
	if n <= pad {
		return dst, fmt.Errorf("%w: %d samples, zero-phase filtering needs more than padlen = %d", ErrTooShort, n, pad)
	}
	if err := z.sos.Validate(); err != nil {
		return dst, err
	}
	m := n + 2*pad
	z.ext = grow(z.ext, m)
	ext := z.ext
	x0, xn := x[0], x[n-1]
	for i := range pad {
		ext[i] = 2*x0 - x[pad-i]
		ext[pad+n+i] = 2*xn - x[n-2-i]
	}
	copy(ext[pad:pad+n], x)

	// Forward pass from the steady state of the first sample.
	for j := range z.st {
		z.st[j] = [2]float64{z.zi[j][0] * ext[0], z.zi[j][1] * ext[0]}
	}
	z.sos.Filter(ext, ext, z.st)
	// Backward pass, in place from the end, from the steady state of the
	// last forward output.
	yl := ext[m-1]
	for j := range z.st {
		z.st[j] = [2]float64{z.zi[j][0] * yl, z.zi[j][1] * yl}
	}
	for i := m - 1; i >= 0; i-- {
		v := ext[i]
		for j := range z.sos {
			sec := &z.sos[j]
			st := &z.st[j]
			y := sec[0]*v + st[0]
			st[0] = sec[1]*v - sec[4]*y + st[1]
			st[1] = sec[2]*v - sec[5]*y
			v = y
		}
		ext[i] = v
	}
	dst = grow(dst, n)
	copy(dst, ext[pad:pad+n])
	return dst, nil
}

// grow returns a slice of length n, reusing buf's storage when it is large
// enough.
func grow(buf []float64, n int) []float64 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float64, n)
}
