package mechanics

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// URDFJoint is one joint of a URDF robot description as written, fixed
// joints included: what robot_state_publisher turns into a transform from
// the parent link's frame to the child link's.
type URDFJoint struct {
	// Name is the joint's name.
	Name string
	// Type is JointFixed, JointRevolute, JointContinuous or JointPrismatic.
	Type JointType
	// Parent and Child are the links it connects.
	Parent, Child string
	// Origin is the child link's frame in the parent link's frame at q = 0.
	Origin SE3
	// Axis is the unit joint axis in the child link's frame ((1, 0, 0)
	// where the URDF gives none).
	Axis Vec3
}

// Pose returns the child link's frame in the parent link's frame at joint
// coordinate q (an angle [rad] or a displacement [m]; a fixed joint
// ignores it): Origin, then the rotation about Axis by q or the
// translation along it.
func (j *URDFJoint) Pose(q float64) SE3 {
	switch j.Type {
	case JointFixed:
		return j.Origin
	case JointPrismatic:
		return j.Origin.Mul(SE3{R: Identity3(), P: j.Axis.Scale(q)})
	}
	return j.Origin.Mul(SE3{R: ExpSO3(j.Axis.Scale(q))})
}

// URDFTree is a URDF robot's links and joints as written (ParseURDF
// merges the links that fixed joints attach; this keeps every one): the
// frames a robot description's viewer (Foxglove, RViz) draws links in.
type URDFTree struct {
	// Name is the robot's name.
	Name string
	// Root is the root link.
	Root string
	// Links lists every link, the root first, then depth first in the
	// order of Joints.
	Links []string
	// Joints lists every joint depth first from the root, children in
	// document order, so that a joint's parent link is the root or the
	// child of an earlier joint.
	Joints []URDFJoint
}

// ParseURDFTree reads a URDF robot description (see ParseURDF, whose
// checks it makes: one root, no loops, known joint types, no xacro) into
// its tree of links and joints, fixed joints included.
func ParseURDFTree(data []byte) (*URDFTree, error) {
	m, err := ParseURDF(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var robot urdfRobot
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&robot); err != nil {
		return nil, fmt.Errorf("mechanics: urdf: %w", err)
	}
	children := map[string][]*urdfJoint{}
	for i := range robot.Joints {
		j := &robot.Joints[i]
		children[j.Parent.Link] = append(children[j.Parent.Link], j)
	}
	t := &URDFTree{Name: robot.Name, Root: m.Root, Links: []string{m.Root}}
	var walk func(link string) error
	walk = func(link string) error {
		for _, j := range children[link] {
			origin, err := j.Origin.pose()
			if err != nil {
				return fmt.Errorf("mechanics: urdf: joint %q %w", j.Name, err)
			}
			typ := JointFixed
			switch j.Type {
			case "revolute":
				typ = JointRevolute
			case "continuous":
				typ = JointContinuous
			case "prismatic":
				typ = JointPrismatic
			}
			axis := Vec3{1, 0, 0}
			if j.Axis != nil {
				a, err := parseFloats(j.Axis.XYZ, 3, axis[:])
				if err != nil {
					return fmt.Errorf("mechanics: urdf: joint %q axis %w", j.Name, err)
				}
				axis = Vec3{a[0], a[1], a[2]}
			}
			if n := axis.Norm(); n > 0 {
				axis = axis.Scale(1 / n)
			}
			t.Joints = append(t.Joints, URDFJoint{Name: j.Name, Type: typ, Parent: j.Parent.Link, Child: j.Child.Link, Origin: origin, Axis: axis})
			t.Links = append(t.Links, j.Child.Link)
			if err := walk(j.Child.Link); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m.Root); err != nil {
		return nil, err
	}
	return t, nil
}
