package experiment

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/statemap"
)

// TestCanonicalMomenta: the canonical momenta of the gravity-aware
// coordinates are ∂T/∂q̇ of the rigid body's kinetic energy, T = ½vᵀMv
// with v the body twist of the pose the coordinates give
// (statemap.Spec.BasePose), by central differences (the twist from poses
// at q ± ε·q̇, linear in q̇); the kinetic energy
// ½pᵀq̇ is ½hᵀv; and BodyMomenta undoes CanonicalMomenta to rounding.
func TestCanonicalMomenta(t *testing.T) {
	spec := &statemap.Spec{State: statemap.StateSpec{Kind: statemap.StateFloatingBaseGravity}}
	M := [6]float64{0.045, 0.045, 0.045, 2.3951e-5, 2.3951e-5, 3.2347e-5}
	origin := mechanics.SE3{R: mechanics.RPY(0.05, -0.1, 1.2), P: mechanics.Vec3{1, -2, 0.5}}
	rng := rand.New(rand.NewPCG(1, 2))
	// twist of the path q + s·qd at s = 0
	twist := func(q, qd [6]float64) [6]float64 {
		const eps = 1e-5
		at := func(s float64) mechanics.SE3 {
			var c [6]float64
			for i := range c {
				c[i] = q[i] + s*qd[i]
			}
			return spec.BasePose(origin, c[:])
		}
		T := at(0)
		a := mechanics.LogSE3(T.Inverse().Mul(at(eps)))
		b := mechanics.LogSE3(T.Inverse().Mul(at(-eps)))
		var v [6]float64
		for i := range v {
			v[i] = (a[i] - b[i]) / (2 * eps)
		}
		return v
	}
	for trial := range 20 {
		var q, qd [6]float64
		for i := range 3 {
			q[i] = rng.NormFloat64()
			qd[i] = rng.NormFloat64()
		}
		q[3], q[4], q[5] = 0.6*(rng.Float64()-0.5), 0.6*(rng.Float64()-0.5), 2*(rng.Float64()-0.5)
		for i := 3; i < 6; i++ {
			qd[i] = 3 * rng.NormFloat64()
		}
		v := twist(q, qd)
		x := make([]float64, 12)
		copy(x, q[:])
		var hv float64
		for i := range 6 {
			x[6+i] = M[i] * v[i]
			hv += x[6+i] * v[i]
		}
		body := append([]float64(nil), x...)
		d := &dataset.Dataset{Meta: dataset.Meta{N: 6, Coordinates: statemap.BaseCoordinates(statemap.StateFloatingBaseGravity),
			Episodes: []dataset.Episode{{Name: "w", Len: 1, X: x}}}}
		if err := CanonicalMomenta(d); err != nil {
			t.Fatal(err)
		}
		// ∂T/∂q̇_i = Σ_j M_j v_j ∂v_j/∂q̇_i, the twist linear in q̇: ∂v/∂q̇_i
		// is the twist of a unit rate of coordinate i
		var pq float64
		for i := range 6 {
			var e [6]float64
			e[i] = 1
			dv := twist(q, e)
			var want float64
			for j := range 6 {
				want += M[j] * v[j] * dv[j]
			}
			if got := x[6+i]; math.Abs(got-want) > 1e-8*math.Abs(want)+1e-15 {
				t.Errorf("trial %d: p[%d] = %.12g, ∂T/∂q̇ = %.12g", trial, i, got, want)
			}
			pq += x[6+i] * qd[i]
		}
		if math.Abs(pq-hv) > 1e-8*math.Abs(hv) {
			t.Errorf("trial %d: pᵀq̇ = %.12g, hᵀv = %.12g", trial, pq, hv)
		}
		if err := BodyMomenta(d); err != nil {
			t.Fatal(err)
		}
		for i := range body {
			if math.Abs(x[i]-body[i]) > 1e-14*(1+math.Abs(body[i])) {
				t.Errorf("trial %d: round trip x[%d] = %v, was %v", trial, i, x[i], body[i])
			}
		}
	}
	se3 := &dataset.Dataset{Meta: dataset.Meta{N: 6, Coordinates: statemap.BaseCoordinates(statemap.StateFloatingBase)}}
	if err := CanonicalMomenta(se3); err == nil {
		t.Error("canonical momenta of SE(3) log coordinates: no error")
	}
}
