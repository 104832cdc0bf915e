package predictor

import (
	"fmt"
	"math"
)

// Spline describes uniform cubic B-splines on [Lo, Hi] with Intervals
// intervals. The knot vector is extended by three knots on each side, so there
// are Intervals+3 basis functions, they sum to one on [Lo, Hi] and fade to zero
// over three intervals outside it.
type Spline struct {
	Intervals int     `json:"intervals"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
}

// NumBasis returns the number of basis functions per dimension.
func (s Spline) NumBasis() int { return s.Intervals + 3 }

// Validate checks the spline grid.
func (s Spline) Validate() error {
	if s.Intervals < 1 || !(s.Hi > s.Lo) || math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) {
		return fmt.Errorf("predictor: invalid spline grid: %d intervals on [%v, %v]", s.Intervals, s.Lo, s.Hi)
	}
	return nil
}

// Eval computes the four possibly non-zero basis functions at x and their
// first and second derivatives. Basis function first+i (i = 0..3) has value
// b[i]; entries whose index lies outside [0, NumBasis) are zero. ok is false
// when x lies outside the support of every basis function.
func (s Spline) Eval(x float64, b, db, d2b *[4]float64) (first int, ok bool) {
	h := (s.Hi - s.Lo) / float64(s.Intervals)
	t := (x - s.Lo) / h
	if !(t >= -3) || !(t < float64(s.Intervals)+3) { // also rejects NaN
		*b, *db, *d2b = [4]float64{}, [4]float64{}, [4]float64{}
		return 0, false
	}
	k := math.Floor(t)
	u := t - k
	ki := int(k)
	u2 := u * u
	u3 := u2 * u
	v := 1 - u
	b[0] = v * v * v / 6
	b[1] = (3*u3 - 6*u2 + 4) / 6
	b[2] = (-3*u3 + 3*u2 + 3*u + 1) / 6
	b[3] = u3 / 6
	ih := 1 / h
	db[0] = -v * v / 2 * ih
	db[1] = (3*u2 - 4*u) / 2 * ih
	db[2] = (-3*u2 + 2*u + 1) / 2 * ih
	db[3] = u2 / 2 * ih
	ih2 := ih * ih
	d2b[0] = v * ih2
	d2b[1] = (3*u - 2) * ih2
	d2b[2] = (1 - 3*u) * ih2
	d2b[3] = u * ih2
	nb := s.NumBasis()
	for i := range 4 {
		if j := ki + i; j < 0 || j >= nb {
			b[i], db[i], d2b[i] = 0, 0, 0
		}
	}
	return ki, true
}

// Basis returns all NumBasis basis values at x (for tests and plots).
func (s Spline) Basis(x float64) []float64 {
	out := make([]float64, s.NumBasis())
	var b, db, d2b [4]float64
	first, ok := s.Eval(x, &b, &db, &d2b)
	if !ok {
		return out
	}
	for i := range 4 {
		if j := first + i; j >= 0 && j < len(out) {
			out[j] = b[i]
		}
	}
	return out
}
