package mechanics

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

func smallSimConfig() SimConfig {
	cfg := DefaultSimConfig()
	cfg.Steps = 200
	cfg.Seed = 42
	return cfg
}

func TestSimulateDeterministic(t *testing.T) {
	cfg := smallSimConfig()
	var ref []Trajectory
	for _, workers := range []int{1, 2, 3} {
		cfg.Workers = workers
		trs, err := Simulate(context.Background(), cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = trs
			continue
		}
		if !reflect.DeepEqual(trs, ref) {
			t.Fatalf("workers=%d: trajectories differ from workers=1", workers)
		}
	}
	one, err := SimulateTrajectory(context.Background(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, ref[3]) {
		t.Error("SimulateTrajectory(3) differs from Simulate(...)[3]")
	}
	cfg.Seed++
	other, err := Simulate(context.Background(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other[0].Q, ref[0].Q) {
		t.Error("a different seed gave the same trajectory")
	}
}

func TestSimulateLayoutAndEnergy(t *testing.T) {
	cases := []struct {
		name       string
		emin, emax float64
	}{
		{"train range", 5, 15},
		{"ood range", 15, 20},
		{"low energy", 0.5, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallSimConfig()
			cfg.Steps = 20
			cfg.EnergyMin, cfg.EnergyMax = tc.emin, tc.emax
			trs, err := Simulate(context.Background(), cfg, 8)
			if err != nil {
				t.Fatal(err)
			}
			pp := cfg.Params
			for _, tr := range trs {
				n := cfg.Steps + 1
				if tr.Len() != n || len(tr.Q) != 2*n || len(tr.P) != 2*n || len(tr.V) != 2*n || len(tr.U) != 2*n || len(tr.E) != n {
					t.Fatalf("bad lengths: T %d Q %d P %d V %d U %d E %d", len(tr.T), len(tr.Q), len(tr.P), len(tr.V), len(tr.U), len(tr.E))
				}
				if tr.E0 < tc.emin-1e-9 || tr.E0 > tc.emax+1e-9 {
					t.Errorf("trajectory %d: E0 = %g outside [%g, %g]", tr.Index, tr.E0, tc.emin, tc.emax)
				}
				for k := range n {
					if math.Abs(tr.T[k]-float64(k)*cfg.Dt) > 1e-15 {
						t.Fatalf("T[%d] = %g", k, tr.T[k])
					}
					q := [2]float64{tr.Q[2*k], tr.Q[2*k+1]}
					p := [2]float64{tr.P[2*k], tr.P[2*k+1]}
					v := pp.Velocity(q, p)
					if math.Abs(v[0]-tr.V[2*k]) > 1e-12 || math.Abs(v[1]-tr.V[2*k+1]) > 1e-12 {
						t.Fatalf("V inconsistent with M⁻¹p at sample %d", k)
					}
					if math.Abs(pp.Hamiltonian(q, p)-tr.E[k]) > 1e-12 {
						t.Fatalf("E inconsistent at sample %d", k)
					}
				}
			}
		})
	}
}

// TestSimulateTorques checks that U is the profile sampled at the sample
// times (so piecewise constant under zero-order hold) and respects the
// amplitude cap.
func TestSimulateTorques(t *testing.T) {
	cfg := smallSimConfig()
	cfg.Steps = 50
	cfg.TorqueAmp = 2
	cfg.NumSinusoids = 4
	trs, err := Simulate(context.Background(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		for j := range tr.Torque {
			if len(tr.Torque[j]) != 4 {
				t.Fatalf("joint %d has %d sinusoids", j, len(tr.Torque[j]))
			}
			for _, s := range tr.Torque[j] {
				if s.Amp < 0 || s.Amp > 2 || s.Freq < cfg.FreqMin || s.Freq > cfg.FreqMax {
					t.Errorf("sinusoid out of range: %+v", s)
				}
			}
		}
		for k := range tr.Len() {
			u := tr.Torque.At(tr.T[k])
			if u[0] != tr.U[2*k] || u[1] != tr.U[2*k+1] {
				t.Fatalf("U[%d] = (%g, %g), profile gives %v", k, tr.U[2*k], tr.U[2*k+1], u)
			}
			if math.Abs(u[0]) > 8 || math.Abs(u[1]) > 8 {
				t.Fatalf("torque %v exceeds 4 × 2 N·m", u)
			}
		}
	}
	// Torque limits clip.
	cfg.Params.TorqueLimit = [2]float64{0.5, 0.25}
	trs, err = Simulate(context.Background(), cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		for k := range tr.Len() {
			if math.Abs(tr.U[2*k]) > 0.5 || math.Abs(tr.U[2*k+1]) > 0.25 {
				t.Fatalf("torque limit not applied at sample %d: %v", k, tr.U[2*k:2*k+2])
			}
		}
	}
}

// TestSimulateZOHConsistency re-integrates single intervals from the stored
// samples: with the torque held at U[k], sample k must map to sample k+1.
// A much tighter, independent integration must agree to the tolerance.
func TestSimulateZOHConsistency(t *testing.T) {
	cfg := smallSimConfig()
	tr, err := SimulateTrajectory(context.Background(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	solver := &DOP853{}
	tight := &DOP853{RTol: 1e-13, ATol: 1e-13}
	for _, k := range []int{0, 1, 17, 99, 150, cfg.Steps - 1} {
		y := []float64{tr.Q[2*k], tr.Q[2*k+1], tr.P[2*k], tr.P[2*k+1]}
		yt := append([]float64(nil), y...)
		tau := [2]float64{tr.U[2*k], tr.U[2*k+1]}
		if err := ZOHStep(&cfg, solver, tr.T[k], y, tau); err != nil {
			t.Fatal(err)
		}
		if err := tight.Integrate(cfg.Params.HamiltonianODE(&tau), tr.T[k], tr.T[k+1], yt); err != nil {
			t.Fatal(err)
		}
		want := []float64{tr.Q[2*k+2], tr.Q[2*k+3], tr.P[2*k+2], tr.P[2*k+3]}
		for i := range want {
			if y[i] != want[i] {
				t.Errorf("sample %d→%d, component %d: ZOHStep %.17g, stored %.17g", k, k+1, i, y[i], want[i])
			}
			if math.Abs(yt[i]-want[i]) > 1e-9 {
				t.Errorf("sample %d→%d, component %d: tight integration %.15g, stored %.15g", k, k+1, i, yt[i], want[i])
			}
		}
	}
}

func TestSimulateDissipation(t *testing.T) {
	// Unforced: energy never increases.
	cfg := smallSimConfig()
	cfg.NumSinusoids = 0
	tr, err := SimulateTrajectory(context.Background(), cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < tr.Len(); k++ {
		if tr.E[k] > tr.E[k-1]+1e-9 {
			t.Fatalf("energy rose from %g to %g at sample %d without torque", tr.E[k-1], tr.E[k], k)
		}
	}
	if tr.E[tr.Len()-1] >= tr.E0 {
		t.Error("no dissipation")
	}
}

func TestSimulateErrors(t *testing.T) {
	mod := func(f func(*SimConfig)) SimConfig {
		c := smallSimConfig()
		f(&c)
		return c
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		cfg  SimConfig
		n    int
		want string
	}{
		{"bad dt", context.Background(), mod(func(c *SimConfig) { c.Dt = 0 }), 1, "Dt"},
		{"bad energy range", context.Background(), mod(func(c *SimConfig) { c.EnergyMin = 3; c.EnergyMax = 2 }), 1, "energy range"},
		{"bad params", context.Background(), mod(func(c *SimConfig) { c.Params.M2 = -1 }), 1, "m2"},
		{"negative count", context.Background(), smallSimConfig(), -1, "nTraj"},
		// With |q| ≥ 3 every configuration is far above 1 J of potential energy.
		{"potential exceeds target", context.Background(), mod(func(c *SimConfig) { c.EnergyMin, c.EnergyMax = 0, 0.001; c.QRange = 3 }), 2, "potential energy exceeds"},
		{"cancelled", cancelled, smallSimConfig(), 4, "context canceled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Simulate(tc.ctx, tc.cfg, tc.n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}
