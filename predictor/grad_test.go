package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var kinds = []Kind{KindGR, KindGRB}

// forwardCopy applies the map to a copy of z (n rows) through a fresh tape.
func forwardCopy(m *Model, z []float64, n int) []float64 {
	out := append([]float64(nil), z...)
	tr := NewTrainable(m)
	tr.Forward(tr.NewTape(n), out, n)
	return out
}

// fd5 returns the five-point central difference of f at 0 with step h:
// truncation error O(h⁴), so h can be large enough to keep rounding small.
func fd5(f func(h float64) float64, h float64) float64 {
	return (-f(2*h) + 8*f(h) - 8*f(-h) + f(-2*h)) / (12 * h)
}

// maxAbs returns the largest absolute value in v.
func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// TestIsotropyByConstruction checks A Bᵀ = B Aᵀ for random raw parameters.
func TestIsotropyByConstruction(t *testing.T) {
	for _, kind := range kinds {
		m := smallModel(t, kind, 5)
		d := m.Layout.D()
		for i := range m.Arch.Layers {
			a, b := m.layerAB(i)
			for r := range d {
				for c := range d {
					var abT, baT float64
					for k := range d {
						abT += a[r*d+k] * b[c*d+k]
						baT += b[r*d+k] * a[c*d+k]
					}
					if math.Abs(abT-baT) > 1e-14 {
						t.Fatalf("%s layer %d: (ABᵀ)[%d,%d]=%v ≠ (BAᵀ)=%v", kind, i, r, c, abT, baT)
					}
				}
			}
		}
	}
}

// TestRidgeGradient checks ∇K(ξ) of every layer against central differences of K.
func TestRidgeGradient(t *testing.T) {
	for _, kind := range kinds {
		m := smallModel(t, kind, 6)
		rng := rand.New(rand.NewPCG(1, 1))
		d := m.Layout.D()
		tr := NewTrainable(m)
		tape := tr.NewTape(1)
		z := randVec(rng, 2*d, 1)
		tr.Forward(tape, append([]float64(nil), z...), 1)
		for i := range m.Arch.Layers {
			xi := tape.xi[i][:d]
			for k := range d {
				xp, xm := append([]float64(nil), xi...), append([]float64(nil), xi...)
				h := 1e-5
				xp[k] += h
				xm[k] -= h
				fd := (m.layerK(i, xp) - m.layerK(i, xm)) / (2 * h)
				if e := relErr(fd, tape.g[i][k], 1e-8); e > 1e-6 {
					t.Errorf("%s layer %d: ∂K/∂ξ[%d] = %v, FD %v (rel %g)", kind, i, k, tape.g[i][k], fd, e)
				}
			}
		}
	}
}

// TestTangentMatchesFD checks the tangent map (JVP) against central differences.
func TestTangentMatchesFD(t *testing.T) {
	for _, kind := range kinds {
		m := smallModel(t, kind, 7)
		rng := rand.New(rand.NewPCG(2, 2))
		d2 := m.Layout.Dim()
		tr := NewTrainable(m)
		for trial := range 5 {
			z := randVec(rng, d2, 1)
			v := randVec(rng, d2, 1)
			tape := tr.NewTape(1)
			tr.Forward(tape, append([]float64(nil), z...), 1)
			jv := append([]float64(nil), v...)
			tr.Tangent(tape, jv)
			at := func(h float64) []float64 {
				zs := make([]float64, d2)
				for i := range z {
					zs[i] = z[i] + h*v[i]
				}
				return forwardCopy(m, zs, 1)
			}
			h := 1e-4
			f2, f1, m1, m2 := at(2*h), at(h), at(-h), at(-2*h)
			floor := 1e-3 * maxAbs(jv)
			for i := range jv {
				fd := (-f2[i] + 8*f1[i] - 8*m1[i] + m2[i]) / (12 * h)
				if e := relErr(fd, jv[i], floor); e > 1e-6 {
					t.Errorf("%s trial %d: (Jv)[%d] = %v, FD %v (rel %g)", kind, trial, i, jv[i], fd, e)
				}
			}
		}
	}
}

// lossAndGrad evaluates L = Σ w ⊙ (Φ(z) − target)² / 2 over a batch, returning
// the loss, the parameter gradient and the input gradient.
func lossAndGrad(tr *Trainable, z, w, target []float64, n int) (float64, []float64, []float64) {
	out := append([]float64(nil), z...)
	tape := tr.NewTape(n)
	tr.Forward(tape, out, n)
	var loss float64
	zbar := make([]float64, len(out))
	for i := range out {
		r := out[i] - target[i]
		loss += 0.5 * w[i] * r * r
		zbar[i] = w[i] * r
	}
	grad := make([]float64, tr.Model().NumParams())
	tr.Backward(tape, zbar, grad)
	return loss, grad, zbar
}

// TestBackwardMatchesFD checks the parameter gradient and the input adjoint
// of the backward pass against central differences, for every parameter.
func TestBackwardMatchesFD(t *testing.T) {
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			m := smallModel(t, kind, 8)
			tr := NewTrainable(m)
			rng := rand.New(rand.NewPCG(3, 3))
			d2, n := m.Layout.Dim(), 3
			z := randVec(rng, n*d2, 1)
			w := randVec(rng, n*d2, 1)
			for i := range w {
				w[i] = math.Abs(w[i])
			}
			target := randVec(rng, n*d2, 1)
			_, grad, zbar := lossAndGrad(tr, z, w, target, n)
			loss := func() float64 { l, _, _ := lossAndGrad(tr, z, w, target, n); return l }
			worst := 0.0
			floor := 1e-3 * maxAbs(grad)
			theta := tr.Params()
			for i, old := range theta {
				fd := fd5(func(h float64) float64 {
					return withParam(t, tr, i, old+h, loss)
				}, 1e-4)
				e := relErr(fd, grad[i], floor)
				worst = max(worst, e)
				if e > 1e-6 {
					t.Errorf("∂L/∂θ[%d] (%s) = %v, FD %v (rel %g)", i, paramName(tr, i), grad[i], fd, e)
				}
			}
			zfloor := 1e-3 * maxAbs(zbar)
			for i := range z {
				old := z[i]
				fd := fd5(func(h float64) float64 {
					z[i] = old + h
					defer func() { z[i] = old }()
					return loss()
				}, 1e-4)
				if e := relErr(fd, zbar[i], zfloor); e > 1e-6 {
					t.Errorf("∂L/∂z[%d] = %v, FD %v (rel %g)", i, zbar[i], fd, e)
				}
			}
			t.Logf("%s: %d parameters, worst relative error %.2g", kind, len(theta), worst)
		})
	}
}

func paramName(tr *Trainable, i int) string {
	for _, ts := range tr.ParamBlocks() {
		if i >= ts.Offset && i < ts.Offset+ts.Size() {
			return fmt.Sprintf("%s[%d]", ts.Name, i-ts.Offset)
		}
	}
	return "?"
}

// TestPresetGradientSample checks sampled parameter gradients of the full
// presets, where checking all of them would be slow.
func TestPresetGradientSample(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			m := testModel(t, name, 1, 21)
			tr := NewTrainable(m)
			rng := rand.New(rand.NewPCG(4, 4))
			d2, n := m.Layout.Dim(), 2
			z := randVec(rng, n*d2, 1)
			w := make([]float64, n*d2)
			for i := range w {
				w[i] = 1
			}
			target := randVec(rng, n*d2, 1)
			_, grad, _ := lossAndGrad(tr, z, w, target, n)
			floor := 1e-3 * maxAbs(grad)
			theta := tr.Params()
			for _, ts := range tr.ParamBlocks() {
				if rng.IntN(4) != 0 && ts.Size() > 1 {
					continue
				}
				i := ts.Offset + rng.IntN(ts.Size())
				old := theta[i]
				fd := fd5(func(h float64) float64 {
					return withParam(t, tr, i, old+h, func() float64 {
						l, _, _ := lossAndGrad(tr, z, w, target, n)
						return l
					})
				}, 1e-4)
				if e := relErr(fd, grad[i], floor); e > 1e-6 {
					t.Errorf("∂L/∂%s = %v, FD %v (rel %g)", paramName(tr, i), grad[i], fd, e)
				}
			}
		})
	}
}

// TestTrainingPassAllocatesNothing checks that Forward, Backward and Tangent
// on a batch run without heap allocations (all products go through the
// allocation-free kernels).
func TestTrainingPassAllocatesNothing(t *testing.T) {
	for _, name := range []string{"pendulum", "quadrotor"} {
		m := testModel(t, name, 0.5, 3)
		tr := NewTrainable(m)
		const rows = 64
		d2 := m.Layout.Dim()
		rng := rand.New(rand.NewPCG(4, 4))
		z0 := randVec(rng, rows*d2, 0.5)
		z, zbar, dz := make([]float64, rows*d2), make([]float64, rows*d2), make([]float64, rows*d2)
		grad := make([]float64, m.NumParams())
		tape := tr.NewTape(rows)
		a := testing.AllocsPerRun(5, func() {
			copy(z, z0)
			tr.Forward(tape, z, rows)
			copy(zbar, z)
			tr.Backward(tape, zbar, grad)
			copy(dz, z0)
			tr.Tangent(tape, dz)
		})
		if a != 0 {
			t.Errorf("%s: training pass allocates %v times", name, a)
		}
	}
}
