package node_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

// t0 is the tests' first sample time, in ns since the epoch.
const t0 = int64(1_700_000_000_000_000_000)

const ms = int64(1_000_000)

// published is one message a node published.
type published struct {
	topic string
	stamp int64
	data  []byte
}

// memPub records what a node publishes; with gate set, Publish waits on it
// (a transport that blocks).
type memPub struct {
	mu    sync.Mutex
	types map[string]node.TopicType
	msgs  []published
	gate  chan struct{}
}

func (p *memPub) Advertise(topic string, t node.TopicType) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.types == nil {
		p.types = map[string]node.TopicType{}
	}
	p.types[topic] = t
	return nil
}

func (p *memPub) Publish(topic string, stamp int64, data []byte) error {
	if p.gate != nil {
		<-p.gate
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, published{topic, stamp, append([]byte(nil), data...)})
	return nil
}

// on returns the messages published on topic.
func (p *memPub) on(topic string) []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []published
	for _, m := range p.msgs {
		if m.topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// predictions decodes the predictions published so far.
func (p *memPub) predictions(t *testing.T) []msgs.PredictedTrajectory {
	t.Helper()
	var out []msgs.PredictedTrajectory
	for _, m := range p.on("/calisym/prediction") {
		var tr msgs.PredictedTrajectory
		if err := msgs.Unmarshal(m.data, &tr); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
	return out
}

// lastDiagnostics decodes the newest DiagnosticArray.
func (p *memPub) lastDiagnostics(t *testing.T) msgs.DiagnosticArray {
	t.Helper()
	ds := p.on("/diagnostics")
	if len(ds) == 0 {
		t.Fatal("no diagnostics published")
	}
	var a msgs.DiagnosticArray
	if err := msgs.Unmarshal(ds[len(ds)-1].data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// status returns the named status of a DiagnosticArray.
func status(t *testing.T, a msgs.DiagnosticArray, name string) msgs.DiagnosticStatus {
	t.Helper()
	for _, s := range a.Status {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status %q in %+v", name, a)
	return msgs.DiagnosticStatus{}
}

func value(s msgs.DiagnosticStatus, key string) string {
	for _, kv := range s.Values {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// pendulumModel returns a randomly initialised model of the pendulum
// preset with the names and time step of params/pendulum_sim.yaml.
func pendulumModel(t testing.TB) *predictor.Model { return livetest.PendulumModel(t) }

func pendulumParams(t testing.TB) *node.Params {
	t.Helper()
	p, err := node.LoadParams(livetest.PendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	// The tests trigger on the joint states (the file: on the commands).
	p.Node.Trigger.Topic = "/joint_states"
	return p
}

func jointState(stamp int64, names []string, q, v [2]float64) []byte {
	return msgs.Marshal(&msgs.JointState{Header: msgs.Header{Stamp: msgs.TimeFromNanos(stamp)}, Name: names,
		Position: q[:], Velocity: v[:]})
}

var pendulumJoints = []string{"shoulder", "elbow"}

func torque(u0, u1 float64) []byte {
	return msgs.Marshal(&msgs.Float64MultiArray{Data: []float64{u0, u1}})
}

// live is a node served by Run over an in-memory transport, on a clock the
// test sets.
type live struct {
	nd    *node.Node
	pub   *memPub
	bus   *node.Bus
	clock atomic.Int64
	done  chan error
}

func startLive(t *testing.T, p *node.Params, pub *memPub) *live {
	t.Helper()
	l := &live{pub: pub, bus: &node.Bus{}, done: make(chan error, 1)}
	l.clock.Store(t0)
	nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: l.clock.Load, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	l.nd = nd
	ctx, cancel := context.WithCancel(context.Background())
	go func() { l.done <- nd.Run(ctx, node.Compose(pub, l.bus), node.RunOptions{Tick: time.Millisecond}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-l.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitFor(t, "subscriptions", func() bool { return l.bus.Subscribed("/joint_states") && l.bus.Subscribed("/torque_command") })
	return l
}

// send delivers data on topic at time at, as a subscriber callback would.
func (l *live) send(topic string, at int64, data []byte) {
	l.clock.Store(at)
	l.bus.Deliver(topic, data)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// waitDiag waits for cond on the published diagnostics, letting the
// node's clock run on meanwhile, by at most node.DiagnosticsSettle: a
// change of status is published once it has held that long.
func (l *live) waitDiag(t *testing.T, what string, cond func() bool) {
	t.Helper()
	limit := l.clock.Load() + node.DiagnosticsSettle
	waitFor(t, what, func() bool {
		if c := l.clock.Load(); c < limit {
			l.clock.Store(min(c+ms, limit))
		}
		return cond()
	})
}
