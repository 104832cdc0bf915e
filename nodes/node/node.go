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
//   - Trigger: every message on the trigger topic, a timer, or the
//     arrival of the state (each state message, or at most Rate of them
//     a second).
package node

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/calisym/calisym/forecast"
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
	// ModelPath is the model file's path: the learned port forecast's
	// file defaults to MODEL.forecaster.json beside it.
	ModelPath string
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
	// PairWaits counts the triggers that waited for the state published
	// before them (a message trigger on an input without state channels
	// handled before that state: see Node.Handle).
	PairWaits uint64
	// Unpaired counts the waits that ended without that state (lost, or
	// later than half a state period), predicting from the newest state.
	Unpaired uint64
	// Coalesced counts trigger messages taken without a prediction because
	// a newer one of the same topic was already queued (Run: the
	// prediction before came late); the newest predicts.
	Coalesced uint64
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
	prior   mechanics.Prior   // a composed model's physics prior (nil: none)
	model   predictor.Stepper // roller, or prior then roller at every step
	stepper predictor.Stepper // model, or force the offset-free wrapper of it
	force   *forceState
	hist    *portHistory   // the mapping's port history (convert.history)
	loop    *forecast.Loop // the learned port forecast in the loop (nil: none)
	obs     observation    // the input history of hist and force
	n, ne   int            // n, and the model's ports n_u + n_c
	nm      int            // the measured ports (ne less the port history's)
	nj      int
	dt      float64
	h       int
	modelID string
	sha     string
	// modelWarning is a caution about the model (CheckPortMap), also in
	// the diagnostics.
	modelWarning string

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
	nextDiag   int64                   // when the periodic diagnostics are due
	changeDue  int64                   // when a change of status is due (MaxInt64: none)
	nextTick   int64
	triggers   uint64 // triggers counted (Trigger.Every)
	onState    struct {
		last int64 // state stamp of the last prediction (TriggerOnState's rate)
		have bool
	}
	latency [1024]int64
	pair    pairing   // a trigger waiting for its state (input.go)
	view    viewState // the robot's frames for 3D viewers (tf.go)
	nlat    int
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
	nd.model = nd.roller
	if nd.prior != nil {
		// x̂_{k+1} = roller(Φ₀(x̂_k, e_k), e_k), as trainer.ComposedRollers
		if nd.model, err = mechanics.NewComposedStepper(nd.prior, nd.roller, nd.ne); err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
	}
	nd.stepper = nd.model
	if err := nd.newHistory(p.Spec, cfg); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if err := nd.newForecast(o.ModelSHA256, o.ModelPath); err != nil {
		return nil, err
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
	nd.nextDiag, nd.changeDue = math.MinInt64, math.MaxInt64
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
	if tol := nd.cfg.HistoryTolerance; tol >= nd.dt/2 {
		return configError("history_tolerance", "must be below dt/2 = %g s (0: automatic), got %g", nd.dt/2, tol)
	}
	w, err := CheckPortMap(nd.params.Spec, m)
	if err != nil {
		return err
	}
	nd.modelWarning = w
	return nd.checkPrior(m)
}

// CheckPortMap compares how the model's training data computed its ports
// from the logged channels (its provenance statemap.PortMapKey) with how
// the params' mapping computes them (statemap.Spec.PortMap): ports named
// alike but computed otherwise (another thrust map, a battery voltage
// added, another channel scale) would feed the model miscalibrated
// values. A mismatch is an error wrapping ErrModel that names what
// differs and how to fix it. A model that records no port map (a file
// written before calisym recorded it, or trained on a dataset without
// it) is accepted: the returned warning says that it could not be
// checked.
func CheckPortMap(spec *statemap.Spec, m *predictor.Model) (warning string, err error) {
	trained, ok := m.Meta.Provenance[statemap.PortMapKey]
	if !ok || trained == "" {
		return PortMapWarning, nil
	}
	if err := statemap.CheckPortMap(trained, spec.PortMap()); err != nil {
		return "", fmt.Errorf("%w: provenance %s: %w", ErrModel, statemap.PortMapKey, err)
	}
	return "", nil
}

// PortMapWarning is the warning of a model that records no port map
// (CheckPortMap), in the start-up log and the diagnostics (key
// "model_warning").
const PortMapWarning = "the model records no port map (provenance " + statemap.PortMapKey +
	": written before calisym recorded how the ports were computed, or trained on a dataset that does not record it), so the node cannot check that the params compute its ports as its training data did; if the port mapping changed since (a thrust map, a channel's unit or scale), its predictions are off: retrain to record it"

// ModelWarning returns the caution about the model found when the node
// was built (PortMapWarning), or "".
func (nd *Node) ModelWarning() string { return nd.modelWarning }

// checkPrior builds the physics prior a composed model's file records
// (provenance mechanics.PriorProvenanceKey, trainer.Composed), if any, and
// checks it against the model and the mapping: a double pendulum's state
// (n = 2: q1, q2, p1, p2) with the torques as the first two ports, and a
// step of one sampling period of convert.resample.rate.
func (nd *Node) checkPrior(m *predictor.Model) error {
	raw, ok := m.Meta.Provenance[mechanics.PriorProvenanceKey]
	if !ok {
		return nil
	}
	ps, err := mechanics.ParsePriorSpec([]byte(raw))
	if err != nil {
		return fmt.Errorf("%w: provenance %s: %w", ErrModel, mechanics.PriorProvenanceKey, err)
	}
	if err := ps.Fits(m.Layout.StateDim(), m.Layout.PortDim()); err != nil {
		return fmt.Errorf("%w: the model's physics prior (provenance %s) and the mapping: %w", ErrModel, mechanics.PriorProvenanceKey, err)
	}
	if ps.Kind == mechanics.PriorQuadrotorRK4 && nd.params.Spec.State.Kind != statemap.StateFloatingBaseGravity {
		return fmt.Errorf("%w: the model's physics prior (provenance %s, kind %s) steps the gravity-aware floating base, but the params' state.kind is %q (want %q)", ErrModel, mechanics.PriorProvenanceKey, ps.Kind, nd.params.Spec.State.Kind, statemap.StateFloatingBaseGravity)
	}
	if r := nd.params.Rate; math.Abs(ps.Dt*r-1) > 1e-9 {
		return fmt.Errorf("%w: the model's physics prior (provenance %s, kind %s) steps dt = %g s, but convert.resample.rate is %g Hz (dt = %g s)", ErrModel, mechanics.PriorProvenanceKey, ps.Kind, ps.Dt, r, 1/r)
	}
	if nd.prior, err = ps.New(); err != nil {
		return fmt.Errorf("%w: provenance %s: %w", ErrModel, mechanics.PriorProvenanceKey, err)
	}
	return nil
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
