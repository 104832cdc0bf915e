package predictor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// handRollout composes σ → N → Φ → N⁻¹ → Π step by step through the
// training-path map (Forward on a tape), independent of the compiled Plan.
func handRollout(m *Model, x0, ports []float64, horizon int) []float64 {
	l := m.Layout
	n2, ne, d2 := l.StateDim(), l.PortDim(), l.Dim()
	x := append([]float64(nil), x0...)
	out := make([]float64, horizon*n2)
	z := make([]float64, d2)
	tr := NewTrainable(m)
	tape := tr.NewTape(1)
	for k := range horizon {
		l.Section(z, x, ports[k*ne:(k+1)*ne])
		m.Norm.Apply(l, z)
		tr.Forward(tape, z, 1)
		m.Norm.Invert(l, z)
		l.Project(x, z)
		copy(out[k*n2:], x)
	}
	return out
}

// checkCompiledRollout compiles m, rolls it out from x0 under ports and
// requires the σ→Φ→Π composition of the model's layers to 1e-10; it
// returns the plan.
func checkCompiledRollout(t *testing.T, m *Model, x0, ports []float64, horizon int) *Plan {
	t.Helper()
	want := handRollout(m, x0, ports, horizon)
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(want))
	if err := plan.NewRoller().Rollout(x0, ports, horizon, got); err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i := range want {
		worst = max(worst, relErr(got[i], want[i], 1))
	}
	if worst > 1e-10 {
		t.Errorf("compiled rollout differs from σ→Φ→Π composition by %.3g", worst)
	}
	return plan
}

func TestRolloutEqualsHandComposition(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			m := testModel(t, name, 0.5, 41)
			rng := rand.New(rand.NewPCG(6, 6))
			l := m.Layout
			horizon := 20
			x0 := randVec(rng, l.StateDim(), 1)
			for i := range x0 {
				x0[i] = x0[i]*m.Norm.Scale[i] + m.Norm.Mu[i]
			}
			ports := randVec(rng, horizon*l.PortDim(), 1)
			plan := checkCompiledRollout(t, m, x0, ports, horizon)
			// Batch rollout with two workers equals the single rollouts bit for bit.
			rows := 5
			bx := make([]float64, rows*l.StateDim())
			bp := make([]float64, rows*horizon*l.PortDim())
			for r := range rows {
				copy(bx[r*l.StateDim():], x0)
				copy(bp[r*horizon*l.PortDim():], ports)
				bp[r*horizon*l.PortDim()] += float64(r) // make trajectories differ
			}
			br := plan.NewBatchRoller(rows, 2)
			defer br.Close()
			bout := make([]float64, rows*horizon*l.StateDim())
			if err := br.Rollout(bx, bp, rows, horizon, bout); err != nil {
				t.Fatal(err)
			}
			single := plan.NewRoller()
			one := make([]float64, horizon*l.StateDim())
			for r := range rows {
				if err := single.Rollout(bx[r*l.StateDim():], bp[r*horizon*l.PortDim():], horizon, one); err != nil {
					t.Fatal(err)
				}
				for i, v := range one {
					if w := bout[r*horizon*l.StateDim()+i]; math.Abs(v-w) > 1e-12*math.Max(1, math.Abs(v)) {
						t.Fatalf("batch row %d differs from single rollout at %d: %v vs %v", r, i, w, v)
					}
				}
			}
		})
	}
}

func TestRolloutBadInput(t *testing.T) {
	m := testModel(t, "pendulum", 0.5, 1)
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	r := plan.NewRoller()
	out := make([]float64, 40)
	if err := r.Rollout(make([]float64, 3), make([]float64, 20), 10, out); !errors.Is(err, ErrLayout) {
		t.Errorf("short state: %v", err)
	}
	if err := r.Rollout(make([]float64, 4), make([]float64, 19), 10, out); !errors.Is(err, ErrLayout) {
		t.Errorf("short ports: %v", err)
	}
	br := plan.NewBatchRoller(2, 2)
	defer br.Close()
	if err := br.Rollout(make([]float64, 12), make([]float64, 60), 3, 10, make([]float64, 120)); !errors.Is(err, ErrLayout) {
		t.Errorf("oversized batch: %v", err)
	}
	tr := NewTrainable(m)
	theta := tr.Params()
	theta[3] = math.NaN()
	if err := tr.SetParams(theta); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Compile(); err == nil {
		t.Error("NaN parameter compiled")
	}
}

func TestRolloutAllocatesNothing(t *testing.T) {
	m := testModel(t, "quadrotor", 0.5, 2)
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layout
	h := 50
	x0, ports, out := make([]float64, l.StateDim()), make([]float64, h*l.PortDim()), make([]float64, h*l.StateDim())
	r := plan.NewRoller()
	if a := testing.AllocsPerRun(20, func() { _ = r.Rollout(x0, ports, h, out) }); a != 0 {
		t.Errorf("single rollout allocates %v times per call", a)
	}
	for _, rows := range []int{16, 256} {
		br := plan.NewBatchRoller(rows, 2)
		defer br.Close()
		bx, bp, bo := make([]float64, rows*l.StateDim()), make([]float64, rows*h*l.PortDim()), make([]float64, rows*h*l.StateDim())
		if a := testing.AllocsPerRun(5, func() { _ = br.Rollout(bx, bp, rows, h, bo) }); a != 0 {
			t.Errorf("batch rollout of %d rows allocates %v times per call", rows, a)
		}
	}
}

// TestBatchRollerPartialBatch rolls batches smaller than the roller's
// capacity (spread over the workers in blocks of four) and compares every row
// with a single-trajectory rollout.
func TestBatchRollerPartialBatch(t *testing.T) {
	m := testModel(t, "quadrotor", 0.5, 43)
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	l := m.Layout
	n2, ne := l.StateDim(), l.PortDim()
	rng := rand.New(rand.NewPCG(8, 8))
	horizon := 7
	br := plan.NewBatchRoller(64, 3)
	defer br.Close()
	single := plan.NewRoller()
	one := make([]float64, horizon*n2)
	for _, rows := range []int{0, 1, 5, 9, 13, 64} {
		x0 := randVec(rng, rows*n2, 1)
		ports := randVec(rng, rows*horizon*ne, 1)
		out := make([]float64, rows*horizon*n2)
		if err := br.Rollout(x0, ports, rows, horizon, out); err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			if err := single.Rollout(x0[r*n2:], ports[r*horizon*ne:], horizon, one); err != nil {
				t.Fatal(err)
			}
			for i, v := range one {
				if w := out[r*horizon*n2+i]; math.Abs(v-w) > 1e-12*math.Max(1, math.Abs(v)) {
					t.Fatalf("rows=%d: row %d differs from single rollout at %d: %v vs %v", rows, r, i, w, v)
				}
			}
		}
	}
}

// TestLiftedMapEqualsForward checks the compiled map on arbitrary lifted
// states (not data sections, full update) against the training-path Forward.
func TestLiftedMapEqualsForward(t *testing.T) {
	for _, name := range PresetNames() {
		m := testModel(t, name, 0.5, 44)
		plan, err := m.Compile()
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		z := randVec(rng, m.Layout.Dim(), 1)
		want := forwardCopy(m, z, 1)
		plan.NewRoller().liftedMap(z)
		for i := range z {
			if relErr(z[i], want[i], 1) > 1e-12 {
				t.Fatalf("%s: liftedMap[%d] = %v, Forward %v", name, i, z[i], want[i])
			}
		}
	}
}

// TestRolloutGRBRidgeDims covers the compiled GRB ridge for every ridge
// dimension: m = 2 runs an unrolled path, the others the general loops;
// each must equal the σ→Φ→Π composition of the model's own layers.
func TestRolloutGRBRidgeDims(t *testing.T) {
	for _, m := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("m=%d", m), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(m), 5))
			l := Layout{N: 2, NU: 1, NC: 1}
			a := Arch{Kind: KindGRB, Layers: 3, Width: 4, StepSize: 0.7, RidgeDim: m, Spline: Spline{Intervals: 5, Lo: -2, Hi: 2}}
			model, err := New(l, a, rng)
			if err != nil {
				t.Fatal(err)
			}
			perturb(t, NewTrainable(model), rng)
			const horizon = 15
			x0 := randVec(rng, l.StateDim(), 1)
			ports := randVec(rng, horizon*l.PortDim(), 1)
			checkCompiledRollout(t, model, x0, ports, horizon)
		})
	}
}
