package convert

import (
	"fmt"
	"math"
	"testing"

	"github.com/calisym/calisym/statemap"

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

func TestRebase(t *testing.T) {
	// Poses relative to an origin, re-expressed relative to another pose,
	// equal the poses computed relative to that pose directly.
	origin := mechanics.SE3{R: mechanics.RPY(0.1, -0.2, 2.5), P: mechanics.Vec3{3, -1, 2}}
	a := mechanics.SE3{R: mechanics.RPY(0.3, 0.1, -2.9), P: mechanics.Vec3{3.5, -0.2, 2.2}}
	b := mechanics.SE3{R: mechanics.RPY(-0.2, 0.4, 2.8), P: mechanics.Vec3{4, 0.5, 1.7}}
	qa := mechanics.LogSE3(origin.Inverse().Mul(a))
	qb := mechanics.LogSE3(origin.Inverse().Mul(b))
	got := RebaseSE3(qa, qb)
	want := mechanics.LogSE3(a.Inverse().Mul(b))
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("RebaseSE3 = %v, want %v", got, want)
		}
	}
	ga, gb := statemap.GravityCoordinates(origin, a), statemap.GravityCoordinates(origin, b)
	gotG := RebaseGravity(ga, gb)
	wantG := statemap.GravityCoordinates(a, b)
	for i := range gotG {
		if math.Abs(gotG[i]-wantG[i]) > 1e-12 {
			t.Fatalf("RebaseGravity = %v, want %v", gotG, wantG)
		}
	}
	// Gravity coordinates: roll and pitch stay absolute, yaw wraps.
	roll, pitch, _ := statemap.EulerZYX(b.R)
	if math.Abs(wantG[3]-roll) > 1e-12 || math.Abs(wantG[4]-pitch) > 1e-12 {
		t.Errorf("roll, pitch = %v %v, want %v %v", wantG[3], wantG[4], roll, pitch)
	}
	if yaw := wantG[5]; math.Abs(yaw-(2.8+2.9-2*math.Pi)) > 1e-12 {
		t.Errorf("relative yaw %v, want %v (wrapped)", yaw, 2.8+2.9-2*math.Pi)
	}
}
