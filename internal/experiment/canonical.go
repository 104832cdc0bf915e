package experiment

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
)

// The conversion's momenta of a floating base are the body momenta
// h = M v (v the body twist, as the paper writes p = M(q)v), which are
// not the momenta canonically conjugate to the coordinates q the model
// sees: a symplectic map in (q, h) is not the structure of the rigid
// body's flow. For the gravity-aware coordinates q = (x, y, z, roll,
// pitch, yaw) (position and yaw relative to the window's first pose) the
// body twist is v = J(q)·q̇ with
//
//	v_lin = R_relᵀ·(ẋ, ẏ, ż),  R_rel = Rz(yaw)·Ry(pitch)·Rx(roll),
//	ω     = W(roll, pitch)·(roll˙, pitch˙, yaw˙),
//	W     = [[1, 0, −sin θ], [0, cos φ, sin φ cos θ], [0, −sin φ, cos φ cos θ]],
//
// so the canonical momenta are p = ∂T/∂q̇ = J(q)ᵀ·h: the linear momentum
// R_rel·h_lin (in the window's first yaw frame) and Wᵀ·h_ang; the joints'
// momenta, already canonical, stay. The change (q, h) → (q, p) depends on
// q alone, so it is exact and invertible (away from pitch ±π/2), and the
// kinetic energy ½ pᵀq̇ = ½ hᵀv is unchanged.

// CanonicalMomenta changes the momenta of every sample of a gravity-aware
// floating-base dataset (statemap.StateFloatingBaseGravity coordinates)
// from the body momenta to the canonical ones, in place. It refuses other
// coordinates and datasets whose arrays are not loaded.
func CanonicalMomenta(d *dataset.Dataset) error {
	return mapMomenta(d, canonicalFromBody)
}

// BodyMomenta is CanonicalMomenta's inverse.
func BodyMomenta(d *dataset.Dataset) error {
	return mapMomenta(d, bodyFromCanonical)
}

func mapMomenta(d *dataset.Dataset, f func(x []float64, n int) error) error {
	if statemap.BaseKind(d.Coordinates) != statemap.StateFloatingBaseGravity {
		return fmt.Errorf("experiment: canonical momenta: coordinates %v are not the gravity-aware floating base's", d.Coordinates)
	}
	if !d.Loaded() {
		return errors.New("experiment: canonical momenta: the dataset's arrays are not loaded")
	}
	n := d.N
	for ei := range d.Episodes {
		ep := &d.Episodes[ei]
		for k := range ep.Len {
			if err := f(ep.X[k*2*n:(k+1)*2*n], n); err != nil {
				return fmt.Errorf("experiment: canonical momenta: %s sample %d: %w", ep.Name, k, err)
			}
		}
	}
	return nil
}

// eulerRates returns R_rel and W of gravity-aware coordinates q.
func eulerRates(q []float64) (mechanics.Mat3, mechanics.Mat3) {
	roll, pitch := q[3], q[4]
	sf, cf := math.Sincos(roll)
	st, ct := math.Sincos(pitch)
	W := mechanics.Mat3{{1, 0, -st}, {0, cf, sf * ct}, {0, -sf, cf * ct}}
	return mechanics.RPY(roll, pitch, q[5]), W
}

// canonicalFromBody writes p = J(q)ᵀ h over x = (q, h) of n coordinates.
func canonicalFromBody(x []float64, n int) error {
	R, W := eulerRates(x[:n])
	p := x[n : 2*n]
	lin := R.MulVec(mechanics.Vec3{p[0], p[1], p[2]})
	ang := W.T().MulVec(mechanics.Vec3{p[3], p[4], p[5]})
	copy(p[:3], lin[:])
	copy(p[3:6], ang[:])
	return nil
}

// bodyFromCanonical writes h = J(q)⁻ᵀ p over x = (q, p).
func bodyFromCanonical(x []float64, n int) error {
	R, W := eulerRates(x[:n])
	p := x[n : 2*n]
	if c := math.Cos(x[4]); math.Abs(c) < 1e-9 {
		return fmt.Errorf("pitch %g: the Euler angles' rates are singular", x[4])
	}
	lin := R.T().MulVec(mechanics.Vec3{p[0], p[1], p[2]})
	// Wᵀ·h_ang = p_ang: solve the 3×3 system
	a := W.T()
	h, err := solve3(a, mechanics.Vec3{p[3], p[4], p[5]})
	if err != nil {
		return err
	}
	copy(p[:3], lin[:])
	copy(p[3:6], h[:])
	return nil
}

// solve3 solves a·x = b by Cramer's rule.
func solve3(a mechanics.Mat3, b mechanics.Vec3) (mechanics.Vec3, error) {
	det := a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) - a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) + a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	if det == 0 || math.IsNaN(det) {
		return mechanics.Vec3{}, fmt.Errorf("singular 3×3 system")
	}
	var x mechanics.Vec3
	for c := range 3 {
		m := a
		for r := range 3 {
			m[r][c] = b[r]
		}
		x[c] = (m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])) / det
	}
	return x, nil
}

// canonicalData applies CanonicalMomenta to every dataset of ds.
func canonicalData(ds *Datasets) error {
	seen := map[*dataset.Dataset]bool{}
	all := []*dataset.Dataset{ds.Train, ds.ID, ds.OOD}
	for _, g := range ds.Groups {
		all = append(all, g.Data)
	}
	for _, d := range slices.DeleteFunc(all, func(d *dataset.Dataset) bool { return d == nil }) {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := CanonicalMomenta(d); err != nil {
			return err
		}
	}
	return nil
}
