package predictor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// testModel builds a model of the named preset with random parameters of
// the given scale and a random normalisation.
func testModel(t testing.TB, name string, scale float64, seed uint64) *Model {
	t.Helper()
	p, err := LookupPreset(name)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	m, err := New(p.Layout, p.Arch, rng)
	if err != nil {
		t.Fatal(err)
	}
	NewTrainable(m).Init(rng, scale)
	for k := range m.Norm.Mu {
		m.Norm.Mu[k] = rng.NormFloat64()
		m.Norm.Scale[k] = math.Exp(rng.NormFloat64())
	}
	return m
}

// smallModel is a cheap model for finite-difference checks of every kind.
func smallModel(t testing.TB, kind Kind, seed uint64) *Model {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	l := Layout{N: 2, NU: 1, NC: 1}
	a := Arch{Kind: kind, Layers: 3, Width: 5, StepSize: 0.7}
	if kind == KindGRB {
		a.RidgeDim, a.Spline = 2, Spline{Intervals: 6, Lo: -2, Hi: 2}
		a.Width = 3
	}
	m, err := New(l, a, rng)
	if err != nil {
		t.Fatal(err)
	}
	perturb(t, NewTrainable(m), rng)
	return m
}

// perturb redraws the parameters at scale 1 and adds noise of 0.2, for
// larger output weights than the near-identity initialisation, so that
// every term matters in the checks.
func perturb(t testing.TB, tr *Trainable, rng *rand.Rand) {
	t.Helper()
	tr.Init(rng, 1)
	theta := tr.Params()
	for i := range theta {
		theta[i] += 0.2 * rng.NormFloat64()
	}
	if err := tr.SetParams(theta); err != nil {
		t.Fatal(err)
	}
}

// withParam returns f() evaluated with θ[i] set to v, then restores θ.
func withParam(t testing.TB, tr *Trainable, i int, v float64, f func() float64) float64 {
	t.Helper()
	theta := tr.Params()
	old := theta[i]
	theta[i] = v
	if err := tr.SetParams(theta); err != nil {
		t.Fatal(err)
	}
	defer func() {
		theta[i] = old
		if err := tr.SetParams(theta); err != nil {
			t.Fatal(err)
		}
	}()
	return f()
}

func randVec(rng *rand.Rand, n int, s float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64() * s
	}
	return v
}

// relErr is |a−b| / max(|a|, |b|, floor).
func relErr(a, b, floor float64) float64 {
	return math.Abs(a-b) / math.Max(math.Max(math.Abs(a), math.Abs(b)), floor)
}

// quadrupedCase is the quadruped preset's model of parameter scale 0.3
// (seed 5), compiled, and a source of states near its normalisation's
// mean with the six base coordinates at the origin (a window's start).
func quadrupedCase(t testing.TB, seed1, seed2 uint64) (*Model, *Plan, func() []float64) {
	t.Helper()
	m := testModel(t, "quadruped", 0.3, 5)
	plan, err := m.Compile()
	if err != nil {
		t.Fatal(err)
	}
	n2 := m.Layout.StateDim()
	rng := rand.New(rand.NewPCG(seed1, seed2))
	return m, plan, func() []float64 {
		x := make([]float64, n2)
		for i := range x {
			x[i] = m.Norm.Mu[i] + 0.1*m.Norm.Scale[i]*rng.NormFloat64()
		}
		for i := range 6 {
			x[i] = 0
		}
		return x
	}
}
