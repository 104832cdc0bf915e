package mlp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calisym/calisym/trainer/optim"
)

// pendulum is the double-pendulum shape: n = 2, n_u = 2.
var pendulum = Config{StateDim: 4, PortDim: 2, Hidden: []int{96, 96}}

// randomNorm returns a non-trivial normalisation.
func randomNorm(rng *rand.Rand, nx, ne int) Norm {
	nm := IdentityNorm(nx, ne)
	for i := range nx {
		nm.MuX[i], nm.SX[i], nm.SDelta[i] = rng.NormFloat64(), 0.5+rng.Float64(), 0.05+0.1*rng.Float64()
	}
	for i := range ne {
		nm.MuE[i], nm.SE[i] = rng.NormFloat64(), 0.5+rng.Float64()
	}
	return nm
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func TestNumParamsAndFLOPs(t *testing.T) {
	tests := []struct {
		cfg    Config
		params int
		flops  int
	}{
		// 6·96+96 + 96·96+96 + 96·4+4
		{pendulum, 10372, 2*6 + 2*(6*96+96*96+96*4) + (96 + 96 + 4) + 2*96 + 2*4},
		{Config{StateDim: 2, PortDim: 0}, 2*2 + 2, 2*2 + 2*4 + 2 + 0 + 2*2},
		{Config{StateDim: 3, PortDim: 1, Hidden: []int{5}}, 4*5 + 5 + 5*3 + 3, 2*4 + 2*(20+15) + 8 + 5 + 6},
	}
	for _, tc := range tests {
		m := New(tc.cfg, rand.New(rand.NewPCG(1, 1)))
		if m.NumParams() != tc.params || tc.cfg.NumParams() != tc.params {
			t.Errorf("%+v: %d parameters, want %d", tc.cfg, m.NumParams(), tc.params)
		}
		if m.FLOPs() != tc.flops {
			t.Errorf("%+v: %d FLOPs (%v), want %d", tc.cfg, m.FLOPs(), m.FLOPsByOp(), tc.flops)
		}
		n := 0
		for _, p := range m.Params() {
			n += p.Size()
		}
		if n != tc.params {
			t.Errorf("%+v: tensors cover %d parameters", tc.cfg, n)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []Config{{StateDim: 0, PortDim: 1}, {StateDim: 2, PortDim: -1}, {StateDim: 2, Hidden: []int{3, 0}}}
	for _, c := range tests {
		if err := c.Validate(); !errors.Is(err, ErrModel) {
			t.Errorf("%+v: Validate = %v", c, err)
		}
	}
	m := New(pendulum, rand.New(rand.NewPCG(1, 1)))
	bad := IdentityNorm(4, 2)
	bad.SDelta[1] = 0
	if err := m.SetNorm(bad); !errors.Is(err, ErrModel) {
		t.Errorf("SetNorm accepted a zero scale: %v", err)
	}
	if err := m.SetNorm(IdentityNorm(4, 3)); !errors.Is(err, ErrModel) {
		t.Errorf("SetNorm accepted wrong lengths: %v", err)
	}
}

// TestGradientFiniteDifference checks Backward against central differences
// of a weighted squared error, for parameters and inputs.
func TestGradientFiniteDifference(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"pendulum-small", Config{StateDim: 4, PortDim: 2, Hidden: []int{7, 5}}},
		{"no-ports", Config{StateDim: 2, PortDim: 0, Hidden: []int{6}}},
		{"linear", Config{StateDim: 3, PortDim: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			m := New(tc.cfg, rng)
			if err := m.SetNorm(randomNorm(rng, tc.cfg.StateDim, tc.cfg.PortDim)); err != nil {
				t.Fatal(err)
			}
			const n = 5
			nx, ne := tc.cfg.StateDim, tc.cfg.PortDim
			x, e, y := randVec(rng, n*nx), randVec(rng, n*ne), randVec(rng, n*nx)
			w := make([]float64, nx)
			for i := range w {
				w[i] = 1 + float64(i)
			}
			ws := m.NewWorkspace(n)
			pred, dPred := make([]float64, n*nx), make([]float64, n*nx)
			loss := func() float64 {
				m.Forward(ws, x, e, n, pred)
				return WeightedSquaredError(pred, y, w, nil)
			}
			m.Forward(ws, x, e, n, pred)
			WeightedSquaredError(pred, y, w, dPred)
			grad, dx := make([]float64, m.NumParams()), make([]float64, n*nx)
			m.Backward(ws, dPred, grad, dx)
			check := func(what string, v []float64, analytic []float64) {
				for i := range v {
					// fourth-order central difference
					h := 1e-4 * math.Max(1, math.Abs(v[i]))
					old := v[i]
					at := func(s float64) float64 { v[i] = old + s*h; return loss() }
					fd := (8*(at(1)-at(-1)) - (at(2) - at(-2))) / (12 * h)
					v[i] = old
					if rel := math.Abs(fd-analytic[i]) / math.Max(math.Abs(fd)+math.Abs(analytic[i]), 1e-3); rel > 1e-6 {
						t.Errorf("%s[%d]: analytic %.12g, central difference %.12g (rel %.2g)", what, i, analytic[i], fd, rel)
					}
				}
			}
			check("θ", m.Theta(), grad)
			check("x", x, dx)
		})
	}
}

// TestBatchMatchesStep requires every row of a batch to have the bits of
// Step on that row.
func TestBatchMatchesStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := New(pendulum, rng)
	if err := m.SetNorm(randomNorm(rng, 4, 2)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 130} {
		x, e := randVec(rng, n*4), randVec(rng, n*2)
		pred := make([]float64, n*4)
		ws := m.NewWorkspace(n)
		m.Forward(ws, x, e, n, pred)
		one := make([]float64, 4)
		for r := range n {
			m.Step(x[r*4:(r+1)*4], e[r*2:(r+1)*2], one)
			for i := range one {
				if math.Float64bits(one[i]) != math.Float64bits(pred[r*4+i]) {
					t.Errorf("n=%d row %d ch %d: step %v, batch %v", n, r, i, one[i], pred[r*4+i])
				}
			}
		}
	}
}

func TestStepAllocationFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New(pendulum, rng)
	x, e := randVec(rng, 4), randVec(rng, 2)
	if n := testing.AllocsPerRun(20, func() { m.Step(x, e, x) }); n != 0 {
		t.Errorf("Step allocates %v times", n)
	}
	// Forward and Backward allocate nothing, at any batch size.
	for _, n := range []int{16, 300} {
		cfg := Config{StateDim: 4, PortDim: 2, Hidden: []int{32, 40}}
		mb := New(cfg, rng)
		ws := mb.NewWorkspace(n)
		xb, eb, pb, dx := randVec(rng, n*4), randVec(rng, n*2), make([]float64, n*4), make([]float64, n*4)
		g := make([]float64, mb.NumParams())
		if a := testing.AllocsPerRun(5, func() { mb.Forward(ws, xb, eb, n, pb); mb.Backward(ws, pb, g, dx) }); a != 0 {
			t.Errorf("Forward+Backward of %d rows allocates %v times", n, a)
		}
	}
}

func TestRollout(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := New(pendulum, rng)
	const h = 6
	x0, ports := randVec(rng, 4), randVec(rng, h*2)
	out := make([]float64, h*4)
	if err := m.Rollout(x0, ports, h, out); err != nil {
		t.Fatal(err)
	}
	x := slices.Clone(x0)
	for k := range h {
		m.Step(x, ports[k*2:(k+1)*2], x)
		if !slices.Equal(x, out[k*4:(k+1)*4]) {
			t.Fatalf("step %d: rollout %v, manual %v", k, out[k*4:(k+1)*4], x)
		}
	}
	if err := m.Rollout(x0, ports[:3], h, out); err == nil {
		t.Error("Rollout accepted too few ports")
	}
}

func TestExportLoad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m := New(pendulum, rng)
	if err := m.SetNorm(randomNorm(rng, 4, 2)); err != nil {
		t.Fatal(err)
	}
	cfg, w, err := m.Export()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Load(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Theta(), m2.Theta()) {
		t.Error("parameters differ after Load")
	}
	x, e := randVec(rng, 4), randVec(rng, 2)
	a, b := make([]float64, 4), make([]float64, 4)
	m.Step(x, e, a)
	m2.Step(x, e, b)
	if !slices.Equal(a, b) {
		t.Errorf("predictions differ after Load: %v vs %v", a, b)
	}
	tests := []struct {
		name string
		edit func(map[string][]float64)
	}{
		{"missing", func(w map[string][]float64) { delete(w, "layers.1.bias") }},
		{"short", func(w map[string][]float64) { w["layers.0.weight"] = w["layers.0.weight"][:3] }},
		{"extra", func(w map[string][]float64) { w["layers.9.bias"] = []float64{1} }},
		{"norm", func(w map[string][]float64) { w["norm.s_x"] = []float64{1, 1, -1, 1} }},
	}
	for _, tc := range tests {
		_, w, _ := m.Export()
		tc.edit(w)
		if _, err := Load(cfg, w); !errors.Is(err, ErrModel) {
			t.Errorf("%s: Load = %v, want ErrModel", tc.name, err)
		}
	}
	if _, err := Load([]byte("{"), w); !errors.Is(err, ErrModel) {
		t.Errorf("Load of bad JSON = %v", err)
	}
}

// TestFitLinearSystem trains on x' = A·x + B·u with AdamW and requires the
// one-step loss to fall by two orders of magnitude.
func TestFitLinearSystem(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	cfg := Config{StateDim: 2, PortDim: 1, Hidden: []int{16}}
	const n = 256
	x, e, y := randVec(rng, n*2), randVec(rng, n), make([]float64, n*2)
	for r := range n {
		q, p, u := x[2*r], x[2*r+1], e[r]
		y[2*r] = q + 0.1*p
		y[2*r+1] = p - 0.1*q - 0.05*p + 0.1*u
	}
	nm, err := ComputeNorm(x, e, y, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := New(cfg, rng)
	if err := m.SetNorm(nm); err != nil {
		t.Fatal(err)
	}
	opt, err := optim.NewAdamW(m.Params(), optim.AdamWConfig{LR: 1e-2})
	if err != nil {
		t.Fatal(err)
	}
	ws := m.NewWorkspace(n)
	pred, dPred := make([]float64, n*2), make([]float64, n*2)
	w := []float64{1 / float64(n), 1 / float64(n)}
	var first, last float64
	for it := range 400 {
		m.Forward(ws, x, e, n, pred)
		last = WeightedSquaredError(pred, y, w, dPred)
		if it == 0 {
			first = last
		}
		optim.ZeroGrad(opt.Tensors())
		m.Backward(ws, dPred, m.Grad(), nil)
		opt.Step(1)
	}
	if !(last < first/100) {
		t.Errorf("loss %.3g → %.3g, want a 100× reduction", first, last)
	}
}

func TestComputeNorm(t *testing.T) {
	x := []float64{0, 10, 2, 10}
	e := []float64{1, 3}
	y := []float64{1, 10, 5, 10}
	nm, err := ComputeNorm(x, e, y, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := Norm{MuX: []float64{1, 10}, SX: []float64{1, 1}, MuE: []float64{2}, SE: []float64{1}, SDelta: []float64{1, 1}}
	for k, v := range want.named() {
		if !slices.Equal(nm.named()[k], v) {
			t.Errorf("%s = %v, want %v", k, nm.named()[k], v)
		}
	}
	if _, err := ComputeNorm(x[:2], e[:1], y[:2], 2, 1); !errors.Is(err, ErrModel) {
		t.Errorf("ComputeNorm of one transition = %v", err)
	}
}

// quadruped is the ANYmal benchmark's MLP: the 36-dimensional state, the
// 30 port channels and two hidden layers of 512 (315,428 parameters).
var quadruped = Config{StateDim: 36, PortDim: 30, Hidden: []int{512, 512}}

// BenchmarkForwardBackward measures one training pass (forward, loss,
// backward) per batch on one goroutine; transitions/s is the figure per
// core.
func BenchmarkForwardBackward(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
		n    int
	}{{"pendulum/N256", pendulum, 256}, {"pendulum/N1024", pendulum, 1024}, {"quadruped/N256", quadruped, 256}} {
		b.Run(c.name, func(b *testing.B) {
			n, nx, ne := c.n, c.cfg.StateDim, c.cfg.PortDim
			rng := rand.New(rand.NewPCG(1, 2))
			m := New(c.cfg, rng)
			ws := m.NewWorkspace(n)
			x, e, y := randVec(rng, n*nx), randVec(rng, n*ne), randVec(rng, n*nx)
			pred, dPred, g := make([]float64, n*nx), make([]float64, n*nx), make([]float64, m.NumParams())
			w := make([]float64, nx)
			for i := range w {
				w[i] = 1
			}
			b.ReportAllocs()
			for b.Loop() {
				m.Forward(ws, x, e, n, pred)
				WeightedSquaredError(pred, y, w, dPred)
				m.Backward(ws, dPred, g, nil)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "transitions/s")
		})
	}
}

func BenchmarkStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New(pendulum, rng)
	x, e := randVec(rng, 4), randVec(rng, 2)
	b.ReportAllocs()
	for b.Loop() {
		m.Step(x, e, x)
	}
}
