package mechanics

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func maxDiff3(a, b Mat3) float64 {
	d := 0.0
	for i := range 3 {
		for j := range 3 {
			d = math.Max(d, math.Abs(a[i][j]-b[i][j]))
		}
	}
	return d
}

func maxDiffSE3(a, b SE3) float64 {
	d := maxDiff3(a.R, b.R)
	for i := range 3 {
		d = math.Max(d, math.Abs(a.P[i]-b.P[i]))
	}
	return d
}

func randUnit(rng *rand.Rand) Vec3 {
	v := Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	return v.Scale(1 / v.Norm())
}

func TestExpSO3Known(t *testing.T) {
	cases := []struct {
		name string
		w    Vec3
		want Mat3
	}{
		{"zero", Vec3{}, Identity3()},
		{"pi/2 about z", Vec3{0, 0, math.Pi / 2}, Mat3{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}},
		{"pi about x", Vec3{math.Pi, 0, 0}, Mat3{{1, 0, 0}, {0, -1, 0}, {0, 0, -1}}},
		{"rpy agrees (pitch)", Vec3{0, 0.7, 0}, RPY(0, 0.7, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := maxDiff3(ExpSO3(tc.w), tc.want); d > 1e-15 {
				t.Errorf("ExpSO3(%v) off by %g: %v", tc.w, d, ExpSO3(tc.w))
			}
			if d := maxDiff3(QuatFromRotationVector(tc.w).Rotation(), tc.want); d > 1e-15 {
				t.Errorf("quaternion rotation off by %g", d)
			}
		})
	}
}

func TestExpSE3Screw(t *testing.T) {
	// Screw about the z axis through (1, 0, 0), angle π/2, pitch h:
	// T = (Rz(π/2), (I − Rz) q + h θ ẑ) = (Rz, (1, −1, hθ)).
	const th, h = math.Pi / 2, 0.3
	xi := Twist{0, -th, h * th, 0, 0, th} // v = −ω × q + h ω
	want := SE3{R: Mat3{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}, P: Vec3{1, -1, h * th}}
	got := ExpSE3(xi)
	if d := maxDiffSE3(got, want); d > 1e-15 {
		t.Errorf("ExpSE3 screw off by %g: %+v", d, got)
	}
	back := LogSE3(got)
	for i := range xi {
		if math.Abs(back[i]-xi[i]) > 1e-14 {
			t.Errorf("LogSE3 = %v, want %v", back, xi)
			break
		}
	}
	// Pure translation.
	tr := ExpSE3(Twist{1, 2, 3, 0, 0, 0})
	if d := maxDiffSE3(tr, SE3{R: Identity3(), P: Vec3{1, 2, 3}}); d != 0 {
		t.Errorf("pure translation off by %g", d)
	}
}

func TestSE3ExpLogRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	angles := []float64{0, 1e-12, 1e-9, 1e-6, 1e-3, 0.0099, 0.0101, 0.5, 1, 2, 2.69, 2.7, 3,
		math.Pi - 1e-3, math.Pi - 1e-6, math.Pi - 1e-9, math.Pi - 1e-12, math.Pi}
	for _, th := range angles {
		for range 20 {
			n := randUnit(rng)
			p := Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			T := SE3{R: ExpSO3(n.Scale(th)), P: p}
			xi := LogSE3(T)
			if w := xi.Angular().Norm(); w > math.Pi+1e-12 {
				t.Fatalf("θ=%g: |ω| = %g > π", th, w)
			}
			if d := maxDiffSE3(ExpSE3(xi), T); d > 1e-12 {
				t.Errorf("θ=%g: |exp(log T) − T| = %g", th, d)
			}
			// log(exp(ξ)) = ξ away from the cut locus.
			if th < math.Pi-1e-3 {
				x := Twist{p[0], p[1], p[2], th * n[0], th * n[1], th * n[2]}
				y := LogSE3(ExpSE3(x))
				for i := range x {
					if math.Abs(y[i]-x[i]) > 1e-11*(1+math.Abs(x[i])) {
						t.Errorf("θ=%g: log(exp ξ) = %v, want %v", th, y, x)
						break
					}
				}
			}
		}
	}
}

func TestSO3Jacobians(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, th := range []float64{0, 1e-4, 0.3, 1.5, 3} {
		w := randUnit(rng).Scale(th)
		jr, jl := RightJacobianSO3(w), LeftJacobianSO3(w)
		if d := maxDiff3(jr.Mul(RightJacobianInvSO3(w)), Identity3()); d > 1e-12 {
			t.Errorf("θ=%g: J_r J_r⁻¹ − I = %g", th, d)
		}
		if d := maxDiff3(jl.Mul(LeftJacobianInvSO3(w)), Identity3()); d > 1e-12 {
			t.Errorf("θ=%g: J_l J_l⁻¹ − I = %g", th, d)
		}
		// Finite differences: Log(Exp(w)ᵀ Exp(w + εe_i))/ε → J_r e_i.
		const eps = 1e-7
		r := ExpSO3(w)
		for i := range 3 {
			wp := w
			wp[i] += eps
			dr := LogSO3(r.T().Mul(ExpSO3(wp))).Scale(1 / eps)
			dl := LogSO3(ExpSO3(wp).Mul(r.T())).Scale(1 / eps)
			for k := range 3 {
				if math.Abs(dr[k]-jr[k][i]) > 1e-6 || math.Abs(dl[k]-jl[k][i]) > 1e-6 {
					t.Errorf("θ=%g column %d: FD right %v left %v, J_r %v J_l %v", th, i, dr, dl, jr, jl)
				}
			}
		}
	}
}

func TestQuaternions(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, th := range []float64{0, 1e-8, 0.4, 2, math.Pi - 1e-9, math.Pi} {
		for range 10 {
			w := randUnit(rng).Scale(th)
			q := QuatFromRotationVector(w)
			r := ExpSO3(w)
			if d := maxDiff3(q.Rotation(), r); d > 1e-14 {
				t.Errorf("θ=%g: quaternion rotation off by %g", th, d)
			}
			q2 := QuatFromRotation(r)
			if d := maxDiff3(q2.Rotation(), r); d > 1e-14 {
				t.Errorf("θ=%g: QuatFromRotation round trip off by %g", th, d)
			}
			if math.Abs(q2.Norm()-1) > 1e-15 || q2.W < 0 {
				t.Errorf("QuatFromRotation not canonical unit: %+v", q2)
			}
			// Composition matches matrix product.
			w2 := randUnit(rng).Scale(1.1)
			p := QuatFromRotationVector(w2)
			if d := maxDiff3(q.Mul(p).Rotation(), r.Mul(ExpSO3(w2))); d > 1e-14 {
				t.Errorf("product off by %g", d)
			}
			if d := maxDiff3(q.Mul(q.Conj()).Rotation(), Identity3()); d > 1e-15 {
				t.Errorf("q q* ≠ 1: %g", d)
			}
		}
	}
	// Normalisation.
	nq, err := Quat{W: 2, X: 0, Y: 0, Z: 2}.Normalized()
	if err != nil || math.Abs(nq.W-math.Sqrt2/2) > 1e-15 || math.Abs(nq.Z-math.Sqrt2/2) > 1e-15 {
		t.Errorf("Normalized = %+v, %v", nq, err)
	}
	for _, bad := range []Quat{{}, {W: math.NaN()}, {X: math.Inf(1)}} {
		if _, err := bad.Normalized(); !errors.Is(err, ErrZeroQuaternion) {
			t.Errorf("Normalized(%+v) err = %v", bad, err)
		}
	}
}

func TestSlerp(t *testing.T) {
	a := QuatFromRotationVector(Vec3{0.1, -0.2, 0.3})
	w := Vec3{0.5, 1.2, -0.4}
	b := a.Mul(QuatFromRotationVector(w))
	cases := []struct {
		name string
		b    Quat
		tt   float64
		want Mat3
	}{
		{"start", b, 0, a.Rotation()},
		{"end", b, 1, b.Rotation()},
		{"middle", b, 0.5, a.Rotation().Mul(ExpSO3(w.Scale(0.5)))},
		{"quarter via antipode", Quat{-b.W, -b.X, -b.Y, -b.Z}, 0.25, a.Rotation().Mul(ExpSO3(w.Scale(0.25)))},
		{"nearly equal", a.Mul(QuatFromRotationVector(Vec3{1e-5, 0, 0})), 0.3, a.Rotation().Mul(ExpSO3(Vec3{3e-6, 0, 0}))},
		{"close", a.Mul(QuatFromRotationVector(Vec3{0, 0.05, 0})), 0.3, a.Rotation().Mul(ExpSO3(Vec3{0, 0.015, 0}))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Slerp(a, tc.b, tc.tt)
			if d := maxDiff3(got.Rotation(), tc.want); d > 1e-12 {
				t.Errorf("off by %g", d)
			}
		})
	}
}
