package mechanics

import (
	"fmt"
	"strings"
)

// PendulumURDF returns a URDF of the double pendulum for 3D viewers (the
// predictor node's /robot_description): a fixed root link "base" and two
// links of lengths L1 and L2, hanging along −z at q = 0 and swinging in
// the x–z plane, on continuous joints named joints[0] (base → link1, q1
// from the downward vertical) and joints[1] (link1 → link2 at the end of
// link 1, q2 relative to link 1); the axis −y makes a positive angle swing
// the link towards +x (x = l sin q, z = −l cos q, the pendulum's own
// convention). Each link has a cylinder along it and a sphere at its end
// as visuals, and its mass, centre of mass (R1, R2 along the link) and
// inertia about the centre of mass (I1, I2, about every axis) as
// inertials.
func PendulumURDF(p PendulumParams, joints [2]string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>
<!-- The double pendulum, generated from its parameters (mechanics.PendulumURDF). -->
<robot name="double_pendulum">
  <link name="base">
    <visual><geometry><box size="0.1 0.1 0.04"/></geometry><material name="pivot"><color rgba="0.3 0.3 0.3 1"/></material></visual>
  </link>
`)
	links := [2]struct {
		m, l, r, i float64
		color      string
	}{{p.M1, p.L1, p.R1, p.I1, "0.2 0.4 0.8 1"}, {p.M2, p.L2, p.R2, p.I2, "0.8 0.4 0.2 1"}}
	for k, l := range links {
		fmt.Fprintf(&b, `  <link name="link%[1]d">
    <visual><origin xyz="0 0 %[2]g"/><geometry><cylinder radius="0.02" length="%[3]g"/></geometry><material name="link%[1]d"><color rgba="%[4]s"/></material></visual>
    <visual><origin xyz="0 0 %[5]g"/><geometry><sphere radius="0.04"/></geometry><material name="link%[1]d"/></visual>
    <inertial><origin xyz="0 0 %[6]g"/><mass value="%[7]g"/><inertia ixx="%[8]g" iyy="%[8]g" izz="%[8]g" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
`, k+1, -l.l/2, l.l, l.color, -l.l, -l.r, l.m, l.i)
	}
	fmt.Fprintf(&b, `  <joint name="%s" type="continuous"><parent link="base"/><child link="link1"/><origin xyz="0 0 0"/><axis xyz="0 -1 0"/></joint>
  <joint name="%s" type="continuous"><parent link="link1"/><child link="link2"/><origin xyz="0 0 %g"/><axis xyz="0 -1 0"/></joint>
</robot>
`, joints[0], joints[1], -p.L1)
	return b.String()
}
