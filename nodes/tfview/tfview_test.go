package tfview_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/tfview"
)

// legURDF is a floating body with a two-joint leg, a fixed foot and a
// fixed sensor on the body.
const legURDF = `<robot name="leg">
  <link name="body"/><link name="imu"/><link name="thigh"/><link name="shank"/><link name="foot"/>
  <joint name="imu_joint" type="fixed"><parent link="body"/><child link="imu"/><origin xyz="0.1 0 0.05"/></joint>
  <joint name="hip" type="revolute"><parent link="body"/><child link="thigh"/><origin xyz="0.3 0.2 0" rpy="0.1 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="knee" type="revolute"><parent link="thigh"/><child link="shank"/><origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/></joint>
  <joint name="ankle" type="fixed"><parent link="shank"/><child link="foot"/><origin xyz="0 0 -0.3"/></joint>
</robot>`

func newView(t *testing.T, o tfview.Options) *tfview.View {
	t.Helper()
	o.Config.Defaults()
	v, err := tfview.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// resolve composes the transforms of msgs down from the fixed frame and
// returns every frame's pose in it.
func resolve(t *testing.T, fixed string, ms ...*msgs.TFMessage) map[string]mechanics.SE3 {
	t.Helper()
	parent := map[string]msgs.TransformStamped{}
	for _, m := range ms {
		for _, tr := range m.Transforms {
			parent[tr.ChildFrameID] = tr
		}
	}
	out := map[string]mechanics.SE3{fixed: mechanics.IdentitySE3()}
	var pose func(f string, depth int) (mechanics.SE3, bool)
	pose = func(f string, depth int) (mechanics.SE3, bool) {
		if p, ok := out[f]; ok {
			return p, true
		}
		tr, ok := parent[f]
		if !ok || depth > 100 {
			return mechanics.SE3{}, false
		}
		up, ok := pose(tr.Header.FrameID, depth+1)
		if !ok {
			return mechanics.SE3{}, false
		}
		r := tr.Transform.Rotation
		x := tr.Transform.Translation
		p := up.Mul(mechanics.SE3{R: mechanics.Quat{W: r.W, X: r.X, Y: r.Y, Z: r.Z}.Rotation(), P: mechanics.Vec3{x.X, x.Y, x.Z}})
		out[f] = p
		return p, true
	}
	for f := range parent {
		pose(f, 0)
	}
	return out
}

// TestViewFloatingURDF checks the frames of a floating robot with a URDF:
// the description, the fixed joints of both robots once, and per
// prediction the two bases and the movable joints, every link of both
// robots reachable from the fixed frame and placed by forward kinematics.
func TestViewFloatingURDF(t *testing.T) {
	v := newView(t, tfview.Options{Frame: "odom", URDF: []byte(legURDF), Floating: true, Joints: []string{"knee", "hip"}, Dt: 0.01, Horizon: 100,
		Config: tfview.Config{Ghost: 0.25, GhostPrefix: "pred/"}})
	if v.Step() != 25 || v.BaseFrame() != "body" || v.GhostFrame() != "pred/body" {
		t.Fatalf("step %d, base %q, ghost %q", v.Step(), v.BaseFrame(), v.GhostFrame())
	}
	if d := v.Description(); d == nil || d.Data != legURDF {
		t.Fatalf("description %v", d)
	}
	st := v.Static(7)
	if st == nil || len(st.Transforms) != 4 {
		t.Fatalf("static: %+v", st)
	}
	for _, tr := range st.Transforms {
		if tr.Header.Stamp.Nanos() != 7 {
			t.Errorf("static %s stamped %d", tr.ChildFrameID, tr.Header.Stamp.Nanos())
		}
	}
	pose := mechanics.SE3{R: mechanics.RPY(0.1, -0.2, 0.3), P: mechanics.Vec3{1, 2, 0.5}}
	ghost := mechanics.SE3{R: mechanics.RPY(0, 0, 0.5), P: mechanics.Vec3{1.5, 2, 0.4}}
	q, gq := []float64{-1.2, 0.7}, []float64{-0.9, 0.4} // knee, hip
	fr, err := v.Frames(1e9, pose, q, ghost, gq)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Transforms) != 6 {
		t.Fatalf("%d moving transforms, want 2 × (base + 2 joints)", len(fr.Transforms))
	}
	poses := resolve(t, "odom", st, fr)
	if got, want := v.Links(), []string{"body", "imu", "thigh", "shank", "foot", "pred/body", "pred/imu", "pred/thigh", "pred/shank", "pred/foot"}; !slices.Equal(got, want) {
		t.Fatalf("links %v, want %v", got, want)
	}
	tree, err := mechanics.ParseURDFTree([]byte(legURDF))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix    string
		base      mechanics.SE3
		hip, knee float64
	}{{"", pose, q[1], q[0]}, {"pred/", ghost, gq[1], gq[0]}} {
		thigh := c.base.Mul(tree.Joints[1].Pose(c.hip))
		foot := thigh.Mul(tree.Joints[2].Pose(c.knee)).Mul(tree.Joints[3].Origin)
		for name, want := range map[string]mechanics.SE3{"body": c.base, "thigh": thigh, "foot": foot} {
			got, ok := poses[c.prefix+name]
			if !ok {
				t.Fatalf("frame %s is not reachable from odom", c.prefix+name)
			}
			for r := range 3 {
				if math.Abs(got.P[r]-want.P[r]) > 1e-12 {
					t.Errorf("%s%s at %v, want %v", c.prefix, name, got.P, want.P)
				}
			}
		}
	}
	if _, err := v.Frames(0, pose, q[:1], ghost, gq); err == nil {
		t.Error("too few joint positions: no error")
	}
}

// TestViewWithoutURDF checks the body frames of a quadrotor and that a
// fixed-base robot without a URDF has nothing to draw.
func TestViewWithoutURDF(t *testing.T) {
	v := newView(t, tfview.Options{Frame: "world", Floating: true, Dt: 0.01, Horizon: 10})
	if v.Step() != 10 || v.Description() != nil || v.Static(0) != nil {
		t.Fatalf("step %d, description %v, static %v", v.Step(), v.Description(), v.Static(0))
	}
	fr, err := v.Frames(5, mechanics.IdentitySE3(), nil, mechanics.SE3{R: mechanics.Identity3(), P: mechanics.Vec3{0, 0, 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Transforms) != 2 || fr.Transforms[0].ChildFrameID != "base_link" || fr.Transforms[1].ChildFrameID != "ghost/base_link" ||
		fr.Transforms[1].Header.FrameID != "world" || fr.Transforms[1].Transform.Translation.Z != 1 {
		t.Fatalf("frames %+v", fr.Transforms)
	}
	none, err := tfview.New(tfview.Options{Frame: "odom", Joints: []string{"a"}, Dt: 0.01, Horizon: 10})
	if err != nil || none != nil {
		t.Fatalf("fixed base without URDF: %v, %v", none, err)
	}
	// A fixed base with a URDF hangs both roots on the fixed frame.
	fixed := newView(t, tfview.Options{Frame: "world", URDF: []byte(legURDF), Joints: []string{"hip", "knee"}, Dt: 0.01, Horizon: 10})
	st := fixed.Static(0)
	if st == nil || st.Transforms[0].ChildFrameID != "body" || st.Transforms[1].ChildFrameID != "ghost/body" || len(st.Transforms) != 6 {
		t.Fatalf("fixed base static: %+v", st)
	}
}

// TestViewErrors checks the refused configurations.
func TestViewErrors(t *testing.T) {
	base := tfview.Options{Frame: "odom", URDF: []byte(legURDF), Floating: true, Joints: []string{"hip", "knee"}, Dt: 0.01, Horizon: 100}
	for _, c := range []struct {
		name string
		edit func(o *tfview.Options)
		cfg  bool // wraps ErrConfig
	}{
		{"lookahead past the horizon", func(o *tfview.Options) { o.Config.Ghost = 1.5 }, true},
		{"lookahead between steps", func(o *tfview.Options) { o.Config.Ghost = 0.015 }, true},
		{"negative lookahead", func(o *tfview.Options) { o.Config.Ghost = -1 }, true},
		{"unknown joint", func(o *tfview.Options) { o.Joints = []string{"hip", "elbow"} }, true},
		{"base is the fixed frame", func(o *tfview.Options) { o.Frame = "body" }, true},
		{"bad URDF", func(o *tfview.Options) { o.URDF = []byte("<robot") }, false},
	} {
		o := base
		c.edit(&o)
		_, err := tfview.New(o)
		if err == nil || (c.cfg && !errors.Is(err, tfview.ErrConfig)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	o := base
	o.Config.Topic = "-"
	if v, err := tfview.New(o); v != nil || err != nil {
		t.Errorf("topic \"-\": %v, %v", v, err)
	}
}
