package mechanics

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// JointType is the kind of a kinematic joint.
type JointType int

// Joint types supported by Model (those of URDF without "floating" and
// "planar"). Fixed joints never appear in Model.Bodies: URDF parsing merges
// rigidly attached links into their parent body.
const (
	JointFixed JointType = iota
	JointRevolute
	JointContinuous
	JointPrismatic
)

// String returns the URDF name of the joint type.
func (j JointType) String() string {
	switch j {
	case JointFixed:
		return "fixed"
	case JointRevolute:
		return "revolute"
	case JointContinuous:
		return "continuous"
	case JointPrismatic:
		return "prismatic"
	}
	return fmt.Sprintf("JointType(%d)", int(j))
}

// Body is one moving body of a kinematic tree with the one-degree-of-freedom
// joint that connects it to its parent.
type Body struct {
	Name   string    // link name
	Joint  string    // joint name
	Type   JointType // JointRevolute, JointContinuous or JointPrismatic
	Parent int       // index of the parent in Model.Bodies, −1 for the base
	// Tree is the pose of this body's frame in its parent's frame at q = 0
	// (URDF joint origin, composed with any fixed joints on the way).
	Tree SE3
	// Axis is the unit joint axis in this body's frame.
	Axis Vec3
	// Inertia is the body's mass distribution in its own frame, including
	// every link rigidly attached to it through fixed joints.
	Inertia RigidBody
}

// Model is a kinematic tree of rigid bodies rooted at a base. Bodies are in
// depth-first order (every parent precedes its children) and body i owns the
// i-th joint coordinate: q[i] is its angle [rad] or displacement [m].
type Model struct {
	Name string // robot name
	Root string // name of the base link
	// Base is the mass distribution of the base link (with its fixed
	// attachments) in the base frame. A fixed base ignores it.
	Base   RigidBody
	Bodies []Body
}

// NV returns the number of joint coordinates (fixed base).
func (m *Model) NV() int { return len(m.Bodies) }

// JointNames returns the joint names in coordinate order.
func (m *Model) JointNames() []string {
	names := make([]string, len(m.Bodies))
	for i, b := range m.Bodies {
		names[i] = b.Joint
	}
	return names
}

// Validate checks the tree structure: parents precede children, joint
// types are movable, axes are unit vectors.
func (m *Model) Validate() error {
	for i, b := range m.Bodies {
		if b.Parent < -1 || b.Parent >= i {
			return fmt.Errorf("mechanics: model %q: body %d (%s) has parent %d; parents must precede children", m.Name, i, b.Name, b.Parent)
		}
		switch b.Type {
		case JointRevolute, JointContinuous, JointPrismatic:
		default:
			return fmt.Errorf("mechanics: model %q: body %d (%s) has a %v joint", m.Name, i, b.Name, b.Type)
		}
		if math.Abs(b.Axis.Norm()-1) > 1e-9 {
			return fmt.Errorf("mechanics: model %q: joint %s axis %v is not a unit vector", m.Name, b.Joint, b.Axis)
		}
	}
	return nil
}

func (m *Model) checkQ(q []float64) error {
	if len(q) != len(m.Bodies) {
		return fmt.Errorf("mechanics: model %q: %d joint coordinates given, want %d", m.Name, len(q), len(m.Bodies))
	}
	return m.Validate()
}

// jointPose returns the pose of body i's frame in its parent's frame at q.
func (b *Body) jointPose(q float64) SE3 {
	var j SE3
	if b.Type == JointPrismatic {
		j = SE3{R: Identity3(), P: b.Axis.Scale(q)}
	} else {
		j = SE3{R: ExpSO3(b.Axis.Scale(q))}
	}
	return b.Tree.Mul(j)
}

// motionSubspace returns the joint's motion subspace S in (angular, linear) order.
func (b *Body) motionSubspace() [6]float64 {
	if b.Type == JointPrismatic {
		return [6]float64{0, 0, 0, b.Axis[0], b.Axis[1], b.Axis[2]}
	}
	return [6]float64{b.Axis[0], b.Axis[1], b.Axis[2], 0, 0, 0}
}

// FramePoses returns the pose of every body frame in the base frame at q
// (forward kinematics), indexed like Bodies.
func (m *Model) FramePoses(q []float64) ([]SE3, error) {
	if err := m.checkQ(q); err != nil {
		return nil, err
	}
	poses := make([]SE3, len(m.Bodies))
	for i := range m.Bodies {
		b := &m.Bodies[i]
		p := b.jointPose(q[i])
		if b.Parent >= 0 {
			p = poses[b.Parent].Mul(p)
		}
		poses[i] = p
	}
	return poses, nil
}

// composite runs the backward pass of the composite-rigid-body algorithm:
// the transforms ^iX_λ(i), the composite inertias of every subtree in its
// body frame, and the composite inertia of the whole tree in the base frame.
func (m *Model) composite(q []float64) ([]plucker, []Mat6, Mat6) {
	n := len(m.Bodies)
	return m.compositeInto(q, make([]plucker, n), make([]Mat6, n))
}

// compositeInto is composite into xs and ic, of len(Bodies) each.
func (m *Model) compositeInto(q []float64, xs []plucker, ic []Mat6) ([]plucker, []Mat6, Mat6) {
	for i := range m.Bodies {
		b := &m.Bodies[i]
		xs[i] = pluckerFromPose(b.jointPose(q[i]))
		ic[i] = b.Inertia.SpatialInertia()
	}
	base := m.Base.SpatialInertia()
	for i := len(m.Bodies) - 1; i >= 0; i-- {
		up := xs[i].congruence(&ic[i])
		dst := &base
		if p := m.Bodies[i].Parent; p >= 0 {
			dst = &ic[p]
		}
		for r := range 6 {
			for c := range 6 {
				dst[r][c] += up[r][c]
			}
		}
	}
	return xs, ic, base
}

func dot6(a, b [6]float64) float64 {
	s := 0.0
	for i := range 6 {
		s += a[i] * b[i]
	}
	return s
}

func mulVec6(a *Mat6, v [6]float64) [6]float64 {
	var r [6]float64
	for i := range 6 {
		r[i] = dot6(a[i], v)
	}
	return r
}

// MassMatrix returns the joint-space mass matrix M(q) (NV×NV) of the tree
// with a fixed base, computed with Featherstone's composite-rigid-body
// algorithm. The kinetic energy is ½ q̇ᵀ M(q) q̇. A model without joints is
// an error (gonum has no empty matrices).
func (m *Model) MassMatrix(q []float64) (*mat.SymDense, error) {
	if err := m.checkQ(q); err != nil {
		return nil, err
	}
	n := len(m.Bodies)
	if n == 0 {
		return nil, fmt.Errorf("mechanics: model %q has no joints", m.Name)
	}
	h := mat.NewSymDense(n, nil)
	xs, ic, _ := m.composite(q)
	for i := range m.Bodies {
		f := mulVec6(&ic[i], m.Bodies[i].motionSubspace())
		h.SetSym(i, i, dot6(f, m.Bodies[i].motionSubspace()))
		for j := i; m.Bodies[j].Parent >= 0; {
			f = xs[j].applyT(f)
			j = m.Bodies[j].Parent
			h.SetSym(i, j, dot6(f, m.Bodies[j].motionSubspace()))
		}
	}
	return h, nil
}

// MassMatrixFloating returns the (6+NV)×(6+NV) mass matrix of the tree with
// a free-floating base. The generalised velocity is (v, ω, q̇): the base's
// twist in the base frame, linear part first (Pinocchio's convention),
// followed by the joint rates. In these coordinates M does not depend on the
// base pose. With no joints it equals Base.FloatingMassMatrix().
func (m *Model) MassMatrixFloating(q []float64) (*mat.SymDense, error) {
	var c CRBA
	return c.MassMatrixFloating(m, q)
}

// CRBA holds the buffers of the composite-rigid-body algorithm, so that
// the mass matrix of one model is computed again and again without
// allocating (the live node builds it for every state message). Its zero
// value is ready; it serves one goroutine at a time.
type CRBA struct {
	h  *mat.SymDense
	xs []plucker
	ic []Mat6
}

// MassMatrixFloating is m.MassMatrixFloating in c's buffers: the matrix
// returned is c's, valid until the next call. After the first call with a
// model it allocates nothing.
func (c *CRBA) MassMatrixFloating(m *Model, q []float64) (*mat.SymDense, error) {
	if err := m.checkQ(q); err != nil {
		return nil, err
	}
	n := len(m.Bodies)
	if c.h == nil || c.h.SymmetricDim() != 6+n {
		c.h = mat.NewSymDense(6+n, nil)
		c.xs, c.ic = make([]plucker, n), make([]Mat6, n)
	} else {
		c.h.Zero()
	}
	h := c.h
	xs, ic, base := m.compositeInto(q, c.xs, c.ic)
	bb := swapAngularLinear(&base)
	for r := range 6 {
		for c := r; c < 6; c++ {
			h.SetSym(r, c, bb[r][c])
		}
	}
	for i := range m.Bodies {
		s := m.Bodies[i].motionSubspace()
		f := mulVec6(&ic[i], s)
		h.SetSym(6+i, 6+i, dot6(f, s))
		j := i
		for {
			f = xs[j].applyT(f)
			j = m.Bodies[j].Parent
			if j < 0 {
				break
			}
			h.SetSym(6+i, 6+j, dot6(f, m.Bodies[j].motionSubspace()))
		}
		// f is now the subtree's momentum per unit q̇_i in the base frame,
		// (angular, linear); the base rows are (linear, angular).
		for k := range 3 {
			h.SetSym(k, 6+i, f[3+k])
			h.SetSym(3+k, 6+i, f[k])
		}
	}
	return h, nil
}
