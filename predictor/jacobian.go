package predictor

import (
	"fmt"
	"math"
)

// jacobian returns the exact Jacobian DΦ(z) (2d×2d, row major) of the network
// map in normalised lifted coordinates, by pushing the 2d unit tangents
// through the analytic tangent map.
func (m *Model) jacobian(z []float64) []float64 {
	d2 := m.Layout.Dim()
	t := m.newTape(d2)
	zz := make([]float64, d2*d2)
	for r := range d2 {
		copy(zz[r*d2:(r+1)*d2], z[:d2])
	}
	m.forward(t, zz, d2)
	// Row r of dz is the tangent e_r; after tangent it holds DΦ e_r, the r-th column.
	dz := make([]float64, d2*d2)
	for r := range d2 {
		dz[r*d2+r] = 1
	}
	m.tangent(t, dz)
	jac := make([]float64, d2*d2)
	for r := range d2 {
		for c := range d2 {
			jac[c*d2+r] = dz[r*d2+c]
		}
	}
	return jac
}

// SymplecticResidual returns ε_J = ‖JᵀΩJ − Ω‖_F / ‖Ω‖_F (paper Eq. 29) for a
// 2d×2d Jacobian J in (Q, P) ordering, Ω = [[0, I], [−I, 0]].
func SymplecticResidual(jac []float64, dim int) (float64, error) {
	if dim%2 != 0 || len(jac) != dim*dim {
		return 0, fmt.Errorf("%w: Jacobian has %d entries, want %d×%d with even size", ErrLayout, len(jac), dim, dim)
	}
	d := dim / 2
	// (JᵀΩJ)_{ij} = Σ_k J_{k i} (ΩJ)_{k j}; (ΩJ)_{k j} = J_{k+d, j} for k<d, −J_{k−d, j} otherwise.
	var sum float64
	for i := range dim {
		for j := range dim {
			var v float64
			for k := range d {
				v += jac[k*dim+i]*jac[(k+d)*dim+j] - jac[(k+d)*dim+i]*jac[k*dim+j]
			}
			var omega float64
			switch {
			case i < d && j == i+d:
				omega = 1
			case i >= d && j == i-d:
				omega = -1
			}
			r := v - omega
			sum += r * r
		}
	}
	return math.Sqrt(sum) / math.Sqrt(float64(dim)), nil
}

// ResidualStats returns the mean and maximum of ε_J over the given
// normalised lifted states (rows of 2d values).
func (m *Model) ResidualStats(states [][]float64) (mean, maxv float64, err error) {
	if len(states) == 0 {
		return 0, 0, fmt.Errorf("predictor: no states for the symplecticity residual")
	}
	for _, z := range states {
		e, err := SymplecticResidual(m.jacobian(z), m.Layout.Dim())
		if err != nil {
			return 0, 0, err
		}
		mean += e
		maxv = max(maxv, e)
	}
	return mean / float64(len(states)), maxv, nil
}
