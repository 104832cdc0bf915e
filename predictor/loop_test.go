package predictor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tableSource hands out the rows of a fixed port sequence, and records
// the states it was asked from.
type tableSource struct {
	ports []float64
	ne    int
	seen  []float64 // horizon × 2n: the state of every step
	n2    int
}

func (s *tableSource) PortsAt(k int, x, row []float64) error {
	copy(row, s.ports[k*s.ne:(k+1)*s.ne])
	copy(s.seen[k*s.n2:(k+1)*s.n2], x)
	return nil
}

// TestRolloutLoopIsRollout: with a source that hands out a fixed port
// sequence, a rollout with ports in the loop predicts the states Rollout
// predicts, bit for bit, for the model's roller and both offset-free
// estimators (with an estimate and a decay, whose step index the loop
// must keep); the source is asked from x_0 and then from each predicted
// state; the loop allocates nothing.
func TestRolloutLoopIsRollout(t *testing.T) {
	m, plan, sample := quadrupedCase(t, 3, 4)
	l := m.Layout
	n2, ne := l.StateDim(), l.PortDim()
	rng := rand.New(rand.NewPCG(3, 5))
	const H = 12
	ports := randVec(rng, H*ne, 0.1)
	force, err := NewForceEstimator(plan.NewRoller(), l.N, ne, ForceEstimate{Window: 4, Decay: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	wrench, err := NewWrenchEstimator(plan.NewRoller(), l.N, ne, WrenchBaseSE3, WrenchEstimate{Window: 8, Gate: 0.1, Decay: 0.9, Blocks: 2})
	if err != nil {
		t.Fatal(err)
	}
	// feed both estimators a few samples so that they hold an estimate
	for range 9 {
		x, e := sample(), randVec(rng, ne, 0.1)
		if err := force.Observe(x, e); err != nil {
			t.Fatal(err)
		}
		if err := wrench.Observe(x, e); err != nil {
			t.Fatal(err)
		}
	}
	var d [6]float64
	wrench.Translation(&d)
	if d == [6]float64{} || force.Residuals() == 0 {
		t.Fatal("the estimators hold no estimate: the test shows nothing of the decay")
	}
	x0 := sample()
	for _, tc := range []struct {
		name string
		s    Stepper
	}{
		{"roller", plan.NewRoller()},
		{"force estimator", force},
		{"wrench estimator", wrench},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := make([]float64, H*n2), make([]float64, H*n2)
			if err := tc.s.Rollout(x0, ports, H, want); err != nil {
				t.Fatal(err)
			}
			src := &tableSource{ports: ports, ne: ne, seen: make([]float64, H*n2), n2: n2}
			used := make([]float64, H*ne)
			if err := RolloutLoop(tc.s, src, l.N, ne, x0, H, used, got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
					t.Fatalf("value %d (step %d): %v in the loop, %v by Rollout", i, i/n2+1, got[i], want[i])
				}
			}
			for i := range used {
				if used[i] != ports[i] {
					t.Fatalf("port %d recorded %v, the source gave %v", i, used[i], ports[i])
				}
			}
			for k := range H {
				prev := x0
				if k > 0 {
					prev = want[(k-1)*n2 : k*n2]
				}
				for j := range n2 {
					if src.seen[k*n2+j] != prev[j] {
						t.Fatalf("step %d asked from state value %d = %v, want the predicted %v", k, j, src.seen[k*n2+j], prev[j])
					}
				}
			}
			if a := testing.AllocsPerRun(20, func() { _ = RolloutLoop(tc.s, src, l.N, ne, x0, H, used, got) }); a != 0 {
				t.Errorf("%v allocations per rollout", a)
			}
		})
	}
	t.Run("bad sizes", func(t *testing.T) {
		src := &tableSource{ports: ports, ne: ne, seen: make([]float64, H*n2), n2: n2}
		if err := RolloutLoop(plan.NewRoller(), src, l.N, ne, x0[:3], H, make([]float64, H*ne), make([]float64, H*n2)); err == nil {
			t.Error("a short initial state was accepted")
		}
		if err := RolloutLoop(plan.NewRoller(), src, l.N, ne, x0, H, make([]float64, ne), make([]float64, H*n2)); err == nil {
			t.Error("room for one step of ports was accepted for a longer horizon")
		}
	})
}
