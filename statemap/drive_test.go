package statemap

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/calisym/calisym/mechanics"
)

// armSpec is a joint-space arm read from columns q1..qN, qd1..qdN with
// the motor currents i1..iN times the drive gains as joint torques.
func armSpec(n int, model ModelSpec) *Spec {
	s := &Spec{State: StateSpec{Kind: StateJoints}, Model: model, Control: ControlSpec{Kind: ControlDirect}}
	for i := range n {
		k := string(rune('1' + i))
		s.State.Joints = append(s.State.Joints, JointSpec{Name: "j" + k, Position: Channel{Name: "q" + k}, Velocity: Channel{Name: "qd" + k}})
		s.Control.Channels = append(s.Control.Channels, Channel{Name: "i" + k, Unit: "A", Scale: 10 + float64(i)})
	}
	return s
}

// TestIdentityModel: model kind identity gives p = q̇ on the joints, live
// (Sampler) as in conversion (Mapper), and refuses a floating base.
func TestIdentityModel(t *testing.T) {
	s, err := NewSampler(armSpec(3, ModelSpec{Kind: ModelIdentity}), SamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]float64{"q1": 0.1, "q2": -1.2, "q3": 2, "qd1": 0.5, "qd2": -0.25, "qd3": 3, "i1": 1, "i2": -2, "i3": 0.5}
	values := make([]float64, len(s.Channels()))
	for i, n := range s.Channels() {
		values[i] = raw[n]
	}
	x, e := make([]float64, 6), make([]float64, 3)
	if _, err := s.Sample(values, x, e); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.1, -1.2, 2, 0.5, -0.25, 3}
	for i := range want {
		if x[i] != want[i] {
			t.Fatalf("x = %v, want (q, p = q̇) = %v", x, want)
		}
	}
	if e[0] != 10 || e[1] != -22 || e[2] != 6 {
		t.Errorf("u = %v, want currents times gains (10, -22, 6) N·m", e)
	}
	m, err := NewModel(armSpec(3, ModelSpec{Kind: ModelIdentity}), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.NV() != 3 || m.Floating() || m.Potential(mechanics.IdentitySE3(), []float64{1, 2, 3}) != 0 {
		t.Errorf("identity model: NV %d, floating %v, potential %v", m.NV(), m.Floating(), m.Potential(mechanics.IdentitySE3(), []float64{1, 2, 3}))
	}

	fb := quadrotorSpec(StateFloatingBase)
	fb.Model = ModelSpec{Kind: ModelIdentity}
	fb.Defaults()
	err = fb.Check()
	if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "convert.model.kind") || !strings.Contains(err.Error(), `"rigid_body"`) {
		t.Errorf("identity on a floating base: %v, want ErrSpec naming convert.model.kind and pointing to rigid_body", err)
	}
}

// TestURDFDriveInertia: model.joints adds armature·gear_ratio² to M's
// diagonal entry of its joint, in the spec's joint order, with a fixed or
// a floating base, and nothing else.
func TestURDFDriveInertia(t *testing.T) {
	pp := mechanics.PaperPendulum()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.urdf"), []byte(pendulumURDF(pp)), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := func(floating bool, drives ...JointDriveSpec) *Spec {
		s := &Spec{State: StateSpec{Kind: StateJoints, Joints: []JointSpec{
			{Name: "elbow", Position: Channel{Name: "a"}, Velocity: Channel{Name: "b"}},
			{Name: "shoulder", Position: Channel{Name: "c"}, Velocity: Channel{Name: "d"}},
		}}, Model: ModelSpec{Kind: ModelURDF, URDF: "p.urdf", Joints: drives}}
		if floating {
			s.State.Kind = StateFloatingBase
			s.State.Base = quadrotorSpec(StateFloatingBase).State.Base
		}
		s.Defaults()
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, floating := range []bool{false, true} {
		bare, err := NewModel(spec(floating), dir)
		if err != nil {
			t.Fatal(err)
		}
		// Rotor 6.29e-5 kg·m² through a 6:1 gear on the shoulder; an
		// already reflected 0.07 kg·m² on the elbow.
		geared, err := NewModel(spec(floating, JointDriveSpec{Name: "shoulder", Armature: 6.29e-5, GearRatio: 6}, JointDriveSpec{Name: "elbow", Armature: 0.07}), dir)
		if err != nil {
			t.Fatal(err)
		}
		n := bare.NV()
		off := n - 2
		q := []float64{-1.2, 0.3}
		m0, m1 := make([]float64, n*n), make([]float64, n*n)
		if err := bare.MassMatrix(m0, q); err != nil {
			t.Fatal(err)
		}
		if err := geared.MassMatrix(m1, q); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			for j := range n {
				want := m0[i*n+j]
				switch {
				case i == j && i == off: // elbow, first in spec order
					want += 0.07
				case i == j && i == off+1: // shoulder
					want += 6.29e-5 * 36
				}
				if math.Abs(m1[i*n+j]-want) > 1e-14 {
					t.Errorf("floating %v: M[%d][%d] = %v with drives, want %v (%v without)", floating, i, j, m1[i*n+j], want, m0[i*n+j])
				}
			}
		}
		if u := geared.(*URDFModel); math.Abs(u.DriveInertia("shoulder")-6.29e-5*36) > 1e-18 || u.DriveInertia("elbow") != 0.07 {
			t.Errorf("DriveInertia = %v, %v", u.DriveInertia("shoulder"), u.DriveInertia("elbow"))
		}
	}
}

// TestDriveSpecErrors: model.joints is checked where the params file
// names it.
func TestDriveSpecErrors(t *testing.T) {
	urdf := func(d ...JointDriveSpec) *Spec {
		s := armSpec(2, ModelSpec{Kind: ModelURDF, URDF: "arm.urdf", Joints: d})
		return s
	}
	tests := []struct {
		name string
		spec *Spec
		want []string
	}{
		{"unknown joint", urdf(JointDriveSpec{Name: "j9", Armature: 1}), []string{"convert.model.joints[0].name", `"j9"`, "j1, j2"}},
		{"twice", urdf(JointDriveSpec{Name: "j1", Armature: 1}, JointDriveSpec{Name: "j1", Armature: 2}), []string{"convert.model.joints[1].name", "twice"}},
		{"negative armature", urdf(JointDriveSpec{Name: "j2", Armature: -1e-4}), []string{"convert.model.joints[0].armature", "≥ 0"}},
		{"NaN armature", urdf(JointDriveSpec{Name: "j2", Armature: math.NaN()}), []string{"convert.model.joints[0].armature"}},
		{"negative gear", urdf(JointDriveSpec{Name: "j2", Armature: 1e-4, GearRatio: -100}), []string{"convert.model.joints[0].gear_ratio", "positive"}},
		{"infinite gear", urdf(JointDriveSpec{Name: "j2", Armature: 1e-4, GearRatio: math.Inf(1)}), []string{"convert.model.joints[0].gear_ratio"}},
		{"identity", armSpec(2, ModelSpec{Kind: ModelIdentity, Joints: []JointDriveSpec{{Name: "j1", Armature: 1}}}), []string{"convert.model.joints", `kind "urdf", not "identity"`}},
		{"pendulum", func() *Spec {
			s := armSpec(2, ModelSpec{Kind: ModelDoublePendulum, Pendulum: PendulumSpec{ParamsFile: "x.yml"}, Joints: []JointDriveSpec{{Name: "j1", Armature: 1}}})
			return s
		}(), []string{"convert.model.joints", "Ir and gr"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Defaults()
			err := tc.spec.Check()
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("err = %v, want ErrSpec", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to mention %q", err, w)
				}
			}
		})
	}
	if d := (JointDriveSpec{Armature: 2e-4, GearRatio: 100}); math.Abs(d.Reflected()-2) > 1e-12 {
		t.Errorf("reflected inertia %v, want 2e-4·100² = 2", d.Reflected())
	}
}

// TestModelXacro: a xacro file as model.urdf fails with the command that
// expands it.
func TestModelXacro(t *testing.T) {
	dir := t.TempDir()
	x := `<robot name="ur" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:include filename="ur.xacro"/></robot>`
	if err := os.WriteFile(filepath.Join(dir, "ur10e.urdf.xacro"), []byte(x), 0o644); err != nil {
		t.Fatal(err)
	}
	s := armSpec(2, ModelSpec{Kind: ModelURDF, URDF: "ur10e.urdf.xacro"})
	s.Defaults()
	_, err := NewModel(s, dir)
	want := "xacro " + filepath.Join(dir, "ur10e.urdf.xacro") + " > " + filepath.Join(dir, "ur10e.urdf")
	if !errors.Is(err, mechanics.ErrXacro) || !strings.Contains(err.Error(), "set model.urdf to the expanded file") || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want ErrXacro naming model.urdf and %q", err, want)
	}
}

// TestModelYAML decodes model.joints and the identity kind as the live
// node reads a params file (yaml.v3, unknown keys refused).
func TestModelYAML(t *testing.T) {
	src := `
state:
  kind: joints
  joints:
    - {name: j1, position: q1, velocity: qd1}
    - {name: j2, position: q2, velocity: qd2}
model:
  kind: urdf
  urdf: arm.urdf
  joints:
    - {name: j2, armature: 2.0e-4, gear_ratio: 100}
    - {name: j1, armature: 0.0708}
control:
  channels: [{name: i1, unit: A, scale: 10.6956}, {name: i2, unit: A, scale: 8.4566}]
`
	var s Spec
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if j := s.Model.Joints; len(j) != 2 || j[0] != (JointDriveSpec{Name: "j2", Armature: 2e-4, GearRatio: 100}) || j[1].Reflected() != 0.0708 {
		t.Errorf("model.joints decoded as %+v", j)
	}
	if f := s.Control.Channels[0].Factor(); f != 10.6956 {
		t.Errorf("current channel factor %v, want 10.6956 N·m per A", f)
	}
	bad := strings.Replace(src, "gear_ratio: 100", "gear: 100", 1)
	dec = yaml.NewDecoder(strings.NewReader(bad))
	dec.KnownFields(true)
	if err := dec.Decode(&Spec{}); err == nil || !strings.Contains(err.Error(), "gear") {
		t.Errorf("misspelt gear_ratio: %v", err)
	}
}
