package replay_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// robotOffline computes, from logged input messages alone, the frames the
// node publishes for Foxglove: the state through the params' mapping (a
// sampler of its own over the message's own schema), the offline rollout
// (predictor's Compile/Roller) with the ports held, and the URDF's forward
// kinematics (mechanics.URDFJoint.Pose) at the measured joint positions
// and at the prediction's step Step.
type robotOffline struct {
	sampler *statemap.Sampler
	x       *rosmsg.Extractor
	roller  *predictor.Roller
	tree    *mechanics.URDFTree
	coord   map[string]int // joint name → index in the sampler's joints
	H, Step int
	prefix  string
	frame   string
}

func newRobotOffline(t *testing.T, params *node.Params, root string, model *predictor.Model, ch *logio.Channel, step int) *robotOffline {
	t.Helper()
	s, err := statemap.NewSampler(params.Spec, params.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	x, err := rosmsg.CompileExtractor(ch.Type, ch.SchemaEncoding, ch.Schema, ch.Encoding, s.Channels()...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := model.Compile()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, params.Spec.Model.URDF))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := mechanics.ParseURDFTree(raw)
	if err != nil {
		t.Fatal(err)
	}
	o := &robotOffline{sampler: s, x: x, roller: plan.NewRoller(), tree: tree, coord: map[string]int{}, H: params.Node.Horizon, Step: step,
		prefix: params.Node.TF.GhostPrefix, frame: params.Node.FrameID}
	for i, j := range s.Joints() {
		o.coord[j] = i
	}
	return o
}

// frames returns the transforms expected for the prediction from one
// input message: the measured robot's, then the ghost's.
func (o *robotOffline) frames(t *testing.T, data []byte, stamp int64) []msgs.TransformStamped {
	t.Helper()
	values := make([]float64, len(o.sampler.Channels()))
	if err := o.x.Extract(data, values); err != nil {
		t.Fatal(err)
	}
	n, nu, nc := o.sampler.Layout()
	x, e := make([]float64, 2*n), make([]float64, nu+nc)
	pose, err := o.sampler.Sample(values, x, e)
	if err != nil {
		t.Fatal(err)
	}
	ports := make([]float64, o.H*len(e))
	for k := range o.H {
		copy(ports[k*len(e):], e)
	}
	out := make([]float64, o.H*2*n)
	if err := o.roller.Rollout(x, ports, o.H, out); err != nil {
		t.Fatal(err)
	}
	q := out[(o.Step-1)*2*n : (o.Step-1)*2*n+n]
	ghost := o.sampler.BasePose(pose, q[:6])
	tf := func(parent, child string, p mechanics.SE3) msgs.TransformStamped {
		r := mechanics.QuatFromRotation(p.R)
		return msgs.TransformStamped{Header: msgs.Header{Stamp: msgs.TimeFromNanos(stamp), FrameID: parent}, ChildFrameID: child,
			Transform: msgs.Transform{Translation: msgs.Vector3{X: p.P[0], Y: p.P[1], Z: p.P[2]}, Rotation: msgs.Quaternion{X: r.X, Y: r.Y, Z: r.Z, W: r.W}}}
	}
	var want []msgs.TransformStamped
	for _, r := range []struct {
		prefix string
		base   mechanics.SE3
		q      []float64
	}{{"", pose, x[6:n]}, {o.prefix, ghost, q[6:]}} {
		want = append(want, tf(o.frame, r.prefix+o.tree.Root, r.base))
		for _, j := range o.tree.Joints {
			if j.Type != mechanics.JointFixed {
				want = append(want, tf(r.prefix+j.Parent, r.prefix+j.Child, j.Pose(r.q[o.coord[j.Name]])))
			}
		}
	}
	return want
}

// unreachable returns the frames of links that no chain of transforms
// connects to the fixed frame.
func unreachable(fixed string, links []string, ms ...[]msgs.TransformStamped) []string {
	parent := map[string]string{}
	for _, m := range ms {
		for _, tr := range m {
			parent[tr.ChildFrameID] = tr.Header.FrameID
		}
	}
	var out []string
	for _, l := range links {
		f := l
		for range len(parent) + 1 {
			if f == fixed {
				break
			}
			f = parent[f]
		}
		if f != fixed {
			out = append(out, l)
		}
	}
	return out
}

// TestReplayAnymalRobotFrames replays one second of a simulated ANYmal D
// trot through params/anymal.yaml with a ghost 0.5 s ahead and checks
// what Foxglove's 3D panel draws the two robots from:
//
//   - /robot_description (std_msgs/msg/String) once, the URDF the params
//     name, and /tf_static once with every fixed joint of both robots,
//     both offered transient local in offered_qos_profiles;
//   - /tf once per prediction, no more: the measured base and joints and
//     the ghost's, equal bit for bit to the offline rollout of the model
//     at the lookahead and the URDF's forward kinematics;
//   - every URDF link of both robots reachable from odom at every /tf
//     message (with /tf_static);
//   - the frames a small part of the replay's size;
//   - Foxglove's readers (@mcap/core, @foxglove/rosmsg2-serialization)
//     decode the same messages, and urdf-loader parses the description
//     into the same links.
func TestReplayAnymalRobotFrames(t *testing.T) {
	root := anymalSim(t)
	logPath := fixtures.Path(t, "anymal_sim", "id", "trot_301.mcap")
	params, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "anymal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// the plain model's rollout, which the offline reference computes: no
	// wrench estimate (its parity with the evaluation is
	// TestWrenchEstimateParity's)
	params.Node.WrenchEstimate = nil
	// the paper's layout, whose ports the offline reference builds:
	// test/TestPortHistoryParity checks the port history
	params.Spec.History.PortMean = 0
	params.Node.TF.Ghost = 0.5
	const step = 50
	sampler, err := statemap.NewSampler(params.Spec, params.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	model := livetest.QuadrupedModel(t, "anymal-test", sampler.Coordinates(), sampler.Ports())
	r, err := logio.Open(logPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := firstLogTime(logPath)
	if err != nil {
		t.Fatal(err)
	}
	const count = 100
	from := first + 5_000_000_000
	out := filepath.Join(t.TempDir(), "anymal.mcap")
	w, err := logio.CreateROS2(out, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), &logSlice{MessageReader: r, from: from, to: from + count*10_000_000},
		replay.Options{Params: params, Model: model, DataRoot: root, Out: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Stats.Predictions != count {
		t.Fatalf("%d predictions from %d messages", res.Stats.Predictions, res.Messages)
	}

	rb, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	var in *logio.Channel
	qos := map[string]string{}
	for _, c := range rb.Channels() {
		qos[c.Topic] = c.Metadata["offered_qos_profiles"]
		if c.Topic == anymalTopic {
			in = c
		}
	}
	off := newRobotOffline(t, params, root, model, in, step)
	inputs := map[int64][]byte{}
	var tfs []msgs.TFMessage
	var static []msgs.TFMessage
	var desc []msgs.String
	bytesOf := map[string]int{}
	for m, err := range logio.Messages(rb) {
		if err != nil {
			t.Fatal(err)
		}
		bytesOf[m.Channel.Topic] += len(m.Data)
		switch m.Channel.Topic {
		case anymalTopic:
			inputs[int64(m.LogTime)] = slices.Clone(m.Data)
		case "/tf":
			tfs = append(tfs, msgs.TFMessage{})
			if err := msgs.Unmarshal(m.Data, &tfs[len(tfs)-1]); err != nil {
				t.Fatal(err)
			}
			if stamp := tfs[len(tfs)-1].Transforms[0].Header.Stamp.Nanos(); stamp != int64(m.LogTime) {
				t.Fatalf("/tf stamped %d at log time %d", stamp, m.LogTime)
			}
		case "/tf_static":
			static = append(static, msgs.TFMessage{})
			if err := msgs.Unmarshal(m.Data, &static[len(static)-1]); err != nil {
				t.Fatal(err)
			}
		case "/robot_description":
			desc = append(desc, msgs.String{})
			if err := msgs.Unmarshal(m.Data, &desc[len(desc)-1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The measured robot's frames come with each state message, the
	// ghost's with each prediction (here every message): count each and
	// join each measured /tf with the ghost's of the same stamp that
	// follows it. published keeps the messages as written, for
	// Foxglove's readers below.
	published := tfs
	var joined []msgs.TFMessage
	measured, ghosts := 0, 0
	for i := 0; i < len(tfs); i++ {
		m := tfs[i]
		if strings.HasPrefix(m.Transforms[0].ChildFrameID, params.Node.TF.GhostPrefix) {
			t.Fatalf("/tf %d: the ghost's frames without the measured robot's before them", i)
		}
		measured++
		if i+1 < len(tfs) && strings.HasPrefix(tfs[i+1].Transforms[0].ChildFrameID, params.Node.TF.GhostPrefix) {
			if tfs[i+1].Transforms[0].Header.Stamp != m.Transforms[0].Header.Stamp {
				t.Fatalf("/tf %d: the ghost stamped apart from the measured robot", i+1)
			}
			m.Transforms = append(slices.Clone(m.Transforms), tfs[i+1].Transforms...)
			ghosts++
			i++
		}
		joined = append(joined, m)
	}
	if measured != count || ghosts != count {
		t.Fatalf("%d /tf messages: %d of the measured robot, %d of the ghost; want %d of each (%d states, each predicting)", len(tfs), measured, ghosts, count, count)
	}
	tfs = joined
	urdfBytes, err := os.ReadFile(filepath.Join(root, params.Spec.Model.URDF))
	if err != nil {
		t.Fatal(err)
	}
	urdf := string(urdfBytes)
	if len(desc) != 1 || desc[0].Data != urdf || len(static) != 1 || len(tfs) != count {
		t.Fatalf("%d descriptions (the URDF: %v), %d static, %d /tf for %d predictions", len(desc), len(desc) == 1 && desc[0].Data == urdf, len(static), len(tfs), count)
	}
	for _, topic := range []string{"/robot_description", "/tf_static"} {
		if !strings.Contains(qos[topic], "durability: transient_local") || !strings.Contains(qos[topic], "depth: 1") {
			t.Errorf("%s offered %q, want transient_local, depth 1", topic, qos[topic])
		}
	}
	if !strings.Contains(qos["/tf"], "durability: volatile") {
		t.Errorf("/tf offered %q", qos["/tf"])
	}
	fixed := 0
	for _, j := range off.tree.Joints {
		if j.Type == mechanics.JointFixed {
			fixed++
		}
	}
	if len(static[0].Transforms) != 2*fixed {
		t.Errorf("/tf_static has %d transforms, want both robots' %d fixed joints", len(static[0].Transforms), fixed)
	}
	links := slices.Clone(off.tree.Links)
	for _, l := range off.tree.Links {
		links = append(links, "ghost/"+l)
	}

	// Bit for bit: each /tf is the offline rollout at the lookahead and
	// the URDF's forward kinematics.
	moved := 0.0
	for i, m := range tfs {
		stamp := m.Transforms[0].Header.Stamp.Nanos()
		data, ok := inputs[stamp]
		if !ok {
			t.Fatalf("/tf %d stamped %d: no input of that stamp", i, stamp)
		}
		want := off.frames(t, data, stamp)
		if len(m.Transforms) != len(want) {
			t.Fatalf("/tf %d: %d transforms, want %d", i, len(m.Transforms), len(want))
		}
		for k := range want {
			if m.Transforms[k] != want[k] {
				t.Fatalf("/tf %d transform %d:\n got %+v\nwant %+v", i, k, m.Transforms[k], want[k])
			}
		}
		if miss := unreachable("odom", links, static[0].Transforms, m.Transforms); len(miss) > 0 {
			t.Fatalf("/tf %d: links not reachable from odom: %v", i, miss)
		}
		g, b := m.Transforms[len(want)/2].Transform.Translation, m.Transforms[0].Transform.Translation
		moved = max(moved, math.Hypot(g.X-b.X, g.Y-b.Y))
	}
	if moved < 1e-6 {
		t.Errorf("the ghost never leaves the measured base (%.3g m)", moved)
	}
	t.Logf("bytes: /tf %d (%d per state and prediction), /calisym/prediction %d, /tf_static %d, /robot_description %d; ghost up to %.3g m from the base",
		bytesOf["/tf"], bytesOf["/tf"]/count, bytesOf["/calisym/prediction"], bytesOf["/tf_static"], bytesOf["/robot_description"], moved)
	if bytesOf["/tf"] > bytesOf["/calisym/prediction"]/10 {
		t.Errorf("/tf takes %d bytes, more than a tenth of the predictions' %d", bytesOf["/tf"], bytesOf["/calisym/prediction"])
	}

	// Foxglove's readers.
	raw := nodetest.Run(t, 2*time.Minute, "read_robot.mjs", out)
	var js struct {
		Channels []struct {
			Topic, SchemaName string
			Metadata          map[string]string
		} `json:"channels"`
		Messages []struct {
			Topic   string          `json:"topic"`
			LogTime string          `json:"logTime"`
			Value   json.RawMessage `json:"value"`
		} `json:"messages"`
		URDF struct {
			Name   string   `json:"name"`
			Links  []string `json:"links"`
			Joints []struct {
				Name, Type string
			} `json:"joints"`
		} `json:"urdf"`
	}
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("read_robot.mjs output: %v", err)
	}
	types := map[string]string{}
	for _, c := range js.Channels {
		types[c.Topic] = c.SchemaName
		if (c.Topic == "/robot_description" || c.Topic == "/tf_static") && !strings.Contains(c.Metadata["offered_qos_profiles"], "transient_local") {
			t.Errorf("@mcap/core: %s metadata %v", c.Topic, c.Metadata)
		}
	}
	if types["/robot_description"] != "std_msgs/msg/String" || types["/tf"] != "tf2_msgs/msg/TFMessage" || types["/tf_static"] != "tf2_msgs/msg/TFMessage" {
		t.Errorf("@mcap/core channel types %v", types)
	}
	if got, want := slices.Sorted(slices.Values(js.URDF.Links)), slices.Sorted(slices.Values(off.tree.Links)); js.URDF.Name != off.tree.Name || !slices.Equal(got, want) {
		t.Errorf("urdf-loader: robot %q with links %v, want %q with %v", js.URDF.Name, got, off.tree.Name, want)
	}
	if len(js.URDF.Joints) != len(off.tree.Joints) {
		t.Errorf("urdf-loader: %d joints, want %d", len(js.URDF.Joints), len(off.tree.Joints))
	}
	var jsTF [][]msgs.TransformStamped
	for _, m := range js.Messages {
		var v struct {
			Data       string        `json:"data"`
			Transforms []jsTransform `json:"transforms"`
		}
		if err := json.Unmarshal(m.Value, &v); err != nil {
			t.Fatal(err)
		}
		switch m.Topic {
		case "/robot_description":
			if v.Data != urdf {
				t.Errorf("@foxglove/rosmsg2-serialization: /robot_description is not the URDF")
			}
		case "/tf":
			var trs []msgs.TransformStamped
			for _, tr := range v.Transforms {
				trs = append(trs, tr.msg())
			}
			jsTF = append(jsTF, trs)
		}
	}
	if len(jsTF) != len(published) {
		t.Fatalf("Foxglove's readers decode %d /tf messages, want %d (%d measured, %d ghost)", len(jsTF), len(published), measured, ghosts)
	}
	for i := range published {
		if !slices.Equal(jsTF[i], published[i].Transforms) {
			t.Fatalf("/tf %d as Foxglove decodes it differs from calisym's", i)
		}
	}
}
