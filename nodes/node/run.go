package node

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Subscriber is the input side of a transport.
type Subscriber interface {
	// Subscribe delivers every message on topic to handle, from any
	// goroutine, until the transport is closed. handle copies what it
	// keeps and never blocks; data is valid only during the call.
	Subscribe(topic string, t TopicType, handle func(data []byte)) error
}

// Transport carries a node's inputs and outputs: Foxglove WebSocket
// (outputs) with a live input source, ROS 2 through rclgo, or a test's
// in-memory transport.
type Transport interface {
	Publisher
	Subscriber
}

// RunOptions configures Run.
type RunOptions struct {
	// Echo republishes every input on the publisher under its own topic,
	// for transports whose viewers do not see the inputs otherwise
	// (Foxglove fed by a simulator).
	Echo bool
	// Tick is the period of Tick calls when no timer trigger sets it
	// (default 10 ms).
	Tick time.Duration
}

// queued is one message waiting in Run's queue.
type queued struct {
	topic    string
	data     []byte
	received int64
}

// mailbox is a bounded FIFO of messages that drops the oldest when full,
// so that a subscriber never waits for the node.
type mailbox struct {
	mu      sync.Mutex
	buf     []queued
	head, n int
	ready   chan struct{}
	free    [][]byte
}

func newMailbox(size int) *mailbox {
	return &mailbox{buf: make([]queued, size), ready: make(chan struct{}, 1)}
}

// put copies data into the queue; it returns the topic of the message it
// dropped to make room ("" when none).
func (m *mailbox) put(topic string, data []byte, received int64) (dropped string, was bool) {
	m.mu.Lock()
	var b []byte
	if k := len(m.free); k > 0 {
		b, m.free = m.free[k-1][:0], m.free[:k-1]
	}
	b = append(b, data...)
	if m.n == len(m.buf) {
		old := m.buf[m.head]
		dropped, was = old.topic, true
		m.free = append(m.free, old.data)
		m.head = (m.head + 1) % len(m.buf)
		m.n--
	}
	m.buf[(m.head+m.n)%len(m.buf)] = queued{topic: topic, data: b, received: received}
	m.n++
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
	return dropped, was
}

// take removes the oldest message; ok is false when the queue is empty.
func (m *mailbox) take() (q queued, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == 0 {
		return queued{}, false
	}
	q = m.buf[m.head]
	m.buf[m.head] = queued{}
	m.head = (m.head + 1) % len(m.buf)
	m.n--
	return q, true
}

// queued reports whether a message on topic waits in the queue.
func (m *mailbox) queued(topic string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.n {
		if m.buf[(m.head+i)%len(m.buf)].topic == topic {
			return true
		}
	}
	return false
}

// recycle returns a message's buffer for reuse.
func (m *mailbox) recycle(b []byte) {
	m.mu.Lock()
	if len(m.free) < len(m.buf) {
		m.free = append(m.free, b)
	}
	m.mu.Unlock()
}

// Run serves the node over t until ctx is done: it subscribes to every
// input, queues what arrives without blocking the subscriber (dropping the
// oldest message beyond Config.Queue and counting it as dropped for its
// topic), and processes the queue and the node's timers on one goroutine.
// A prediction that came late leaves no queue of stale work: of the
// trigger messages that arrived meanwhile, each is taken (its values, its
// sample for the port history) but only the newest of its topic predicts
// (Stats.Coalesced counts the others), so the next prediction starts from
// the newest state.
// The node's clock must be the wall clock (Options.Now). Run returns nil
// when ctx is cancelled, or the first publishing error.
func (nd *Node) Run(ctx context.Context, t Transport, o RunOptions) error {
	box := newMailbox(nd.cfg.Queue)
	types := nd.InputTypes()
	for _, topic := range slices.Sorted(maps.Keys(types)) {
		typ := types[topic]
		if o.Echo {
			if err := t.Advertise(topic, typ); err != nil {
				return fmt.Errorf("node: echo %s: %w", topic, err)
			}
		}
		if err := t.Subscribe(topic, typ, func(data []byte) {
			if dropped, was := box.put(topic, data, nd.now()); was {
				nd.noteDropped(dropped)
			}
		}); err != nil {
			return fmt.Errorf("node: subscribe %s: %w", topic, err)
		}
	}
	tick := o.Tick
	if tick <= 0 {
		tick = 10 * time.Millisecond
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-box.ready:
			for {
				q, ok := box.take()
				if !ok {
					break
				}
				if o.Echo {
					if err := t.Publish(q.topic, q.received, q.data); err != nil {
						return fmt.Errorf("node: echo %s: %w", q.topic, err)
					}
				}
				err := nd.handle(Input{Topic: q.topic, Data: q.data, Received: q.received}, box.queued(q.topic))
				box.recycle(q.data)
				if err != nil {
					return err
				}
				if ctx.Err() != nil {
					return nil
				}
			}
			// Wake for what the batch made due (a change of status).
			wait := time.Duration(nd.NextTick() - nd.now())
			timer.Reset(min(max(wait, 0), tick))
		case <-timer.C:
			if err := nd.Tick(); err != nil {
				return err
			}
			wait := time.Duration(nd.NextTick() - nd.now())
			timer.Reset(min(max(wait, 0), tick))
		}
	}
}

// Compose returns the Transport whose outputs go to pub and whose inputs
// come from sub.
func Compose(pub Publisher, sub Subscriber) Transport {
	return composed{pub, sub}
}

type composed struct {
	Publisher
	Subscriber
}

// Bus is an in-process Subscriber: what is delivered to it reaches every
// handler subscribed to the topic. Simulators and log players feed a live
// node through it. It is safe for concurrent use.
type Bus struct {
	mu   sync.RWMutex
	subs map[string][]func([]byte)
}

// Subscribe registers handle for topic.
func (b *Bus) Subscribe(topic string, _ TopicType, handle func(data []byte)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[string][]func([]byte){}
	}
	b.subs[topic] = append(b.subs[topic], handle)
	return nil
}

// Deliver hands data to every handler of topic and reports whether there
// was one.
func (b *Bus) Deliver(topic string, data []byte) bool {
	b.mu.RLock()
	hs := b.subs[topic]
	b.mu.RUnlock()
	for _, h := range hs {
		h(data)
	}
	return len(hs) > 0
}

// Subscribed reports whether topic has a handler.
func (b *Bus) Subscribed(topic string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.subs[topic]) > 0
}
