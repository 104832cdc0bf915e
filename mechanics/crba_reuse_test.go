package mechanics

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCRBAReuse: CRBA.MassMatrixFloating, called again and again with its
// buffers, gives M(q) bit for bit as Model.MassMatrixFloating does for
// every q (the entries a call leaves alone stay zero), and allocates
// nothing after its first call.
func TestCRBAReuse(t *testing.T) {
	m, err := ParseURDF(strings.NewReader(branchyURDF))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var c CRBA
	q := make([]float64, m.NV())
	for range 20 {
		for i := range q {
			q[i] = rng.Float64()*4 - 2
		}
		want, err := m.MassMatrixFloating(q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.MassMatrixFloating(m, q)
		if err != nil {
			t.Fatal(err)
		}
		n := want.SymmetricDim()
		for i := range n {
			for j := range n {
				if got.At(i, j) != want.At(i, j) {
					t.Fatalf("M[%d][%d] = %v, want %v", i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}
	if a := testing.AllocsPerRun(50, func() {
		if _, err := c.MassMatrixFloating(m, q); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
}
