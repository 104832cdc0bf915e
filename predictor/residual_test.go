package predictor

import (
	"math/rand/v2"
	"testing"
)

// TestSymplecticResidualPresets checks ε_J ≤ 1e-13 for random parameters of
// every preset at random states, for the network map and for the full lifted
// map with a random normalisation.
func TestSymplecticResidualPresets(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			m := testModel(t, name, 1, 31)
			rng := rand.New(rand.NewPCG(5, 5))
			d2 := m.Layout.Dim()
			states := 8
			if name == "quadruped" {
				states = 3
			}
			var worst float64
			for range states {
				z := randVec(rng, d2, 1.5)
				for _, jac := range [][]float64{m.jacobian(z), liftedJacobian(m, z)} {
					e, err := SymplecticResidual(jac, d2)
					if err != nil {
						t.Fatal(err)
					}
					worst = max(worst, e)
				}
			}
			if worst > 1e-13 {
				t.Errorf("ε_J max %.3g > 1e-13", worst)
			}
			t.Logf("ε_J max %.2g over %d states", worst, states)
		})
	}
}

// liftedJacobian returns the Jacobian of the model map in physical lifted
// coordinates, Φ = N⁻¹ ∘ Φ_net ∘ N, at the physical lifted state z.
func liftedJacobian(m *Model, z []float64) []float64 {
	d2 := m.Layout.Dim()
	zn := append([]float64(nil), z[:d2]...)
	m.Norm.Apply(m.Layout, zn)
	j := m.jacobian(zn)
	dn := m.Norm.Diag(m.Layout)
	for r := range d2 {
		for c := range d2 {
			j[r*d2+c] *= dn[c] / dn[r]
		}
	}
	return j
}

// TestResidualDetectsNonSymplectic makes sure the residual is not trivially
// small: a shear applied to Q only from Q is not symplectic.
func TestResidualDetectsNonSymplectic(t *testing.T) {
	dim := 4
	jac := []float64{1, 0.3, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	e, err := SymplecticResidual(jac, dim)
	if err != nil {
		t.Fatal(err)
	}
	if e < 0.1 {
		t.Errorf("non-symplectic Jacobian has residual %g", e)
	}
	if _, err := SymplecticResidual(jac[:5], 3); err == nil {
		t.Error("odd dimension accepted")
	}
}
