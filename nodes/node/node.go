// Package node is calisym's predictor node, independent of any transport:
// it turns the latest joint states, odometry, commanded torques or motor
// commands and contact forces into the state x_t = (q, p) and ports
// e_t = (u, f_c) through the params file's "convert:" mapping (the one the
// dataset conversion uses, statemap.Sampler), rolls the learned model out
// over a horizon and publishes the predicted trajectory
// (calisym/msg/PredictedTrajectory), the predicted joint positions
// (sensor_msgs/msg/JointState), the predicted base path of a floating base
// (nav_msgs/msg/Path) and diagnostics (diagnostic_msgs/msg/DiagnosticArray).
//
// A Node is driven by calls: Handle for each input message, Tick for the
// passage of time. Its clock is injected, so an MCAP replay (package
// nodes/replay) drives it deterministically on log time, while Run serves
// it live over a Transport (Foxglove WebSocket, ROS 2) on the wall clock
// without ever blocking a subscriber.
//
// The policies, configured in the "node:" section (Config):
//
//   - Staleness: no prediction is made from an input older than its
//     max_age; the node publishes a diagnostic instead.
//   - Validation: a message with a NaN or infinite value, joint names that
//     do not match the mapping's (a path such as
//     position[name=="LF_HAA"] that finds nothing) or bytes that do not
//     decode is rejected whole, counted and reported.
//   - Order: per topic, a message stamped before the newest accepted one
//     is dropped as out of order, one with the same stamp as a duplicate.
//   - Port forecast: the latest ports held over the horizon, or a port
//     trajectory a planner publishes.
//   - Trigger: every message on the trigger topic, or a timer.
package node

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// ErrModel reports a model that does not fit the params file's mapping.
var ErrModel = errors.New("node: model does not fit the params")

// TopicType describes the messages of one topic.
type TopicType struct {
	// Type is the message type, "pkg/msg/Type".
	Type string
	// Definition is the complete message definition.
	Definition string
	// SchemaEncoding is rosmsg.SchemaEncodingROS2Msg (the default when empty)
	// or rosmsg.SchemaEncodingROS1Msg.
	SchemaEncoding string
	// Encoding is the message encoding, rosmsg.MessageEncodingCDR (the default
	// when empty) or rosmsg.MessageEncodingROS1.
	Encoding string
	// Latched marks an output published once and kept for late
	// subscribers (ROS 2's transient-local durability): the robot
	// description and the static frames.
	Latched bool
}

func (t TopicType) schemaEncoding() string {
	if t.SchemaEncoding == "" {
		return rosmsg.SchemaEncodingROS2Msg
	}
	return t.SchemaEncoding
}

func (t TopicType) encoding() string {
	if t.Encoding == "" {
		return rosmsg.MessageEncodingCDR
	}
	return t.Encoding
}

// TypeOf returns the TopicType of a typed message (CDR, ros2msg).
func TypeOf(m msgs.Message) TopicType {
	return TopicType{Type: m.ROSType(), Definition: m.ROSDefinition()}
}

// Publisher is the output side of a transport. Publish is called from one
// goroutine at a time; it must not keep data after it returns and should
// not block (a transport with a slow link drops rather than waits).
type Publisher interface {
	// Advertise declares an output topic before its first Publish.
	Advertise(topic string, t TopicType) error
	// Publish sends one serialized message (CDR with its encapsulation
	// header); stamp is its time in nanoseconds since the Unix epoch.
	Publish(topic string, stamp int64, data []byte) error
}

// Input is one message arriving at the node.
type Input struct {
	// Topic is the topic it arrived on.
	Topic string
	// Data is the serialized message; the node does not keep it.
	Data []byte
	// Received is when it arrived, in nanoseconds on the node's clock.
	Received int64
}

// Options configures New.
type Options struct {
	// Params are the params file's convert and node sections.
	Params *Params
	// Model is the predictor; its layout must match the mapping's.
	Model *predictor.Model
	// ModelID names the model in predictions (default Config.ModelID, the
	// model's metadata name, else "calisym").
	ModelID string
	// ModelSHA256 is the hex SHA-256 of the model file.
	ModelSHA256 string
	// DataRoot resolves the spec's parameter files and URDFs (default: the
	// params file's directory).
	DataRoot string
	// Types overrides the type of input topics (a log's own channel
	// schemas); other topics take Config.Topics' type and its definition
	// from Definitions.
	Types map[string]TopicType
	// Now is the node's clock in nanoseconds since the Unix epoch: the
	// wall clock live, the log time in a replay. Required.
	Now func() int64
	// Publisher receives the outputs. Required.
	Publisher Publisher
}

// input is one input topic.
type input struct {
	cfg       TopicConfig
	typ       TopicType
	x         *rosmsg.Extractor
	slots     []int // sampler slot of each extractor path before the stamp paths
	stampMode int   // 0 receive, 1 sec+nanosec paths, 2 sec+nsec paths (ROS 1)
	scratch   []float64
	maxAge    int64
	last      int64 // stamp of the newest accepted message
	feeds     bool  // some of its channels feed the state (q, v)
	have      bool
	counts    InputStats
	dropped   atomic.Uint64 // by Run's queue, from the subscriber goroutine
	rejectMsg string        // why the last message was rejected ("" after an accepted one)
	rejectKey string        // the kind of rejection, for the diagnostics' change key
	rejectLvl uint8
}

// InputStats counts the messages of one input topic.
type InputStats struct {
	// Received counts every message handed to the node.
	Received uint64
	// Accepted counts the messages whose values were taken.
	Accepted uint64
	// RejectedNaN counts messages with a NaN or infinite value.
	RejectedNaN uint64
	// RejectedMismatch counts messages that lack an element a path names:
	// joint names that do not match, arrays too short.
	RejectedMismatch uint64
	// RejectedDecode counts messages whose bytes do not decode.
	RejectedDecode uint64
	// OutOfOrder counts messages stamped before the newest accepted one.
	OutOfOrder uint64
	// Duplicates counts messages stamped as the newest accepted one.
	Duplicates uint64
	// Dropped counts messages Run's queue dropped before the node saw them.
	Dropped uint64
}

// Stats counts what the node did.
type Stats struct {
	// Predictions counts published predictions.
	Predictions uint64
	// Suppressed counts triggers that made no prediction (stale or missing
	// inputs, a bad sample).
	Suppressed uint64
	// ForecastFallbacks counts predictions that held the ports because the
	// port trajectory was missing or stale.
	ForecastFallbacks uint64
	// Diagnostics counts published DiagnosticArrays.
	Diagnostics uint64
	// Unknown counts messages on topics the node does not read.
	Unknown uint64
	// Inputs holds the counts of every input topic.
	Inputs map[string]InputStats
	// LastLatency is the latency of the last prediction [ns], from the
	// arrival of the trigger to publication on the node's clock.
	LastLatency int64
	// ForceRestarts counts the times the force estimate (Config.
	// ForceEstimate) started again: a gap in the state samples, a stale
	// input, a sample that could not be built.
	ForceRestarts uint64
	// HistoryRestarts counts the times the port history (convert.history)
	// started again, for the same reasons.
	HistoryRestarts uint64
}

// Node is the predictor node. Its methods are safe for concurrent use;
// Run calls Handle and Tick from one goroutine.
type Node struct {
	mu      sync.Mutex
	cfg     *Config
	params  *Params
	now     func() int64
	pub     Publisher
	sampler *statemap.Sampler
	roller  *predictor.Roller
	stepper predictor.Stepper // roller, or force the offset-free wrapper of it
	force   *forceState
	hist    *portHistory // the mapping's port history (convert.history)
	obs     observation  // the input history of hist and force
	n, ne   int          // n, and the model's ports n_u + n_c
	nm      int          // the measured ports (ne less the port history's)
	nj      int
	dt      float64
	h       int
	modelID string
	sha     string

	inputs  []*input
	byTopic map[string]*input
	trigger *input
	values  []float64

	x, e, ports, out []float64
	em               []float64 // the measured ports of the sample predicted from
	joints           []string
	traj             msgs.PredictedTrajectory
	js               msgs.JointState
	path             msgs.Path
	buf              []byte
	enc              msgs.Encoder

	plan struct {
		topic    string
		maxAge   int64 // ns: Ports.MaxAge
		data     []float64
		rows     int
		stamp    int64
		have     bool
		received uint64
		rejected uint64
		reject   string
		dropped  atomic.Uint64
	}

	stats      Stats
	predStatus string // "" ok, else why the last trigger made no prediction
	predLevel  uint8
	predState  string
	lastDiag   []byte                  // change key of the last published diagnostics
	key        []byte                  // scratch for the change key
	pubTimes   [DiagnosticsBurst]int64 // when the last diagnostics were published (a ring)
	npub       int                     // diagnostics published
	nextDiag   int64
	nextTick   int64
	triggers   uint64 // triggers counted (Trigger.Every)
	latency    [1024]int64
	view       viewState // the robot's frames for 3D viewers (tf.go)
	nlat       int
}

// New builds a node: it binds every input topic to its type and compiles
// the mapping's message paths against it, checks the model against the
// mapping and advertises the outputs on the publisher.
func New(o Options) (*Node, error) {
	if o.Params == nil || o.Model == nil || o.Now == nil || o.Publisher == nil {
		return nil, errors.New("node: Options needs Params, Model, Now and Publisher")
	}
	p := o.Params
	cfg := p.Node
	root := o.DataRoot
	if root == "" {
		root = p.Resolve(".")
	}
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
	if err != nil {
		return nil, err
	}
	nd := &Node{cfg: cfg, params: p, now: o.Now, pub: o.Publisher, sampler: smp, h: cfg.Horizon, sha: o.ModelSHA256}
	if err := nd.checkModel(o.Model); err != nil {
		return nil, err
	}
	plan, err := o.Model.Compile()
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	nd.roller = plan.NewRoller()
	nd.stepper = nd.roller
	if err := nd.newHistory(p.Spec, cfg); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	nd.modelID = firstNonEmpty(o.ModelID, cfg.ModelID, o.Model.Meta.Name, "calisym")
	if err := nd.bind(o.Types, Definitions{Dir: p.DefinitionsDir()}); err != nil {
		return nil, err
	}
	if err := nd.advertise(); err != nil {
		return nil, err
	}
	nd.allocate()
	if err := nd.newView(root); err != nil {
		return nil, err
	}
	nd.nextDiag = math.MinInt64
	nd.nextTick = math.MinInt64
	return nd, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// checkModel checks the model's layout and names against the mapping.
func (nd *Node) checkModel(m *predictor.Model) error {
	n, nu, nc := nd.sampler.Layout()
	l := m.Layout
	if l.N != n || l.NU != nu || l.NC != nc {
		hint := ""
		if h := nd.params.Spec.History.PortMean; h > 0 {
			hint = fmt.Sprintf(" (its n_u counts the %d means of convert.history.port_mean: %d)", nu+nc-nd.sampler.Measured(), h)
		}
		return fmt.Errorf("%w: the model has n=%d, n_u=%d, n_c=%d but the mapping gives n=%d, n_u=%d, n_c=%d%s", ErrModel, l.N, l.NU, l.NC, n, nu, nc, hint)
	}
	if c := m.Meta.Coordinates; len(c) > 0 && !slices.Equal(c, nd.sampler.Coordinates()) {
		return fmt.Errorf("%w: the model's coordinates %v are not the mapping's %v", ErrModel, c, nd.sampler.Coordinates())
	}
	if pn := m.Meta.Ports; len(pn) > 0 && !slices.Equal(pn, nd.sampler.Ports()) {
		return fmt.Errorf("%w: the model's ports %v are not the mapping's %v", ErrModel, pn, nd.sampler.Ports())
	}
	nd.n, nd.ne, nd.nm = n, nu+nc, nd.sampler.Measured()
	nd.dt = m.Meta.Dt
	if nd.dt == 0 {
		nd.dt = 1 / nd.params.Rate
	} else if r := nd.params.Rate; math.Abs(nd.dt*r-1) > 1e-9 {
		return fmt.Errorf("%w: the model was trained at dt = %g s but convert.resample.rate is %g Hz", ErrModel, nd.dt, r)
	}
	return nil
}

// bind compiles every input topic's extractor.
func (nd *Node) bind(types map[string]TopicType, defs Definitions) error {
	cfg := nd.cfg
	nd.byTopic = map[string]*input{}
	names := nd.sampler.Channels()
	nd.values = make([]float64, len(names))
	for i := range nd.values {
		nd.values[i] = math.NaN()
	}
	for _, tc := range cfg.Topics {
		in := &input{cfg: tc}
		maxAge := tc.MaxAge
		if maxAge == 0 {
			maxAge = cfg.MaxAge
		}
		in.maxAge = nanos(maxAge)
		t, ok := types[tc.Topic]
		if ok {
			if rosmsg.NormalizeType(t.Type) != rosmsg.NormalizeType(tc.Type) {
				return fmt.Errorf("node: topic %s has type %s, but the params say %s", tc.Topic, t.Type, tc.Type)
			}
		} else {
			def, err := defs.Lookup(tc.Type)
			if err != nil {
				return fmt.Errorf("node: topic %s: %w", tc.Topic, err)
			}
			t = TopicType{Type: tc.Type, Definition: def}
		}
		in.typ = t
		var exprs []string
		for i, name := range names {
			if topic, _ := rosmsg.TopicOf(name); topic == tc.Topic {
				exprs = append(exprs, name)
				in.slots = append(in.slots, i)
				in.feeds = in.feeds || nd.sampler.StateChannel(i)
			}
		}
		x, err := rosmsg.CompileExtractor(t.Type, t.schemaEncoding(), []byte(t.Definition), t.encoding(), exprs...)
		if err != nil {
			return fmt.Errorf("node: topic %s (%s): %w", tc.Topic, t.Type, err)
		}
		if in.stampMode, err = stampMode(tc, x.Schema()); err != nil {
			return fmt.Errorf("node: topic %s: %w", tc.Topic, err)
		}
		switch in.stampMode {
		case 1:
			exprs = append(exprs, "header.stamp.sec", "header.stamp.nanosec")
		case 2:
			exprs = append(exprs, "header.stamp.sec", "header.stamp.nsec")
		}
		if in.stampMode != 0 {
			if x, err = rosmsg.CompileExtractor(t.Type, t.schemaEncoding(), []byte(t.Definition), t.encoding(), exprs...); err != nil {
				return fmt.Errorf("node: topic %s (%s): %w", tc.Topic, t.Type, err)
			}
		}
		in.x = x
		in.scratch = make([]float64, len(exprs))
		nd.inputs = append(nd.inputs, in)
		nd.byTopic[tc.Topic] = in
	}
	nd.trigger = nd.byTopic[cfg.Trigger.Topic]
	if cfg.Ports.Forecast == ForecastTopic {
		nd.plan.topic = cfg.Ports.Topic
		nd.plan.maxAge = nanos(cfg.Ports.MaxAge)
	}
	return nil
}

// nanos returns a duration in seconds as whole nanoseconds, rounded (not
// truncated: 0.29 s is 290,000,000 ns).
func nanos(seconds float64) int64 { return int64(math.Round(seconds * 1e9)) }

// stampMode says where an input's stamps come from: 0 the receive time,
// 1 header.stamp.sec and .nanosec (ROS 2), 2 header.stamp.sec and .nsec
// (ROS 1 time).
func stampMode(tc TopicConfig, s *rosmsg.Schema) (int, error) {
	hasHeader := false
	var stamp *rosmsg.Field
	if i := s.Root.FieldIndex("header"); i >= 0 {
		f := &s.Root.Fields[i]
		if f.Msg != nil && rosmsg.NormalizeType(f.Msg.Name) == "std_msgs/Header" && f.Array == rosmsg.NotArray {
			if j := f.Msg.FieldIndex("stamp"); j >= 0 {
				hasHeader, stamp = true, &f.Msg.Fields[j]
			}
		}
	}
	switch tc.Stamp {
	case StampReceive:
		return 0, nil
	case StampHeader:
		if !hasHeader {
			return 0, fmt.Errorf("stamp %q, but %s has no std_msgs/Header field \"header\"", StampHeader, s.Root.Name)
		}
	default:
		if !hasHeader {
			return 0, nil
		}
	}
	if stamp.Msg != nil && stamp.Msg.FieldIndex("sec") >= 0 && stamp.Msg.FieldIndex("nanosec") >= 0 {
		return 1, nil
	}
	return 2, nil
}

// advertise declares the outputs.
func (nd *Node) advertise() error {
	o := nd.cfg.Outputs
	outs := []struct {
		topic string
		m     msgs.Message
	}{
		{o.Prediction, &msgs.PredictedTrajectory{}},
		{o.Diagnostics, &msgs.DiagnosticArray{}},
	}
	if len(nd.sampler.Joints()) > 0 {
		// A robot without joints (a quadrotor) has no joint states.
		outs = append(outs, struct {
			topic string
			m     msgs.Message
		}{o.Joints, &msgs.JointState{}})
	}
	if nd.sampler.Floating() {
		outs = append(outs, struct {
			topic string
			m     msgs.Message
		}{o.Path, &msgs.Path{}})
	}
	for _, out := range outs {
		if out.topic == "-" {
			continue
		}
		if err := nd.pub.Advertise(out.topic, TypeOf(out.m)); err != nil {
			return fmt.Errorf("node: advertise %s: %w", out.topic, err)
		}
	}
	return nil
}

// allocate makes the buffers of one prediction.
func (nd *Node) allocate() {
	n, ne, h := nd.n, nd.ne, nd.h
	nd.x = make([]float64, 2*n)
	nd.e = make([]float64, ne)
	nd.em = make([]float64, nd.nm)
	nd.ports = make([]float64, h*ne)
	nd.out = make([]float64, h*2*n)
	nd.joints = nd.sampler.Joints()
	nd.traj = msgs.PredictedTrajectory{
		Header: msgs.Header{FrameID: nd.cfg.FrameID}, Dt: nd.dt, CoordinateNames: nd.sampler.Coordinates(),
		Horizon: uint32(h), Q: make([]float64, h*n), P: make([]float64, h*n), PortNames: nd.sampler.Ports(),
		Ports: nd.ports, ModelID: nd.modelID, ModelSHA256: nd.sha,
	}
	if !nd.sampler.Floating() {
		nd.traj.Header.FrameID = ""
	}
	nd.js = msgs.JointState{Name: nd.joints, Position: make([]float64, len(nd.joints))}
	nd.nj = len(nd.joints)
	if nd.sampler.Floating() {
		nd.path = msgs.Path{Header: msgs.Header{FrameID: nd.cfg.FrameID}, Poses: make([]msgs.PoseStamped, h+1)}
		for i := range nd.path.Poses {
			nd.path.Poses[i].Header.FrameID = nd.cfg.FrameID
		}
	}
}

// Sampler returns the node's state builder.
func (nd *Node) Sampler() *statemap.Sampler { return nd.sampler }

// State maps the latest input values as the next prediction would start
// from them: it writes the state x = (q, p) (2n values) and the model's
// ports e = (u, f_c) (n_u + n_c values of the sampler's Layout: with a
// port history, its means over the samples observed before), and returns
// the base pose. It fails while some input has no message yet, or on a
// sample the mapping refuses (statemap.Sampler).
func (nd *Node) State(x, e []float64) (mechanics.SE3, error) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	for _, in := range nd.inputs {
		if !in.have {
			return mechanics.IdentitySE3(), fmt.Errorf("node: no message yet on %s", in.cfg.Topic)
		}
	}
	if len(e) < nd.ne {
		return mechanics.IdentitySE3(), fmt.Errorf("node: state: %d port slots, want %d", len(e), nd.ne)
	}
	pose, err := nd.sampler.Sample(nd.values, x, nd.em)
	if err != nil {
		return pose, err
	}
	nd.modelPorts(nd.em, e)
	return pose, nil
}

// InputTypes returns the type of every topic the node subscribes to: the
// inputs and, with ForecastTopic, the port trajectory.
func (nd *Node) InputTypes() map[string]TopicType {
	out := make(map[string]TopicType, len(nd.inputs)+1)
	for _, in := range nd.inputs {
		out[in.cfg.Topic] = in.typ
	}
	if nd.plan.topic != "" {
		out[nd.plan.topic] = TypeOf(&msgs.Float64MultiArray{})
	}
	return out
}

// Dt returns the model's time step in seconds.
func (nd *Node) Dt() float64 { return nd.dt }

// Horizon returns the number of predicted steps.
func (nd *Node) Horizon() int { return nd.h }

// Stats returns the node's counters.
func (nd *Node) Stats() Stats {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	st := nd.stats
	st.Inputs = make(map[string]InputStats, len(nd.inputs))
	for _, in := range nd.inputs {
		c := in.counts
		c.Dropped = in.dropped.Load()
		st.Inputs[in.cfg.Topic] = c
	}
	return st
}

// noteDropped counts a message on topic that Run's queue dropped; it is
// safe to call from any goroutine.
func (nd *Node) noteDropped(topic string) {
	if in := nd.byTopic[topic]; in != nil {
		in.dropped.Add(1)
	} else if topic == nd.plan.topic {
		nd.plan.dropped.Add(1)
	}
}

// Handle processes one input message: it decodes and checks it, keeps its
// values when it passes, and predicts when it is a trigger. Errors are
// the publisher's; a rejected message is not an error but a diagnostic.
func (nd *Node) Handle(m Input) error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	now := nd.now()
	if m.Topic == nd.plan.topic && m.Topic != "" {
		nd.handlePlan(m)
		return nd.maybeDiagnostics(now, false)
	}
	in := nd.byTopic[m.Topic]
	if in == nil {
		nd.stats.Unknown++
		return nil
	}
	accepted := nd.accept(in, m)
	if accepted && in == nd.trigger && nd.cfg.Trigger.Kind == TriggerMessage {
		nd.observe(now)
	}
	if accepted && in == nd.trigger && nd.cfg.Trigger.Kind == TriggerMessage && nd.counted() {
		if err := nd.predict(now, m.Received); err != nil {
			return err
		}
	}
	return nd.maybeDiagnostics(now, false)
}

// accept decodes one message of an input and keeps its values.
func (nd *Node) accept(in *input, m Input) bool {
	in.counts.Received++
	err := in.x.Extract(m.Data, in.scratch)
	if err != nil {
		var xerr *rosmsg.ExtractError
		switch {
		case errors.As(err, &xerr) && (errors.Is(err, rosmsg.ErrNoMatch) || errors.Is(err, rosmsg.ErrIndexRange)):
			in.counts.RejectedMismatch++
			in.setReject(msgs.DiagnosticError, "", fmt.Sprintf("rejected a message: %s does not match it (%v); check joint names and array sizes against the params", xerr.Path, xerr.Err))
		default:
			in.counts.RejectedDecode++
			in.setReject(msgs.DiagnosticError, "", fmt.Sprintf("rejected a message that does not decode as %s: %v", in.typ.Type, err))
		}
		return false
	}
	stamp := m.Received
	k := len(in.slots)
	if in.stampMode != 0 {
		// sec and nanosec (nsec) as integers: exact, where the seconds as
		// one float64 would be off by up to 119 ns in 2012 (ROS 1 stamps
		// once were).
		stamp = int64(in.scratch[k])*1e9 + int64(in.scratch[k+1])
	}
	if in.have && stamp < in.last {
		in.counts.OutOfOrder++
		in.setReject(msgs.DiagnosticWarn, "order", fmt.Sprintf("dropped a message stamped %.6f s before the newest one", float64(in.last-stamp)/1e9))
		return false
	}
	if in.have && stamp == in.last {
		in.counts.Duplicates++
		return false
	}
	for i, v := range in.scratch[:k] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			in.counts.RejectedNaN++
			f := nd.sampler.Fields(in.slots[i])
			in.setReject(msgs.DiagnosticError, "", fmt.Sprintf("rejected a message with %g in %s (%s)", v, nd.sampler.Channels()[in.slots[i]], strings.Join(f, ", ")))
			return false
		}
	}
	for i, slot := range in.slots {
		nd.values[slot] = in.scratch[i]
	}
	in.last, in.have = stamp, true
	in.counts.Accepted++
	in.rejectMsg, in.rejectKey, in.rejectLvl = "", "", 0
	return true
}

// setReject records why the last message was rejected: its level, its
// kind for the diagnostics' change key (a rejection of the same kind is
// no change of status; "" makes the message itself the kind) and the
// message.
func (in *input) setReject(level uint8, kind, msg string) {
	if kind == "" {
		kind = msg
	}
	in.rejectMsg, in.rejectKey, in.rejectLvl = msg, kind, level
}

// handlePlan takes a port trajectory: std_msgs/Float64MultiArray with
// steps × measured ports values, row-major (the port history's means are
// the node's to build).
func (nd *Node) handlePlan(m Input) {
	nd.plan.received++
	var a msgs.Float64MultiArray
	fail := func(msg string) {
		nd.plan.rejected++
		nd.plan.reject = msg
	}
	if err := msgs.Unmarshal(m.Data, &a); err != nil {
		fail(fmt.Sprintf("rejected a port trajectory that does not decode: %v", err))
		return
	}
	if nd.nm == 0 || len(a.Data) == 0 || len(a.Data)%nd.nm != 0 {
		fail(fmt.Sprintf("rejected a port trajectory of %d values: want a positive multiple of the %d measured ports", len(a.Data), nd.nm))
		return
	}
	if d := a.Layout.Dim; len(d) >= 2 && (int(d[1].Size) != nd.nm || int(d[0].Size)*nd.nm != len(a.Data)) {
		fail(fmt.Sprintf("rejected a port trajectory laid out %d×%d: want steps × %d measured ports", d[0].Size, d[1].Size, nd.nm))
		return
	}
	for _, v := range a.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			fail("rejected a port trajectory with a NaN or infinite value")
			return
		}
	}
	nd.plan.data = append(nd.plan.data[:0], a.Data...)
	nd.plan.rows = len(a.Data) / nd.nm
	nd.plan.stamp, nd.plan.have = m.Received, true
	nd.plan.reject = ""
}

// Tick lets time pass: it predicts when a timer trigger is due and
// publishes the periodic diagnostics. Run calls it on its timer; a replay
// calls it before each message with the message's time on the node's
// clock already advanced.
func (nd *Node) Tick() error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	now := nd.now()
	if nd.cfg.Trigger.Kind == TriggerTimer {
		period := int64(1e9 / nd.cfg.Trigger.Rate)
		if nd.nextTick == math.MinInt64 {
			nd.nextTick = now
		}
		if now >= nd.nextTick {
			// Missed ticks are not made up: one prediction from the latest inputs.
			nd.nextTick += period * ((now-nd.nextTick)/period + 1)
			nd.observe(now)
			if nd.counted() {
				if err := nd.predict(now, now); err != nil {
					return err
				}
			}
		}
	}
	return nd.maybeDiagnostics(now, false)
}

// counted counts a trigger and reports whether it is one that predicts:
// every Trigger.Every-th, from the first.
func (nd *Node) counted() bool {
	nd.triggers++
	return (nd.triggers-1)%uint64(max(nd.cfg.Trigger.Every, 1)) == 0
}

// NextTick returns when Tick next has something to do, on the node's
// clock: the next timer trigger or periodic diagnostics.
func (nd *Node) NextTick() int64 {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	next := nd.nextDiag
	if nd.cfg.Trigger.Kind == TriggerTimer && nd.nextTick != math.MinInt64 && nd.nextTick < next {
		next = nd.nextTick
	}
	return next
}

// stale returns why the inputs cannot be used at time now ("" when they
// can), with the level of the diagnostic: a warning for an input missing
// or older than its max_age, an error for one stamped after now (a
// negative age: the stamps do not follow the node's clock).
func (nd *Node) stale(now int64) (string, uint8) {
	for _, in := range nd.inputs {
		if !in.have {
			return "no message yet on " + in.cfg.Topic, msgs.DiagnosticWarn
		}
		if age := now - in.last; age < 0 {
			return futureMessage(in.cfg.Topic, -age), msgs.DiagnosticError
		} else if age > in.maxAge {
			return fmt.Sprintf("%s is %.3f s old (max_age %.3f s)", in.cfg.Topic, float64(age)/1e9, float64(in.maxAge)/1e9), msgs.DiagnosticWarn
		}
	}
	return "", msgs.DiagnosticOK
}

// futureMessage says that an input is stamped ahead of the node's clock.
func futureMessage(topic string, ahead int64) string {
	return fmt.Sprintf("%s is stamped %.6f s after the node's clock (a negative age: its stamps do not follow this clock)", topic, float64(ahead)/1e9)
}

// predict makes and publishes one prediction from the latest inputs, or
// records why it cannot.
func (nd *Node) predict(now, received int64) error {
	if why, level := nd.stale(now); why != "" {
		nd.suppress(level, "stale", "no prediction: "+why)
		return nil
	}
	pose, err := nd.sampler.Sample(nd.values, nd.x, nd.em)
	if err != nil {
		nd.suppress(msgs.DiagnosticError, "sample", "no prediction: "+err.Error())
		return nil
	}
	nd.modelPorts(nd.em, nd.e)
	nd.forecast(now)
	if err := nd.stepper.Rollout(nd.x, nd.ports, nd.h, nd.out); err != nil {
		nd.suppress(msgs.DiagnosticError, "rollout", "no prediction: "+err.Error())
		return nil
	}
	stamp := nd.trigger.last // the prediction's publication time
	start := nd.stateStamp()
	n := nd.n
	for k := range nd.h {
		copy(nd.traj.Q[k*n:(k+1)*n], nd.out[k*2*n:k*2*n+n])
		copy(nd.traj.P[k*n:(k+1)*n], nd.out[k*2*n+n:(k+1)*2*n])
	}
	nd.traj.Header.Stamp = msgs.TimeFromNanos(start)
	nd.traj.InferenceLatencyS = float64(nd.now()-received) / 1e9
	o := nd.cfg.Outputs
	if o.Prediction != "-" {
		nd.buf = nd.enc.Append(nd.buf[:0], &nd.traj)
		if err := nd.pub.Publish(o.Prediction, stamp, nd.buf); err != nil {
			return fmt.Errorf("node: publish %s: %w", o.Prediction, err)
		}
	}
	stepNs := nanos(nd.dt)
	if o.Joints != "-" && nd.nj > 0 {
		k := nd.cfg.PreviewStep - 1
		copy(nd.js.Position, nd.traj.Q[k*n+n-nd.nj:(k+1)*n])
		t := start + int64(k+1)*stepNs
		nd.js.Header.Stamp = msgs.TimeFromNanos(t)
		nd.buf = nd.enc.Append(nd.buf[:0], &nd.js)
		if err := nd.pub.Publish(o.Joints, stamp, nd.buf); err != nil {
			return fmt.Errorf("node: publish %s: %w", o.Joints, err)
		}
	}
	if o.Path != "-" && nd.sampler.Floating() {
		nd.path.Header.Stamp = msgs.TimeFromNanos(start)
		setPose(&nd.path.Poses[0], pose, start)
		for k := range nd.h {
			setPose(&nd.path.Poses[k+1], nd.sampler.BasePose(pose, nd.traj.Q[k*n:k*n+6]), start+int64(k+1)*stepNs)
		}
		nd.buf = nd.enc.Append(nd.buf[:0], &nd.path)
		if err := nd.pub.Publish(o.Path, stamp, nd.buf); err != nil {
			return fmt.Errorf("node: publish %s: %w", o.Path, err)
		}
	}
	if err := nd.publishView(stamp, pose); err != nil {
		return err
	}
	nd.stats.Predictions++
	lat := nd.now() - received
	nd.stats.LastLatency = lat
	nd.latency[nd.nlat%len(nd.latency)] = lat
	nd.nlat++
	nd.predStatus, nd.predLevel, nd.predState = "", msgs.DiagnosticOK, ""
	return nil
}

// stateStamp returns the stamp of the state a prediction starts from: the
// newest stamp of the inputs that carry state channels (joints, base), or
// the trigger's when none does. The trigger may be another topic (the
// pendulum's torque commands, stamped on receipt), whose stamp is not the
// state's.
func (nd *Node) stateStamp() int64 {
	t, found := int64(math.MinInt64), false
	for _, in := range nd.inputs {
		if in.feeds && in.have && in.last > t {
			t, found = in.last, true
		}
	}
	if !found {
		return nd.trigger.last
	}
	return t
}

func setPose(ps *msgs.PoseStamped, T mechanics.SE3, stamp int64) {
	ps.Header.Stamp = msgs.TimeFromNanos(stamp)
	ps.Pose.Position = msgs.Point{X: T.P[0], Y: T.P[1], Z: T.P[2]}
	q := mechanics.QuatFromRotation(T.R)
	ps.Pose.Orientation = msgs.Quaternion{X: q.X, Y: q.Y, Z: q.Z, W: q.W}
}

func (nd *Node) suppress(level uint8, state, msg string) {
	nd.stats.Suppressed++
	nd.predStatus, nd.predLevel, nd.predState = msg, level, state
}

// forecast fills the ports of every step: the measured ports of the
// planner's trajectory or the latest held and, with a port history, the
// means of each step over the observed samples and the forecast steps
// before it.
func (nd *Node) forecast(now int64) {
	ne, nm := nd.ne, nd.nm
	if ne == 0 {
		return
	}
	usePlan := nd.plan.topic != "" && nd.plan.have && now-nd.plan.stamp <= nd.plan.maxAge
	if nd.plan.topic != "" && !usePlan {
		nd.stats.ForecastFallbacks++
	}
	h := nd.hist
	if h != nil {
		h.fc.CopyFrom(h.past)
	}
	for k := range nd.h {
		meas := nd.em
		if usePlan {
			r := min(k, nd.plan.rows-1)
			meas = nd.plan.data[r*nm : (r+1)*nm]
		}
		row := nd.ports[k*ne : (k+1)*ne]
		if h == nil {
			copy(row, meas)
			continue
		}
		h.fc.Ports(meas, row)
		h.fc.Push(meas)
	}
}

// DiagnosticsBurst bounds the diagnostics a node publishes in any
// diagnostics period: a change of status is published at once unless
// DiagnosticsBurst diagnostics went out in the last period, and then as
// soon as the oldest of them is a period old, so that a status that
// changes with every message (a log played again from its start, every
// message out of order) does not flood the topic.
const DiagnosticsBurst = 10

// maybeDiagnostics publishes the diagnostics when they are due or their
// status changed (at most DiagnosticsBurst in any period).
func (nd *Node) maybeDiagnostics(now int64, force bool) error {
	nd.key = nd.statusKey(nd.key[:0], now)
	key := nd.key
	period := nanos(nd.cfg.DiagnosticsPeriod)
	oldest := nd.pubTimes[nd.npub%DiagnosticsBurst] // of the last DiagnosticsBurst publications
	if !force && now < nd.nextDiag {
		if bytes.Equal(key, nd.lastDiag) {
			return nil
		}
		if nd.npub >= DiagnosticsBurst && now < oldest+period {
			nd.nextDiag = min(nd.nextDiag, oldest+period)
			return nil
		}
	}
	if nd.nextDiag == math.MinInt64 || now >= nd.nextDiag {
		nd.nextDiag = now + period
	}
	nd.lastDiag = append(nd.lastDiag[:0], key...)
	nd.pubTimes[nd.npub%DiagnosticsBurst] = now
	nd.npub++
	return nd.publishDiagnostics(now)
}

// inputState returns the level, change key and message of an input's
// status at time now.
func (in *input) state(now int64) (uint8, string, string) {
	switch {
	case in.rejectMsg != "":
		return in.rejectLvl, "rejected:" + in.rejectKey, in.rejectMsg
	case !in.have:
		return msgs.DiagnosticStale, "missing", "no message yet"
	case now < in.last:
		return msgs.DiagnosticError, "future", "stamped " + strconv.FormatFloat(float64(in.last-now)/1e9, 'f', 6, 64) + " s after the node's clock (a negative age: its stamps do not follow this clock)"
	case now-in.last > in.maxAge:
		return msgs.DiagnosticStale, "stale", fmt.Sprintf("stale: %.3f s old (max_age %.3f s)", float64(now-in.last)/1e9, float64(in.maxAge)/1e9)
	}
	return msgs.DiagnosticOK, "ok", "ok"
}

// statusKey summarises the status levels and kinds, so that a change is
// published at once; it appends the key to dst.
func (nd *Node) statusKey(dst []byte, now int64) []byte {
	dst = append(dst, nd.predState...)
	for _, in := range nd.inputs {
		_, k, _ := in.state(now)
		dst = append(append(dst, '|'), k...)
	}
	return append(append(dst, '|'), nd.plan.reject...)
}

// Diagnostic status names.
const (
	// StatusPrediction names the prediction's DiagnosticStatus.
	StatusPrediction = "calisym: prediction"
	// StatusInputPrefix starts the name of each input's DiagnosticStatus,
	// followed by the topic.
	StatusInputPrefix = "calisym: input "
	// StatusPortForecast names the port forecast's DiagnosticStatus.
	StatusPortForecast = "calisym: port forecast"
)

// publishDiagnostics publishes one DiagnosticArray.
func (nd *Node) publishDiagnostics(now int64) error {
	topic := nd.cfg.Outputs.Diagnostics
	if topic == "-" {
		return nil
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	p50, p99 := nd.latencyPercentiles()
	pred := msgs.DiagnosticStatus{Name: StatusPrediction, HardwareID: nd.params.Robot, Level: nd.predLevel, Message: nd.predStatus,
		Values: []msgs.KeyValue{
			{Key: "predictions", Value: u(nd.stats.Predictions)},
			{Key: "suppressed", Value: u(nd.stats.Suppressed)},
			{Key: "latency_last_ms", Value: f(float64(nd.stats.LastLatency) / 1e6)},
			{Key: "latency_p50_ms", Value: f(p50 / 1e6)},
			{Key: "latency_p99_ms", Value: f(p99 / 1e6)},
			{Key: "horizon", Value: strconv.Itoa(nd.h)},
			{Key: "dt_s", Value: f(nd.dt)},
			{Key: "model_id", Value: nd.modelID},
			{Key: "model_sha256", Value: nd.sha},
		}}
	if h := nd.hist; h != nil {
		pred.Values = append(pred.Values,
			msgs.KeyValue{Key: "port_history_samples", Value: strconv.Itoa(h.past.Held())},
			msgs.KeyValue{Key: "port_history_restarts", Value: u(nd.stats.HistoryRestarts)})
	}
	if nd.force != nil {
		pred.Values = append(pred.Values,
			msgs.KeyValue{Key: "force_estimate_residuals", Value: strconv.Itoa(nd.force.est.Residuals())},
			msgs.KeyValue{Key: "force_estimate_N", Value: f(nd.forceNewtons())},
			msgs.KeyValue{Key: "force_estimate_restarts", Value: u(nd.stats.ForceRestarts)})
	}
	if pred.Message == "" {
		pred.Message = "predicting"
		if nd.stats.Predictions == 0 {
			pred.Message = "waiting for inputs"
		}
	}
	arr := msgs.DiagnosticArray{Header: msgs.Header{Stamp: msgs.TimeFromNanos(now)}, Status: []msgs.DiagnosticStatus{pred}}
	for _, in := range nd.inputs {
		level, _, msg := in.state(now)
		age := "inf"
		if in.have {
			age = f(float64(now-in.last) / 1e9)
		}
		c := in.counts
		arr.Status = append(arr.Status, msgs.DiagnosticStatus{Name: StatusInputPrefix + in.cfg.Topic, HardwareID: nd.params.Robot, Level: level, Message: msg,
			Values: []msgs.KeyValue{
				{Key: "type", Value: in.typ.Type},
				{Key: "age_s", Value: age},
				{Key: "max_age_s", Value: f(float64(in.maxAge) / 1e9)},
				{Key: "received", Value: u(c.Received)},
				{Key: "accepted", Value: u(c.Accepted)},
				{Key: "rejected_nan", Value: u(c.RejectedNaN)},
				{Key: "rejected_mismatch", Value: u(c.RejectedMismatch)},
				{Key: "rejected_decode", Value: u(c.RejectedDecode)},
				{Key: "out_of_order", Value: u(c.OutOfOrder)},
				{Key: "duplicates", Value: u(c.Duplicates)},
				{Key: "dropped", Value: u(in.dropped.Load())},
			}})
	}
	if nd.plan.topic != "" {
		st := msgs.DiagnosticStatus{Name: StatusPortForecast, HardwareID: nd.params.Robot, Level: msgs.DiagnosticOK, Message: "following " + nd.plan.topic}
		age := "inf"
		switch {
		case nd.plan.reject != "":
			st.Level, st.Message = msgs.DiagnosticError, nd.plan.reject
		case !nd.plan.have:
			st.Level, st.Message = msgs.DiagnosticWarn, "no port trajectory yet: holding the latest ports"
		case now-nd.plan.stamp > nd.plan.maxAge:
			st.Level, st.Message = msgs.DiagnosticWarn, "port trajectory stale: holding the latest ports"
		}
		if nd.plan.have {
			age = f(float64(now-nd.plan.stamp) / 1e9)
		}
		st.Values = []msgs.KeyValue{{Key: "age_s", Value: age}, {Key: "received", Value: u(nd.plan.received)},
			{Key: "rejected", Value: u(nd.plan.rejected)}, {Key: "dropped", Value: u(nd.plan.dropped.Load())},
			{Key: "fallbacks", Value: u(nd.stats.ForecastFallbacks)}, {Key: "steps", Value: strconv.Itoa(nd.plan.rows)}}
		arr.Status = append(arr.Status, st)
	}
	nd.stats.Diagnostics++
	if err := nd.pub.Publish(topic, now, msgs.Marshal(&arr)); err != nil {
		return fmt.Errorf("node: publish %s: %w", topic, err)
	}
	return nil
}

// latencyPercentiles returns the median and 99th percentile of the
// latencies of the last predictions [ns].
func (nd *Node) latencyPercentiles() (p50, p99 float64) {
	n := min(nd.nlat, len(nd.latency))
	if n == 0 {
		return 0, 0
	}
	l := slices.Clone(nd.latency[:n])
	slices.Sort(l)
	return float64(l[(n-1)/2]), float64(l[min(n-1, int(math.Ceil(0.99*float64(n)))-1)])
}
