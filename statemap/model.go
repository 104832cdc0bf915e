package statemap

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/mechanics"
	"gopkg.in/yaml.v3"
)

// Model is the mechanics behind the momenta p = M(q)v of a dataset.
//
// Velocities are ordered as the dataset's: for a floating base the base's
// body twist (v, ω) first, then the joint rates in the spec's joint order.
type Model interface {
	// NV returns the number of velocity coordinates.
	NV() int
	// Floating reports whether the model has a free-floating base.
	Floating() bool
	// MassMatrix writes M at the joint positions qj (spec order; empty
	// without joints) into dst, NV×NV row-major.
	MassMatrix(dst []float64, qj []float64) error
	// Potential returns the potential energy at the base pose (world frame,
	// z up; ignored without a floating base) and joint positions.
	Potential(base mechanics.SE3, qj []float64) float64
}

// NewModel builds the model of the spec; relative file names are resolved
// against dataRoot.
func NewModel(spec *Spec, dataRoot string) (Model, error) {
	m := &spec.Model
	switch m.Kind {
	case ModelDoublePendulum:
		pp, err := pendulumParams(&m.Pendulum, dataRoot)
		if err != nil {
			return nil, err
		}
		return &PendulumModel{Params: pp}, nil
	case ModelRigidBody:
		body, err := rigidBody(&m.RigidBody)
		if err != nil {
			return nil, err
		}
		return &RigidBodyModel{Body: body, G: m.Gravity}, nil
	case ModelURDF:
		path := Resolve(dataRoot, m.URDF)
		u, err := mechanics.LoadURDF(path)
		if errors.Is(err, mechanics.ErrXacro) {
			return nil, fmt.Errorf("convert: model.urdf: %w (set model.urdf to the expanded file)", err)
		}
		if err != nil {
			return nil, fmt.Errorf("convert: model.urdf: %w", err)
		}
		names := make([]string, len(spec.State.Joints))
		for i, j := range spec.State.Joints {
			names[i] = j.Name
		}
		um, err := NewURDFModel(u, names, spec.State.Kind != StateJoints, m.Gravity)
		if err != nil {
			return nil, err
		}
		for i, d := range m.Joints {
			if err := um.SetDriveInertia(d.Name, d.Reflected()); err != nil {
				return nil, fmt.Errorf("%w: %s.model.joints[%d]: %w", ErrSpec, SpecKey, i, err)
			}
		}
		return um, nil
	case ModelIdentity:
		return &IdentityModel{N: len(spec.State.Joints)}, nil
	}
	return nil, FieldError("model.kind", "unknown kind %q", m.Kind)
}

// Resolve returns path, or path under the data root when it is relative:
// how params files name their logs, URDFs and parameter files.
func Resolve(root, path string) string {
	if filepath.IsAbs(path) || root == "" {
		return path
	}
	return filepath.Join(root, path)
}

// pendulumKeys returns the keys of dfki model_parameters.yml files, in the
// case the mechanics parser expects (viper lowercases the keys it reads).
func pendulumKeys() []string {
	return []string{"m1", "m2", "l1", "l2", "r1", "r2", "I1", "I2", "g", "k1", "k2", "b1", "b2", "Ir", "gr", "cf1", "cf2", "tl1", "tl2"}
}

// Load returns the double pendulum's parameters: the params file's
// (relative to dataRoot unless absolute) or the inline ones.
func (p *PendulumSpec) Load(dataRoot string) (mechanics.PendulumParams, error) {
	return pendulumParams(p, dataRoot)
}

func pendulumParams(p *PendulumSpec, dataRoot string) (mechanics.PendulumParams, error) {
	if p.ParamsFile != "" {
		pp, err := mechanics.LoadPendulumParamsYAML(Resolve(dataRoot, p.ParamsFile))
		if err != nil {
			return pp, fmt.Errorf("convert: model.pendulum.params_file: %w", err)
		}
		return pp, nil
	}
	keys := pendulumKeys()
	canon := make(map[string]float64, len(p.Params))
	for k, v := range p.Params {
		i := slices.IndexFunc(keys, func(s string) bool { return strings.EqualFold(s, k) })
		if i < 0 {
			return mechanics.PendulumParams{}, FieldError("model.pendulum.params."+k, "unknown key (known: %s)", strings.Join(keys, ", "))
		}
		canon[keys[i]] = v
	}
	raw, err := yaml.Marshal(canon)
	if err != nil {
		return mechanics.PendulumParams{}, fmt.Errorf("convert: model.pendulum.params: %w", err)
	}
	pp, err := mechanics.ParsePendulumParamsYAML(bytes.NewReader(raw))
	if err != nil {
		return pp, fmt.Errorf("%w: %s.model.pendulum.params: %w", ErrSpec, SpecKey, err)
	}
	return pp, nil
}

func rigidBody(r *RigidBodySpec) (mechanics.RigidBody, error) {
	b := mechanics.RigidBody{Mass: r.Mass}
	in := r.Inertia
	switch len(in) {
	case 3:
		b.Inertia = mechanics.Mat3{{in[0], 0, 0}, {0, in[1], 0}, {0, 0, in[2]}}
	case 6:
		b.Inertia = mechanics.Mat3{{in[0], in[3], in[4]}, {in[3], in[1], in[5]}, {in[4], in[5], in[2]}}
	case 9:
		b.Inertia = mechanics.Mat3{{in[0], in[1], in[2]}, {in[3], in[4], in[5]}, {in[6], in[7], in[8]}}
	}
	if len(r.COM) == 3 {
		b.COM = mechanics.Vec3{r.COM[0], r.COM[1], r.COM[2]}
	}
	I := b.Inertia
	for i := range 3 {
		for j := range 3 {
			if !finite(I[i][j]) || I[i][j] != I[j][i] {
				return b, FieldError("model.rigid_body.inertia", "must be finite and symmetric, got %v", I)
			}
		}
	}
	// Positive definite (Sylvester) and the triangle inequalities of
	// principal moments, checked on the diagonal.
	d1 := I[0][0]
	d2 := I[0][0]*I[1][1] - I[0][1]*I[1][0]
	d3 := I[0][0]*(I[1][1]*I[2][2]-I[1][2]*I[2][1]) - I[0][1]*(I[1][0]*I[2][2]-I[1][2]*I[2][0]) + I[0][2]*(I[1][0]*I[2][1]-I[1][1]*I[2][0])
	if !(d1 > 0 && d2 > 0 && d3 > 0) {
		return b, FieldError("model.rigid_body.inertia", "is not positive definite: %v", I)
	}
	return b, nil
}

// PendulumModel is the analytic double pendulum, q = (q1, q2) as in
// mechanics.PendulumParams.
type PendulumModel struct {
	// Params are the pendulum's parameters.
	Params mechanics.PendulumParams
}

// NV returns 2.
func (m *PendulumModel) NV() int { return 2 }

// Floating returns false.
func (m *PendulumModel) Floating() bool { return false }

// MassMatrix writes M(q).
func (m *PendulumModel) MassMatrix(dst []float64, qj []float64) error {
	if len(qj) != 2 || len(dst) < 4 {
		return fmt.Errorf("statemap: double pendulum: %d joint positions, want 2", len(qj))
	}
	M := m.Params.MassMatrix([2]float64{qj[0], qj[1]})
	dst[0], dst[1], dst[2], dst[3] = M[0][0], M[0][1], M[1][0], M[1][1]
	return nil
}

// Potential returns the gravity and spring energy, zero hanging at rest.
func (m *PendulumModel) Potential(_ mechanics.SE3, qj []float64) float64 {
	return m.Params.PotentialEnergy([2]float64{qj[0], qj[1]})
}

// RigidBodyModel is one free rigid body: v is its body twist (linear,
// angular) and M the constant FloatingMassMatrix, diag(m I₃, I_c) when the
// body frame sits at the centre of mass.
type RigidBodyModel struct {
	// Body is the body's mass distribution in its body frame.
	Body mechanics.RigidBody
	// G is the gravitational acceleration along −z of the world.
	G float64
}

// NV returns 6.
func (m *RigidBodyModel) NV() int { return 6 }

// Floating returns true.
func (m *RigidBodyModel) Floating() bool { return true }

// MassMatrix writes the 6×6 body-frame mass matrix.
func (m *RigidBodyModel) MassMatrix(dst []float64, _ []float64) error {
	M := m.Body.FloatingMassMatrix()
	for i := range 6 {
		copy(dst[6*i:6*i+6], M[i][:])
	}
	return nil
}

// Potential returns m·g·z of the centre of mass.
func (m *RigidBodyModel) Potential(base mechanics.SE3, _ []float64) float64 {
	return m.Body.Mass * m.G * base.Act(m.Body.COM)[2]
}

// IdentityModel is M = I on N joint coordinates: p = q̇. It knows no
// masses, so it has no potential energy either.
type IdentityModel struct {
	// N is the number of joints.
	N int
}

// NV returns N.
func (m *IdentityModel) NV() int { return m.N }

// Floating returns false.
func (m *IdentityModel) Floating() bool { return false }

// MassMatrix writes the N×N identity.
func (m *IdentityModel) MassMatrix(dst []float64, qj []float64) error {
	n := m.N
	if len(qj) != n || len(dst) < n*n {
		return fmt.Errorf("statemap: identity model: %d joint positions and %d matrix entries, want %d and %d", len(qj), len(dst), n, n*n)
	}
	clear(dst[:n*n])
	for i := range n {
		dst[i*n+i] = 1
	}
	return nil
}

// Potential returns 0.
func (m *IdentityModel) Potential(mechanics.SE3, []float64) float64 { return 0 }

// URDFModel is a URDF kinematic tree whose mass matrix comes from the
// composite-rigid-body algorithm, with its joints in the spec's order,
// plus the reflected inertias of the joints' drives on the diagonal.
type URDFModel struct {
	model    *mechanics.Model
	joints   []string // spec order
	perm     []int    // perm[i]: URDF coordinate of spec joint i
	floating bool
	g        float64
	q        []float64 // URDF-ordered joint buffer
	drive    []float64 // reflected drive inertia of spec joint i
	crba     mechanics.CRBA
}

// NewURDFModel maps the spec's joint names onto the URDF model's movable
// joints. Every name must be a URDF joint and every movable URDF joint must
// be named; otherwise the error lists both sides.
func NewURDFModel(m *mechanics.Model, joints []string, floating bool, g float64) (*URDFModel, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("convert: model.urdf: %w", err)
	}
	urdf := m.JointNames()
	perm := make([]int, len(joints))
	for i, name := range joints {
		perm[i] = slices.Index(urdf, name)
		if perm[i] < 0 {
			return nil, FieldError(fmt.Sprintf("state.joints[%d].name", i), "joint %q is not a movable joint of URDF robot %q (its joints: %s)", name, m.Name, strings.Join(urdf, ", "))
		}
	}
	var unmapped []string
	for _, name := range urdf {
		if !slices.Contains(joints, name) {
			unmapped = append(unmapped, name)
		}
	}
	if len(unmapped) > 0 {
		return nil, FieldError("state.joints", "URDF robot %q joints %s have no entry (listed: %s)", m.Name, strings.Join(unmapped, ", "), strings.Join(joints, ", "))
	}
	return &URDFModel{model: m, joints: slices.Clone(joints), perm: perm, floating: floating, g: g, q: make([]float64, len(urdf)), drive: make([]float64, len(joints))}, nil
}

// SetDriveInertia sets the inertia the named joint's drive adds to M's
// diagonal entry of that joint (a rotor's armature times its gear ratio
// squared, JointDriveSpec.Reflected), replacing any earlier value.
func (m *URDFModel) SetDriveInertia(joint string, reflected float64) error {
	if !(reflected >= 0) || math.IsInf(reflected, 0) {
		return fmt.Errorf("statemap: joint %q: drive inertia must be finite and ≥ 0, got %g", joint, reflected)
	}
	i := slices.Index(m.joints, joint)
	if i < 0 {
		return fmt.Errorf("statemap: joint %q is not a joint of the model (its joints: %s)", joint, strings.Join(m.joints, ", "))
	}
	m.drive[i] = reflected
	return nil
}

// DriveInertia returns the drive inertia added at the named joint (0 for
// none or an unknown name).
func (m *URDFModel) DriveInertia(joint string) float64 {
	if i := slices.Index(m.joints, joint); i >= 0 {
		return m.drive[i]
	}
	return 0
}

// NV returns the number of joints, plus 6 with a floating base.
func (m *URDFModel) NV() int {
	if m.floating {
		return 6 + len(m.perm)
	}
	return len(m.perm)
}

// Floating reports whether the base floats.
func (m *URDFModel) Floating() bool { return m.floating }

// MassMatrix writes M(q) by CRBA, reordered to the spec's joint order.
func (m *URDFModel) MassMatrix(dst []float64, qj []float64) error {
	if len(qj) != len(m.perm) {
		return fmt.Errorf("statemap: URDF model: %d joint positions, want %d", len(qj), len(m.perm))
	}
	for i, p := range m.perm {
		m.q[p] = qj[i]
	}
	off := 0
	var h interface{ At(i, j int) float64 }
	var err error
	if m.floating {
		off = 6
		h, err = m.crba.MassMatrixFloating(m.model, m.q)
	} else {
		h, err = m.model.MassMatrix(m.q)
	}
	if err != nil {
		return fmt.Errorf("statemap: %w", err)
	}
	n := m.NV()
	idx := func(i int) int {
		if i < off {
			return i
		}
		return off + m.perm[i-off]
	}
	for i := range n {
		for j := range n {
			dst[i*n+j] = h.At(idx(i), idx(j))
		}
	}
	for i, d := range m.drive {
		if d != 0 {
			dst[(off+i)*n+off+i] += d
		}
	}
	return nil
}

// Potential returns Σ m_i g z_i over the base and every body, with the
// base at the given pose (the identity for a fixed base).
func (m *URDFModel) Potential(base mechanics.SE3, qj []float64) float64 {
	if !m.floating {
		base = mechanics.IdentitySE3()
	}
	for i, p := range m.perm {
		m.q[p] = qj[i]
	}
	poses, err := m.model.FramePoses(m.q)
	if err != nil {
		return 0
	}
	v := m.model.Base.Mass * base.Act(m.model.Base.COM)[2]
	for i, b := range m.model.Bodies {
		v += b.Inertia.Mass * base.Mul(poses[i]).Act(b.Inertia.COM)[2]
	}
	return m.g * v
}
