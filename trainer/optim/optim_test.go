package optim

import (
	"bytes"
	"encoding/gob"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/calisym/calisym/predictor"
)

// pair returns a 2×2 matrix W and a 2-vector b bound to one flat vector.
func pair(t *testing.T) (theta, grad []float64, ts []Tensor) {
	t.Helper()
	theta = []float64{1, -2, 0.5, 3, 0.1, -0.3}
	grad = make([]float64, len(theta))
	ts, err := Bind(theta, grad, []predictor.ParamBlock{{Name: "W", Rows: 2, Cols: 2}, {Name: "b", Rows: 2, Cols: 1, Offset: 4}})
	if err != nil {
		t.Fatal(err)
	}
	return theta, grad, ts
}

// grads holds the gradients of the two hand-computed steps (W then b).
var grads = [2][]float64{
	{0.5, -0.1, 0.2, 0.0, 1, -2},
	{0.3, 0.4, -0.2, 1.0, -0.5, 0.25},
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestAdamWHandComputed(t *testing.T) {
	// lr = 0.1, wd = 0.01, β = (0.9, 0.999), eps = 1e-8.
	// Step 1: m̂ = g, v̂ = g², so p1 = 0.999·p0 − 0.1·g/(|g| + 1e-8):
	//   W00: 0.999·1 − 0.1·0.5/0.50000001 = 0.899000002
	//   W11: g = 0 → 0.999·3 = 2.997
	//   b0 : 0.999·0.1 − 0.1·1/1.00000001 = −9.9999e-5 (+1e-17)
	// Step 2: m = 0.09·g1+0.1·g2 … bias-corrected with 1−0.9², 1−0.999².
	want := [2][]float64{
		{0.899000002, -1.898000009999999, 0.39950000499999977, 2.997, -9.999900000001727e-05, -0.19970000049999997},
		{0.802351986706876, -1.9520523574751285, 0.4043636626265787, 2.9195893186954067, -0.026733602630096852, -0.14224684332845547},
	}
	theta, grad, ts := pair(t)
	o, err := NewAdamW(ts, AdamWConfig{LR: 0.2, WeightDecay: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		copy(grad, grads[k])
		o.Step(0.5) // lr = 0.2·0.5 = 0.1
		for i := range theta {
			if !near(theta[i], want[k][i], 1e-14) {
				t.Errorf("step %d θ[%d] = %.17g, want %.17g", k+1, i, theta[i], want[k][i])
			}
		}
	}
	if o.Steps() != 2 {
		t.Errorf("Steps() = %d, want 2", o.Steps())
	}
}

func TestMuonHandComputed(t *testing.T) {
	// W (2×2) by Muon: lr 0.02, μ 0.95, Nesterov, wd 0.01, 5 quintic NS
	// steps; b (vector) by AdamW with the numbers of TestAdamWHandComputed.
	// Step 1: buf = g1, u = 1.95·g1, O = NS(u), W1 = 0.9998·W0 − 0.02·O.
	want := [2][]float64{
		{0.9883438577713242, -1.9893565478510287, 0.4913414312569116, 2.97951944074191, -9.999900000001727e-05, -0.19970000049999997},
		{0.9672184341313236, -1.9922046772862623, 0.49837483593327214, 2.9653888751430917, -0.026733602630096852, -0.14224684332845547},
	}
	theta, grad, ts := pair(t)
	o, err := NewMuon(ts, MuonConfig{LR: 0.02, WeightDecay: 0.01, Adam: AdamWConfig{LR: 0.1, WeightDecay: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		copy(grad, grads[k])
		o.Step(1)
		for i := range theta {
			if !near(theta[i], want[k][i], 1e-13) {
				t.Errorf("step %d θ[%d] = %.17g, want %.17g", k+1, i, theta[i], want[k][i])
			}
		}
	}
}

func TestNewtonSchulzDiagonal(t *testing.T) {
	// For G = diag(3, 4), X0 = diag(0.6, 0.8) and each step maps every
	// singular value s to a·s + b·s³ + c·s⁵ independently.
	phi := func(s float64) float64 {
		for range 5 {
			s = nsA*s + nsB*s*s*s + nsC*s*s*s*s*s
		}
		return s
	}
	s1, s2 := phi(3/(5+nsEps)), phi(4/(5+nsEps))
	// 0.72287612962695…, 1.11920390417788…
	if !near(s1, 0.7228761296269504, 1e-12) || !near(s2, 1.1192039041778874, 1e-12) {
		t.Fatalf("scalar iteration %v %v", s1, s2)
	}
	dst := make([]float64, 4)
	NewtonSchulz(dst, []float64{3, 0, 0, 4}, 2, 2, 5)
	want := []float64{s1, 0, 0, s2}
	for i := range dst {
		if !near(dst[i], want[i], 1e-14) {
			t.Errorf("dst[%d] = %v, want %v", i, dst[i], want[i])
		}
	}
}

func TestNewtonSchulzTall(t *testing.T) {
	// Reference from an independent triple-loop implementation.
	g := []float64{1, 2, 3, 4, 5, 6}
	want := []float64{-0.4675185653830405, 0.5734733070704348, 0.07243228751324893, 0.40945262230968504, 0.6123831404095399, 0.2454319375489331}
	NewtonSchulz(g, g, 3, 2, 5) // in place
	for i := range g {
		if !near(g[i], want[i], 1e-13) {
			t.Errorf("[%d] = %v, want %v", i, g[i], want[i])
		}
	}
}

func TestNewtonSchulzSingularValues(t *testing.T) {
	tests := []struct{ rows, cols int }{{8, 5}, {5, 8}, {16, 16}, {1, 7}, {64, 12}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range tests {
		g := make([]float64, tc.rows*tc.cols)
		for i := range g {
			g[i] = rng.NormFloat64()
		}
		dst := make([]float64, len(g))
		NewtonSchulz(dst, g, tc.rows, tc.cols, 5)
		var in, out mat.SVD
		if !in.Factorize(mat.NewDense(tc.rows, tc.cols, g), mat.SVDThin) || !out.Factorize(mat.NewDense(tc.rows, tc.cols, dst), mat.SVDThin) {
			t.Fatalf("%d×%d: SVD failed", tc.rows, tc.cols)
		}
		sv := out.Values(nil)
		for _, s := range sv {
			if s < 0.65 || s > 1.2 {
				t.Errorf("%d×%d: singular value %v outside [0.65, 1.2] (all %v)", tc.rows, tc.cols, s, sv)
			}
		}
		// Same singular vectors: dst ≈ U·S'·Vᵀ, so Uᵀ·dst·V is diagonal.
		var u, v mat.Dense
		in.UTo(&u)
		in.VTo(&v)
		var m, d mat.Dense
		m.Mul(u.T(), mat.NewDense(tc.rows, tc.cols, dst))
		d.Mul(&m, &v)
		r, c := d.Dims()
		for i := range r {
			for j := range c {
				if i != j && math.Abs(d.At(i, j)) > 1e-10 {
					t.Errorf("%d×%d: off-diagonal Uᵀ·O·V[%d,%d] = %v", tc.rows, tc.cols, i, j, d.At(i, j))
				}
			}
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	tests := []struct {
		name    string
		g       []float64
		max     float64
		norm    float64
		clipped []float64
	}{
		{"below", []float64{3, 0, 0, 0, 0, 4}, 10, 5, []float64{3, 0, 0, 0, 0, 4}},
		{"above", []float64{3, 0, 0, 0, 0, 4}, 1, 5, []float64{0.6, 0, 0, 0, 0, 0.8}},
		{"disabled", []float64{30, 0, 0, 0, 0, 40}, 0, 50, []float64{30, 0, 0, 0, 0, 40}},
		{"zero", []float64{0, 0, 0, 0, 0, 0}, 1, 0, []float64{0, 0, 0, 0, 0, 0}},
		{"nan", []float64{math.NaN(), 0, 0, 0, 0, 1}, 1, math.NaN(), []float64{math.NaN(), 0, 0, 0, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, grad, ts := pair(t)
			copy(grad, tc.g)
			n := ClipGradNorm(ts, tc.max)
			if !(near(n, tc.norm, 1e-15) || math.IsNaN(n) && math.IsNaN(tc.norm)) {
				t.Errorf("norm = %v, want %v", n, tc.norm)
			}
			for i := range grad {
				if !(near(grad[i], tc.clipped[i], 1e-6) || math.IsNaN(grad[i]) && math.IsNaN(tc.clipped[i])) {
					t.Errorf("grad[%d] = %v, want %v", i, grad[i], tc.clipped[i])
				}
			}
			if n := GradNorm(ts); !math.IsNaN(tc.norm) && n > math.Max(tc.max, 0)+1e-9 && tc.max > 0 {
				t.Errorf("norm after clipping %v > %v", n, tc.max)
			}
		})
	}
}

func TestSchedules(t *testing.T) {
	cos := WarmupCosine{Warmup: 3, Total: 13, MinFactor: 0.1}
	tests := []struct {
		name string
		s    Schedule
		t    int
		want float64
	}{
		{"constant", Constant{}, 7, 1},
		{"warmup0", cos, 0, 0.25},
		{"warmup2", cos, 2, 0.75},
		{"peak", cos, 3, 1},
		{"mid", cos, 8, 0.55},
		{"end", cos, 13, 0.1},
		{"after", cos, 40, 0.1},
		{"step0", StepDecay{Every: 10, Gamma: 0.5}, 9, 1},
		{"step1", StepDecay{Every: 10, Gamma: 0.5}, 10, 0.5},
		{"step2", StepDecay{Every: 10, Gamma: 0.5}, 25, 0.25},
		{"alphaHold", AlphaSchedule{Hold: 50, Ramp: 50, Final: 0}, 49, 1},
		{"alphaStart", AlphaSchedule{Hold: 50, Ramp: 50, Final: 0}, 50, 1},
		{"alphaMid", AlphaSchedule{Hold: 50, Ramp: 50, Final: 0}, 75, 0.5},
		{"alphaMidFinal", AlphaSchedule{Hold: 50, Ramp: 50, Final: 0.5}, 75, 0.75},
		{"alphaEnd", AlphaSchedule{Hold: 50, Ramp: 50, Final: 0.2}, 100, 0.2},
		{"alphaAfter", AlphaSchedule{Hold: 50, Ramp: 50, Final: 0.2}, 400, 0.2},
		{"alphaJump", AlphaSchedule{Hold: 5, Final: 0.3}, 5, 0.3},
	}
	for _, tc := range tests {
		if got := tc.s.At(tc.t); !near(got, tc.want, 1e-15) {
			t.Errorf("%s: At(%d) = %v, want %v", tc.name, tc.t, got, tc.want)
		}
	}
	if err := (AlphaSchedule{Final: 1.5}).Validate(); err == nil {
		t.Error("Validate accepted final α 1.5")
	}
}

// newOpt builds an optimiser of the given kind over a random 6×4 matrix,
// a 4-vector and a NoMuon 3×3 matrix.
func newOpt(t *testing.T, kind string) (Optimizer, []float64, []float64) {
	t.Helper()
	theta := make([]float64, 24+4+9)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	grad := make([]float64, len(theta))
	ts, err := Bind(theta, grad, []predictor.ParamBlock{{Name: "W", Rows: 6, Cols: 4}, {Name: "b", Rows: 4, Cols: 1, Offset: 24}, {Name: "S", Rows: 3, Cols: 3, Offset: 28}})
	if err != nil {
		t.Fatal(err)
	}
	ts[2].NoMuon = true
	var o Optimizer
	if kind == KindAdamW {
		o, err = NewAdamW(ts, AdamWConfig{LR: 1e-2, WeightDecay: 1e-3})
	} else {
		o, err = NewMuon(ts, MuonConfig{LR: 1e-2, WeightDecay: 1e-3, Adam: AdamWConfig{LR: 3e-3}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return o, theta, grad
}

func fakeGrad(grad, theta []float64, k int) {
	for i := range grad {
		grad[i] = math.Sin(float64(i+1)*theta[i]+float64(k)) + 0.1*theta[i]
	}
}

func TestStateRoundTrip(t *testing.T) {
	for _, kind := range []string{KindAdamW, KindMuon} {
		t.Run(kind, func(t *testing.T) {
			a, ta, ga := newOpt(t, kind)
			for k := range 3 {
				fakeGrad(ga, ta, k)
				a.Step(0.7)
			}
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(a.State()); err != nil {
				t.Fatal(err)
			}
			saved := slices.Clone(ta)
			b, tb, gb := newOpt(t, kind)
			copy(tb, saved)
			var st State
			if err := gob.NewDecoder(&buf).Decode(&st); err != nil {
				t.Fatal(err)
			}
			if err := b.SetState(st); err != nil {
				t.Fatal(err)
			}
			if b.Steps() != 3 {
				t.Fatalf("restored step %d, want 3", b.Steps())
			}
			for k := 3; k < 6; k++ {
				fakeGrad(ga, ta, k)
				a.Step(0.7)
				fakeGrad(gb, tb, k)
				b.Step(0.7)
			}
			for i := range ta {
				if math.Float64bits(ta[i]) != math.Float64bits(tb[i]) {
					t.Fatalf("θ[%d]: %v after continuing, %v after restoring", i, ta[i], tb[i])
				}
			}
		})
	}
}

func TestSetStateRejects(t *testing.T) {
	o, _, _ := newOpt(t, KindMuon)
	good := o.State()
	tests := []struct {
		name string
		edit func(*State)
	}{
		{"kind", func(s *State) { s.Kind = KindAdamW }},
		{"missing", func(s *State) { delete(s.Buffers, "W.momentum_buffer") }},
		{"extra", func(s *State) { s.Buffers["x.exp_avg"] = nil }},
		{"length", func(s *State) { s.Buffers["b.exp_avg"] = []float64{1} }},
		{"step", func(s *State) { s.Step = -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good.Clone()
			tc.edit(&s)
			if err := o.SetState(s); !errors.Is(err, ErrState) {
				t.Errorf("SetState = %v, want ErrState", err)
			}
		})
	}
	if err := o.SetState(good); err != nil {
		t.Errorf("SetState(good) = %v", err)
	}
}

func TestBindRejects(t *testing.T) {
	theta, grad := make([]float64, 10), make([]float64, 10)
	tests := []struct {
		name   string
		grad   []float64
		blocks []predictor.ParamBlock
	}{
		{"lengths", grad[:9], []predictor.ParamBlock{{Name: "a", Rows: 1, Cols: 1}}},
		{"outside", grad, []predictor.ParamBlock{{Name: "a", Rows: 3, Cols: 4}}},
		{"overlap", grad, []predictor.ParamBlock{{Name: "a", Rows: 2, Cols: 2}, {Name: "b", Rows: 2, Cols: 1, Offset: 3}}},
		{"duplicate", grad, []predictor.ParamBlock{{Name: "a", Rows: 2, Cols: 1}, {Name: "a", Rows: 2, Cols: 1, Offset: 2}}},
		{"empty", grad, []predictor.ParamBlock{{Name: "a", Rows: 0, Cols: 1}}},
	}
	for _, tc := range tests {
		if _, err := Bind(theta, tc.grad, tc.blocks); !errors.Is(err, ErrShape) {
			t.Errorf("%s: Bind = %v, want ErrShape", tc.name, err)
		}
	}
}

func TestStepAllocs(t *testing.T) {
	for _, kind := range []string{KindAdamW, KindMuon} {
		o, theta, grad := newOpt(t, kind)
		fakeGrad(grad, theta, 0)
		if n := testing.AllocsPerRun(10, func() { o.Step(1) }); n != 0 {
			t.Errorf("%s: %v allocations per step", kind, n)
		}
	}
}

func BenchmarkMuonStep66(b *testing.B) {
	const d = 66
	theta := make([]float64, 3*d*d)
	grad := make([]float64, len(theta))
	var blocks []predictor.ParamBlock
	for i := range 3 {
		blocks = append(blocks, predictor.ParamBlock{Name: string(rune('A' + i)), Rows: d, Cols: d, Offset: i * d * d})
	}
	ts, err := Bind(theta, grad, blocks)
	if err != nil {
		b.Fatal(err)
	}
	for i := range grad {
		grad[i] = math.Sin(float64(i))
	}
	o, err := NewMuon(ts, MuonConfig{LR: 1e-2})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		o.Step(1)
	}
}

// TestMuonParallelDeterministic: the matrices are orthogonalised by as many
// goroutines as GOMAXPROCS allows; each matrix is independent, so the
// parameters after a few steps are the same bits with one goroutine or two.
func TestMuonParallelDeterministic(t *testing.T) {
	run := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		const d = 9
		theta := make([]float64, 5*d*d+d)
		grad := make([]float64, len(theta))
		var blocks []predictor.ParamBlock
		for i := range 5 {
			blocks = append(blocks, predictor.ParamBlock{Name: string(rune('A' + i)), Rows: d, Cols: d, Offset: i * d * d})
		}
		blocks = append(blocks, predictor.ParamBlock{Name: "v", Rows: d, Cols: 1, Offset: 5 * d * d})
		ts, err := Bind(theta, grad, blocks)
		if err != nil {
			t.Fatal(err)
		}
		o, err := NewMuon(ts, MuonConfig{LR: 1e-2, WeightDecay: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		for s := range 4 {
			for i := range grad {
				grad[i] = math.Sin(float64(i*(s+1))) + 0.1*theta[i]
			}
			o.Step(1)
		}
		return theta
	}
	one, two := run(1), run(2)
	for i := range one {
		if math.Float64bits(one[i]) != math.Float64bits(two[i]) {
			t.Fatalf("parameter %d: %v with one goroutine, %v with two", i, one[i], two[i])
		}
	}
}
