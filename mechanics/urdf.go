package mechanics

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

type urdfRobot struct {
	XMLName xml.Name    `xml:"robot"`
	Name    string      `xml:"name,attr"`
	Links   []urdfLink  `xml:"link"`
	Joints  []urdfJoint `xml:"joint"`
}

type urdfLink struct {
	Name     string        `xml:"name,attr"`
	Inertial *urdfInertial `xml:"inertial"`
}

type urdfOrigin struct {
	XYZ string `xml:"xyz,attr"`
	RPY string `xml:"rpy,attr"`
}

type urdfInertial struct {
	Origin *urdfOrigin `xml:"origin"`
	Mass   *struct {
		Value string `xml:"value,attr"`
	} `xml:"mass"`
	Inertia *struct {
		Ixx string `xml:"ixx,attr"`
		Ixy string `xml:"ixy,attr"`
		Ixz string `xml:"ixz,attr"`
		Iyy string `xml:"iyy,attr"`
		Iyz string `xml:"iyz,attr"`
		Izz string `xml:"izz,attr"`
	} `xml:"inertia"`
}

type urdfJoint struct {
	Name   string `xml:"name,attr"`
	Type   string `xml:"type,attr"`
	Parent struct {
		Link string `xml:"link,attr"`
	} `xml:"parent"`
	Child struct {
		Link string `xml:"link,attr"`
	} `xml:"child"`
	Origin *urdfOrigin `xml:"origin"`
	Axis   *struct {
		XYZ string `xml:"xyz,attr"`
	} `xml:"axis"`
}

// parseFloats parses a whitespace-separated list of exactly n numbers; an
// empty string gives def.
func parseFloats(s string, n int, def []float64) ([]float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return def, nil
	}
	if len(f) != n {
		return nil, fmt.Errorf("%q has %d numbers, want %d", s, len(f), n)
	}
	out := make([]float64, n)
	for i, x := range f {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: non-finite value", s)
		}
		out[i] = v
	}
	return out, nil
}

func parseScalar(s string) (float64, error) {
	v, err := parseFloats(s, 1, []float64{0})
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

func (o *urdfOrigin) pose() (SE3, error) {
	if o == nil {
		return IdentitySE3(), nil
	}
	xyz, err := parseFloats(o.XYZ, 3, []float64{0, 0, 0})
	if err != nil {
		return SE3{}, fmt.Errorf("origin xyz %w", err)
	}
	rpy, err := parseFloats(o.RPY, 3, []float64{0, 0, 0})
	if err != nil {
		return SE3{}, fmt.Errorf("origin rpy %w", err)
	}
	return SE3{R: RPY(rpy[0], rpy[1], rpy[2]), P: Vec3{xyz[0], xyz[1], xyz[2]}}, nil
}

func (in *urdfInertial) body() (RigidBody, error) {
	if in == nil {
		return RigidBody{}, nil
	}
	pose, err := in.Origin.pose()
	if err != nil {
		return RigidBody{}, err
	}
	var b RigidBody
	if in.Mass != nil {
		if b.Mass, err = parseScalar(in.Mass.Value); err != nil {
			return RigidBody{}, fmt.Errorf("mass %w", err)
		}
		if b.Mass < 0 {
			return RigidBody{}, fmt.Errorf("negative mass %g", b.Mass)
		}
	}
	if in.Inertia != nil {
		var v [6]float64
		for i, s := range []string{in.Inertia.Ixx, in.Inertia.Ixy, in.Inertia.Ixz, in.Inertia.Iyy, in.Inertia.Iyz, in.Inertia.Izz} {
			if v[i], err = parseScalar(s); err != nil {
				return RigidBody{}, fmt.Errorf("inertia %w", err)
			}
		}
		b.Inertia = Mat3{{v[0], v[1], v[2]}, {v[1], v[3], v[4]}, {v[2], v[4], v[5]}}
	}
	// The inertial origin places the centre of mass and orients the frame
	// in which the inertia tensor is given.
	return RigidBody{
		Mass:    b.Mass,
		COM:     pose.P,
		Inertia: pose.R.Mul(b.Inertia).Mul(pose.R.T()),
	}, nil
}

// ParseURDF reads a URDF robot description and builds its kinematic tree:
// links with their inertial data (origin xyz/rpy, mass, inertia), and
// revolute, continuous, prismatic and fixed joints (origin xyz/rpy, axis,
// default axis (1, 0, 0)). Links attached through fixed joints are merged
// into their parent body. Movable joints are numbered depth-first from the
// root link, children in document order. Joint limits, dynamics, visual and
// collision elements are ignored.
//
// A xacro file (the xacro namespace, xacro: elements or ${…} and $(…)
// substitutions) is refused with an error wrapping ErrXacro: its macros
// must be expanded first.
func ParseURDF(r io.Reader) (*Model, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("mechanics: urdf: %w", err)
	}
	if what := xacroEvidence(raw); what != "" {
		return nil, fmt.Errorf("%w: %s; expand it first with `xacro robot.urdf.xacro > robot.urdf` (the xacro tool of ROS: ros-$ROS_DISTRO-xacro, or pip install xacro) and load the expanded file", ErrXacro, what)
	}
	var robot urdfRobot
	if err := xml.NewDecoder(bytes.NewReader(raw)).Decode(&robot); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("mechanics: urdf: empty document")
		}
		return nil, fmt.Errorf("mechanics: urdf: %w", err)
	}
	if len(robot.Links) == 0 {
		return nil, fmt.Errorf("mechanics: urdf: robot %q has no links", robot.Name)
	}
	links := make(map[string]*urdfLink, len(robot.Links))
	for i := range robot.Links {
		l := &robot.Links[i]
		if l.Name == "" {
			return nil, fmt.Errorf("mechanics: urdf: link %d has no name", i)
		}
		if _, dup := links[l.Name]; dup {
			return nil, fmt.Errorf("mechanics: urdf: duplicate link %q", l.Name)
		}
		links[l.Name] = l
	}
	children := make(map[string][]*urdfJoint)
	parentOf := make(map[string]string)
	seen := make(map[string]bool)
	for i := range robot.Joints {
		j := &robot.Joints[i]
		if seen[j.Name] {
			return nil, fmt.Errorf("mechanics: urdf: duplicate joint %q", j.Name)
		}
		seen[j.Name] = true
		for _, l := range []string{j.Parent.Link, j.Child.Link} {
			if _, ok := links[l]; !ok {
				return nil, fmt.Errorf("mechanics: urdf: joint %q refers to unknown link %q", j.Name, l)
			}
		}
		if p, ok := parentOf[j.Child.Link]; ok {
			return nil, fmt.Errorf("mechanics: urdf: link %q has two parents (%q and %q)", j.Child.Link, p, j.Parent.Link)
		}
		parentOf[j.Child.Link] = j.Parent.Link
		children[j.Parent.Link] = append(children[j.Parent.Link], j)
	}
	var roots []string
	for _, l := range robot.Links {
		if _, ok := parentOf[l.Name]; !ok {
			roots = append(roots, l.Name)
		}
	}
	if len(roots) != 1 {
		return nil, fmt.Errorf("mechanics: urdf: robot %q needs exactly one root link, found %d %v (a cycle or a disconnected link)", robot.Name, len(roots), roots)
	}
	m := &Model{Name: robot.Name, Root: roots[0]}
	visited := make(map[string]bool)
	var walk func(link string, body int, inBody SE3) error
	walk = func(link string, body int, inBody SE3) error {
		if visited[link] {
			return fmt.Errorf("mechanics: urdf: kinematic loop through link %q", link)
		}
		visited[link] = true
		rb, err := links[link].Inertial.body()
		if err != nil {
			return fmt.Errorf("mechanics: urdf: link %q inertial %w", link, err)
		}
		rb = rb.Transformed(inBody)
		if body < 0 {
			m.Base = m.Base.Combine(rb)
		} else {
			m.Bodies[body].Inertia = m.Bodies[body].Inertia.Combine(rb)
		}
		for _, j := range children[link] {
			origin, err := j.Origin.pose()
			if err != nil {
				return fmt.Errorf("mechanics: urdf: joint %q %w", j.Name, err)
			}
			tree := inBody.Mul(origin)
			var typ JointType
			switch j.Type {
			case "fixed":
				if err := walk(j.Child.Link, body, tree); err != nil {
					return err
				}
				continue
			case "revolute":
				typ = JointRevolute
			case "continuous":
				typ = JointContinuous
			case "prismatic":
				typ = JointPrismatic
			default:
				return fmt.Errorf("mechanics: urdf: joint %q has unsupported type %q", j.Name, j.Type)
			}
			axis := Vec3{1, 0, 0}
			if j.Axis != nil {
				a, err := parseFloats(j.Axis.XYZ, 3, axis[:])
				if err != nil {
					return fmt.Errorf("mechanics: urdf: joint %q axis %w", j.Name, err)
				}
				axis = Vec3{a[0], a[1], a[2]}
			}
			n := axis.Norm()
			if n == 0 {
				return fmt.Errorf("mechanics: urdf: joint %q has a zero axis", j.Name)
			}
			m.Bodies = append(m.Bodies, Body{
				Name: j.Child.Link, Joint: j.Name, Type: typ, Parent: body,
				Tree: tree, Axis: axis.Scale(1 / n),
			})
			if err := walk(j.Child.Link, len(m.Bodies)-1, IdentitySE3()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m.Root, -1, IdentitySE3()); err != nil {
		return nil, err
	}
	for _, l := range robot.Links {
		if !visited[l.Name] {
			return nil, fmt.Errorf("mechanics: urdf: link %q is not connected to the root %q (kinematic loop)", l.Name, m.Root)
		}
	}
	return m, nil
}

// LoadURDF reads a URDF file; see ParseURDF. A xacro file is refused
// with an error wrapping ErrXacro that gives the command expanding it.
func LoadURDF(path string) (*Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mechanics: %w", err)
	}
	if what := xacroEvidence(raw); what != "" {
		out := strings.TrimSuffix(strings.TrimSuffix(path, ".xacro"), ".urdf") + ".urdf"
		if out == path {
			out = strings.TrimSuffix(path, ".urdf") + "_expanded.urdf"
		}
		return nil, fmt.Errorf("%s: %w: %s; expand it first with `xacro %s > %s` (the xacro tool of ROS: ros-$ROS_DISTRO-xacro, or pip install xacro) and read %s instead",
			path, ErrXacro, what, path, out, out)
	}
	m, err := ParseURDF(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ErrXacro wraps the error for a xacro robot description handed to the
// URDF reader: xacro macros, includes, properties and substitutions must
// be expanded by the xacro tool into plain URDF first.
var ErrXacro = errors.New("mechanics: urdf: this is a xacro file, not plain URDF")

// xacroNS is the namespace xacro files declare.
const xacroNS = "http://www.ros.org/wiki/xacro"

// xacroEvidence returns what marks raw as a xacro file (the namespace
// declaration, the first xacro element, or a ${…} or $(…) substitution in
// an attribute, with its line), or "" for plain XML. An XML syntax error
// ends the scan: ParseURDF reports it.
func xacroEvidence(raw []byte) string {
	d := xml.NewDecoder(bytes.NewReader(raw))
	d.Strict = false
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		st, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		line, _ := d.InputPos()
		if st.Name.Space == xacroNS || st.Name.Space == "xacro" {
			return fmt.Sprintf("it has a <xacro:%s> element on line %d", st.Name.Local, line)
		}
		for _, a := range st.Attr {
			if (a.Name.Space == "xmlns" && a.Name.Local == "xacro") || a.Value == xacroNS {
				return fmt.Sprintf("it declares the xacro namespace on line %d", line)
			}
			if strings.Contains(a.Value, "${") || strings.Contains(a.Value, "$(") {
				return fmt.Sprintf("attribute %s=%q of <%s> on line %d is a xacro substitution", a.Name.Local, a.Value, st.Name.Local, line)
			}
		}
	}
}
