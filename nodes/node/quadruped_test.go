package node_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/cputime"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

var (
	anymalLegs   = []string{"LF", "RF", "LH", "RH"}
	anymalJoints = func() []string {
		var out []string
		for _, l := range anymalLegs {
			out = append(out, l+"_HAA", l+"_HFE", l+"_KFE")
		}
		return out
	}()
)

// quadrupedURDF is a quadruped with ANYmal D's joint names and roughly its
// mass distribution (a 30 kg base, legs of about 2 kg), for the mass
// matrix of params/anymal.yaml without the robot's own URDF.
func quadrupedURDF() string {
	var b strings.Builder
	b.WriteString(`<robot name="quadruped"><link name="base"><inertial><origin xyz="0 0 0"/><mass value="30"/>
  <inertia ixx="0.6" iyy="1.5" izz="1.7" ixy="0" ixz="0" iyz="0"/></inertial></link>`)
	for i, l := range anymalLegs {
		x, y := 0.3, 0.1
		if i%2 == 1 {
			y = -y
		}
		if i >= 2 {
			x = -x
		}
		fmt.Fprintf(&b, `
  <link name="%[1]s_HIP"><inertial><origin xyz="0 0 0"/><mass value="2"/><inertia ixx="0.005" iyy="0.005" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="%[1]s_THIGH"><inertial><origin xyz="0 0 -0.15"/><mass value="1.5"/><inertia ixx="0.01" iyy="0.01" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="%[1]s_SHANK"><inertial><origin xyz="0 0 -0.15"/><mass value="0.5"/><inertia ixx="0.004" iyy="0.004" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="%[1]s_HAA" type="revolute"><parent link="base"/><child link="%[1]s_HIP"/><origin xyz="%[2]g %[3]g 0"/><axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="80" velocity="8"/></joint>
  <joint name="%[1]s_HFE" type="revolute"><parent link="%[1]s_HIP"/><child link="%[1]s_THIGH"/><origin xyz="0 %[3]g 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="80" velocity="8"/></joint>
  <joint name="%[1]s_KFE" type="revolute"><parent link="%[1]s_THIGH"/><child link="%[1]s_SHANK"/><origin xyz="0 0 -0.3"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="80" velocity="8"/></joint>`, l, x, y)
	}
	b.WriteString("\n</robot>\n")
	return b.String()
}

// anymalParams loads params/anymal.yaml with the quadruped URDF above and
// a message trigger.
func anymalParams(t testing.TB) *node.Params {
	t.Helper()
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "anymal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	urdf := filepath.Join(t.TempDir(), "quadruped.urdf")
	if err := os.WriteFile(urdf, []byte(quadrupedURDF()), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Spec.Model.URDF = urdf
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerMessage, Topic: "/state_estimator/anymal_state"}
	return p
}

// quadrupedModel is the paper's quadruped preset (GR, 18 layers, 132-dim
// lift), randomly initialised, with the names of params/anymal.yaml.
func quadrupedModel(t testing.TB, p *node.Params) *predictor.Model {
	t.Helper()
	pre, err := predictor.LookupPreset("quadruped")
	if err != nil {
		t.Fatal(err)
	}
	// the params' layout: the preset's, with the port history's means
	c, k := p.Spec.PortNames()
	m, err := predictor.New(predictor.Layout{N: pre.Layout.N, NU: len(c), NC: len(k)}, pre.Arch, rand.New(rand.NewPCG(7, 8)))
	if err != nil {
		t.Fatal(err)
	}
	m.Meta.Dt = 0.01
	return m
}

// zeroStruct returns a message of definition d with every field zero and
// every sequence empty.
func zeroStruct(d *rosmsg.MsgDef) *rosmsg.Struct {
	s := &rosmsg.Struct{Def: d, Fields: make([]any, len(d.Fields))}
	for i := range d.Fields {
		f := &d.Fields[i]
		s.Fields[i] = zeroField(f)
	}
	return s
}

func zeroField(f *rosmsg.Field) any {
	n := 0
	if f.Array == rosmsg.FixedArray {
		n = f.Len
	}
	if f.Array == rosmsg.NotArray {
		switch f.Kind {
		case rosmsg.KindMessage:
			return zeroStruct(f.Msg)
		case rosmsg.KindString:
			return ""
		case rosmsg.KindInt8:
			return int8(0)
		case rosmsg.KindUint8:
			return uint8(0)
		case rosmsg.KindInt32:
			return int32(0)
		case rosmsg.KindUint32:
			return uint32(0)
		case rosmsg.KindFloat64:
			return float64(0)
		}
		panic("zeroField: kind " + f.Kind.String())
	}
	switch f.Kind {
	case rosmsg.KindMessage:
		out := make([]*rosmsg.Struct, n)
		for i := range out {
			out[i] = zeroStruct(f.Msg)
		}
		return out
	case rosmsg.KindString:
		return make([]string, n)
	case rosmsg.KindFloat64:
		return make([]float64, n)
	}
	panic("zeroField: array of " + f.Kind.String())
}

// set assigns the field at a dotted path of s.
func set(s *rosmsg.Struct, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		f, _ := s.Field(p)
		s = f.(*rosmsg.Struct)
	}
	i := s.Def.FieldIndex(parts[len(parts)-1])
	if i < 0 {
		panic("no field " + path)
	}
	s.Fields[i] = v
}

// anymalState encodes an AnymalState of the given stamp: a walking-like
// configuration with every joint moving and all four feet in contact.
func anymalState(t testing.TB, schema *rosmsg.Schema, stamp int64, pose mechanics.SE3, twist [6]float64, rng *rand.Rand) []byte {
	t.Helper()
	s := zeroStruct(schema.Root)
	ts := msgs.TimeFromNanos(stamp)
	set(s, "header.stamp.sec", ts.Sec)
	set(s, "header.stamp.nanosec", ts.Nanosec)
	q := mechanics.QuatFromRotation(pose.R)
	for i, v := range []float64{pose.P[0], pose.P[1], pose.P[2]} {
		set(s, "pose.pose.position."+"xyz"[i:i+1], v)
	}
	set(s, "pose.pose.orientation.x", q.X)
	set(s, "pose.pose.orientation.y", q.Y)
	set(s, "pose.pose.orientation.z", q.Z)
	set(s, "pose.pose.orientation.w", q.W)
	for i := range 3 {
		set(s, "twist.twist.linear."+"xyz"[i:i+1], twist[i])
		set(s, "twist.twist.angular."+"xyz"[i:i+1], twist[3+i])
	}
	// Joints in another order than the params', as a real message may be.
	names := slices.Clone(anymalJoints)
	slices.Reverse(names)
	pos, vel, eff := make([]float64, 12), make([]float64, 12), make([]float64, 12)
	for i := range names {
		pos[i], vel[i], eff[i] = 0.5*rng.Float64()-0.25, rng.NormFloat64(), 20*rng.NormFloat64()
	}
	set(s, "joints.name", names)
	set(s, "joints.position", pos)
	set(s, "joints.velocity", vel)
	set(s, "joints.acceleration", make([]float64, 12))
	set(s, "joints.effort", eff)
	cf := schema.Type("anymal_msgs/Contact")
	var contacts []*rosmsg.Struct
	for _, l := range anymalLegs {
		c := zeroStruct(cf)
		set(c, "name", l+"_FOOT")
		set(c, "state", uint8(1))
		set(c, "wrench.force.x", rng.NormFloat64())
		set(c, "wrench.force.y", rng.NormFloat64())
		set(c, "wrench.force.z", 100+10*rng.NormFloat64())
		contacts = append(contacts, c)
	}
	set(s, "contacts", contacts)
	data, err := schema.Encode(rosmsg.EncodingCDR, s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func anymalSchema(t testing.TB, p *node.Params) *rosmsg.Schema {
	t.Helper()
	return paramsSchema(t, p, "anymal_msgs/msg/AnymalState")
}

// TestQuadrupedPredictedPath runs the ANYmal params (AnymalState through
// the vendored definitions, CRBA on a quadruped URDF) and checks the state
// the node builds and the base path it publishes.
func TestQuadrupedPredictedPath(t *testing.T) {
	p := anymalParams(t)
	p.Spec.History.PortMean = 0 // the paper's layout: test/TestPortHistoryParity checks the port history
	schema := anymalSchema(t, p)
	var now int64
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	coords, ports := nd.Sampler().Coordinates(), nd.Sampler().Ports()
	if len(coords) != 18 || len(ports) != 30 || coords[6] != "LF_HAA" || ports[6] != "tau_LF_HAA" || ports[18] != "LF_FOOT_fx" {
		t.Fatalf("coordinates %v ports %v", coords, ports)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pose := mechanics.SE3{R: mechanics.RPY(0.05, -0.1, 2.5), P: mechanics.Vec3{3, -1, 0.55}}
	now = t0
	data := anymalState(t, schema, t0, pose, [6]float64{0.5, 0.1, 0, 0.1, 0.05, 0.3}, rng)
	if err := nd.Handle(node.Input{Topic: "/state_estimator/anymal_state", Data: data, Received: t0}); err != nil {
		t.Fatal(err)
	}
	preds := pub.predictions(t)
	paths := pub.on("/calisym/predicted_path")
	if len(preds) != 1 || len(paths) != 1 {
		t.Fatalf("%d predictions, %d paths (stats %+v)", len(preds), len(paths), nd.Stats())
	}
	var path msgs.Path
	if err := msgs.Unmarshal(paths[0].data, &path); err != nil {
		t.Fatal(err)
	}
	pr := preds[0]
	if len(path.Poses) != 101 || path.Header.FrameID != "odom" || pr.Header.FrameID != "odom" {
		t.Fatalf("path of %d poses in %q", len(path.Poses), path.Header.FrameID)
	}
	// The first pose is the measured one; pose k+1 is exp of predicted q_k.
	got := path.Poses[0].Pose
	if math.Abs(got.Position.X-3)+math.Abs(got.Position.Y+1)+math.Abs(got.Position.Z-0.55) > 1e-12 {
		t.Errorf("first pose %+v", got)
	}
	for _, k := range []int{0, 49, 99} {
		want := pose.Mul(mechanics.ExpSE3(mechanics.Twist(pr.Q[k*18 : k*18+6])))
		g := path.Poses[k+1].Pose
		if d := math.Abs(g.Position.X-want.P[0]) + math.Abs(g.Position.Y-want.P[1]) + math.Abs(g.Position.Z-want.P[2]); d > 1e-9 {
			t.Errorf("pose %d off by %.3g", k+1, d)
		}
		if st := path.Poses[k+1].Header.Stamp.Nanos(); st != t0+int64(k+1)*10*ms {
			t.Errorf("pose %d stamped %d", k+1, st)
		}
	}
	// The joint preview carries the 12 joints at the last step.
	var js msgs.JointState
	if err := msgs.Unmarshal(pub.on("/calisym/predicted_joint_states")[0].data, &js); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(js.Name, anymalJoints) || js.Position[11] != pr.QAt(99, 17) || js.Header.Stamp.Nanos() != t0+100*10*ms {
		t.Errorf("joint preview %+v", js)
	}
	// Joint names reordered in the message are matched by name; a foot
	// missing from the contacts is a mismatch.
	s := zeroStruct(schema.Root)
	set(s, "header.stamp.sec", msgs.TimeFromNanos(t0+ms).Sec)
	data, err = schema.Encode(rosmsg.EncodingCDR, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := nd.Handle(node.Input{Topic: "/state_estimator/anymal_state", Data: data, Received: t0 + ms}); err != nil {
		t.Fatal(err)
	}
	if in := nd.Stats().Inputs["/state_estimator/anymal_state"]; in.RejectedMismatch != 1 {
		t.Errorf("empty AnymalState: %+v", in)
	}
}

// setStamp rewrites the header stamp of a CDR message whose first field is
// a std_msgs/Header (little endian, after the 4-byte encapsulation).
func setStamp(data []byte, ns int64) {
	ts := msgs.TimeFromNanos(ns)
	binary.LittleEndian.PutUint32(data[4:], uint32(ts.Sec))
	binary.LittleEndian.PutUint32(data[8:], ts.Nanosec)
}

// latencyPub signals each publication on the prediction topic.
type latencyPub struct {
	memPubNoRecord
	published chan time.Time
}

type memPubNoRecord struct{}

func (memPubNoRecord) Advertise(string, node.TopicType) error { return nil }

func (p *latencyPub) Publish(topic string, _ int64, _ []byte) error {
	if topic == "/calisym/prediction" {
		p.published <- time.Now()
	}
	return nil
}

// BenchmarkQuadrupedLatency measures the end-to-end latency of the live
// node for the quadruped with horizon 100 on one core: from a serialized
// AnymalState handed to the subscriber callback, through the queue,
// decoding, state building (CRBA), the rollout and the serialization of
// the prediction, to its publication. It reports the median and 99th
// percentile; the requirement is p99 < 10 ms. Sub-benchmarks: "paper",
// the paper's quadruped preset (n = 18, n_u = 18, n_c = 12, 132-dim lift,
// GR-SympNet of 18 layers), and "port_history", params/anymal.yaml as
// shipped, with the port history's 30 means (n_u = 48, 192-dim lift).
// With CALISYM_LATENCY_MODEL naming a model file (e.g. the anymal_sim
// benchmark's calisym-gr.safetensors) the sub-benchmark of its layout
// serves that model instead of a random one, and the other is skipped.
// The node predicts on each state message (a message trigger on the state
// topic: for the ANYmal's one input what trigger kind on_state does); the
// messages are stamped 10 ms apart and sent back to back, each after the
// last one's prediction, the port history warmed up before the timing.
func BenchmarkQuadrupedLatency(b *testing.B) {
	b.Run("paper", func(b *testing.B) { quadrupedLatency(b, true) })
	b.Run("port_history", func(b *testing.B) { quadrupedLatency(b, false) })
}

func quadrupedLatency(b *testing.B, paper bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := anymalParams(b)
	if paper {
		p.Spec.History.PortMean = 0
	}
	p.Node.MaxAge = 1e6 // wall clock against synthetic stamps: never stale
	schema := anymalSchema(b, p)
	model := quadrupedModel(b, p)
	if path := os.Getenv("CALISYM_LATENCY_MODEL"); path != "" {
		m, err := predictor.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if m.Layout.NU != model.Layout.NU {
			b.Skipf("%s has n_u = %d, this layout %d", path, m.Layout.NU, model.Layout.NU)
		}
		model = m
	}
	pub := &latencyPub{published: make(chan time.Time, 1)}
	// The messages are stamped one model step (10 ms) apart, as the
	// state estimator's are at 100 Hz, so that the port history takes
	// every message as its next sample (stamps closer than a step would
	// be passed over, and the history would never fill); they are sent
	// back to back. The node's clock runs ahead of the wall clock by the
	// stamps of b.N steps, so that no stamp is ahead of it (a message
	// from the future is refused); max_age never makes one stale.
	step := int64(math.Round(model.Meta.Dt * 1e9))
	if step <= 0 {
		step = int64(math.Round(1e9 / p.Rate))
	}
	ahead := int64(b.N+p.Spec.History.PortMean+1) * step
	nd, err := node.New(node.Options{Params: p, Model: model, Now: func() int64 { return time.Now().UnixNano() + ahead }, Publisher: pub})
	if err != nil {
		b.Fatal(err)
	}
	if nd.Horizon() != 100 {
		b.Fatalf("horizon %d", nd.Horizon())
	}
	bus := &node.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nd.Run(ctx, node.Compose(pub, bus), node.RunOptions{Tick: time.Second}) }()
	for !bus.Subscribed("/state_estimator/anymal_state") {
		time.Sleep(time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	msg := anymalState(b, schema, t0, mechanics.SE3{R: mechanics.RPY(0.02, 0.01, 1), P: mechanics.Vec3{1, 2, 0.5}}, [6]float64{0.4, 0, 0, 0, 0, 0.2}, rng)
	stamp := time.Now().UnixNano()
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	// The port history's warm-up: its samples before the first prediction.
	for range p.Spec.History.PortMean {
		setStamp(msg, stamp)
		stamp += step
		bus.Deliver("/state_estimator/anymal_state", msg)
	}
	for nd.Stats().Inputs["/state_estimator/anymal_state"].Accepted < uint64(p.Spec.History.PortMean) {
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for range b.N {
		setStamp(msg, stamp)
		stamp += step
		c0, start := cputime.Process(), time.Now()
		bus.Deliver("/state_estimator/anymal_state", msg)
		var end time.Time
		select {
		case end = <-pub.published:
		case <-time.After(10 * time.Second):
			b.Fatalf("no prediction 10 s after a message: %+v", nd.Stats())
		}
		lat = append(lat, end.Sub(start))
		cpu = append(cpu, cputime.Process()-c0)
	}
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if st := nd.Stats(); st.Predictions != uint64(b.N) || st.HistoryRestarts != 0 {
		b.Fatalf("%d predictions for %d messages: %+v", st.Predictions, b.N, st)
	}
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	// CPU time per message: the latency without the waits for a core that
	// a machine shared with other work adds (rusage resolution: ~1 µs to
	// a scheduler tick, depending on the kernel).
	c50, c99 := percentiles(cpu)
	b.ReportMetric(float64(c50.Microseconds())/1000, "cpu-p50-ms")
	b.ReportMetric(float64(c99.Microseconds())/1000, "cpu-p99-ms")
}

// percentiles returns the median and the 99th percentile of d (sorting it).
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(d)
	return d[(len(d)-1)/2], d[min(len(d)-1, int(math.Ceil(0.99*float64(len(d))))-1)]
}
