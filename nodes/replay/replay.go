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
}

// Result summarises a replay.
type Result struct {
	// Messages counts the input messages handed to the node.
	Messages int
	// Skipped counts input messages not copied to Out because their
	// encoding is not CDR (ROS 1 bags).
	Skipped int
	// Stats are the node's counters at the end.
	Stats node.Stats
}

// Run replays the messages of r through a node built from o until the log
// ends (a log cut short ends the replay after its complete messages and
// returns the truncation error with the result) or ctx is done.
func Run(ctx context.Context, r logio.MessageReader, o Options) (*Result, error) {
	cfg := o.Params.Node
	wanted := map[string]bool{}
	for _, t := range cfg.Topics {
		wanted[t.Topic] = true
	}
	if cfg.Ports.Forecast == node.ForecastTopic {
		wanted[cfg.Ports.Topic] = true
	}
	types := map[string]node.TopicType{}
	var have []string
	for _, ch := range r.Channels() {
		have = append(have, ch.Topic)
		if wanted[ch.Topic] {
			types[ch.Topic] = node.TopicType{Type: ch.Type, Definition: string(ch.Schema), SchemaEncoding: ch.SchemaEncoding, Encoding: ch.Encoding}
		}
	}
	for _, t := range cfg.Topics {
		if _, ok := types[t.Topic]; !ok {
			slices.Sort(have)
			return nil, fmt.Errorf("replay: the log has no topic %s (its topics: %s)", t.Topic, strings.Join(have, ", "))
		}
	}
	var now int64
	out := &tee{now: func() int64 { return now }, w: o.Out, live: o.Live}
	nd, err := node.New(node.Options{
		Params: o.Params, Model: o.Model, ModelID: o.ModelID, ModelSHA256: o.ModelSHA256, DataRoot: o.DataRoot,
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
	src := &lookahead{r: r, wanted: wanted}
	var start time.Time
	var first int64
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
	return res, readErr
}

// buffered is one input message, copied out of the reader's buffers.
type buffered struct {
	topic, encoding string
	logTime         int64
	data            []byte
}

// lookahead reads the messages of the wanted topics one ahead of the
// replay, so that it knows whether the next message has the same log
// time.
type lookahead struct {
	r      logio.MessageReader
	wanted map[string]bool
	buf    [2]buffered
	i      int
	err    error
}

// next returns the next wanted message, valid until the call after next,
// or nil at the end of the log or after an error (which it returns once,
// wrapped, where it is not io.EOF).
func (l *lookahead) next() (*buffered, error) {
	if l.err != nil {
		return nil, nil
	}
	for {
		m, err := l.r.Next()
		if errors.Is(err, io.EOF) {
			l.err = err
			return nil, nil
		}
		if err != nil {
			l.err = err
			return nil, fmt.Errorf("replay: %w", err)
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
		if err := t.w.AddTopic(topic, typ.Type, typ.Definition, nil); err != nil {
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
