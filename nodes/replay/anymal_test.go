package replay_test

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
)

const anymalTopic = "/state_estimator/anymal_state"

// anymalSim returns the anymal_sim data root (the directory model.urdf of
// params/anymal.yaml is relative to), skipping the test where the data is
// absent (failing it when CI=true).
func anymalSim(t testing.TB) string {
	t.Helper()
	fixtures.Path(t, "anymal_sim", "anymal_d_simple_description", "urdf", "anymal.urdf")
	return filepath.Join(fixtures.DataDir(), "anymal_sim")
}

// logSlice is a MessageReader over the messages of a log whose log times
// are in [from, to).
type logSlice struct {
	logio.MessageReader
	from, to uint64
}

func (s *logSlice) Next() (*logio.Message, error) {
	for {
		m, err := s.MessageReader.Next()
		if err != nil {
			return nil, err
		}
		if m.LogTime < s.from {
			continue
		}
		if m.LogTime >= s.to {
			return nil, io.EOF
		}
		return m, nil
	}
}

// anymalMsg is an AnymalState decoded generically from its CDR bytes and
// its own schema (not through the node's extractor).
type anymalMsg struct {
	stamp      int64
	pos        mechanics.Vec3
	quat       mechanics.Quat
	lin, ang   mechanics.Vec3
	joints     map[string][3]float64 // position, velocity, effort
	forces     map[string]mechanics.Vec3
	jointOrder []string
}

func field(t *testing.T, s *rosmsg.Struct, path ...string) any {
	t.Helper()
	var v any = s
	for _, p := range path {
		st, ok := v.(*rosmsg.Struct)
		if !ok {
			t.Fatalf("%v: %T is not a message", path, v)
		}
		if v, ok = st.Field(p); !ok {
			t.Fatalf("no field %v", path)
		}
	}
	return v
}

func vec(t *testing.T, s *rosmsg.Struct, path ...string) mechanics.Vec3 {
	t.Helper()
	var out mechanics.Vec3
	for i, a := range []string{"x", "y", "z"} {
		out[i] = field(t, s, append(slices.Clone(path), a)...).(float64)
	}
	return out
}

func decodeAnymal(t *testing.T, schema *rosmsg.Schema, data []byte) anymalMsg {
	t.Helper()
	s, err := schema.Decode(rosmsg.EncodingCDR, data)
	if err != nil {
		t.Fatal(err)
	}
	var a anymalMsg
	a.stamp = int64(field(t, s, "header", "stamp", "sec").(int32))*1e9 + int64(field(t, s, "header", "stamp", "nanosec").(uint32))
	a.pos = vec(t, s, "pose", "pose", "position")
	q := vec(t, s, "pose", "pose", "orientation")
	a.quat = mechanics.Quat{W: field(t, s, "pose", "pose", "orientation", "w").(float64), X: q[0], Y: q[1], Z: q[2]}
	a.lin = vec(t, s, "twist", "twist", "linear")
	a.ang = vec(t, s, "twist", "twist", "angular")
	names := field(t, s, "joints", "name").([]string)
	pos := field(t, s, "joints", "position").([]float64)
	vel := field(t, s, "joints", "velocity").([]float64)
	eff := field(t, s, "joints", "effort").([]float64)
	a.joints = map[string][3]float64{}
	for i, n := range names {
		a.joints[n] = [3]float64{pos[i], vel[i], eff[i]}
	}
	a.jointOrder = names
	a.forces = map[string]mechanics.Vec3{}
	for _, c := range field(t, s, "contacts").([]*rosmsg.Struct) {
		a.forces[field(t, c, "name").(string)] = vec(t, c, "wrench", "force")
	}
	return a
}

// anymalOffline builds x_t = (q, p) and e_t = (u, f_c) of params/anymal.yaml
// from a decoded message, written out from the paper's layout rather than
// through the node's sampler: q = (0 (the base relative to its own pose),
// the 12 joint angles), v = (base linear and angular velocity in the base
// frame, joint rates), p = M(q)v by CRBA on the URDF with its base twist
// linear part first, u = (0 × 6, the 12 joint efforts), f_c = the four feet's
// contact forces, logged in odom, in the base's body axes.
type anymalOffline struct {
	urdf   *mechanics.Model
	index  []int // URDF coordinate of each params joint
	joints []string
	feet   []string
}

func (o *anymalOffline) state(t *testing.T, a anymalMsg) (x, e []float64) {
	t.Helper()
	nj := len(o.joints)
	n := 6 + nj
	x, e = make([]float64, 2*n), make([]float64, n+3*len(o.feet))
	v := make([]float64, n)
	qu := make([]float64, nj)
	copy(v[:3], a.lin[:])
	copy(v[3:6], a.ang[:])
	for i, name := range o.joints {
		j, ok := a.joints[name]
		if !ok {
			t.Fatalf("message has no joint %s", name)
		}
		x[6+i], v[6+i], e[6+i] = j[0], j[1], j[2]
		qu[o.index[i]] = j[0]
	}
	M, err := o.urdf.MassMatrixFloating(qu)
	if err != nil {
		t.Fatal(err)
	}
	at := func(i int) int {
		if i < 6 {
			return i
		}
		return 6 + o.index[i-6]
	}
	for r := range n {
		var acc float64
		for c := range n {
			acc += M.At(at(r), at(c)) * v[c]
		}
		x[n+r] = acc
	}
	// The forces are logged in odom axes; params/anymal.yaml
	// (contact.body_axes) rotates them into the base's body axes.
	u, err := a.quat.Normalized()
	if err != nil {
		t.Fatal(err)
	}
	Rt := u.Rotation().T()
	for i, f := range o.feet {
		force, ok := a.forces[f]
		if !ok {
			t.Fatalf("message has no contact %s", f)
		}
		fb := Rt.MulVec(force)
		copy(e[n+3*i:], fb[:])
	}
	return x, e
}

// relDiff is |a−b| / (1 + |b|).
func relDiff(a, b float64) float64 { return math.Abs(a-b) / (1 + math.Abs(b)) }

// TestReplayAnymalOOD replays three seconds of an OOD log of the simulated
// ANYmal D (ood/push_401: pushes on the base) through params/anymal.yaml
// and the quadruped preset, as `calisym replay --params params/anymal.yaml
// --data …/anymal_sim` does, and checks every published output against
// what is computed here from the logged messages alone:
//
//   - one prediction per message (on_state at 100 Hz on the 100 Hz log),
//     stamped as the message it starts from, with the ports e_t held over
//     the horizon, bit for bit;
//   - its predicted q and p equal, to 1e-12, the offline rollout
//     (predictor's Compile/Roller) of the same model from x_t, e_t built
//     from the decoded message and CRBA on the URDF;
//   - /calisym/predicted_joint_states carries the URDF's 12 movable joint
//     names (robot_state_publisher and Foxglove match by name) and the
//     predicted angles of the last step;
//   - /calisym/predicted_path is a nav_msgs/Path in odom with the measured
//     pose and the horizon's absolute poses, pose·exp(q̂_k).
func TestReplayAnymalOOD(t *testing.T) {
	root := anymalSim(t)
	logPath := fixtures.Path(t, "anymal_sim", "ood", "push_401.mcap")
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
	var ch *logio.Channel
	for _, c := range r.Channels() {
		if c.Topic == anymalTopic {
			ch = c
		}
	}
	if ch == nil {
		t.Fatalf("%s has no %s", logPath, anymalTopic)
	}
	schema, err := rosmsg.ParseSchema(ch.Type, rosmsg.ROS2Msg, ch.Schema)
	if err != nil {
		t.Fatal(err)
	}
	const from, count = 20_000_000_000, 300 // 20 s into the log, 3 s
	first, err := firstLogTime(logPath)
	if err != nil {
		t.Fatal(err)
	}
	slice := &logSlice{MessageReader: r, from: first + from, to: first + from + count*10_000_000}

	out := filepath.Join(t.TempDir(), "anymal.mcap")
	w, err := logio.CreateROS2(out, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(context.Background(), slice, replay.Options{Params: params, Model: model, ModelSHA256: "abc", DataRoot: root, Out: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	if res.Messages != count || st.Predictions != count || st.Suppressed != 0 || st.Inputs[anymalTopic].Accepted != count {
		t.Fatalf("replay of %d messages: %d handled, stats %+v", count, res.Messages, st)
	}

	// Read the replay back: inputs by stamp, outputs in order.
	inputs := map[int64]anymalMsg{}
	var preds []msgs.PredictedTrajectory
	var joints []msgs.JointState
	var paths []msgs.Path
	types := map[string]string{}
	rb, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	for _, c := range rb.Channels() {
		types[c.Topic] = c.Type
	}
	for m, err := range logio.Messages(rb) {
		if err != nil {
			t.Fatal(err)
		}
		var dst msgs.Message
		switch m.Channel.Topic {
		case anymalTopic:
			a := decodeAnymal(t, schema, m.Data)
			if a.stamp != int64(m.LogTime) {
				t.Fatalf("input stamped %d at log time %d", a.stamp, m.LogTime)
			}
			inputs[a.stamp] = a
			continue
		case "/calisym/prediction":
			preds = append(preds, msgs.PredictedTrajectory{})
			dst = &preds[len(preds)-1]
		case "/calisym/predicted_joint_states":
			joints = append(joints, msgs.JointState{})
			dst = &joints[len(joints)-1]
		case "/calisym/predicted_path":
			paths = append(paths, msgs.Path{})
			dst = &paths[len(paths)-1]
		default:
			continue
		}
		if err := msgs.Unmarshal(m.Data, dst); err != nil {
			t.Fatalf("%s: %v", m.Channel.Topic, err)
		}
	}
	for topic, typ := range map[string]string{anymalTopic: "anymal_msgs/msg/AnymalState", "/calisym/prediction": "calisym/msg/PredictedTrajectory",
		"/calisym/predicted_joint_states": "sensor_msgs/msg/JointState", "/calisym/predicted_path": "nav_msgs/msg/Path",
		"/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"} {
		if types[topic] != typ {
			t.Errorf("topic %s has type %q, want %s", topic, types[topic], typ)
		}
	}
	if len(inputs) != count || len(preds) != count || len(joints) != count || len(paths) != count {
		t.Fatalf("%d inputs, %d predictions, %d joint states, %d paths; want %d each", len(inputs), len(preds), len(joints), len(paths), count)
	}

	urdf, err := mechanics.LoadURDF(filepath.Join(root, params.Spec.Model.URDF))
	if err != nil {
		t.Fatal(err)
	}
	urdfJoints := urdf.JointNames()
	off := anymalOffline{urdf: urdf, joints: []string{"LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE", "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"},
		feet: []string{"LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"}}
	for _, j := range off.joints {
		i := slices.Index(urdfJoints, j)
		if i < 0 {
			t.Fatalf("URDF has no joint %s (its joints: %v)", j, urdfJoints)
		}
		off.index = append(off.index, i)
	}
	if len(urdfJoints) != len(off.joints) {
		t.Fatalf("URDF movable joints %v", urdfJoints)
	}

	plan, err := model.Compile()
	if err != nil {
		t.Fatal(err)
	}
	roller := plan.NewRoller()
	const H, n, ne = 100, 18, 30
	const step = 10_000_000 // ns
	xs := make([]float64, H*2*n)
	ports := make([]float64, H*ne)
	var worst, worstPose float64
	exact := 0
	for i, p := range preds {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		stamp := p.Header.Stamp.Nanos()
		a, ok := inputs[stamp]
		if !ok {
			t.Fatalf("prediction %d stamped %d: no input of that stamp", i, stamp)
		}
		if i > 0 && stamp != preds[i-1].Header.Stamp.Nanos()+step {
			t.Fatalf("prediction %d stamped %d, %d after the previous one", i, stamp, stamp-preds[i-1].Header.Stamp.Nanos())
		}
		if p.Header.FrameID != "odom" || p.Horizon != H || p.Dt != 0.01 || len(p.CoordinateNames) != n || len(p.PortNames) != ne ||
			!slices.Equal(p.CoordinateNames[6:], urdfJoints) || p.ModelSHA256 != "abc" || p.ModelID != "anymal-test" {
			t.Fatalf("prediction %d: header %+v, names %v %v", i, p.Header, p.CoordinateNames, p.PortNames)
		}
		x, e := off.state(t, a)
		for k := range H {
			copy(ports[k*ne:], e)
		}
		if !slices.Equal(p.Ports, ports) {
			t.Fatalf("prediction %d: ports %v, want e_t = %v held", i, p.Ports[:ne], e)
		}
		if err := roller.Rollout(x, ports, H, xs); err != nil {
			t.Fatal(err)
		}
		same := true
		for k := range H {
			for j := range n {
				gq, gp := p.QAt(k, j), p.PAt(k, j)
				wq, wp := xs[k*2*n+j], xs[k*2*n+n+j]
				worst = max(worst, relDiff(gq, wq), relDiff(gp, wp))
				same = same && gq == wq && gp == wp
			}
		}
		if same {
			exact++
		}

		// The joint preview: URDF joint names, the last step's angles,
		// stamped at the time they are predicted for.
		js := joints[i]
		if !slices.Equal(js.Name, urdfJoints) || len(js.Position) != len(urdfJoints) || js.Header.Stamp.Nanos() != stamp+H*step {
			t.Fatalf("joint states %d: names %v, %d positions, stamp %d (prediction at %d)", i, js.Name, len(js.Position), js.Header.Stamp.Nanos(), stamp)
		}
		for j := range urdfJoints {
			if js.Position[j] != p.QAt(H-1, 6+j) {
				t.Fatalf("joint states %d: %s = %g, predicted %g", i, js.Name[j], js.Position[j], p.QAt(H-1, 6+j))
			}
		}

		// The path: the measured pose, then pose·exp(q̂_k) in odom.
		path := paths[i]
		if path.Header.FrameID != "odom" || path.Header.Stamp.Nanos() != stamp || len(path.Poses) != H+1 {
			t.Fatalf("path %d: %+v with %d poses", i, path.Header, len(path.Poses))
		}
		u, err := a.quat.Normalized()
		if err != nil {
			t.Fatal(err)
		}
		pose := mechanics.SE3{R: u.Rotation(), P: a.pos}
		for k := range H + 1 {
			want := pose
			if k > 0 {
				want = pose.Mul(mechanics.ExpSE3(mechanics.Twist(p.Q[(k-1)*n : (k-1)*n+6])))
			}
			ps := path.Poses[k]
			if ps.Header.FrameID != "odom" || ps.Header.Stamp.Nanos() != stamp+int64(k)*step {
				t.Fatalf("path %d pose %d: header %+v", i, k, ps.Header)
			}
			g := ps.Pose
			gr := mechanics.Quat{W: g.Orientation.W, X: g.Orientation.X, Y: g.Orientation.Y, Z: g.Orientation.Z}.Rotation()
			d := math.Abs(g.Position.X-want.P[0]) + math.Abs(g.Position.Y-want.P[1]) + math.Abs(g.Position.Z-want.P[2])
			for r := range 3 {
				for c := range 3 {
					d = max(d, math.Abs(gr[r][c]-want.R[r][c]))
				}
			}
			worstPose = max(worstPose, d)
		}
	}
	t.Logf("%d predictions: %d bit for bit equal to the offline rollout, largest relative difference %.3g; largest path pose error %.3g",
		len(preds), exact, worst, worstPose)
	if worst > 1e-12 {
		t.Errorf("predictions differ from the offline rollout by up to %.3g (relative)", worst)
	}
	if worstPose > 1e-12 {
		t.Errorf("path poses differ from pose·exp(q̂) by up to %.3g", worstPose)
	}
	// A prediction that moves nothing would pass the checks above
	// vacuously: the base must move over the horizon of some prediction.
	moved := 0.0
	for _, p := range preds {
		for j := range 6 {
			moved = max(moved, math.Abs(p.QAt(H-1, j)))
		}
	}
	if moved < 1e-6 {
		t.Errorf("no prediction moves the base (largest |q̂_base| %.3g)", moved)
	}
}

// firstLogTime returns the log time of the first message of a log.
func firstLogTime(path string) (uint64, error) {
	r, err := logio.Open(path, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	m, err := r.Next()
	if err != nil {
		return 0, err
	}
	return m.LogTime, nil
}
