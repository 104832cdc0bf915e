package convert_test

// Independent references for the ANYmal D conversion test (anymal_test.go):
// a reader of anymal_msgs/msg/AnymalState that decodes whole messages with
// rosmsg.Schema.Decode (not the path extractor the converter uses), and a
// forward-kinematics model of the URDF parsed here with encoding/xml (not
// mechanics.ParseURDF, its fixed-link fusion or its CRBA), from which the
// mass matrix follows as the Hessian of the kinetic energy.

import (
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// anymalTopic is the state estimator's topic in the simulated logs.
const anymalTopic = "/state_estimator/anymal_state"

// anymalMsg is one decoded AnymalState message, reduced to what the test
// compares.
type anymalMsg struct {
	logTime uint64 // ns since the Unix epoch
	stamp   int64  // header.stamp in ns since the Unix epoch
	pos     mechanics.Vec3
	quat    [4]float64 // x, y, z, w as logged
	lin     mechanics.Vec3
	ang     mechanics.Vec3
	// joints maps a joint name to its position, velocity and effort.
	joints map[string][3]float64
	// forces maps a contact name to wrench.force (odom frame).
	forces map[string]mechanics.Vec3
}

// readAnymalLog decodes every message of anymalTopic in the MCAP file at
// path with the schema the file carries.
func readAnymalLog(t *testing.T, path string) []anymalMsg {
	t.Helper()
	r, err := logio.Open(path, &logio.ReaderOptions{Topics: []string{anymalTopic}})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	type codec struct {
		schema *rosmsg.Schema
		enc    rosmsg.Encoding
	}
	codecs := map[uint32]codec{}
	var out []anymalMsg
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatalf("%s: message %d: %v", path, len(out), err)
		}
		c, ok := codecs[m.Channel.ID]
		if !ok {
			d, err := rosmsg.DialectFor(m.Channel.SchemaEncoding)
			if err != nil {
				t.Fatalf("%s: channel %s: %v", path, m.Channel.Topic, err)
			}
			if c.schema, err = rosmsg.ParseSchema(m.Channel.Type, d, m.Channel.Schema); err != nil {
				t.Fatalf("%s: schema of %s: %v", path, m.Channel.Type, err)
			}
			if c.enc, err = rosmsg.EncodingFor(m.Channel.Encoding); err != nil {
				t.Fatalf("%s: channel %s: %v", path, m.Channel.Topic, err)
			}
			codecs[m.Channel.ID] = c
		}
		s, err := c.schema.Decode(c.enc, m.Data)
		if err != nil {
			t.Fatalf("%s: decode message %d: %v", path, len(out), err)
		}
		am, err := anymalFromStruct(s)
		if err != nil {
			t.Fatalf("%s: message %d: %v", path, len(out), err)
		}
		am.logTime = m.LogTime
		out = append(out, am)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no %s messages", path, anymalTopic)
	}
	return out
}

// anymalFromStruct picks the compared fields out of a decoded message.
func anymalFromStruct(s *rosmsg.Struct) (anymalMsg, error) {
	var m anymalMsg
	var err error
	sec, err1 := numberAt(s, "header.stamp.sec")
	nsec, err2 := numberAt(s, "header.stamp.nanosec")
	if err := errors.Join(err1, err2); err != nil {
		return m, err
	}
	m.stamp = int64(sec)*1_000_000_000 + int64(nsec)
	if m.pos, err = vec3At(s, "pose.pose.position"); err != nil {
		return m, err
	}
	for i, c := range []string{"x", "y", "z", "w"} {
		if m.quat[i], err = numberAt(s, "pose.pose.orientation."+c); err != nil {
			return m, err
		}
	}
	if m.lin, err = vec3At(s, "twist.twist.linear"); err != nil {
		return m, err
	}
	if m.ang, err = vec3At(s, "twist.twist.angular"); err != nil {
		return m, err
	}
	js, err := fieldAt(s, "joints")
	if err != nil {
		return m, err
	}
	names, ok1 := fieldOf[[]string](js, "name")
	pos, ok2 := fieldOf[[]float64](js, "position")
	vel, ok3 := fieldOf[[]float64](js, "velocity")
	eff, ok4 := fieldOf[[]float64](js, "effort")
	if !ok1 || !ok2 || !ok3 || !ok4 || len(pos) != len(names) || len(vel) != len(names) || len(eff) != len(names) {
		return m, fmt.Errorf("joints: %d names, %d positions, %d velocities, %d efforts", len(names), len(pos), len(vel), len(eff))
	}
	m.joints = make(map[string][3]float64, len(names))
	for i, n := range names {
		m.joints[n] = [3]float64{pos[i], vel[i], eff[i]}
	}
	contacts, ok := fieldOf[[]*rosmsg.Struct](s, "contacts")
	if !ok {
		return m, errors.New("contacts: not an array of messages")
	}
	m.forces = make(map[string]mechanics.Vec3, len(contacts))
	for i, c := range contacts {
		name, ok := fieldOf[string](c, "name")
		if !ok {
			return m, fmt.Errorf("contacts[%d].name: not a string", i)
		}
		f, err := vec3At(c, "wrench.force")
		if err != nil {
			return m, fmt.Errorf("contacts[%d]: %w", i, err)
		}
		m.forces[name] = f
	}
	return m, nil
}

// fieldOf returns field name of s as a T.
func fieldOf[T any](s *rosmsg.Struct, name string) (T, bool) {
	v, ok := s.Field(name)
	if !ok {
		var zero T
		return zero, false
	}
	x, ok := v.(T)
	return x, ok
}

// fieldAt follows a dotted path of nested messages from s.
func fieldAt(s *rosmsg.Struct, path string) (*rosmsg.Struct, error) {
	cur := s
	for _, name := range strings.Split(path, ".") {
		next, ok := fieldOf[*rosmsg.Struct](cur, name)
		if !ok {
			return nil, fmt.Errorf("%s: no nested message %q in %s", path, name, cur.Def.Name)
		}
		cur = next
	}
	return cur, nil
}

// numberAt reads the numeric field at a dotted path as a float64.
func numberAt(s *rosmsg.Struct, path string) (float64, error) {
	parent, name := "", path
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	cur := s
	if parent != "" {
		var err error
		if cur, err = fieldAt(s, parent); err != nil {
			return 0, err
		}
	}
	v, ok := cur.Field(name)
	if !ok {
		return 0, fmt.Errorf("%s: no field %q", path, name)
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case uint32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	}
	return 0, fmt.Errorf("%s: %T is not a number", path, v)
}

// vec3At reads the x, y, z fields of the message at path.
func vec3At(s *rosmsg.Struct, path string) (mechanics.Vec3, error) {
	var v mechanics.Vec3
	for i, c := range []string{"x", "y", "z"} {
		var err error
		if v[i], err = numberAt(s, path+"."+c); err != nil {
			return v, err
		}
	}
	return v, nil
}

// rigid is a rigid transform x ↦ R x + p.
type rigid struct {
	R mechanics.Mat3
	p mechanics.Vec3
}

func (a rigid) mul(b rigid) rigid {
	return rigid{R: a.R.Mul(b.R), p: a.R.MulVec(b.p).Add(a.p)}
}

// rotX, rotY, rotZ are the elementary rotations.
func rotX(a float64) mechanics.Mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return mechanics.Mat3{{1, 0, 0}, {0, c, -s}, {0, s, c}}
}

func rotY(a float64) mechanics.Mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return mechanics.Mat3{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}
}

func rotZ(a float64) mechanics.Mat3 {
	c, s := math.Cos(a), math.Sin(a)
	return mechanics.Mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
}

// axisAngle is Rodrigues' rotation by angle about the unit axis u.
func axisAngle(u mechanics.Vec3, angle float64) mechanics.Mat3 {
	c, s := math.Cos(angle), math.Sin(angle)
	k := mechanics.Mat3{{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}}
	return mechanics.Identity3().Add(k.Scale(s)).Add(k.Mul(k).Scale(1 - c))
}

// quatRotation is the rotation of the quaternion (x, y, z, w), normalised.
func quatRotation(q [4]float64) mechanics.Mat3 {
	n := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
	x, y, z, w := q[0]/n, q[1]/n, q[2]/n, q[3]/n
	return mechanics.Mat3{
		{1 - 2*(y*y+z*z), 2 * (x*y - w*z), 2 * (x*z + w*y)},
		{2 * (x*y + w*z), 1 - 2*(x*x+z*z), 2 * (y*z - w*x)},
		{2 * (x*z - w*y), 2 * (y*z + w*x), 1 - 2*(x*x+y*y)},
	}
}

// xmlOrigin is a URDF <origin>.
type xmlOrigin struct {
	XYZ string `xml:"xyz,attr"`
	RPY string `xml:"rpy,attr"`
}

// transform returns the origin's transform, R = Rz(yaw) Ry(pitch) Rx(roll).
func (o *xmlOrigin) transform() (rigid, error) {
	if o == nil {
		return rigid{R: mechanics.Identity3()}, nil
	}
	xyz, err := threeFloats(o.XYZ)
	if err != nil {
		return rigid{}, fmt.Errorf("xyz: %w", err)
	}
	rpy, err := threeFloats(o.RPY)
	if err != nil {
		return rigid{}, fmt.Errorf("rpy: %w", err)
	}
	return rigid{R: rotZ(rpy[2]).Mul(rotY(rpy[1])).Mul(rotX(rpy[0])), p: xyz}, nil
}

// threeFloats parses "a b c"; "" is zero.
func threeFloats(s string) (mechanics.Vec3, error) {
	var v mechanics.Vec3
	f := strings.Fields(s)
	if len(f) == 0 {
		return v, nil
	}
	if len(f) != 3 {
		return v, fmt.Errorf("%q: want 3 numbers", s)
	}
	for i, x := range f {
		var err error
		if v[i], err = strconv.ParseFloat(x, 64); err != nil {
			return v, err
		}
	}
	return v, nil
}

// xmlRobot is the part of a URDF the reference reads.
type xmlRobot struct {
	Links []struct {
		Name     string `xml:"name,attr"`
		Inertial *struct {
			Origin *xmlOrigin `xml:"origin"`
			Mass   struct {
				Value float64 `xml:"value,attr"`
			} `xml:"mass"`
			Inertia struct {
				Ixx float64 `xml:"ixx,attr"`
				Ixy float64 `xml:"ixy,attr"`
				Ixz float64 `xml:"ixz,attr"`
				Iyy float64 `xml:"iyy,attr"`
				Iyz float64 `xml:"iyz,attr"`
				Izz float64 `xml:"izz,attr"`
			} `xml:"inertia"`
		} `xml:"inertial"`
	} `xml:"link"`
	Joints []struct {
		Name   string     `xml:"name,attr"`
		Type   string     `xml:"type,attr"`
		Origin *xmlOrigin `xml:"origin"`
		Parent struct {
			Link string `xml:"link,attr"`
		} `xml:"parent"`
		Child struct {
			Link string `xml:"link,attr"`
		} `xml:"child"`
		Axis *struct {
			XYZ string `xml:"xyz,attr"`
		} `xml:"axis"`
	} `xml:"joint"`
}

// kinLink is one URDF link of the reference model, every link on its own
// (no fusion of fixed links).
type kinLink struct {
	name   string
	parent int   // index of the parent link, −1 for the root
	coord  int   // index of its joint in the joint vector, −1 if fixed
	origin rigid // joint origin in the parent link's frame
	axis   mechanics.Vec3
	mass   float64
	com    mechanics.Vec3 // in the link frame
	inert  mechanics.Mat3 // about the COM, in the link frame's axes
}

// kinTree is a URDF tree as a list of links, parents first.
type kinTree struct {
	links []kinLink
	nj    int
}

// loadKinTree parses the URDF at path; joints names the movable joints in
// the order of the joint vector, and must list every one of them.
func loadKinTree(path string, joints []string) (*kinTree, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r xmlRobot
	if err := xml.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	coord := map[string]int{}
	for i, n := range joints {
		coord[n] = i
	}
	children := map[string][]int{}
	hasParent := map[string]bool{}
	for i, j := range r.Joints {
		children[j.Parent.Link] = append(children[j.Parent.Link], i)
		hasParent[j.Child.Link] = true
	}
	linkIdx := map[string]int{}
	for i, l := range r.Links {
		linkIdx[l.Name] = i
	}
	root := ""
	for _, l := range r.Links {
		if !hasParent[l.Name] {
			if root != "" {
				return nil, fmt.Errorf("%s: two roots %q and %q", path, root, l.Name)
			}
			root = l.Name
		}
	}
	k := &kinTree{nj: len(joints)}
	seen := map[string]bool{}
	var add func(link string, parent, ji int) error
	add = func(link string, parent, ji int) error {
		li, ok := linkIdx[link]
		if !ok {
			return fmt.Errorf("%s: unknown link %q", path, link)
		}
		kl := kinLink{name: link, parent: parent, coord: -1, origin: rigid{R: mechanics.Identity3()}}
		if ji >= 0 {
			j := r.Joints[ji]
			if kl.origin, err = j.Origin.transform(); err != nil {
				return fmt.Errorf("%s: joint %s origin %w", path, j.Name, err)
			}
			switch j.Type {
			case "fixed":
			case "revolute", "continuous":
				c, ok := coord[j.Name]
				if !ok {
					return fmt.Errorf("%s: movable joint %q is not among %v", path, j.Name, joints)
				}
				seen[j.Name] = true
				kl.coord = c
				kl.axis = mechanics.Vec3{1, 0, 0}
				if j.Axis != nil {
					if kl.axis, err = threeFloats(j.Axis.XYZ); err != nil {
						return fmt.Errorf("%s: joint %s axis %w", path, j.Name, err)
					}
				}
				kl.axis = kl.axis.Scale(1 / kl.axis.Norm())
			default:
				return fmt.Errorf("%s: joint %s: type %q not supported by the reference", path, j.Name, j.Type)
			}
		}
		if in := r.Links[li].Inertial; in != nil {
			o, err := in.Origin.transform()
			if err != nil {
				return fmt.Errorf("%s: link %s inertial origin %w", path, link, err)
			}
			I := in.Inertia
			Ic := mechanics.Mat3{{I.Ixx, I.Ixy, I.Ixz}, {I.Ixy, I.Iyy, I.Iyz}, {I.Ixz, I.Iyz, I.Izz}}
			kl.mass, kl.com, kl.inert = in.Mass.Value, o.p, o.R.Mul(Ic).Mul(o.R.T())
		}
		k.links = append(k.links, kl)
		me := len(k.links) - 1
		for _, c := range children[link] {
			if err := add(r.Joints[c].Child.Link, me, c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(root, -1, -1); err != nil {
		return nil, err
	}
	if len(k.links) != len(r.Links) {
		return nil, fmt.Errorf("%s: %d links reached from the root, %d in the file", path, len(k.links), len(r.Links))
	}
	for _, n := range joints {
		if !seen[n] {
			return nil, fmt.Errorf("%s: joint %q is not a movable joint", path, n)
		}
	}
	return k, nil
}

// totalMass is the sum of the link masses.
func (k *kinTree) totalMass() float64 {
	var m float64
	for _, l := range k.links {
		m += l.mass
	}
	return m
}

// linkPoses returns every link's pose in the world for the root (base)
// pose base and joint angles q, by forward kinematics.
func (k *kinTree) linkPoses(dst []rigid, base rigid, q []float64) []rigid {
	dst = dst[:0]
	for _, l := range k.links {
		if l.parent < 0 {
			dst = append(dst, base)
			continue
		}
		T := dst[l.parent].mul(l.origin)
		if l.coord >= 0 {
			T.R = T.R.Mul(axisAngle(l.axis, q[l.coord]))
		}
		dst = append(dst, T)
	}
	return dst
}

// com returns the whole-body centre of mass in the world.
func (k *kinTree) com(base rigid, q []float64) mechanics.Vec3 {
	poses := k.linkPoses(nil, base, q)
	var c mechanics.Vec3
	for i, l := range k.links {
		c = c.Add(poses[i].R.MulVec(l.com).Add(poses[i].p).Scale(l.mass))
	}
	return c.Scale(1 / k.totalMass())
}

// massMatrix returns the (6 + nj)² mass matrix of the floating-base tree at
// the base pose and joint angles q, for v = (base linear velocity in the
// base frame, base angular velocity in the base frame, joint rates): the
// Hessian in v of T = ½ Σ_links (m |v_com|² + ωᵀ I ω), so that M v = ∂T/∂v.
// The link Jacobians come from central differences of the forward
// kinematics along each coordinate direction of v, the base moved by the
// exponential of the unit body twist (translation R·e_a, or rotation
// R·exp(e_a^)); h is the step.
func (k *kinTree) massMatrix(base rigid, q []float64, h float64) [][]float64 {
	n := 6 + k.nj
	L := len(k.links)
	jc := make([][]mechanics.Vec3, n) // jc[d][i]: COM velocity of link i for unit rate d
	jw := make([][]mechanics.Vec3, n) // angular velocity
	p0 := k.linkPoses(nil, base, q)
	plus, minus := make([]rigid, 0, L), make([]rigid, 0, L)
	qp, qm := make([]float64, len(q)), make([]float64, len(q))
	for d := range n {
		bp, bm := base, base
		copy(qp, q)
		copy(qm, q)
		switch {
		case d < 3:
			var e mechanics.Vec3
			e[d] = h
			bp.p = base.p.Add(base.R.MulVec(e))
			bm.p = base.p.Sub(base.R.MulVec(e))
		case d < 6:
			var e mechanics.Vec3
			e[d-3] = 1
			bp.R = base.R.Mul(axisAngle(e, h))
			bm.R = base.R.Mul(axisAngle(e, -h))
		default:
			qp[d-6] += h
			qm[d-6] -= h
		}
		plus = k.linkPoses(plus, bp, qp)
		minus = k.linkPoses(minus, bm, qm)
		jc[d] = make([]mechanics.Vec3, L)
		jw[d] = make([]mechanics.Vec3, L)
		for i, l := range k.links {
			cp := plus[i].R.MulVec(l.com).Add(plus[i].p)
			cm := minus[i].R.MulVec(l.com).Add(minus[i].p)
			jc[d][i] = cp.Sub(cm).Scale(1 / (2 * h))
			// (R(h) − R(−h)) R(0)ᵀ / 2h = ω^ + O(h²).
			A := plus[i].R.Add(minus[i].R.Scale(-1)).Mul(p0[i].R.T()).Scale(1 / (2 * h))
			jw[d][i] = mechanics.Vec3{(A[2][1] - A[1][2]) / 2, (A[0][2] - A[2][0]) / 2, (A[1][0] - A[0][1]) / 2}
		}
	}
	M := make([][]float64, n)
	for a := range n {
		M[a] = make([]float64, n)
	}
	for i, l := range k.links {
		Iw := p0[i].R.Mul(l.inert).Mul(p0[i].R.T())
		for a := range n {
			Ia := Iw.MulVec(jw[a][i])
			for b := a; b < n; b++ {
				v := l.mass*jc[a][i].Dot(jc[b][i]) + Ia.Dot(jw[b][i])
				M[a][b] += v
				if b != a {
					M[b][a] += v
				}
			}
		}
	}
	return M
}
