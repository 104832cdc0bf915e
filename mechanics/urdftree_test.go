package mechanics

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestParseURDFTree checks the unmerged tree of branchyURDF against the
// merged Model: every link and joint as written, depth first, and link
// poses composed from the joints' Pose equal to FramePoses (forward
// kinematics of the merged bodies) at a random configuration.
func TestParseURDFTree(t *testing.T) {
	tree, err := ParseURDFTree([]byte(branchyURDF))
	if err != nil {
		t.Fatal(err)
	}
	if tree.Name != "branchy" || tree.Root != "torso" {
		t.Fatalf("name %q root %q", tree.Name, tree.Root)
	}
	if want := []string{"torso", "a1", "a2", "a2_sensor", "b1", "b2"}; !slices.Equal(tree.Links, want) {
		t.Fatalf("links %v, want %v", tree.Links, want)
	}
	var names []string
	for _, j := range tree.Joints {
		names = append(names, j.Name+":"+j.Type.String())
	}
	if want := []string{"ja1:revolute", "ja2:revolute", "ja2s:fixed", "jb1:continuous", "jb2:prismatic"}; !slices.Equal(names, want) {
		t.Fatalf("joints %v, want %v", names, want)
	}
	if a := tree.Joints[0].Axis; math.Abs(a.Norm()-1) > 1e-15 || a[0] != a[1] {
		t.Errorf("ja1 axis %v: want (1, 1, 0) normalised", a)
	}
	m, err := ParseURDF(strings.NewReader(branchyURDF))
	if err != nil {
		t.Fatal(err)
	}
	q := []float64{0.3, -1.1, 2.2, 0.15} // ja1, ja2, jb1, jb2 (the model's coordinates)
	poses, err := m.FramePoses(q)
	if err != nil {
		t.Fatal(err)
	}
	coord := map[string]float64{}
	for i, name := range m.JointNames() {
		coord[name] = q[i]
	}
	link := map[string]SE3{tree.Root: IdentitySE3()}
	for _, j := range tree.Joints {
		parent, ok := link[j.Parent]
		if !ok {
			t.Fatalf("joint %s comes before its parent link %s", j.Name, j.Parent)
		}
		link[j.Child] = parent.Mul(j.Pose(coord[j.Name]))
	}
	maxDiff := func(a, b SE3) float64 {
		d := 0.0
		for r := range 3 {
			d = max(d, math.Abs(a.P[r]-b.P[r]))
			for c := range 3 {
				d = max(d, math.Abs(a.R[r][c]-b.R[r][c]))
			}
		}
		return d
	}
	for i, b := range m.Bodies {
		if d := maxDiff(link[b.Name], poses[i]); d > 1e-12 {
			t.Errorf("link %s: composed joint poses differ from FramePoses by %.3g", b.Name, d)
		}
	}
	// The fixed link rides on a2 at its origin; a fixed joint ignores q.
	fixed := tree.Joints[2]
	if d := maxDiff(link["a2_sensor"], link["a2"].Mul(fixed.Origin)); d != 0 || fixed.Pose(5) != fixed.Origin {
		t.Errorf("fixed link a2_sensor off its origin by %.3g", d)
	}
	// A prismatic joint translates along its axis in the child frame.
	pj := tree.Joints[4]
	p := pj.Pose(0.5)
	want := pj.Origin.Act(pj.Axis.Scale(0.5))
	if p.R != pj.Origin.R || maxDiff(p, SE3{R: p.R, P: want}) > 1e-15 {
		t.Errorf("prismatic Pose(0.5) = %+v, want origin·(axis·0.5) = %v", p, want)
	}
}

// TestParseURDFTreeErrors checks that the tree refuses what ParseURDF
// refuses.
func TestParseURDFTreeErrors(t *testing.T) {
	for _, c := range []struct{ name, urdf string }{
		{"two roots", `<robot name="r"><link name="a"/><link name="b"/></robot>`},
		{"unknown type", `<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="floating"><parent link="a"/><child link="b"/></joint></robot>`},
		{"not xml", `<robot`},
	} {
		if _, err := ParseURDFTree([]byte(c.urdf)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	_, err := ParseURDFTree([]byte(`<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="a"/></robot>`))
	if !errors.Is(err, ErrXacro) {
		t.Errorf("xacro: %v, want ErrXacro", err)
	}
}
