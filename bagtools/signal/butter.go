package signal

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
)

// ErrDesign reports filter parameters that describe no filter.
var ErrDesign = errors.New("signal: invalid filter design")

// Section is one second-order section (b0, b1, b2, a0, a1, a2) of a digital
// filter, H(z) = (b0 + b1 z⁻¹ + b2 z⁻²) / (a0 + a1 z⁻¹ + a2 z⁻²). Sections
// used for filtering have a0 = 1.
type Section [6]float64

// SOS is a cascade of second-order sections, applied first to last, in the
// layout of scipy.signal's sos arrays.
type SOS []Section

// MaxButterOrder is the highest Butterworth order Butter designs.
const MaxButterOrder = 32

// Butter designs a digital Butterworth low-pass filter of the given order
// with its −3 dB point at cutoff hertz for a signal sampled at fs hertz,
// returned as second-order sections. It reproduces
// scipy.signal.butter(order, cutoff, fs=fs, output="sos"): the analog
// prototype's poles −exp(iπm/2N), m = −N+1, −N+3, …, N−1, are scaled to the
// prewarped cutoff 4·tan(π·Wn/2) (Wn = 2·cutoff/fs), mapped by the bilinear
// transform with fs = 2, and paired into sections with scipy's "nearest"
// rule (the pole pair nearest the unit circle goes into the last section;
// the gain goes into the first).
//
// The squared magnitude response is exactly
//
//	|H(e^{iω})|² = 1 / (1 + (tan(ω/2) / tan(ωc/2))^{2N}),  ω = 2πf/fs.
func Butter(order int, cutoff, fs float64) (SOS, error) {
	if order < 1 || order > MaxButterOrder {
		return nil, fmt.Errorf("%w: Butterworth order %d outside [1, %d]", ErrDesign, order, MaxButterOrder)
	}
	if !(fs > 0) || math.IsInf(fs, 0) {
		return nil, fmt.Errorf("%w: sample rate %g Hz must be positive and finite", ErrDesign, fs)
	}
	if !(cutoff > 0 && cutoff < fs/2) {
		return nil, fmt.Errorf("%w: cutoff %g Hz must lie strictly between 0 and the Nyquist frequency %g Hz", ErrDesign, cutoff, fs/2)
	}
	wn := 2 * cutoff / fs
	const fs2 = 4.0 // 2·fs with scipy's normalised fs = 2
	warped := fs2 * math.Tan(math.Pi*wn/2)

	// Analog prototype (scipy buttap), scaled to the warped cutoff (lp2lp_zpk).
	n := order
	pa := make([]complex128, n)
	for k := range n {
		m := float64(-n + 1 + 2*k)
		pa[k] = -cmplx.Exp(complex(0, math.Pi*m/float64(2*n))) * complex(warped, 0)
	}
	gain := math.Pow(warped, float64(n))

	// Bilinear transform (bilinear_zpk): zeros at −1, poles (fs2+p)/(fs2−p).
	pz := make([]complex128, n)
	den := complex(1, 0)
	for k, p := range pa {
		pz[k] = (complex(fs2, 0) + p) / (complex(fs2, 0) - p)
		den *= complex(fs2, 0) - p
	}
	gain = gain * real(1/den)
	zz := make([]complex128, n)
	for k := range zz {
		zz[k] = -1
	}
	return zpk2sos(zz, pz, gain), nil
}

// zpk2sos pairs zeros and poles into sections following
// scipy.signal.zpk2sos with pairing="nearest" for a digital filter with as
// many zeros as poles.
func zpk2sos(z, p []complex128, k float64) SOS {
	nSections := (len(p) + 1) / 2
	if len(p)%2 == 1 {
		p = append(p, 0)
		z = append(z, 0)
	}
	z = cplxreal(z)
	p = cplxreal(p)
	isReal := func(c complex128) bool { return imag(c) == 0 }
	worst := func(list []complex128, idx []int) int {
		best, bi := math.Inf(1), -1
		for _, i := range idx {
			d := math.Abs(1 - cmplx.Abs(list[i]))
			if d < best {
				best, bi = d, i
			}
		}
		return bi
	}
	all := func(list []complex128) []int {
		idx := make([]int, len(list))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	realIdx := func(list []complex128) []int {
		var idx []int
		for i, c := range list {
			if isReal(c) {
				idx = append(idx, i)
			}
		}
		return idx
	}
	// nearest returns the index of the element of list closest to to,
	// restricted to real ("real"), complex ("complex") or any elements;
	// ties go to the first, as numpy's stable argsort of equal distances.
	nearest := func(list []complex128, to complex128, which string) int {
		best, bi := math.Inf(1), -1
		for i, c := range list {
			if (which == "real" && !isReal(c)) || (which == "complex" && isReal(c)) {
				continue
			}
			if d := cmplx.Abs(c - to); d < best {
				best, bi = d, i
			}
		}
		return bi
	}
	sos := make(SOS, nSections)
	for si := nSections - 1; si >= 0; si-- {
		i1 := worst(p, all(p))
		p1 := p[i1]
		p = slices.Delete(p, i1, i1+1)
		nRealP := len(realIdx(p))
		nRealZ := len(realIdx(z))
		switch {
		case isReal(p1) && nRealP == 0:
			// Last remaining real pole.
			j := nearest(z, p1, "real")
			z1 := z[j]
			z = slices.Delete(z, j, j+1)
			sos[si] = singleSection([]complex128{z1, 0}, []complex128{p1, 0})
		case len(p)+1 == len(z) && !isReal(p1) && nRealP == 1 && nRealZ == 1:
			// One real pole and one real zero left: pair with a complex zero.
			j := nearest(z, p1, "complex")
			z1 := z[j]
			z = slices.Delete(z, j, j+1)
			sos[si] = singleSection([]complex128{z1, cmplx.Conj(z1)}, []complex128{p1, cmplx.Conj(p1)})
		default:
			var p2 complex128
			if isReal(p1) {
				i2 := worst(p, realIdx(p))
				p2 = p[i2]
				p = slices.Delete(p, i2, i2+1)
			} else {
				p2 = cmplx.Conj(p1)
			}
			if len(z) == 0 {
				sos[si] = singleSection(nil, []complex128{p1, p2})
				continue
			}
			j := nearest(z, p1, "any")
			z1 := z[j]
			z = slices.Delete(z, j, j+1)
			switch {
			case !isReal(z1):
				sos[si] = singleSection([]complex128{z1, cmplx.Conj(z1)}, []complex128{p1, p2})
			case len(z) > 0:
				j2 := nearest(z, p1, "real")
				z2 := z[j2]
				z = slices.Delete(z, j2, j2+1)
				sos[si] = singleSection([]complex128{z1, z2}, []complex128{p1, p2})
			default:
				sos[si] = singleSection([]complex128{z1}, []complex128{p1, p2})
			}
		}
	}
	for j := range 3 {
		sos[0][j] *= k
	}
	return sos
}

// cplxreal returns the real elements (imaginary part exactly zero) and one
// element (positive imaginary part) of each conjugate pair, complex ones
// first sorted by real part, then the reals sorted, like scipy's _cplxreal
// for the exactly conjugate roots that Butter produces.
func cplxreal(z []complex128) []complex128 {
	var zc []complex128
	var zr []float64
	for _, c := range z {
		switch {
		case imag(c) == 0:
			zr = append(zr, real(c))
		case imag(c) > 0:
			zc = append(zc, c)
		}
	}
	slices.SortStableFunc(zc, func(a, b complex128) int {
		if real(a) != real(b) {
			if real(a) < real(b) {
				return -1
			}
			return 1
		}
		switch {
		case imag(a) < imag(b):
			return -1
		case imag(a) > imag(b):
			return 1
		}
		return 0
	})
	slices.Sort(zr)
	out := make([]complex128, 0, len(zc)+len(zr))
	out = append(out, zc...)
	for _, r := range zr {
		out = append(out, complex(r, 0))
	}
	return out
}

// singleSection returns the section with the given (at most two) zeros and
// two poles and unit gain (scipy's _single_zpksos).
func singleSection(z, p []complex128) Section {
	var s Section
	b := poly(z)
	a := poly(p)
	copy(s[3-len(b):3], b)
	copy(s[6-len(a):6], a)
	return s
}

// poly returns the real coefficients of the monic polynomial with the given
// roots, highest power first (numpy.poly).
func poly(roots []complex128) []float64 {
	c := []complex128{1}
	for _, r := range roots {
		next := make([]complex128, len(c)+1)
		for i, v := range c {
			next[i] += v
			next[i+1] -= v * r
		}
		c = next
	}
	out := make([]float64, len(c))
	for i, v := range c {
		out[i] = real(v)
	}
	return out
}

// Validate reports sections that cannot be filtered with: an empty cascade,
// a0 ≠ 1, or non-finite coefficients.
func (s SOS) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("%w: no sections", ErrDesign)
	}
	for i, sec := range s {
		for _, v := range sec {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: section %d has a non-finite coefficient %v", ErrDesign, i, sec)
			}
		}
		if sec[3] != 1 {
			return fmt.Errorf("%w: section %d has a0 = %g, want 1", ErrDesign, i, sec[3])
		}
	}
	return nil
}

// Response returns the complex frequency response H(e^{iω}) of the cascade
// at frequency f hertz for sample rate fs, ω = 2πf/fs.
func (s SOS) Response(f, fs float64) complex128 {
	w := 2 * math.Pi * f / fs
	z1 := cmplx.Exp(complex(0, -w))
	z2 := z1 * z1
	h := complex(1, 0)
	for _, sec := range s {
		num := complex(sec[0], 0) + complex(sec[1], 0)*z1 + complex(sec[2], 0)*z2
		den := complex(sec[3], 0) + complex(sec[4], 0)*z1 + complex(sec[5], 0)*z2
		h *= num / den
	}
	return h
}

// Gain returns |H(e^{iω})|, the magnitude response at f hertz for sample
// rate fs.
func (s SOS) Gain(f, fs float64) float64 { return cmplx.Abs(s.Response(f, fs)) }

// Poles returns the poles of the cascade: the roots of every section's
// denominator (two per section, a zero root for a first-order section).
func (s SOS) Poles() []complex128 {
	out := make([]complex128, 0, 2*len(s))
	for _, sec := range s {
		a0, a1, a2 := sec[3], sec[4], sec[5]
		disc := cmplx.Sqrt(complex(a1*a1-4*a0*a2, 0))
		out = append(out, (complex(-a1, 0)+disc)/complex(2*a0, 0), (complex(-a1, 0)-disc)/complex(2*a0, 0))
	}
	return out
}
