package mechanics

// Mat6 is a 6×6 matrix, row-major. Spatial quantities in this package use
// Featherstone's ordering (angular, linear) unless a doc comment says
// otherwise; the public floating-base mass matrices use (linear, angular).
type Mat6 [6][6]float64

// Mul returns a·b.
func (a *Mat6) Mul(b *Mat6) Mat6 {
	var c Mat6
	for i := range 6 {
		for k := range 6 {
			if a[i][k] == 0 {
				continue
			}
			for j := range 6 {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return c
}

// T returns the transpose of a.
func (a *Mat6) T() Mat6 {
	var c Mat6
	for i := range 6 {
		for j := range 6 {
			c[i][j] = a[j][i]
		}
	}
	return c
}

// RigidBody is the mass distribution of one rigid body, expressed in its own
// body frame.
type RigidBody struct {
	Mass    float64 // [kg]
	COM     Vec3    // centre of mass in body-frame coordinates [m]
	Inertia Mat3    // rotational inertia about the centre of mass, body-frame axes [kg·m²]
}

// SpatialInertia returns the 6×6 spatial inertia about the body-frame origin
// in Featherstone's (angular, linear) order:
//
//	[ Ic + m c×c×ᵀ   m c× ]
//	[ m c×ᵀ          m 1  ]
func (b RigidBody) SpatialInertia() Mat6 {
	var s Mat6
	cx := Hat(b.COM)
	ang := b.Inertia.Add(cx.Mul(cx.T()).Scale(b.Mass))
	for i := range 3 {
		for j := range 3 {
			s[i][j] = ang[i][j]
			s[i][3+j] = b.Mass * cx[i][j]
			s[3+i][j] = b.Mass * cx[j][i]
		}
		s[3+i][3+i] = b.Mass
	}
	return s
}

// FloatingMassMatrix returns the mass matrix of the free body for the
// body-frame twist (v, ω), linear part first (Pinocchio's order), so that the
// kinetic energy is ½ [v; ω]ᵀ M [v; ω]:
//
//	[ m 1      −m c× ]
//	[ m c×   Ic − m c×c× ]
//
// which is diag(m I3, Ic) when the body frame sits at the centre of mass.
func (b RigidBody) FloatingMassMatrix() Mat6 {
	s := b.SpatialInertia()
	return swapAngularLinear(&s)
}

// swapAngularLinear reorders a 6×6 matrix from (angular, linear) to
// (linear, angular) blocks, or back.
func swapAngularLinear(s *Mat6) Mat6 {
	var m Mat6
	for i := range 6 {
		for j := range 6 {
			m[(i+3)%6][(j+3)%6] = s[i][j]
		}
	}
	return m
}

// Transformed returns the same body expressed in a parent frame, where pose
// maps body-frame coordinates to parent coordinates (x_parent = R x + P).
func (b RigidBody) Transformed(pose SE3) RigidBody {
	return RigidBody{
		Mass:    b.Mass,
		COM:     pose.Act(b.COM),
		Inertia: pose.R.Mul(b.Inertia).Mul(pose.R.T()),
	}
}

// Combine returns the composite of two bodies expressed in the same frame
// (parallel-axis theorem).
func (b RigidBody) Combine(o RigidBody) RigidBody {
	m := b.Mass + o.Mass
	if m == 0 {
		return RigidBody{Inertia: b.Inertia.Add(o.Inertia)}
	}
	c := b.COM.Scale(b.Mass / m).Add(o.COM.Scale(o.Mass / m))
	shift := func(r RigidBody) Mat3 {
		d := Hat(r.COM.Sub(c))
		return d.Mul(d.T()).Scale(r.Mass)
	}
	return RigidBody{
		Mass:    m,
		COM:     c,
		Inertia: b.Inertia.Add(o.Inertia).Add(shift(b)).Add(shift(o)),
	}
}

// plucker is Featherstone's motion transform ^B X_A from frame A to frame B:
// e rotates A coordinates into B coordinates and r is B's origin in A
// coordinates. As a matrix it is [[E, 0], [−E r×, E]].
type plucker struct {
	e Mat3
	r Vec3
}

// pluckerFromPose returns ^child X_parent for the pose of the child frame in
// the parent frame.
func pluckerFromPose(pose SE3) plucker { return plucker{e: pose.R.T(), r: pose.P} }

// mat returns the 6×6 motion transform.
func (x plucker) mat() Mat6 {
	var m Mat6
	erx := x.e.Mul(Hat(x.r)).Scale(-1)
	for i := range 3 {
		for j := range 3 {
			m[i][j] = x.e[i][j]
			m[3+i][3+j] = x.e[i][j]
			m[3+i][j] = erx[i][j]
		}
	}
	return m
}

// applyT returns Xᵀ f for a spatial force f = (n, f) given in B: the same
// force in A, (Eᵀn + r × Eᵀf, Eᵀf).
func (x plucker) applyT(f [6]float64) [6]float64 {
	et := x.e.T()
	n := et.MulVec(Vec3{f[0], f[1], f[2]})
	lin := et.MulVec(Vec3{f[3], f[4], f[5]})
	n = n.Add(x.r.Cross(lin))
	return [6]float64{n[0], n[1], n[2], lin[0], lin[1], lin[2]}
}

// congruence returns Xᵀ I X: the spatial inertia I given in B expressed in A.
func (x plucker) congruence(in *Mat6) Mat6 {
	xm := x.mat()
	xt := xm.T()
	t := xt.Mul(in)
	return t.Mul(&xm)
}
