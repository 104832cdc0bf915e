// Package replay drives the predictor node (package nodes/node) from a
// recorded log: every message of the node's input topics is handed to the
// node at its log time, on a clock that is the log time, so the
// predictions, diagnostics and their order depend on the log alone. A
// message counts as received at its log time: the node's timers (a timer
// trigger, the periodic diagnostics) due at that time run after every
// message of that time, so a timer prediction at t starts from the inputs
// logged at t, as a message-triggered one does. The inputs and every
// output are written to a ROS 2 MCAP file (rosbag2's conventions,
// bagtools/logio.ROS2Writer) and, optionally, to a live publisher such as
// the Foxglove WebSocket server, paced in real time.
//
// Logs are read as bagtools/convert reads them: a log cut short (a chunk
// cut off, a recorder killed before it wrote its summary) is replayed or
// played up to the damage, and the caller is told what was kept
// (Result.Truncated, Play's error); a log that does not list its topics up
// front has them learned as it is read.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

// Options configures Run.
type Options struct {
	// Params are the params file's convert and node sections.
	Params *node.Params
	// Model is the predictor.
	Model *predictor.Model
	// ModelID and ModelSHA256 identify the model in predictions.
	ModelID, ModelSHA256 string
	// ModelPath is the model file's path (node.Options.ModelPath).
	ModelPath string
	// DataRoot resolves the spec's parameter files and URDFs (default: the
	// params file's directory).
	DataRoot string
	// Out receives the inputs and the outputs; nil writes no file.
	Out *logio.ROS2Writer
	// Live receives the inputs and outputs too (a Foxglove server); nil
	// for none.
	Live node.Publisher
	// Speed paces the replay: 0 as fast as possible, 1 in real time, 2 at
	// twice real time. Pacing changes when messages are handed over, never
	// what the node computes.
	Speed float64
	// Sleep waits for d or until ctx is done (default: a timer); tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxLookahead bounds the bytes of input messages Run holds while it
	// learns the input topics' types from a log without a summary (see
	// Run); 0 means DefaultMaxLookahead.
	MaxLookahead int
}

// DefaultMaxLookahead is the default of Options.MaxLookahead: 64 MiB of
// input messages.
const DefaultMaxLookahead = 64 << 20

// ErrNoPrediction reports a replay in which the node made no prediction:
// the log has no message on the input topics, every input was rejected,
// or every trigger was suppressed. Its message gives the counts.
var ErrNoPrediction = errors.New("replay: the node made no prediction")

// Result summarises a replay.
type Result struct {
	// Messages counts the input messages handed to the node.
	Messages int
	// Skipped counts input messages not copied to Out because their
	// encoding is not CDR (ROS 1 bags).
	Skipped int
	// Stats are the node's counters at the end.
	Stats node.Stats
	// Truncated is nil when the log was read to its end. For a log that
	// ends early (a recording cut off: a chunk cut short, no summary) it
	// says what was replayed and wraps the reader's error, which wraps
	// logio.ErrTruncated: the replay covers every complete message before
	// the damage, and the rest of the log is lost.
	Truncated error
	// Unfinished is nil unless the log was read to its end but lacks its
	// closing records (an MCAP file without its footer): every message was
	// replayed, and it says what is missing, wrapping logio.ErrNoFooter.
	Unfinished error
}

// Run replays the messages of r through a node built from o until the log
// ends or ctx is done.
//
// The node needs the types of its input topics before the first message.
// Where the log lists its channels up front (an MCAP summary, a bag's
// index) they are known at once; otherwise (a recording whose summary was
// never written) Run reads ahead, holding the input messages, until every
// input topic has appeared, at most Options.MaxLookahead bytes of them.
//
// A log cut short is replayed up to the damage: Run returns the result
// with Result.Truncated set and a nil error. A log that lacks an input
// topic is an error that lists the topics it has. A replay in which the
// node made no prediction returns the result and an error wrapping
// ErrNoPrediction that gives the counts of rejected inputs and suppressed
// triggers.
func Run(ctx context.Context, r logio.MessageReader, o Options) (*Result, error) {
	cfg := o.Params.Node
	wanted, required := inputTopics(cfg)
	src := &lookahead{r: r, wanted: wanted}
	limit := o.MaxLookahead
	if limit <= 0 {
		limit = DefaultMaxLookahead
	}
	channels, err := src.discover(required, limit)
	if err != nil {
		return nil, err
	}
	types := channelTypes(channels, wanted)
	var now int64
	out := &tee{now: func() int64 { return now }, w: o.Out, live: o.Live}
	nd, err := node.New(node.Options{
		Params: o.Params, Model: o.Model, ModelID: o.ModelID, ModelSHA256: o.ModelSHA256, ModelPath: o.ModelPath, DataRoot: o.DataRoot,
		Types: types, Now: func() int64 { return now }, Publisher: out,
	})
	if err != nil {
		return nil, err
	}
	// Inputs are recorded under their own types.
	inputTypes := nd.InputTypes()
	order := make([]string, 0, len(wanted))
	for topic := range wanted {
		order = append(order, topic)
	}
	slices.Sort(order) // channel ids must not depend on map order
	for _, topic := range order {
		t, ok := types[topic]
		if !ok {
			t = inputTypes[topic]
		}
		if err := out.advertiseInput(topic, t); err != nil {
			return nil, err
		}
	}
	sleep := o.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	res := &Result{}
	defer func() { res.Stats = nd.Stats() }() // also when cut short
	var start time.Time
	var first, last int64
	started, ticked := false, false
	// tickUntil runs the node's timers (timer trigger, periodic
	// diagnostics) that are due before limit, or at or before it when
	// inclusive. The timers start at the first message's time.
	tickUntil := func(limit int64, inclusive bool) error {
		if !ticked {
			if first > limit || (first == limit && !inclusive) {
				return nil
			}
			ticked, now = true, first
			if err := nd.Tick(); err != nil {
				return err
			}
		}
		for {
			nt := nd.NextTick()
			if nt == math.MinInt64 || nt > limit || (nt == limit && !inclusive) {
				return nil
			}
			now = nt
			if err := nd.Tick(); err != nil {
				return err
			}
		}
	}
	m, readErr := src.next()
	for m != nil {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		t := m.logTime
		if !started {
			started, first, start = true, t, time.Now()
		}
		if o.Speed > 0 {
			due := start.Add(time.Duration(float64(t-first) / o.Speed))
			if err := sleep(ctx, time.Until(due)); err != nil {
				return res, err
			}
		}
		// A message is received at its log time: the timers due before it
		// run first, those due at its time after every message of that
		// time, so that a timer prediction at t starts from the inputs
		// stamped t.
		if err := tickUntil(t, false); err != nil {
			return res, err
		}
		now = t
		if err := out.input(m.topic, m.encoding, t, m.data); err != nil {
			return res, err
		}
		if m.encoding != rosmsg.MessageEncodingCDR && o.Out != nil {
			res.Skipped++
		}
		if err := nd.Handle(node.Input{Topic: m.topic, Data: m.data, Received: t}); err != nil {
			return res, err
		}
		res.Messages++
		last = t
		var err error
		if m, err = src.next(); err != nil {
			readErr = err
		}
		if m == nil || m.logTime > t {
			if err := tickUntil(t, true); err != nil {
				return res, err
			}
		}
	}
	res.Stats = nd.Stats()
	if readErr != nil {
		if !errors.Is(readErr, logio.ErrTruncated) {
			return res, fmt.Errorf("replay: %w", readErr)
		}
		res.Truncated = fmt.Errorf("replay: %w", damaged(readErr, "replayed", res.Messages, first, last))
	} else if err := logio.MissingEnd(r); err != nil && ctx.Err() == nil {
		res.Unfinished = fmt.Errorf("replay: replayed all %d input messages: %w", res.Messages, err)
	}
	if res.Stats.Predictions == 0 {
		return res, noPrediction(res, cfg)
	}
	return res, nil
}

// damaged describes a log that ended early or is damaged after n input
// messages, logged from first to last (ns), were done (replayed, played),
// and wraps the reader's error.
func damaged(err error, done string, n int, first, last int64) error {
	what := "is damaged"
	if errors.Is(err, logio.ErrTruncated) {
		what = "ends early"
	}
	if n == 0 {
		return fmt.Errorf("the log %s, before any input message: %w", what, err)
	}
	return fmt.Errorf("the log %s: %s the %d input messages before the damage (%.3f s of log time from the first); whatever the recording held after them is lost: %w",
		what, done, n, float64(last-first)/1e9, err)
}

// noPrediction explains a replay without predictions from the node's
// counters: an error wrapping ErrNoPrediction.
func noPrediction(res *Result, cfg *node.Config) error {
	var why []string
	for _, t := range cfg.Topics {
		in := res.Stats.Inputs[t.Topic]
		if in.Received == 0 {
			why = append(why, t.Topic+": no message")
			continue
		}
		s := fmt.Sprintf("%s: %d received, %d accepted", t.Topic, in.Received, in.Accepted)
		var rejected []string
		for _, c := range []struct {
			n    uint64
			what string
		}{
			{in.RejectedNaN, "with NaN or infinite values"},
			{in.RejectedMismatch, "whose joint names or array lengths do not match the params"},
			{in.RejectedDecode, "that do not decode as " + t.Type},
			{in.OutOfOrder, "stamped before the newest accepted one"},
			{in.Duplicates, "with a duplicate stamp"},
		} {
			if c.n > 0 {
				rejected = append(rejected, fmt.Sprintf("%d %s", c.n, c.what))
			}
		}
		if len(rejected) > 0 {
			s += "; rejected: " + strings.Join(rejected, ", ")
		}
		why = append(why, s)
	}
	if res.Stats.Suppressed > 0 {
		why = append(why, fmt.Sprintf("%d triggers suppressed (an input missing or older than max_age, or a sample the mapping rejects)", res.Stats.Suppressed))
	}
	if res.Messages == 0 {
		return fmt.Errorf("%w: the log has no message on the input topics (%s)", ErrNoPrediction, strings.Join(why, "; "))
	}
	return fmt.Errorf("%w from the %d input messages: %s", ErrNoPrediction, res.Messages, strings.Join(why, "; "))
}

// buffered is one input message, copied out of the reader's buffers.
type buffered struct {
	topic, encoding string
	logTime         int64
	data            []byte
}

// lookahead reads the messages of the wanted topics ahead of the replay:
// the messages discover held, then one at a time, one ahead of the
// replay, so that it knows whether the next message has the same log
// time.
type lookahead struct {
	r      logio.MessageReader
	wanted map[string]bool
	queue  []buffered // held by discover, in order
	q      int        // the next message of queue
	buf    [2]buffered
	i      int
	end    error // what ended the log (io.EOF at its end)
	done   bool  // end has been handed out
}

// discover reads ahead until every required topic has a channel, holding
// the wanted messages it passes (at most limit bytes of them), and returns
// the log's channels. A required topic that the log lacks is an error
// that lists the topics it has.
func (l *lookahead) discover(required []string, limit int) ([]*logio.Channel, error) {
	missing := func() []string {
		have := map[string]bool{}
		for _, c := range l.r.Channels() {
			have[c.Topic] = true
		}
		var out []string
		for _, t := range required {
			if !have[t] {
				out = append(out, t)
			}
		}
		return out
	}
	// A channel is known before its first message: the missing topics
	// change only when a message of a new topic is met.
	miss := missing()
	seen := map[string]bool{}
	held := 0
	for len(miss) > 0 {
		m, err := l.r.Next()
		if err != nil {
			l.end = err
			break
		}
		if !seen[m.Channel.Topic] {
			seen[m.Channel.Topic] = true
			miss = missing()
		}
		if !l.wanted[m.Channel.Topic] {
			continue
		}
		held += len(m.Data)
		if held > limit && len(miss) > 0 {
			return nil, fmt.Errorf("replay: no message on %s in the first %.3g MiB of input messages, which is all the replay holds while it learns the input types of a log that does not list its topics up front (a recording without its summary); its topics so far: %s",
				strings.Join(miss, ", "), float64(limit)/(1<<20), topicList(l.r.Channels()))
		}
		l.queue = append(l.queue, buffered{topic: m.Channel.Topic, encoding: m.Channel.Encoding, logTime: int64(m.LogTime), data: slices.Clone(m.Data)})
	}
	if miss = missing(); len(miss) == 0 {
		return l.r.Channels(), nil
	}
	have := topicList(l.r.Channels())
	switch {
	case errors.Is(l.end, io.EOF):
		return nil, fmt.Errorf("replay: the log has no topic %s (its topics: %s)", strings.Join(miss, ", "), have)
	case errors.Is(l.end, logio.ErrTruncated):
		return nil, fmt.Errorf("replay: the log has no topic %s before its damage (its topics before the damage: %s): %w", strings.Join(miss, ", "), have, l.end)
	}
	return nil, fmt.Errorf("replay: %w", l.end)
}

// topicList formats the topics of channels for errors, sorted, or says
// there are none.
func topicList(chs []*logio.Channel) string {
	var out []string
	for _, c := range chs {
		s := c.Topic
		if c.Type != "" {
			s += " (" + c.Type + ")"
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// next returns the next wanted message, valid until the call after next,
// or nil at the end of the log or after an error (which it returns once,
// where it is not io.EOF).
func (l *lookahead) next() (*buffered, error) {
	if l.q < len(l.queue) {
		l.q++
		return &l.queue[l.q-1], nil
	}
	l.queue, l.q = nil, 0 // what the last one points at stays valid
	if l.end == nil {
		for {
			m, err := l.r.Next()
			if err != nil {
				l.end = err
				break
			}
			if !l.wanted[m.Channel.Topic] {
				continue
			}
			l.i ^= 1
			b := &l.buf[l.i]
			b.topic, b.encoding, b.logTime = m.Channel.Topic, m.Channel.Encoding, int64(m.LogTime)
			b.data = append(b.data[:0], m.Data...)
			return b, nil
		}
	}
	if l.done || errors.Is(l.end, io.EOF) {
		return nil, nil
	}
	l.done = true
	return nil, l.end
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// tee publishes to the MCAP writer (log time: the node's clock) and the
// live publisher.
type tee struct {
	now  func() int64
	w    *logio.ROS2Writer
	live node.Publisher
}

// Advertise adds an output topic.
func (t *tee) Advertise(topic string, typ node.TopicType) error {
	if t.w != nil {
		if err := t.w.AddTopic(topic, typ.Type, typ.Definition, topicOptions(typ)); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	if t.live != nil {
		if err := t.live.Advertise(topic, typ); err != nil {
			return fmt.Errorf("replay: live: %w", err)
		}
	}
	return nil
}

// topicOptions returns the MCAP topic options of an output: a latched one
// (the robot description, the static frames) is offered transient local
// with depth 1, as robot_state_publisher offers them, so that `ros2 bag
// play` hands it to late subscribers; others the defaults.
func topicOptions(typ node.TopicType) *logio.TopicOptions {
	if !typ.Latched {
		return nil
	}
	q := logio.DefaultQoS()
	q.Depth, q.Durability = 1, "transient_local"
	return &logio.TopicOptions{QoS: []logio.QoSProfile{q}}
}

// Publish writes an output at the node's time.
func (t *tee) Publish(topic string, stamp int64, data []byte) error {
	now := t.now()
	if t.w != nil {
		if err := t.w.Write(topic, uint64(now), uint64(now), data); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	if t.live != nil {
		if err := t.live.Publish(topic, now, data); err != nil {
			return fmt.Errorf("replay: live: %w", err)
		}
	}
	return nil
}

// advertiseInput adds an input topic where its encoding allows.
func (t *tee) advertiseInput(topic string, typ node.TopicType) error {
	if typ.SchemaEncoding != "" && typ.SchemaEncoding != rosmsg.SchemaEncodingROS2Msg {
		return nil
	}
	return t.Advertise(topic, typ)
}

// input records one input message at its log time.
func (t *tee) input(topic, encoding string, logTime int64, data []byte) error {
	if encoding != rosmsg.MessageEncodingCDR {
		return nil
	}
	if t.w != nil {
		if err := t.w.Write(topic, uint64(logTime), uint64(logTime), data); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	if t.live != nil {
		if err := t.live.Publish(topic, logTime, data); err != nil {
			return fmt.Errorf("replay: live: %w", err)
		}
	}
	return nil
}
