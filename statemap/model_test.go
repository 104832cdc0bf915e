package statemap

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/calisym/calisym/mechanics"
)

// pendulumURDF describes the double pendulum pp as a URDF: links swing
// about y, link i has its centre of mass r_i below its joint.
func pendulumURDF(pp mechanics.PendulumParams) string {
	return fmt.Sprintf(`<robot name="pendulum">
  <link name="base"/>
  <link name="link1"><inertial><origin xyz="0 0 %[3]g"/><mass value="%[1]g"/>
    <inertia ixx="0.01" iyy="%[5]g" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="link2"><inertial><origin xyz="0 0 %[4]g"/><mass value="%[2]g"/>
    <inertia ixx="0.01" iyy="%[6]g" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="link1"/><axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="continuous"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 %[7]g"/><axis xyz="0 1 0"/></joint>
</robot>`, pp.M1, pp.M2, -pp.R1, -pp.R2, pp.I1, pp.I2, -pp.L1)
}

func TestURDFModelMatchesAnalyticPendulum(t *testing.T) {
	pp := mechanics.PaperPendulum()
	pp.K1, pp.K2 = 0, 0 // URDF has no springs
	u, err := mechanics.ParseURDF(strings.NewReader(pendulumURDF(pp)))
	if err != nil {
		t.Fatal(err)
	}
	// Spec order reversed against the URDF's: the model permutes.
	um, err := NewURDFModel(u, []string{"elbow", "shoulder"}, false, pp.G)
	if err != nil {
		t.Fatal(err)
	}
	an := &PendulumModel{Params: pp}
	var mu, ma [4]float64
	for _, q := range [][2]float64{{0, 0}, {0.3, -1.2}, {2, 2.5}, {-1, math.Pi}} {
		if err := um.MassMatrix(mu[:], []float64{q[1], q[0]}); err != nil {
			t.Fatal(err)
		}
		if err := an.MassMatrix(ma[:], q[:]); err != nil {
			t.Fatal(err)
		}
		// ma in (shoulder, elbow) order, mu in (elbow, shoulder) order.
		want := [4]float64{ma[3], ma[2], ma[1], ma[0]}
		for i := range mu {
			if math.Abs(mu[i]-want[i]) > 1e-12 {
				t.Fatalf("q = %v: CRBA M = %v, analytic %v", q, mu, want)
			}
		}
		v0 := um.Potential(mechanics.SE3{}, []float64{0, 0})
		if got, want := um.Potential(mechanics.SE3{}, []float64{q[1], q[0]})-v0, an.Potential(mechanics.SE3{}, q[:]); math.Abs(got-want) > 1e-12 {
			t.Errorf("q = %v: URDF potential %v above rest, analytic %v", q, got, want)
		}
	}
	// Floating base: the joint block equals the fixed-base matrix.
	fm, err := NewURDFModel(u, []string{"shoulder", "elbow"}, true, pp.G)
	if err != nil {
		t.Fatal(err)
	}
	mf := make([]float64, 64)
	if err := fm.MassMatrix(mf, []float64{0.3, -1.2}); err != nil {
		t.Fatal(err)
	}
	if err := an.MassMatrix(ma[:], []float64{0.3, -1.2}); err != nil {
		t.Fatal(err)
	}
	if fm.NV() != 8 || math.Abs(mf[6*8+6]-ma[0]) > 1e-12 || math.Abs(mf[7*8+7]-ma[3]) > 1e-12 || math.Abs(mf[0]-(pp.M1+pp.M2)) > 1e-12 {
		t.Errorf("floating M diag %v %v %v, want total mass %v and %v %v", mf[0], mf[6*8+6], mf[7*8+7], pp.M1+pp.M2, ma[0], ma[3])
	}
}

func TestURDFJointMismatch(t *testing.T) {
	u, err := mechanics.ParseURDF(strings.NewReader(pendulumURDF(mechanics.PaperPendulum())))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		joints []string
		want   []string
	}{
		{"unknown joint", []string{"shoulder", "wrist"}, []string{"state.joints[1].name", `"wrist"`, "its joints: shoulder, elbow"}},
		{"unmapped joint", []string{"shoulder"}, []string{"elbow", "have no entry"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewURDFModel(u, tc.joints, false, 9.81)
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
}

func TestRigidBodyModel(t *testing.T) {
	m, err := rigidBody(&RigidBodySpec{Mass: CrazyflieMass, Inertia: []float64{CrazyflieIxx, CrazyflieIyy, CrazyflieIzz}})
	if err != nil {
		t.Fatal(err)
	}
	rb := &RigidBodyModel{Body: m, G: 9.81}
	M := make([]float64, 36)
	if err := rb.MassMatrix(M, nil); err != nil {
		t.Fatal(err)
	}
	want := []float64{CrazyflieMass, CrazyflieMass, CrazyflieMass, CrazyflieIxx, CrazyflieIyy, CrazyflieIzz}
	for i := range 6 {
		for j := range 6 {
			w := 0.0
			if i == j {
				w = want[i]
			}
			if M[6*i+j] != w {
				t.Fatalf("M[%d][%d] = %v, want %v (diag(m I, I_body))", i, j, M[6*i+j], w)
			}
		}
	}
	if v := rb.Potential(mechanics.SE3{R: mechanics.Identity3(), P: mechanics.Vec3{1, 2, 1.5}}, nil); math.Abs(v-CrazyflieMass*9.81*1.5) > 1e-15 {
		t.Errorf("potential %v", v)
	}
	for _, bad := range [][]float64{{1, 1, -1}, {1, 2, 3, 0.5, 0, 7}, {1, 0, 0, 1, 1, 0, 0, 0, 1}} {
		if _, err := rigidBody(&RigidBodySpec{Mass: 1, Inertia: bad}); !errors.Is(err, ErrSpec) {
			t.Errorf("inertia %v accepted: %v", bad, err)
		}
	}
}
