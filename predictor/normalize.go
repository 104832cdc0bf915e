package predictor

import (
	"fmt"
	"math"
)

// Normalization is the base–fibre symplectic normalisation of Eq. 26: for
// every canonical pair k with base b_k and fibre ζ_k,
//
//	b̃_k = (b_k − Mu_k) / Scale_k,   ζ̃_k = Scale_k · ζ_k,
//
// which preserves db∧dζ and therefore the canonical form. Mu and Scale hold d
// values each, indexed by pair.
type Normalization struct {
	Mu    []float64 `json:"mu"`
	Scale []float64 `json:"scale"`
}

// IdentityNormalization returns the normalisation that changes nothing.
func IdentityNormalization(l Layout) Normalization {
	d := l.D()
	nz := Normalization{Mu: make([]float64, d), Scale: make([]float64, d)}
	for i := range nz.Scale {
		nz.Scale[i] = 1
	}
	return nz
}

// Validate checks the normalisation against a layout: d finite means and
// finite positive scales.
func (nz Normalization) Validate(l Layout) error {
	d := l.D()
	if len(nz.Mu) != d || len(nz.Scale) != d {
		return fmt.Errorf("%w: normalisation has %d means and %d scales, layout needs %d", ErrLayout, len(nz.Mu), len(nz.Scale), d)
	}
	for k := range d {
		if math.IsNaN(nz.Mu[k]) || math.IsInf(nz.Mu[k], 0) {
			return fmt.Errorf("predictor: normalisation mean %d is %v", k, nz.Mu[k])
		}
		if !(nz.Scale[k] > 0) || math.IsInf(nz.Scale[k], 0) {
			return fmt.Errorf("predictor: normalisation scale %d is %v, need a finite positive value", k, nz.Scale[k])
		}
	}
	return nil
}

// Apply maps a lifted state z to normalised coordinates in place.
func (nz Normalization) Apply(l Layout, z []float64) {
	d := l.D()
	for k := range d {
		s, mu := nz.Scale[k], nz.Mu[k]
		if l.PairBaseInP(k) {
			z[d+k] = (z[d+k] - mu) / s
			z[k] *= s
		} else {
			z[k] = (z[k] - mu) / s
			z[d+k] *= s
		}
	}
}

// Invert maps normalised coordinates back to lifted coordinates in place.
func (nz Normalization) Invert(l Layout, z []float64) {
	d := l.D()
	for k := range d {
		s, mu := nz.Scale[k], nz.Mu[k]
		if l.PairBaseInP(k) {
			z[d+k] = z[d+k]*s + mu
			z[k] /= s
		} else {
			z[k] = z[k]*s + mu
			z[d+k] /= s
		}
	}
}

// Diag returns the diagonal of the Jacobian of Apply (2d values).
func (nz Normalization) Diag(l Layout) []float64 {
	d := l.D()
	j := make([]float64, 2*d)
	for k := range d {
		s := nz.Scale[k]
		if l.PairBaseInP(k) {
			j[d+k], j[k] = 1/s, s
		} else {
			j[k], j[d+k] = 1/s, s
		}
	}
	return j
}
