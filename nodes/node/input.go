package node

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// The node's input bookkeeping: binding each input topic to its type and
// message paths, accepting or rejecting each message (validation, order,
// stamps), the planner's port trajectory, and the inputs' staleness.

// input is one input topic.
type input struct {
	cfg       TopicConfig
	typ       TopicType
	x         *rosmsg.Extractor
	slots     []int // sampler slot of each extractor path before the stamp paths
	stampMode int   // 0 receive, 1 sec+nanosec paths, 2 sec+nsec paths (ROS 1)
	scratch   []float64
	maxAge    int64   // ns: the configured max_age
	periods   float64 // Config.StalePeriods
	period    int64   // ns: the measured period, the median interval between accepted stamps (0: unknown)
	intervals [16]int64
	nint      int
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
	// Lost counts messages that never reached the node (lost by the
	// transport, a best-effort subscription's queue, the network), from
	// the gaps between accepted header stamps against the measured period
	// (see input.lost); an input stamped on receipt counts none.
	Lost uint64
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
		in := &input{cfg: tc, periods: cfg.StalePeriods}
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
	if cfg.Trigger.Kind == TriggerOnState {
		for _, in := range nd.inputs {
			if in.feeds {
				nd.trigger = in
				break
			}
		}
		if nd.trigger == nil {
			return configError("trigger.kind", "%q needs an input that carries state channels; none of %s does", TriggerOnState, strings.Join(cfg.topicNames(), ", "))
		}
	}
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
// values when it passes, and predicts when it is a trigger (a message
// trigger without state channels that came before the state published
// before it waits for that state: see pairing). Errors are
// the publisher's; a rejected message is not an error but a diagnostic,
// which a Tick publishes once it has held (DiagnosticsSettle).
func (nd *Node) Handle(m Input) error { return nd.handle(m, false) }

// handle is Handle; superseded says that a newer message of the same
// topic waits in Run's queue, so that this one, if a trigger, is taken
// without predicting: the prediction starts from the newest (Stats.
// Coalesced).
func (nd *Node) handle(m Input, superseded bool) error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	now := nd.now()
	if err := nd.publishLatched(now); err != nil {
		return err
	}
	if m.Topic == nd.plan.topic && m.Topic != "" {
		nd.handlePlan(m)
		nd.noteStatus(now)
		return nil
	}
	in := nd.byTopic[m.Topic]
	if in == nil {
		nd.stats.Unknown++
		return nil
	}
	if nd.pair.pending && in == nd.trigger {
		// The next trigger came before the state the last one waits for.
		if err := nd.endPair(now); err != nil {
			return err
		}
	}
	accepted := nd.accept(in, m)
	if accepted && in.feeds {
		if err := nd.publishMeasured(); err != nil {
			return err
		}
		if nd.pair.pending && !nd.stateDue(nd.pair.stamp) {
			if err := nd.endPair(now); err != nil {
				return err
			}
		}
	}
	if accepted && superseded && nd.isTrigger(in) {
		if nd.observes(in) {
			nd.observe()
		}
		nd.stats.Coalesced++
		nd.noteStatus(now)
		return nil
	}
	if accepted && nd.waits(in) {
		nd.pair = pairing{pending: true, stamp: in.last, received: m.Received,
			deadline: now + nd.statePeriod()/2, predict: nd.counted()}
		nd.stats.PairWaits++
		nd.noteStatus(now)
		return nil
	}
	if accepted && nd.observes(in) {
		nd.observe()
	}
	if accepted && nd.isTrigger(in) && nd.counted() {
		if err := nd.predict(now, m.Received); err != nil {
			return err
		}
	}
	nd.noteStatus(now)
	return nil
}

// pairing is a message trigger waiting for the state published before
// it. A trigger on an input that carries no state channels (the
// pendulum's torque commands, which a controller publishes right after
// reading the state) pairs with the state stamped before it; a transport
// that delivers each topic from its own thread (rclgo's wait set per
// subscription) may hand the node the command before that state. When
// the newest message of an input that carries state channels is three
// quarters of its measured period or more older than the trigger's stamp
// (a period, less the jitter of a publisher whose states come early), the
// next one (stamped before the trigger) is due: the trigger's observation and
// prediction wait for it, up to half a state period on the node's clock
// (Tick ends the wait), and then start from the newest state, counted in
// Stats.Unpaired when it did not come. A trigger handled after its state
// predicts at once, as before.
type pairing struct {
	pending  bool
	predict  bool  // the waiting trigger predicts (Trigger.Every counted it)
	stamp    int64 // the trigger's stamp
	received int64 // its arrival, for the prediction's latency
	deadline int64 // when the wait ends without the state
}

// waits reports whether an accepted message of in is a trigger that must
// wait for its state (pairing).
func (nd *Node) waits(in *input) bool {
	return nd.cfg.Trigger.Kind == TriggerMessage && in == nd.trigger && !in.feeds && nd.stateDue(in.last)
}

// stateDue reports whether an input that carries state channels has a
// message due at or before stamp t that the node has not handled: its
// newest stamp is three quarters of its measured period or more before t.
func (nd *Node) stateDue(t int64) bool {
	for _, in := range nd.inputs {
		if in.feeds && in.have && in.period > 0 && t-in.last >= in.period-in.period/4 {
			return true
		}
	}
	return false
}

// endPair ends a trigger's wait for its state: it observes the state
// sample and predicts, from the newest state.
func (nd *Node) endPair(now int64) error {
	p := nd.pair
	nd.pair = pairing{}
	if nd.stateDue(p.stamp) {
		nd.stats.Unpaired++
	}
	if nd.observes(nd.trigger) {
		nd.observe()
	}
	if p.predict {
		return nd.predict(now, p.received)
	}
	return nil
}

// pairTimeout ends a trigger's wait for its state once its deadline has
// passed (Tick).
func (nd *Node) pairTimeout(now int64) error {
	if !nd.pair.pending || now < nd.pair.deadline {
		return nil
	}
	return nd.endPair(now)
}

// pairDue returns when a waiting trigger's wait ends (math.MaxInt64: none
// waits).
func (nd *Node) pairDue() int64 {
	if !nd.pair.pending {
		return math.MaxInt64
	}
	return nd.pair.deadline
}

// observes reports whether an accepted message of in is when the input
// history observes the state: the trigger message with a message trigger,
// else each message of an input that carries state channels.
func (nd *Node) observes(in *input) bool {
	if nd.cfg.Trigger.Kind == TriggerMessage {
		return in == nd.trigger
	}
	return in.feeds
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
	if in.have {
		in.counts.Lost += in.lost(stamp - in.last)
		in.measure(stamp - in.last)
	}
	in.last, in.have = stamp, true
	in.counts.Accepted++
	in.rejectMsg, in.rejectKey, in.rejectLvl = "", "", 0
	return true
}

// measure records the interval d [ns] between two accepted stamps and
// updates the input's measured period: the median of the last
// len(intervals) intervals, so that late and lost messages (an interval
// of two periods, or one message out of order) do not move it.
func (in *input) measure(d int64) {
	if d <= 0 {
		return
	}
	in.intervals[in.nint%len(in.intervals)] = d
	in.nint++
	k := min(in.nint, len(in.intervals))
	sorted := in.intervals // a copy: the array is a value
	slices.Sort(sorted[:k])
	in.period = sorted[(k-1)/2]
}

// lost returns how many messages a gap of d [ns] between two accepted
// header stamps lost, against the measured period T: the whole periods
// the gap holds beyond one, round(d/T) − 1 (1.6 T: one lost, the rest
// jitter). 0 while the period is unknown; messages out of order and
// duplicates are not gaps. An input stamped on receipt counts none: its
// stamps say when the transport handed the messages over, and a stalled
// subscription that hands over several at once (microseconds apart, which
// also shrinks the measured period) looks like a loss as much as a loss
// does (the ROS 2 test of issue 47 counted thousands where none was lost).
func (in *input) lost(d int64) uint64 {
	T := in.period
	if in.stampMode == 0 || T <= 0 || d < 2*T-T/2 {
		return 0
	}
	k := (d + T/2) / T
	if k <= 1 {
		return 0
	}
	return uint64(k - 1)
}

// staleAfter returns the age [ns] beyond which the input is stale: its
// max_age, or stale_periods of its measured period where that is longer.
func (in *input) staleAfter() int64 {
	return max(in.maxAge, int64(in.periods*float64(in.period)))
}

// rateHz returns the input's measured rate, 0 while unknown.
func (in *input) rateHz() float64 {
	if in.period <= 0 {
		return 0
	}
	return 1e9 / float64(in.period)
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
		} else if lim := in.staleAfter(); age > lim {
			return fmt.Sprintf("%s is %.3f s old (stale after %.3f s: %s)", in.cfg.Topic, float64(age)/1e9, float64(lim)/1e9, in.staleRule()), msgs.DiagnosticWarn
		}
	}
	return "", msgs.DiagnosticOK
}

// futureMessage says that an input is stamped ahead of the node's clock.
func futureMessage(topic string, ahead int64) string {
	return fmt.Sprintf("%s is stamped %.6f s after the node's clock (a negative age: its stamps do not follow this clock)", topic, float64(ahead)/1e9)
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
	case now-in.last > in.staleAfter():
		return msgs.DiagnosticStale, "stale", fmt.Sprintf("stale: %.3f s old (stale after %.3f s: %s)", float64(now-in.last)/1e9, float64(in.staleAfter())/1e9, in.staleRule())
	}
	return msgs.DiagnosticOK, "ok", "ok"
}

// staleRule says where the input's stale limit comes from.
func (in *input) staleRule() string {
	if lim := in.staleAfter(); lim > in.maxAge {
		return fmt.Sprintf("stale_periods %g of its measured %.4g Hz", in.periods, in.rateHz())
	}
	return fmt.Sprintf("max_age %.3f s", float64(in.maxAge)/1e9)
}
