package predictor

import (
	"math/rand/v2"
	"testing"
)

// anymalLayout returns the ANYmal's layouts (n = 18 joints and base
// coordinates, n_c = 12 foot forces): the paper's (n_u = 18: six base
// wrench values, then the twelve joint torques) and the port history's
// (n_u = 48: those 18, then the means of the 18 and of the 12 foot
// forces). base lists the control values of the six floating-base ports,
// which are zero in every log (the base is unactuated) unless a wrench
// estimate feeds them.
func anymalLayout(portHistory bool) (l Layout, base []int) {
	if portHistory {
		return Layout{N: 18, NU: 48, NC: 12}, []int{0, 1, 2, 3, 4, 5, 18, 19, 20, 21, 22, 23}
	}
	return Layout{N: 18, NU: 18, NC: 12}, []int{0, 1, 2, 3, 4, 5}
}

// zeroPortInputs returns an initial state and horizon steps of ports for l,
// with the ports listed in zero set to zero at every step.
func zeroPortInputs(l Layout, horizon int, zero []int, seed uint64) (x0, ports []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x0 = randVec(rng, l.StateDim(), 0.5)
	ports = randVec(rng, horizon*l.PortDim(), 0.5)
	for k := range horizon {
		for _, j := range zero {
			ports[k*l.PortDim()+j] = 0
		}
	}
	return x0, ports
}

// TestZeroPortsLiveInsideAStep checks why a port channel that is zero over
// a whole rollout (the ANYmal's floating-base ports) cannot be pruned from
// the layers of a trained layout: the data section sets its pair (λ_u, μ_u)
// to zero, but the first layer's update writes both coordinates (the
// columns of M acting on them are not zero), and the later layers read
// them. A rollout whose M has those columns zeroed (the pruned model)
// must therefore differ from the full one by far more than rounding.
func TestZeroPortsLiveInsideAStep(t *testing.T) {
	l, base := anymalLayout(true)
	m, err := New(l, Arch{Kind: KindGR, Layers: 18, Width: 66, StepSize: 1}, rand.New(rand.NewPCG(9, 48)))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	const horizon = 10
	x0, ports := zeroPortInputs(l, horizon, base, 5)
	w := plan.newWorkspace(1)
	l.Section(w.z, x0, ports[:l.PortDim()])
	for _, j := range base {
		if w.z[l.OffLambdaU()+j] != 0 || w.z[l.OffMuU()+j] != 0 {
			t.Fatalf("port %d: the section's pair is (%v, %v), want zeros", j, w.z[l.OffLambdaU()+j], w.z[l.OffMuU()+j])
		}
	}
	plan.layerOne(w, &plan.layers[0], nil)
	for _, j := range base {
		if w.z[l.OffLambdaU()+j] == 0 || w.z[l.OffMuU()+j] == 0 {
			t.Errorf("port %d: after the first layer its pair is (%v, %v), want both non-zero", j, w.z[l.OffLambdaU()+j], w.z[l.OffMuU()+j])
		}
	}
	pruned, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for li := range pruned.layers {
		for r := range pruned.k {
			row := pruned.layers[li].m[r*pruned.ld:]
			for _, j := range base {
				row[l.OffLambdaU()+j], row[l.OffMuU()+j] = 0, 0
			}
		}
	}
	full, cut := plan.NewRoller(), pruned.NewRoller()
	want := make([]float64, horizon*l.StateDim())
	got := make([]float64, len(want))
	if err := full.Rollout(x0, ports, horizon, want); err != nil {
		t.Fatal(err)
	}
	if err := cut.Rollout(x0, ports, horizon, got); err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i := range want {
		worst = max(worst, relErr(got[i], want[i], 1))
	}
	if worst < 1e-6 {
		t.Errorf("the pruned rollout differs by %.3g, want more than rounding (1e-6)", worst)
	}
	t.Logf("pruned vs full rollout, %d steps: largest difference %.3g (relative, floor 1)", horizon, worst)
}
