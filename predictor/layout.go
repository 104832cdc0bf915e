package predictor

import (
	"errors"
	"fmt"
)

// Layout describes the blocks of a lifted phase space: n configuration
// coordinates, an optional control port of NU values and an optional contact
// port of NC values. A zero NU or NC omits that block.
type Layout struct {
	N  int `json:"n"`
	NU int `json:"n_u"`
	NC int `json:"n_c"`
}

// ErrLayout reports an invalid layout or a slice whose length does not match it.
var ErrLayout = errors.New("predictor: layout mismatch")

// Validate reports whether the layout is usable.
func (l Layout) Validate() error {
	if l.N <= 0 || l.NU < 0 || l.NC < 0 {
		return fmt.Errorf("%w: need n > 0 and n_u, n_c ≥ 0, got n=%d n_u=%d n_c=%d", ErrLayout, l.N, l.NU, l.NC)
	}
	return nil
}

// D returns d = 2n + n_u + n_c, the number of canonical pairs.
func (l Layout) D() int { return 2*l.N + l.NU + l.NC }

// Dim returns the lifted dimension 2d.
func (l Layout) Dim() int { return 2 * l.D() }

// StateDim returns the physical state dimension 2n.
func (l Layout) StateDim() int { return 2 * l.N }

// PortDim returns n_u + n_c, the number of port values e = (u, f_c).
func (l Layout) PortDim() int { return l.NU + l.NC }

// Offsets of the blocks inside Z = (Q, P). Each returns the index of the first
// element of the block in the 2d-vector.

// OffQ returns the offset of q inside Z.
func (l Layout) OffQ() int { return 0 }

// OffY returns the offset of the fibre y inside Z.
func (l Layout) OffY() int { return l.N }

// OffLambdaU returns the offset of λ_u inside Z.
func (l Layout) OffLambdaU() int { return 2 * l.N }

// OffLambdaC returns the offset of the contact base λ_c inside Z.
func (l Layout) OffLambdaC() int { return 2*l.N + l.NU }

// OffR returns the offset of the fibre r inside Z.
func (l Layout) OffR() int { return l.D() }

// OffP returns the offset of the momenta p inside Z.
func (l Layout) OffP() int { return l.D() + l.N }

// OffMuU returns the offset of the control base μ_u inside Z.
func (l Layout) OffMuU() int { return l.D() + 2*l.N }

// OffPiC returns the offset of the contact fibre π_c inside Z.
func (l Layout) OffPiC() int { return l.D() + 2*l.N + l.NU }

// Section writes σₑ(x) into z: Q = (q, 0, 0, f_c), P = (0, p, u, 0).
// x holds (q, p) (2n values) and e holds (u, f_c) (n_u + n_c values).
// It does not allocate.
func (l Layout) Section(z, x, e []float64) {
	n, d := l.N, l.D()
	clear(z[:2*d])
	copy(z[0:n], x[0:n])
	copy(z[l.OffP():l.OffP()+n], x[n:2*n])
	copy(z[l.OffMuU():l.OffMuU()+l.NU], e[0:l.NU])
	copy(z[l.OffLambdaC():l.OffLambdaC()+l.NC], e[l.NU:l.NU+l.NC])
}

// Project writes Π(Z) = (q, p) into x. It does not allocate.
func (l Layout) Project(x, z []float64) {
	n := l.N
	copy(x[0:n], z[0:n])
	copy(x[n:2*n], z[l.OffP():l.OffP()+n])
}

// PairBaseInP reports, for canonical pair k (0 ≤ k < d), whether its base
// coordinate (Eq. 8 of the paper: b = (q, p, μ_u, λ_c)) is the P_k entry. For
// the (y, p) and (λ_u, μ_u) pairs the base is P_k and the fibre is −Q_k; for
// (q, r) and (λ_c, π_c) the base is Q_k and the fibre is P_k.
func (l Layout) PairBaseInP(k int) bool {
	return k >= l.N && k < 2*l.N+l.NU
}

// BaseIndex returns the index in Z of the base coordinate of pair k.
func (l Layout) BaseIndex(k int) int {
	if l.PairBaseInP(k) {
		return l.D() + k
	}
	return k
}

// FibreIndex returns the index in Z of the fibre coordinate of pair k and
// the sign with which it enters the fibre vector ζ (ζ_k = sign · Z[idx]).
func (l Layout) FibreIndex(k int) (idx int, sign float64) {
	if l.PairBaseInP(k) {
		return k, -1
	}
	return l.D() + k, 1
}

// IsSectionFibre reports whether Z index i is one of the fibres that the data
// section sets to zero (r, y, λ_u, π_c).
func (l Layout) IsSectionFibre(i int) bool {
	d := l.D()
	k := i % d
	base := l.BaseIndex(k)
	return i != base
}

// BlockName returns a short name of the block that Z index i belongs to.
func (l Layout) BlockName(i int) string {
	d := l.D()
	k, inP := i%d, i >= d
	switch {
	case k < l.N:
		if inP {
			return "r"
		}
		return "q"
	case k < 2*l.N:
		if inP {
			return "p"
		}
		return "y"
	case k < 2*l.N+l.NU:
		if inP {
			return "mu_u"
		}
		return "lambda_u"
	default:
		if inP {
			return "pi_c"
		}
		return "lambda_c"
	}
}

// String renders the layout as the paper writes it.
func (l Layout) String() string {
	return fmt.Sprintf("Q=(q[%d], y[%d], λ_u[%d], λ_c[%d]) P=(r[%d], p[%d], μ_u[%d], π_c[%d]) d=%d lifted=%d",
		l.N, l.N, l.NU, l.NC, l.N, l.N, l.NU, l.NC, l.D(), l.Dim())
}
