package mechanics

import (
	"strings"
	"testing"
)

// shiftStepper is a stand-in learned map: x' = x + (e1, e2, e3, 0), so a
// composed step is checkable by hand and uses every port.
type shiftStepper struct{}

func (shiftStepper) Rollout(x0, ports []float64, horizon int, out []float64) error {
	ne := len(ports) / horizon
	x := [4]float64(x0)
	for k := range horizon {
		e := ports[k*ne:]
		x = [4]float64{x[0] + e[0], x[1] + e[1], x[2] + e[2], x[3]}
		copy(out[4*k:], x[:])
	}
	return nil
}

// TestComposedStepper checks the composed rollout x̂_{k+1} =
// M(Φ₀(x̂_k, e_k), e_k) against the prior and the inner map applied by
// hand, with three ports a step (the prior reads the first two), that it
// allocates nothing, and its refusals.
func TestComposedStepper(t *testing.T) {
	prior, err := NewPendulumPrior(PriorMidpointFriction, hardwareLikeParams(), 0.01)
	if err != nil {
		t.Fatal(err)
	}
	const H, ne = 20, 3
	c, err := NewComposedStepper(prior.Clone(), shiftStepper{}, ne)
	if err != nil {
		t.Fatal(err)
	}
	x0 := []float64{0.3, -0.2, 0.01, 0.02}
	ports := make([]float64, H*ne)
	for k := range H {
		ports[k*ne], ports[k*ne+1], ports[k*ne+2] = 0.1*float64(k%3), -0.05, 1e-4
	}
	out := make([]float64, H*4)
	if err := c.Rollout(x0, ports, H, out); err != nil {
		t.Fatal(err)
	}
	x := [4]float64(x0)
	for k := range H {
		e := ports[k*ne : (k+1)*ne]
		y, err := prior.Step(x, [2]float64{e[0], e[1]})
		if err != nil {
			t.Fatal(err)
		}
		x = [4]float64{y[0] + e[0], y[1] + e[1], y[2] + e[2], y[3]}
		if x != [4]float64(out[4*k:4*k+4]) {
			t.Fatalf("step %d: composed %v, by hand %v", k+1, out[4*k:4*k+4], x)
		}
	}
	if a := testing.AllocsPerRun(10, func() { _ = c.Rollout(x0, ports, H, out) }); a != 0 {
		t.Errorf("%v allocations a rollout", a)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"one port", func() error { _, err := NewComposedStepper(prior, shiftStepper{}, 1); return err }, "at least 2 ports"},
		{"no model", func() error { _, err := NewComposedStepper(prior, nil, 2); return err }, "needs a prior and a model"},
		{"short state", func() error { return c.Rollout(x0[:3], ports, H, out) }, "initial state has 3 values, need 4"},
		{"short ports", func() error { return c.Rollout(x0, ports[:5], H, out) }, "ports have 5 values"},
		{"short output", func() error { return c.Rollout(x0, ports, H, out[:7]) }, "room for 7 values"},
		{"non-finite", func() error { return c.Rollout([]float64{0, 0, 1e300, 0}, ports, H, out) }, "composed rollout, step 1"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
