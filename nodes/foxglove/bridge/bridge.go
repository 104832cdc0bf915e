// Package bridge connects the predictor node (nodes/node) to the Foxglove
// WebSocket server (nodes/foxglove): every topic the node advertises
// becomes a channel with CDR encoding and its ros2msg schema, so that
// Foxglove decodes the node's messages with its own ROS 2 reader, and
// every message the node publishes is forwarded without ever blocking it.
package bridge

import (
	"fmt"
	"sync"

	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/foxglove"
	"github.com/calisym/calisym/nodes/node"
)

// Publisher is a node.Publisher that serves on a foxglove.Server. It is
// safe for concurrent use.
type Publisher struct {
	srv *foxglove.Server
	// Time, when set, broadcasts each message's stamp as the server time
	// (the server must declare foxglove.CapabilityTime), so that Foxglove
	// follows the replayed clock.
	time bool

	mu    sync.RWMutex
	chans map[string]foxglove.ChannelID
	last  int64
}

// Options configures New.
type Options struct {
	// BroadcastTime sends the stamp of every published message as the
	// server's time (needs foxglove.CapabilityTime on the server): for
	// replays, whose clock is the log's.
	BroadcastTime bool
}

// New returns a Publisher serving on srv.
func New(srv *foxglove.Server, o *Options) *Publisher {
	p := &Publisher{srv: srv, chans: map[string]foxglove.ChannelID{}}
	if o != nil {
		p.time = o.BroadcastTime
	}
	return p
}

// Advertise adds a channel for topic; advertising a topic again is a
// no-op.
func (p *Publisher) Advertise(topic string, t node.TopicType) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.chans[topic]; ok {
		return nil
	}
	enc, schemaEnc := t.Encoding, t.SchemaEncoding
	if enc == "" {
		enc = rosmsg.MessageEncodingCDR
	}
	if schemaEnc == "" {
		schemaEnc = rosmsg.SchemaEncodingROS2Msg
	}
	id, err := p.srv.AddChannel(foxglove.Channel{Topic: topic, Encoding: enc, SchemaName: t.Type, Schema: t.Definition, SchemaEncoding: schemaEnc, Latched: t.Latched})
	if err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	p.chans[topic] = id
	return nil
}

// Publish forwards one message to the clients subscribed to its topic; it
// never waits on the network (see foxglove.Server.Publish).
func (p *Publisher) Publish(topic string, stamp int64, data []byte) error {
	p.mu.RLock()
	id, ok := p.chans[topic]
	p.mu.RUnlock()
	if !ok {
		return fmt.Errorf("bridge: publish on %s, which was not advertised", topic)
	}
	ts := uint64(max(stamp, 0))
	if p.time {
		p.mu.Lock()
		advance := stamp > p.last
		if advance {
			p.last = stamp
		}
		p.mu.Unlock()
		if advance {
			if err := p.srv.BroadcastTime(ts); err != nil {
				return fmt.Errorf("bridge: %w", err)
			}
		}
	}
	if err := p.srv.Publish(id, ts, data); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	return nil
}

// Channel returns the channel of an advertised topic.
func (p *Publisher) Channel(topic string) (foxglove.ChannelID, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	id, ok := p.chans[topic]
	return id, ok
}
