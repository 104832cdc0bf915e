package foxglove

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// ChannelID identifies an advertised channel. The server assigns ids from 1
// upwards and never reuses one.
type ChannelID uint32

// Channel describes a stream of messages the server advertises.
type Channel struct {
	// Topic is the topic name, e.g. "/calisym/prediction". Required.
	Topic string
	// Encoding is the message encoding, one of the MCAP well-known names:
	// for ROS 2, rosmsg.MessageEncodingCDR ("cdr"). Required. The server
	// forwards payloads without reading them, so this package defines no
	// encodings of its own and does not depend on msgs/rosmsg: the ROS
	// encoding names are defined once, in package rosmsg.
	Encoding string
	// SchemaName is the message type, e.g. "std_msgs/msg/Float64MultiArray".
	SchemaName string
	// Schema is the message definition in SchemaEncoding (for ROS 2: the
	// .msg text with its dependencies).
	Schema string
	// SchemaEncoding is the schema's encoding, e.g.
	// rosmsg.SchemaEncodingROS2Msg ("ros2msg"); empty when it follows from
	// Encoding.
	SchemaEncoding string
	// Latched keeps the channel's last message and sends it to every new
	// subscription, as ROS 2's transient-local durability does: for
	// messages published once, such as /robot_description and /tf_static,
	// that a client connecting later must still receive.
	Latched bool
}

// retained is the last message of a latched channel.
type retained struct {
	timestampNs uint64
	data        []byte // nil before the first message
}

// AddChannel advertises ch to every connected client and to every client
// that connects later, and returns its id.
func (s *Server) AddChannel(ch Channel) (ChannelID, error) {
	if ch.Topic == "" {
		return 0, errors.New("foxglove: add channel: empty topic")
	}
	if ch.Encoding == "" {
		return 0, fmt.Errorf("foxglove: add channel %q: empty encoding", ch.Topic)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastID == math.MaxUint32 {
		return 0, fmt.Errorf("foxglove: add channel %q: channel ids exhausted", ch.Topic)
	}
	s.lastID++
	cj := &channelJSON{
		ID: s.lastID, Topic: ch.Topic, Encoding: ch.Encoding,
		SchemaName: ch.SchemaName, Schema: ch.Schema, SchemaEncoding: ch.SchemaEncoding,
	}
	s.channels[cj.ID] = cj
	if ch.Latched {
		s.latched[cj.ID] = &retained{}
	}
	if len(s.clients) > 0 {
		msg := encodeAdvertise([]channelJSON{*cj})
		for c := range s.clients {
			c.sendText(msg)
		}
	}
	return cj.ID, nil
}

// RemoveChannel withdraws channel id: connected clients receive an
// unadvertise and lose their subscriptions to it. It returns an error
// wrapping ErrUnknownChannel if id is not advertised.
func (s *Server) RemoveChannel(id ChannelID) error {
	s.mu.Lock()
	if _, ok := s.channels[id]; !ok {
		s.mu.Unlock()
		return fmt.Errorf("foxglove: remove channel %d: %w", id, ErrUnknownChannel)
	}
	delete(s.channels, id)
	delete(s.latched, id)
	changed := false
	if len(s.clients) > 0 {
		msg := encodeUnadvertise([]ChannelID{id})
		for c := range s.clients {
			if c.dropChannel(id) {
				changed = true
			}
			c.sendText(msg)
		}
	}
	s.mu.Unlock()
	if changed {
		s.notifySubscriptions()
	}
	return nil
}

// Publish sends payload, received at timestampNs (nanoseconds since the
// epoch, or of the server's time source when it broadcasts time), to every
// client subscribed to channel id. It copies payload, so the caller may
// reuse it. Publish never waits on the network: a client whose send queue
// is full misses the message and the drop is counted (see Stats). It
// returns an error wrapping ErrUnknownChannel if id is not advertised.
//
// A latched channel's message is also kept and sent to every later
// subscription (see Channel.Latched).
func (s *Server) Publish(id ChannelID, timestampNs uint64, payload []byte) error {
	s.mu.RLock()
	if s.latched[id] != nil {
		s.mu.RUnlock()
		return s.publishLatched(id, timestampNs, payload)
	}
	defer s.mu.RUnlock()
	if _, ok := s.channels[id]; !ok {
		return fmt.Errorf("foxglove: publish on channel %d: %w", id, ErrUnknownChannel)
	}
	s.fanOut(id, timestampNs, payload, nil)
	return nil
}

// publishLatched publishes on a latched channel under the write lock, so
// that a subscription made at the same time receives the message once:
// either as the kept one or as a new one.
func (s *Server) publishLatched(id ChannelID, timestampNs uint64, payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.latched[id]
	if r == nil {
		if _, ok := s.channels[id]; !ok {
			return fmt.Errorf("foxglove: publish on channel %d: %w", id, ErrUnknownChannel)
		}
		s.fanOut(id, timestampNs, payload, nil)
		return nil
	}
	r.timestampNs = timestampNs
	r.data = bytes.Clone(payload)
	if r.data == nil {
		r.data = []byte{}
	}
	s.fanOut(id, timestampNs, r.data, r.data)
	return nil
}

// fanOut queues payload on channel id for every subscribed client; shared,
// when not nil, is a copy of payload the queues may keep. The caller holds
// s.mu.
func (s *Server) fanOut(id ChannelID, timestampNs uint64, payload, shared []byte) {
	data := shared
	for c := range s.clients {
		c.mu.Lock()
		if sub, ok := c.byChan[id]; ok {
			if data == nil {
				// Copied once, shared read-only by every client's queue.
				data = bytes.Clone(payload)
				if data == nil {
					data = []byte{}
				}
			}
			// Queued under c.mu so that no frame for a subscription is
			// queued after the client has unsubscribed it.
			if !c.q.pushData(frame{kind: frameMessage, subID: sub, timestampNs: timestampNs, data: data}) {
				s.dropped.Add(1)
			}
		}
		c.mu.Unlock()
	}
}

// BroadcastTime sends a time message carrying timestampNs to every client.
// Like Publish it never waits on the network. It returns an error wrapping
// ErrCapability unless the server declares CapabilityTime.
func (s *Server) BroadcastTime(timestampNs uint64) error {
	if !s.hasTime {
		return fmt.Errorf("foxglove: broadcast time: %w: %q", ErrCapability, CapabilityTime)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for c := range s.clients {
		if !c.q.pushData(frame{kind: frameTime, timestampNs: timestampNs}) {
			s.dropped.Add(1)
		}
	}
	return nil
}

// advertiseAll returns the advertise message for every current channel, in
// id order. The caller holds s.mu.
func (s *Server) advertiseAll() []byte {
	chs := make([]channelJSON, 0, len(s.channels))
	for _, id := range slices.Sorted(maps.Keys(s.channels)) {
		chs = append(chs, *s.channels[id])
	}
	return encodeAdvertise(chs)
}
