package node_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/statemap"
)

// TestQuadrotorBodyFrames builds the node of params/crazyflie.yaml (a
// rigid body without a URDF or joints) and feeds it one odometry and one
// motor message: it advertises /tf only (no robot description, no static
// frames) and publishes world → base_link at the measured pose when the
// odometry comes and, with the prediction, world → ghost/base_link at the
// pose predicted for the lookahead, bit for bit the predicted path's pose
// at that step.
func TestQuadrotorBodyFrames(t *testing.T) {
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "crazyflie.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p.Node.TF.Ghost = 0.2
	// one message of each, so no port history to warm up (TestWarmUp;
	// the Crazyflie's history of 2 samples: TestQuadrotorPortHistory)
	p.Spec.History.PortMean = 0
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(p.Resolve(".")))
	if err != nil {
		t.Fatal(err)
	}
	pub := &memPub{}
	now := t0
	nd, err := node.New(node.Options{Params: p, Model: randomModel(t, smp, p.Rate), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"/robot_description", "/tf_static"} {
		if _, ok := pub.types[topic]; ok {
			t.Errorf("a robot without a URDF advertises %s", topic)
		}
	}
	if typ := pub.types["/tf"]; typ.Type != "tf2_msgs/msg/TFMessage" || typ.Latched {
		t.Fatalf("/tf advertised as %+v", typ)
	}
	odom := &msgs.Odometry{Header: msgs.Header{Stamp: msgs.TimeFromNanos(now), FrameID: "world"}, ChildFrameID: "cf231"}
	odom.Pose.Pose.Position = msgs.Point{X: 0.3, Y: -0.2, Z: 1.1}
	odom.Pose.Pose.Orientation = msgs.Quaternion{X: 0.02, Y: -0.01, Z: 0.38, W: 0.9246}
	odom.Twist.Twist.Linear = msgs.Vector3{X: 0.4, Y: 0.1, Z: -0.05}
	odom.Twist.Twist.Angular = msgs.Vector3{X: 0.1, Y: 0.2, Z: 0.3}
	schema := motorsSchema(t, p)
	st := msgs.TimeFromNanos(now)
	motors, err := schema.Encode(rosmsg.EncodingCDR, &rosmsg.Struct{Def: schema.Type("crazyflie_interfaces/msg/LogDataGeneric"), Fields: []any{
		&rosmsg.Struct{Def: schema.Type("std_msgs/msg/Header"), Fields: []any{&rosmsg.Struct{Def: schema.Type("builtin_interfaces/msg/Time"), Fields: []any{st.Sec, st.Nanosec}}, "cf231"}},
		uint32(0), []float64{30000, 31000, 30500, 29800}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := nd.Handle(node.Input{Topic: "/cf231/motors", Data: motors, Received: now}); err != nil {
		t.Fatal(err)
	}
	if err := nd.Handle(node.Input{Topic: "/cf231/odom", Data: msgs.Marshal(odom), Received: now}); err != nil {
		t.Fatal(err)
	}
	// the measured frame when the odometry comes, the ghost's with the
	// prediction
	tfs, paths := pub.on("/tf"), pub.on(p.Node.Outputs.Path)
	if len(tfs) != 2 || len(paths) != 1 || nd.Stats().Predictions != 1 {
		t.Fatalf("%d /tf and %d paths for %d predictions", len(tfs), len(paths), nd.Stats().Predictions)
	}
	var tf, ghost msgs.TFMessage
	var path msgs.Path
	if err := msgs.Unmarshal(tfs[0].data, &tf); err != nil {
		t.Fatal(err)
	}
	if err := msgs.Unmarshal(tfs[1].data, &ghost); err != nil {
		t.Fatal(err)
	}
	tf.Transforms = append(tf.Transforms, ghost.Transforms...)
	if err := msgs.Unmarshal(paths[0].data, &path); err != nil {
		t.Fatal(err)
	}
	step := 20 // 0.2 s of 10 ms steps
	want := []msgs.TransformStamped{
		{Header: msgs.Header{Stamp: st, FrameID: "world"}, ChildFrameID: "base_link",
			Transform: msgs.Transform{Translation: msgs.Vector3(path.Poses[0].Pose.Position), Rotation: path.Poses[0].Pose.Orientation}},
		{Header: msgs.Header{Stamp: st, FrameID: "world"}, ChildFrameID: "ghost/base_link",
			Transform: msgs.Transform{Translation: msgs.Vector3(path.Poses[step].Pose.Position), Rotation: path.Poses[step].Pose.Orientation}},
	}
	if want[1].Transform == want[0].Transform {
		t.Fatal("the ghost is where the robot is: the test would pass with the measured pose twice")
	}
	if !slices.Equal(tf.Transforms, want) {
		t.Fatalf("/tf %+v\nwant %+v", tf.Transforms, want)
	}
	// The measured frame is the odometry's pose.
	q := mechanics.Quat{W: want[0].Transform.Rotation.W, X: want[0].Transform.Rotation.X, Y: want[0].Transform.Rotation.Y, Z: want[0].Transform.Rotation.Z}
	o, err := mechanics.Quat{W: 0.9246, X: 0.02, Y: -0.01, Z: 0.38}.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	if d := q.Mul(o.Conj()); want[0].Transform.Translation != (msgs.Vector3{X: 0.3, Y: -0.2, Z: 1.1}) || d.W < 1-1e-12 && -d.W < 1-1e-12 {
		t.Errorf("measured base %+v, want the odometry's pose", want[0].Transform)
	}
}

// TestLatchedAtStart: the robot description and the static frames go out
// at the node's start (its first Tick, as Run makes at once), before any
// input and any prediction, so that a viewer opened before the robot
// moves shows it; they go out once, not again with the first prediction.
func TestLatchedAtStart(t *testing.T) {
	p := anymalParams(t)
	p.Spec.History.PortMean = 0
	// the quadruped with an IMU on a fixed joint: a static frame
	urdf := strings.Replace(quadrupedURDF(), "\n</robot>", `
  <link name="imu"/>
  <joint name="imu_joint" type="fixed"><parent link="base"/><child link="imu"/><origin xyz="0.1 0 0.05"/></joint>
</robot>`, 1)
	p.Spec.Model.URDF = filepath.Join(t.TempDir(), "quadruped_imu.urdf")
	if err := os.WriteFile(p.Spec.Model.URDF, []byte(urdf), 0o644); err != nil {
		t.Fatal(err)
	}
	now := t0
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"/robot_description", "/tf_static"} {
		if !pub.types[topic].Latched {
			t.Fatalf("%s advertised as %+v", topic, pub.types[topic])
		}
	}
	if err := nd.Tick(); err != nil {
		t.Fatal(err)
	}
	desc, static := pub.on("/robot_description"), pub.on("/tf_static")
	if len(desc) != 1 || len(static) != 1 || nd.Stats().Predictions != 0 {
		t.Fatalf("at start: %d descriptions, %d static frames, %d predictions; want 1, 1, 0", len(desc), len(static), nd.Stats().Predictions)
	}
	var s msgs.String
	if err := msgs.Unmarshal(desc[0].data, &s); err != nil || s.Data != urdf {
		t.Errorf("robot description %.60q (%v), want the URDF", s.Data, err)
	}
	stream := estimatorStream(t, p, 3, 10*ms, 0, func(int) bool { return false })
	drive(t, nd, &now, stream, anymalTopic)
	if st := nd.Stats(); st.Predictions != 3 || len(pub.on("/robot_description")) != 1 || len(pub.on("/tf_static")) != 1 {
		t.Errorf("after %d predictions: %d descriptions, %d static frames; want 1 each", st.Predictions, len(pub.on("/robot_description")), len(pub.on("/tf_static")))
	}
}

// TestMeasuredFramesAtStateRate: the measured robot's frames go out with
// every state message, at its stamp, whether a prediction follows or not
// (trigger.every 5: a prediction on every fifth; the history warming up);
// the ghost's go out with each prediction. The ANYmal params with the
// port history (10 samples) and a quadruped URDF.
func TestMeasuredFramesAtStateRate(t *testing.T) {
	p := anymalParams(t)
	p.Node.Trigger.Every = 5
	p.Node.Horizon, p.Node.PreviewStep = 10, 10
	now := t0
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	drive(t, nd, &now, estimatorStream(t, p, n, 10*ms, 0, func(int) bool { return false }), anymalTopic)
	var measured, ghosts []int64
	for _, m := range pub.on("/tf") {
		var tf msgs.TFMessage
		if err := msgs.Unmarshal(m.data, &tf); err != nil {
			t.Fatal(err)
		}
		if len(tf.Transforms) != 13 { // the base and 12 joints
			t.Fatalf("a /tf of %d transforms, want one robot's 13", len(tf.Transforms))
		}
		switch child := tf.Transforms[0].ChildFrameID; child {
		case "base":
			measured = append(measured, tf.Transforms[0].Header.Stamp.Nanos())
		case "ghost/base":
			ghosts = append(ghosts, tf.Transforms[0].Header.Stamp.Nanos())
		default:
			t.Fatalf("a /tf for %s", child)
		}
	}
	preds := nd.Stats().Predictions
	if preds == 0 || preds > n/5 {
		t.Fatalf("%d predictions of %d messages", preds, n)
	}
	if len(measured) != n || len(ghosts) != int(preds) {
		t.Errorf("%d measured and %d ghost frames for %d states and %d predictions", len(measured), len(ghosts), n, preds)
	}
	for k, s := range measured {
		if s != t0+int64(k)*10*ms {
			t.Fatalf("measured frames %d stamped %d ms, want the state's %d ms", k, (s-t0)/ms, k*10)
		}
	}
}

// TestPendulumFrames: the double pendulum (params/pendulum_sim.yaml) gets a
// robot description made from its parameters, two links of the params'
// lengths (0.4 m and 1.3 m) on the joints shoulder and elbow, published at
// start; the measured pendulum's frames follow its joint states (link 1
// turned by q1 about −y, link 2 hanging from the end of link 1) and the
// ghost's come with each prediction. A ghost lookahead that is not a whole
// number of steps, or beyond the horizon, is refused; so is one for a
// robot with no frames to draw.
func TestPendulumFrames(t *testing.T) {
	p := pendulumParams(t)
	now := t0
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	if err := nd.Tick(); err != nil {
		t.Fatal(err)
	}
	descs := pub.on("/robot_description")
	if len(descs) != 1 || !pub.types["/robot_description"].Latched {
		t.Fatalf("%d robot descriptions (%+v)", len(descs), pub.types["/robot_description"])
	}
	var desc msgs.String
	if err := msgs.Unmarshal(descs[0].data, &desc); err != nil {
		t.Fatal(err)
	}
	tree, err := mechanics.ParseURDFTree([]byte(desc.Data))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tree.Links, []string{"base", "link1", "link2"}) || len(tree.Joints) != 2 ||
		tree.Joints[0].Name != "shoulder" || tree.Joints[1].Name != "elbow" || tree.Joints[1].Origin.P != (mechanics.Vec3{0, 0, -0.4}) {
		t.Fatalf("robot description: links %v, joints %+v", tree.Links, tree.Joints)
	}
	if !strings.Contains(desc.Data, `<cylinder radius="0.02" length="1.3"/>`) {
		t.Errorf("link 2 is not drawn 1.3 m long:\n%s", desc.Data)
	}
	q1, q2 := 0.3, -0.2
	if err := nd.Handle(node.Input{Topic: "/torque_command", Data: torque(0.1, 0), Received: now}); err != nil {
		t.Fatal(err)
	}
	if err := nd.Handle(node.Input{Topic: "/joint_states", Data: jointState(now, pendulumJoints, [2]float64{q1, q2}, [2]float64{0, 0}), Received: now}); err != nil {
		t.Fatal(err)
	}
	tfs := pub.on("/tf")
	if len(tfs) != 2 || nd.Stats().Predictions != 1 {
		t.Fatalf("%d /tf for one state and %d predictions", len(tfs), nd.Stats().Predictions)
	}
	var measured, ghost msgs.TFMessage
	if err := msgs.Unmarshal(tfs[0].data, &measured); err != nil {
		t.Fatal(err)
	}
	if err := msgs.Unmarshal(tfs[1].data, &ghost); err != nil {
		t.Fatal(err)
	}
	if len(measured.Transforms) != 2 || len(ghost.Transforms) != 2 || ghost.Transforms[0].ChildFrameID != "ghost/link1" {
		t.Fatalf("measured %+v\nghost %+v", measured.Transforms, ghost.Transforms)
	}
	s, c := math.Sincos(q1 / 2)
	if r := measured.Transforms[0].Transform.Rotation; math.Abs(r.W-c) > 1e-12 || math.Abs(r.Y+s) > 1e-12 || r.X != 0 || r.Z != 0 {
		t.Errorf("shoulder at q1 = %g: rotation %+v, want %g about −y", q1, r, q1)
	}
	if e := measured.Transforms[1]; e.ChildFrameID != "link2" || e.Transform.Translation != (msgs.Vector3{Z: -0.4}) {
		t.Errorf("elbow %+v", e)
	}
	for _, c := range []struct {
		ghost float64
		tf    string
		want  string
	}{
		{0.015, "", "not a whole number of model steps"},
		{2, "", "between 1 and the horizon's 100"},
		{0.5, "-", "no frames to draw"},
	} {
		p := pendulumParams(t)
		p.Node.TF.Ghost = c.ghost
		if c.tf != "" {
			p.Node.TF.Topic = c.tf
		}
		_, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return now }, Publisher: &memPub{}})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "node: node:") {
			t.Errorf("ghost %g s (tf topic %q): %v, want an error saying %q (once \"node:\")", c.ghost, c.tf, err, c.want)
		}
	}
}

// TestQuadrotorPortHistory builds the node of params/crazyflie.yaml as it
// ships, with the port history of 2 samples (convert.history.port_mean),
// and feeds it odometry and motor messages 10 ms apart: it predicts from
// the third state on, once the history holds its 2 samples, and then with
// every state.
func TestQuadrotorPortHistory(t *testing.T) {
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "crazyflie.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.History.PortMean != 2 {
		t.Fatalf("crazyflie.yaml's port history %d, want 2", p.Spec.History.PortMean)
	}
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(p.Resolve(".")))
	if err != nil {
		t.Fatal(err)
	}
	if _, nu, _ := smp.Layout(); nu != 12 {
		t.Fatalf("n_u %d, want the 6 ports and their 6 means", nu)
	}
	pub := &memPub{}
	now := t0
	nd, err := node.New(node.Options{Params: p, Model: randomModel(t, smp, p.Rate), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	schema := motorsSchema(t, p)
	for k, want := range []uint64{0, 0, 1, 2, 3} {
		now = t0 + int64(k)*10_000_000
		st := msgs.TimeFromNanos(now)
		motors, err := schema.Encode(rosmsg.EncodingCDR, &rosmsg.Struct{Def: schema.Type("crazyflie_interfaces/msg/LogDataGeneric"), Fields: []any{
			&rosmsg.Struct{Def: schema.Type("std_msgs/msg/Header"), Fields: []any{&rosmsg.Struct{Def: schema.Type("builtin_interfaces/msg/Time"), Fields: []any{st.Sec, st.Nanosec}}, "cf231"}},
			uint32(k), []float64{30000 + 100*float64(k), 31000, 30500, 29800}}})
		if err != nil {
			t.Fatal(err)
		}
		odom := &msgs.Odometry{Header: msgs.Header{Stamp: st, FrameID: "world"}, ChildFrameID: "cf231"}
		odom.Pose.Pose.Position = msgs.Point{X: 0.3, Y: -0.2, Z: 1.1 + 0.001*float64(k)}
		odom.Pose.Pose.Orientation = msgs.Quaternion{W: 1}
		odom.Twist.Twist.Linear = msgs.Vector3{Z: 0.1}
		if err := nd.Handle(node.Input{Topic: "/cf231/motors", Data: motors, Received: now}); err != nil {
			t.Fatal(err)
		}
		if err := nd.Handle(node.Input{Topic: "/cf231/odom", Data: msgs.Marshal(odom), Received: now}); err != nil {
			t.Fatal(err)
		}
		if got := nd.Stats().Predictions; got != want {
			t.Fatalf("after state %d: %d predictions, want %d", k, got, want)
		}
	}
	if paths := pub.on(p.Node.Outputs.Path); len(paths) != 3 {
		t.Fatalf("%d paths for 3 predictions", len(paths))
	}
}

// motorsSchema is the schema of the Crazyflie's motor log block
// (crazyflie_interfaces/msg/LogDataGeneric) from the params' message
// definitions.
func motorsSchema(t *testing.T, p *node.Params) *rosmsg.Schema {
	t.Helper()
	return paramsSchema(t, p, "crazyflie_interfaces/msg/LogDataGeneric")
}

// paramsSchema is the schema of the message type from the params' message
// definitions.
func paramsSchema(t testing.TB, p *node.Params, msgType string) *rosmsg.Schema {
	t.Helper()
	def, err := (node.Definitions{Dir: p.DefinitionsDir()}).Lookup(msgType)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := rosmsg.ParseSchema(msgType, rosmsg.ROS2Msg, []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return schema
}
