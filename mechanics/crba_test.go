package mechanics

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// planarArmURDF is a two-link arm in the x-y plane rotating about z. Link 1's
// inertia is given in a frame rolled by π/2 about x, so its izz is the
// stated iyy. An optional tool is fixed to the end of link 2.
func planarArmURDF(m1, m2, l1, r1, r2, i1, i2 float64, tool string) string {
	return fmt.Sprintf(`<?xml version="1.0"?>
<robot name="arm">
  <link name="base">
    <inertial><mass value="5"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
  </link>
  <link name="link1">
    <inertial>
      <origin xyz="%[4]g 0 0" rpy="1.5707963267948966 0 0"/>
      <mass value="%[1]g"/>
      <inertia ixx="0.3" ixy="0" ixz="0" iyy="%[6]g" iyz="0" izz="0.9"/>
    </inertial>
  </link>
  <link name="link2">
    <visual><geometry><box size="1 1 1"/></geometry></visual>
    <inertial>
      <origin xyz="%[5]g 0 0"/>
      <mass value="%[2]g"/>
      <inertia ixx="0.2" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="%[7]g"/>
    </inertial>
  </link>
  <joint name="shoulder" type="continuous">
    <parent link="base"/><child link="link1"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="%[3]g 0 0"/>
    <axis xyz="0 0 2"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/>
  </joint>
  %[8]s
</robot>`, m1, m2, l1, r1, r2, i1, i2, tool)
}

// planarArmM is the hand-derived mass matrix of the planar two-link arm.
func planarArmM(m1, m2, l1, r1, r2, i1, i2, q2 float64) [2][2]float64 {
	c := math.Cos(q2)
	m11 := i1 + i2 + m1*r1*r1 + m2*(l1*l1+r2*r2+2*l1*r2*c)
	m12 := i2 + m2*(r2*r2+l1*r2*c)
	m22 := i2 + m2*r2*r2
	return [2][2]float64{{m11, m12}, {m12, m22}}
}

func TestCRBAPlanarArm(t *testing.T) {
	const m1, m2, l1, r1, r2, i1, i2 = 2.0, 1.5, 0.7, 0.3, 0.4, 0.12, 0.08
	// Tool fixed at the end of link 2 (x = 0.9), yawed so its izz is unchanged.
	const mt, lt, it = 0.5, 0.9, 0.01
	tool := fmt.Sprintf(`<link name="tool"><inertial><origin xyz="0.05 0 0"/><mass value="%g"/>
      <inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.1" iyz="0" izz="%g"/></inertial></link>
    <joint name="tool_mount" type="fixed"><parent link="link2"/><child link="tool"/>
      <origin xyz="%g 0 0" rpy="0 0 0.3"/></joint>`, mt, it, lt-0.05*math.Cos(0.3))
	// The tool's COM sits at x = lt − 0.05 cos 0.3 + 0.05 cos 0.3 = lt, y = 0.05 sin 0.3.
	ty := 0.05 * math.Sin(0.3)
	mc := m2 + mt
	cx := (m2*r2 + mt*lt) / mc
	cy := mt * ty / mc
	ic := i2 + it + m2*((r2-cx)*(r2-cx)+cy*cy) + mt*((lt-cx)*(lt-cx)+(ty-cy)*(ty-cy))
	cases := []struct {
		name string
		urdf string
		want func(q2 float64) [2][2]float64
	}{
		{"two links", planarArmURDF(m1, m2, l1, r1, r2, i1, i2, ""),
			func(q2 float64) [2][2]float64 { return planarArmM(m1, m2, l1, r1, r2, i1, i2, q2) }},
		{"with fixed tool", planarArmURDF(m1, m2, l1, r1, r2, i1, i2, tool),
			func(q2 float64) [2][2]float64 {
				// Composite link 2: mass mc, COM at distance |c| along a direction rotated by
				// φ = atan2(cy, cx); the arm formula holds with q2 → q2 + φ.
				rc := math.Hypot(cx, cy)
				return planarArmM(m1, mc, l1, r1, rc, i1, ic, q2+math.Atan2(cy, cx))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseURDF(strings.NewReader(tc.urdf))
			if err != nil {
				t.Fatal(err)
			}
			if m.NV() != 2 || m.Root != "base" || strings.Join(m.JointNames(), ",") != "shoulder,elbow" {
				t.Fatalf("model: NV=%d root=%s joints=%v", m.NV(), m.Root, m.JointNames())
			}
			for _, q := range [][]float64{{0, 0}, {0.3, -1.2}, {-2, 2.5}, {1, math.Pi}} {
				h, err := m.MassMatrix(q)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.want(q[1])
				for i := range 2 {
					for j := range 2 {
						if d := math.Abs(h.At(i, j) - want[i][j]); d > 1e-12 {
							t.Errorf("q=%v M[%d][%d] = %.15g, want %.15g", q, i, j, h.At(i, j), want[i][j])
						}
					}
				}
			}
		})
	}
}

func pendulumURDF(pp PendulumParams) string {
	return fmt.Sprintf(`<robot name="double_pendulum">
  <link name="world"/>
  <link name="link1"><inertial><origin xyz="0 0 %g"/><mass value="%g"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="%g" iyz="0" izz="0.01"/></inertial></link>
  <link name="link2"><inertial><origin xyz="0 0 %g"/><mass value="%g"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="%g" iyz="0" izz="0.01"/></inertial></link>
  <joint name="q1" type="continuous"><parent link="world"/><child link="link1"/><axis xyz="0 1 0"/></joint>
  <joint name="q2" type="continuous"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 %g"/><axis xyz="0 1 0"/></joint>
</robot>`, -pp.R1, pp.M1, pp.I1, -pp.R2, pp.M2, pp.I2, -pp.L1)
}

func TestCRBAMatchesPendulum(t *testing.T) {
	hw := hardwareLike()
	hw.Ir = 0
	for _, tc := range []struct {
		name string
		pp   PendulumParams
	}{{"paper", PaperPendulum()}, {"hardware-like", hw}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseURDF(strings.NewReader(pendulumURDF(tc.pp)))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(13, 14))
			for range 10 {
				q := [2]float64{rng.Float64()*8 - 4, rng.Float64()*8 - 4}
				h, err := m.MassMatrix(q[:])
				if err != nil {
					t.Fatal(err)
				}
				want := tc.pp.MassMatrix(q)
				for i := range 2 {
					for j := range 2 {
						if d := math.Abs(h.At(i, j) - want[i][j]); d > 1e-12 {
							t.Errorf("q=%v M[%d][%d]: CRBA %.15g, pendulum %.15g", q, i, j, h.At(i, j), want[i][j])
						}
					}
				}
				// Forward kinematics: the elbow is at l1(−sin q1, 0, −cos q1).
				poses, err := m.FramePoses(q[:])
				if err != nil {
					t.Fatal(err)
				}
				elbow := Vec3{-tc.pp.L1 * math.Sin(q[0]), 0, -tc.pp.L1 * math.Cos(q[0])}
				if d := poses[1].P.Sub(elbow).Norm(); d > 1e-14 {
					t.Errorf("elbow at %v, want %v", poses[1].P, elbow)
				}
			}
		})
	}
}

// branchyURDF is a 3-D tree with a branch, a prismatic joint, a fixed joint
// and rotated joint origins, for the energy cross-check.
const branchyURDF = `<robot name="branchy">
  <link name="torso"><inertial><origin xyz="0.1 -0.05 0.2" rpy="0.1 0.2 0.3"/><mass value="8"/>
    <inertia ixx="0.5" ixy="0.02" ixz="-0.01" iyy="0.4" iyz="0.03" izz="0.3"/></inertial></link>
  <link name="a1"><inertial><origin xyz="0 0.1 -0.2"/><mass value="1.2"/>
    <inertia ixx="0.02" ixy="0" ixz="0.001" iyy="0.03" iyz="0" izz="0.01"/></inertial></link>
  <link name="a2"><inertial><origin xyz="0.05 0 -0.15" rpy="0.4 0 -0.2"/><mass value="0.8"/>
    <inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.012" iyz="0" izz="0.005"/></inertial></link>
  <link name="a2_sensor"><inertial><origin xyz="0 0 -0.05"/><mass value="0.3"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="b1"><inertial><origin xyz="0.2 0 0"/><mass value="2"/>
    <inertia ixx="0.05" ixy="0" ixz="0" iyy="0.06" iyz="0" izz="0.07"/></inertial></link>
  <link name="b2"><inertial><origin xyz="0 0 0.1"/><mass value="0.5"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.002"/></inertial></link>
  <joint name="ja1" type="revolute"><parent link="torso"/><child link="a1"/>
    <origin xyz="0.2 0.1 0" rpy="0.3 -0.2 0.5"/><axis xyz="1 1 0"/></joint>
  <joint name="ja2" type="revolute"><parent link="a1"/><child link="a2"/>
    <origin xyz="0 0.1 -0.4" rpy="0 0.5 0"/><axis xyz="0 1 0"/></joint>
  <joint name="ja2s" type="fixed"><parent link="a2"/><child link="a2_sensor"/>
    <origin xyz="0.02 0 -0.3" rpy="0.2 0.1 0"/></joint>
  <joint name="jb1" type="continuous"><parent link="torso"/><child link="b1"/>
    <origin xyz="-0.2 0 0.1" rpy="0 0 1.2"/><axis xyz="0 0 1"/></joint>
  <joint name="jb2" type="prismatic"><parent link="b1"/><child link="b2"/>
    <origin xyz="0.4 0 0" rpy="0.7 0 0"/><axis xyz="0.6 0 0.8"/></joint>
</robot>`

// kineticEnergy computes ½uᵀMu independently of CRBA, from body velocities
// in base coordinates (forward kinematics and point velocities, no spatial
// algebra). u = (v_base, ω_base, q̇) when floating, q̇ otherwise. Fixed-joint
// merging is checked separately by TestCRBAPlanarArm.
func kineticEnergy(t *testing.T, m *Model, q, u []float64, floating bool) float64 {
	t.Helper()
	poses, err := m.FramePoses(q)
	if err != nil {
		t.Fatal(err)
	}
	n := m.NV()
	var vb, wb Vec3
	qd := u
	if floating {
		vb, wb = Vec3{u[0], u[1], u[2]}, Vec3{u[3], u[4], u[5]}
		qd = u[6:]
	}
	omega := make([]Vec3, n)
	vel := make([]Vec3, n) // velocity of each body origin
	bodyKE := func(rb RigidBody, pose SE3, w, vo Vec3) float64 {
		c := pose.Act(rb.COM)
		vc := vo.Add(w.Cross(c.Sub(pose.P)))
		iw := pose.R.Mul(rb.Inertia).Mul(pose.R.T()).MulVec(w)
		return 0.5*rb.Mass*vc.Dot(vc) + 0.5*w.Dot(iw)
	}
	ke := 0.0
	if floating {
		ke += bodyKE(m.Base, IdentitySE3(), wb, vb)
	}
	for i, b := range m.Bodies {
		pw, pv, po := wb, vb, Vec3{}
		if b.Parent >= 0 {
			pw, pv, po = omega[b.Parent], vel[b.Parent], poses[b.Parent].P
		}
		o := poses[i].P
		axis := poses[i].R.MulVec(b.Axis)
		w := pw
		v := pv.Add(pw.Cross(o.Sub(po)))
		if b.Type == JointPrismatic {
			v = v.Add(axis.Scale(qd[i]))
		} else {
			w = w.Add(axis.Scale(qd[i]))
		}
		omega[i], vel[i] = w, v
		ke += bodyKE(b.Inertia, poses[i], w, v)
	}
	return ke
}

func TestCRBAEnergyCrossCheck(t *testing.T) {
	m, err := ParseURDF(strings.NewReader(branchyURDF))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.JointNames(), ","); got != "ja1,ja2,jb1,jb2" {
		t.Fatalf("joint order %s", got)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for _, floating := range []bool{false, true} {
		t.Run(fmt.Sprintf("floating=%v", floating), func(t *testing.T) {
			for range 5 {
				q := make([]float64, m.NV())
				for i := range q {
					q[i] = rng.Float64()*4 - 2
				}
				var h *mat.SymDense
				if floating {
					h, err = m.MassMatrixFloating(q)
				} else {
					h, err = m.MassMatrix(q)
				}
				if err != nil {
					t.Fatal(err)
				}
				nv := h.SymmetricDim()
				e := func(i, j int) []float64 {
					u := make([]float64, nv)
					u[i]++
					if j >= 0 {
						u[j]++
					}
					return u
				}
				for i := range nv {
					for j := range nv {
						// Polarisation: H_ij = KE(e_i+e_j) − KE(e_i) − KE(e_j) (i ≠ j), H_ii = 2 KE(e_i).
						var want float64
						if i == j {
							want = 2 * kineticEnergy(t, m, q, e(i, -1), floating)
						} else {
							want = kineticEnergy(t, m, q, e(i, j), floating) -
								kineticEnergy(t, m, q, e(i, -1), floating) - kineticEnergy(t, m, q, e(j, -1), floating)
						}
						if d := math.Abs(h.At(i, j) - want); d > 1e-12 {
							t.Errorf("q=%v H[%d][%d] = %.15g, kinetic energy gives %.15g", q, i, j, h.At(i, j), want)
						}
					}
				}
				if floating {
					// The joint block is the fixed-base matrix.
					hf, err := m.MassMatrix(q)
					if err != nil {
						t.Fatal(err)
					}
					for i := range m.NV() {
						for j := range m.NV() {
							if d := math.Abs(hf.At(i, j) - h.At(6+i, 6+j)); d > 1e-13 {
								t.Errorf("joint block differs by %g", d)
							}
						}
					}
				}
			}
		})
	}
}

func TestRigidBody(t *testing.T) {
	b := RigidBody{Mass: 2, Inertia: Mat3{{0.1, 0, 0}, {0, 0.2, 0}, {0, 0, 0.3}}}
	fm := b.FloatingMassMatrix()
	want := Mat6{{2, 0, 0, 0, 0, 0}, {0, 2, 0, 0, 0, 0}, {0, 0, 2, 0, 0, 0},
		{0, 0, 0, 0.1, 0, 0}, {0, 0, 0, 0, 0.2, 0}, {0, 0, 0, 0, 0, 0.3}}
	if fm != want {
		t.Errorf("FloatingMassMatrix = %v, want diag(m I3, I)", fm)
	}
	// A model with no joints: the floating mass matrix is the base's.
	m := &Model{Name: "brick", Base: RigidBody{Mass: 3, COM: Vec3{0.1, 0.2, -0.3}, Inertia: b.Inertia}}
	h, err := m.MassMatrixFloating(nil)
	if err != nil {
		t.Fatal(err)
	}
	fb := m.Base.FloatingMassMatrix()
	for i := range 6 {
		for j := range 6 {
			if h.At(i, j) != fb[i][j] {
				t.Fatalf("H[%d][%d] = %g, want %g", i, j, h.At(i, j), fb[i][j])
			}
		}
	}
	if _, err := m.MassMatrix(nil); err == nil {
		t.Error("MassMatrix of a model without joints: no error")
	}
	// Combine and Transformed: two point masses.
	p1 := RigidBody{Mass: 1, COM: Vec3{1, 0, 0}}
	p2 := RigidBody{Mass: 1}.Transformed(SE3{R: RPY(0, 0, 1), P: Vec3{-1, 0, 0}})
	c := p1.Combine(p2)
	if c.Mass != 2 || c.COM != (Vec3{}) || math.Abs(c.Inertia[1][1]-2) > 1e-15 || math.Abs(c.Inertia[2][2]-2) > 1e-15 || c.Inertia[0][0] != 0 {
		t.Errorf("Combine = %+v", c)
	}
}

func TestParseURDFErrors(t *testing.T) {
	link := func(n string) string { return `<link name="` + n + `"/>` }
	joint := func(name, typ, parent, child, extra string) string {
		return fmt.Sprintf(`<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>%s</joint>`, name, typ, parent, child, extra)
	}
	robot := func(body ...string) string { return `<robot name="r">` + strings.Join(body, "") + `</robot>` }
	cases := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", "empty document"},
		{"not xml", "<robot", "urdf"},
		{"no links", robot(), "no links"},
		{"unknown link", robot(link("a"), joint("j", "fixed", "a", "b", "")), `unknown link "b"`},
		{"two parents", robot(link("a"), link("b"), link("c"), joint("j1", "fixed", "a", "c", ""), joint("j2", "fixed", "b", "c", "")), "two parents"},
		{"two roots", robot(link("a"), link("b")), "exactly one root"},
		{"loop", robot(link("a"), link("b"), link("c"), joint("j1", "fixed", "a", "b", ""), joint("j2", "fixed", "b", "c", ""), joint("j3", "fixed", "c", "b", "")), "two parents"},
		{"detached cycle", robot(link("a"), link("b"), link("c"), joint("j2", "fixed", "b", "c", ""), joint("j3", "fixed", "c", "b", "")), "not connected"},
		{"unsupported type", robot(link("a"), link("b"), joint("j", "planar", "a", "b", "")), `unsupported type "planar"`},
		{"zero axis", robot(link("a"), link("b"), joint("j", "revolute", "a", "b", `<axis xyz="0 0 0"/>`)), "zero axis"},
		{"bad origin", robot(link("a"), link("b"), joint("j", "revolute", "a", "b", `<origin xyz="1 2"/>`)), "origin xyz"},
		{"bad mass", robot(`<link name="a"><inertial><mass value="heavy"/></inertial></link>`), "mass"},
		{"negative mass", robot(`<link name="a"><inertial><mass value="-1"/></inertial></link>`), "negative mass"},
		{"duplicate joint", robot(link("a"), link("b"), link("c"), joint("j", "fixed", "a", "b", ""), joint("j", "fixed", "a", "c", "")), "duplicate joint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseURDF(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadURDF(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pendulum.urdf")
	if err := os.WriteFile(p, []byte(pendulumURDF(PaperPendulum())), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadURDF(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "double_pendulum" || m.NV() != 2 {
		t.Errorf("loaded %q with %d joints", m.Name, m.NV())
	}
	if _, err := LoadURDF(filepath.Join(dir, "missing.urdf")); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := m.MassMatrix([]float64{1}); err == nil {
		t.Error("wrong q length: no error")
	}
}

// TestURDFRefusesXacro hands the reader xacro files, which a plain XML
// decoder would half-read (macros and includes ignored, ${…} values
// unparsable), and wants ErrXacro with the command that expands them.
func TestURDFRefusesXacro(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"namespace", `<?xml version="1.0"?>
<robot name="ur" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="$(find ur_description)/urdf/ur_macro.xacro"/>
  <xacro:ur_robot name="ur10e"/>
</robot>`, "declares the xacro namespace on line 2"},
		{"undeclared prefix", `<robot name="r"><link name="a"/>
<xacro:property name="l" value="0.5"/></robot>`, "<xacro:property> element on line 2"},
		{"substitution", `<robot name="r"><link name="a"/><link name="b"/>
<joint name="j" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 ${l}"/></joint></robot>`, `xyz="0 0 ${l}" of <origin> on line 2`},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseURDF(strings.NewReader(tc.in))
			if !errors.Is(err, ErrXacro) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "xacro robot.urdf.xacro > robot.urdf") {
				t.Errorf("ParseURDF: err = %v, want ErrXacro saying %q and how to expand", err, tc.want)
			}
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".urdf.xacro")
			if err := os.WriteFile(p, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = LoadURDF(p)
			cmd := "`xacro " + p + " > " + strings.TrimSuffix(p, ".xacro") + "`"
			if !errors.Is(err, ErrXacro) || !strings.Contains(err.Error(), cmd) {
				t.Errorf("LoadURDF: err = %v, want ErrXacro with %s", err, cmd)
			}
		})
	}
	// A .urdf file that holds xacro: the expanded file gets another name.
	p := filepath.Join(dir, "robot.urdf")
	if err := os.WriteFile(p, []byte(cases[0].in), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadURDF(p); !errors.Is(err, ErrXacro) || !strings.Contains(err.Error(), "> "+filepath.Join(dir, "robot_expanded.urdf")) {
		t.Errorf("xacro in a .urdf file: %v", err)
	}
	// Plain URDF with "$" elsewhere (a comment, text) still parses.
	if _, err := ParseURDF(strings.NewReader(`<robot name="r"><!-- costs $(none) --><link name="a"/></robot>`)); err != nil {
		t.Errorf("plain URDF refused: %v", err)
	}
}
