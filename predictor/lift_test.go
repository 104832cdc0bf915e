package predictor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPresetDimensions(t *testing.T) {
	for _, tc := range []struct {
		name string
		dim  int
	}{{"pendulum", 12}, {"quadrotor", 36}, {"quadruped", 132}} {
		p, err := LookupPreset(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Layout.Dim(); got != tc.dim {
			t.Errorf("%s: lifted dim %d, want %d", tc.name, got, tc.dim)
		}
	}
	if _, err := LookupPreset("hexapod"); err == nil {
		t.Error("unknown preset accepted")
	}
}

func TestSectionProjection(t *testing.T) {
	l := Layout{N: 3, NU: 2, NC: 4}
	x := []float64{1, 2, 3, 4, 5, 6}
	e := []float64{7, 8, 9, 10, 11, 12}
	z := make([]float64, l.Dim())
	for i := range z {
		z[i] = math.NaN() // Section must overwrite everything
	}
	l.Section(z, x, e)
	d := l.D()
	want := make([]float64, 2*d)
	copy(want[0:3], x[0:3])    // q
	copy(want[8:12], e[2:6])   // λ_c
	copy(want[d+3:d+6], x[3:]) // p
	copy(want[d+6:d+8], e[:2]) // μ_u
	for i := range z {
		if z[i] != want[i] {
			t.Fatalf("σ(x)[%d] (%s) = %v, want %v", i, l.BlockName(i), z[i], want[i])
		}
	}
	back := make([]float64, 6)
	l.Project(back, z)
	for i := range back {
		if back[i] != x[i] {
			t.Fatalf("Π σ(x) ≠ x at %d", i)
		}
	}
	// Section fibres are exactly the entries σ sets to zero regardless of input.
	for i := range z {
		if l.IsSectionFibre(i) != (z[i] == 0) {
			t.Errorf("index %d (%s): fibre=%v but value %v", i, l.BlockName(i), l.IsSectionFibre(i), z[i])
		}
	}
}

func TestBaseFibrePairs(t *testing.T) {
	l := Layout{N: 2, NU: 1, NC: 1}
	cases := []struct {
		k         int
		base, fib string
		sign      float64
	}{
		{0, "q", "r", 1}, {2, "p", "y", -1}, {4, "mu_u", "lambda_u", -1}, {5, "lambda_c", "pi_c", 1},
	}
	for _, c := range cases {
		if got := l.BlockName(l.BaseIndex(c.k)); got != c.base {
			t.Errorf("pair %d base %s, want %s", c.k, got, c.base)
		}
		i, s := l.FibreIndex(c.k)
		if got := l.BlockName(i); got != c.fib || s != c.sign {
			t.Errorf("pair %d fibre %s sign %v, want %s %v", c.k, got, s, c.fib, c.sign)
		}
	}
}

// TestNormalizationCanonical checks that the base–fibre normalisation is a
// symplectic map: its Jacobian J satisfies JᵀΩJ = Ω, while standardising every
// coordinate independently does not.
func TestNormalizationCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := Layout{N: 3, NU: 2, NC: 2}
	nz := IdentityNormalization(l)
	for k := range nz.Mu {
		nz.Mu[k], nz.Scale[k] = rng.NormFloat64(), math.Exp(2*rng.NormFloat64())
	}
	dim := l.Dim()
	diag := nz.Diag(l)
	jac := make([]float64, dim*dim)
	for i := range dim {
		jac[i*dim+i] = diag[i]
	}
	res, err := SymplecticResidual(jac, dim)
	if err != nil {
		t.Fatal(err)
	}
	if res > 1e-15 {
		t.Errorf("normalisation residual %g", res)
	}
	// Numerical Jacobian of Apply agrees with Diag.
	z := randVec(rng, dim, 1)
	for i := range dim {
		zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
		zp[i] += 1e-6
		zm[i] -= 1e-6
		nz.Apply(l, zp)
		nz.Apply(l, zm)
		if fd := (zp[i] - zm[i]) / 2e-6; relErr(fd, diag[i], 1e-12) > 1e-8 {
			t.Errorf("d Apply/dz[%d] = %v, Diag %v", i, fd, diag[i])
		}
	}
	// Round trip.
	w := append([]float64(nil), z...)
	nz.Apply(l, w)
	nz.Invert(l, w)
	for i := range z {
		if math.Abs(w[i]-z[i]) > 1e-12*math.Max(1, math.Abs(z[i])) {
			t.Fatalf("Invert(Apply(z)) ≠ z at %d", i)
		}
	}
	// Independent standardisation (both coordinates of a pair divided) breaks it.
	for i := range dim {
		jac[i*dim+i] = 1 / nz.Scale[i%l.D()]
	}
	if res, _ := SymplecticResidual(jac, dim); res < 1e-3 {
		t.Errorf("independent standardisation unexpectedly canonical (%g)", res)
	}
	if err := (Normalization{Mu: nz.Mu, Scale: make([]float64, l.D())}).Validate(l); err == nil {
		t.Error("zero scales accepted")
	}
}

func TestSplineBasis(t *testing.T) {
	s := Spline{Intervals: 12, Lo: -3.5, Hi: 3.5}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		x := -3.5 + 7*rng.Float64()
		sum := 0.0
		for _, b := range s.Basis(x) {
			if b < 0 {
				t.Fatalf("negative basis value at %v", x)
			}
			sum += b
		}
		if math.Abs(sum-1) > 1e-14 {
			t.Fatalf("basis sums to %v at %v", sum, x)
		}
	}
	// Derivatives against central differences, including outside the knot range.
	for range 300 {
		x := -7 + 14*rng.Float64()
		var b, db, d2b, bp, bm, dbp, dbm, tmp [4]float64
		f, _ := s.Eval(x, &b, &db, &d2b)
		h := 1e-6
		fp, _ := s.Eval(x+h, &bp, &dbp, &tmp)
		fm, _ := s.Eval(x-h, &bm, &dbm, &tmp)
		if fp != f || fm != f {
			continue // straddles a knot
		}
		for i := range 4 {
			if fd := (bp[i] - bm[i]) / (2 * h); math.Abs(fd-db[i]) > 1e-7*math.Max(1, math.Abs(db[i])) {
				t.Fatalf("B'[%d](%v) = %v, FD %v", i, x, db[i], fd)
			}
			if fd := (dbp[i] - dbm[i]) / (2 * h); math.Abs(fd-d2b[i]) > 1e-6*math.Max(1, math.Abs(d2b[i])) {
				t.Fatalf("B''[%d](%v) = %v, FD %v", i, x, d2b[i], fd)
			}
		}
	}
	// Far outside the support every basis function vanishes.
	for _, x := range []float64{-100, 100, math.NaN()} {
		for _, b := range s.Basis(x) {
			if b != 0 {
				t.Fatalf("basis non-zero at %v", x)
			}
		}
	}
}
