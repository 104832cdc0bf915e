// Package replay drives the predictor node (package nodes/node) from a
// recorded log: every message of the node's input topics is handed to the
// node at its log time, on a clock that is the log time, so the
// predictions, diagnostics and their order depend on the log alone. The
// inputs and every output are written to a ROS 2 MCAP file (rosbag2's
// conventions, bagtools/logio.ROS2Writer) and, optionally, to a live
// publisher such as the Foxglove WebSocket server, paced in real time.
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
	var start time.Time
	var first int64
	started := false
	var readErr error
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = fmt.Errorf("replay: %w", err)
			break
		}
		if !wanted[m.Channel.Topic] {
			continue
		}
		t := int64(m.LogTime)
		if !started {
			started, first, start = true, t, time.Now()
			now = t
			if err := nd.Tick(); err != nil {
				return res, err
			}
		}
		if o.Speed > 0 {
			due := start.Add(time.Duration(float64(t-first) / o.Speed))
			if err := sleep(ctx, time.Until(due)); err != nil {
				return res, err
			}
		}
		for {
			nt := nd.NextTick()
			if nt == math.MinInt64 || nt > t {
				break
			}
			now = nt
			if err := nd.Tick(); err != nil {
				return res, err
			}
		}
		now = t
		if err := out.input(m.Channel.Topic, m.Channel.Encoding, t, m.Data); err != nil {
			return res, err
		}
		if m.Channel.Encoding != logio.EncodingCDR && o.Out != nil {
			res.Skipped++
		}
		if err := nd.Handle(node.Input{Topic: m.Channel.Topic, Data: m.Data, Received: t}); err != nil {
			return res, err
		}
		res.Messages++
	}
	res.Stats = nd.Stats()
	return res, readErr
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
	if typ.SchemaEncoding != "" && typ.SchemaEncoding != logio.SchemaROS2Msg {
		return nil
	}
	return t.Advertise(topic, typ)
}

// input records one input message at its log time.
func (t *tee) input(topic, encoding string, logTime int64, data []byte) error {
	if encoding != logio.EncodingCDR {
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
