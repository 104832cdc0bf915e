package node_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/cputime"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/nodes/node"
)

// TestAnymalHandleAllocations: the live ANYmal node as shipped
// (params/anymal.yaml: on_state, the port history of 10 samples, the
// wrench estimate, the measured and the ghost's frames, the predicted
// path), horizon 100, allocates nothing per state message once warm: the
// decoding, the state (CRBA), the estimates, the rollout and the
// encoding of every output reuse their buffers, so the garbage collector
// never runs in the prediction path (the periodic diagnostics aside,
// kept out here).
func TestAnymalHandleAllocations(t *testing.T) {
	p := anymalParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerOnState, Rate: 100, Every: 1} // the file's (anymalParams sets a message trigger)
	p.Node.DiagnosticsPeriod = 1e6
	if p.Node.WrenchEstimate == nil || p.Node.Horizon != 100 {
		t.Fatalf("params/anymal.yaml: wrench estimate %v, horizon %d: the test is written for on and 100", p.Node.WrenchEstimate != nil, p.Node.Horizon)
	}
	const n = 160
	stream := estimatorStream(t, p, n, 10*ms, 0, func(int) bool { return false })
	var now int64
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return now }, Publisher: nopPub{}})
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	step := func() {
		now = stream[k].at
		if err := nd.Handle(node.Input{Topic: anymalTopic, Data: stream[k].data, Received: now}); err != nil {
			t.Fatal(err)
		}
		k++
	}
	for range 40 {
		step()
	}
	if a := testing.AllocsPerRun(100, step); a != 0 {
		t.Errorf("%v allocations per state message", a)
	}
	if st := nd.Stats(); st.Predictions != uint64(k-10) || st.HistoryRestarts != 0 {
		t.Errorf("%d predictions of %d states (10 warming up), %d restarts", st.Predictions, k, st.HistoryRestarts)
	}
}

// pacedPub records the latency of each prediction: from the sending of
// the state it starts from (found by its header.stamp, the CDR's first
// fields, on the sender's grid) to its publication.
type pacedPub struct {
	memPubNoRecord
	base   int64 // the grid's first stamp [ns]
	period int64
	sent   []atomic.Int64 // when state k was handed to the node [ns]
	mu     sync.Mutex
	lat    []time.Duration
	stop   bool
}

func (p *pacedPub) Publish(topic string, _ int64, data []byte) error {
	if topic != "/calisym/prediction" || len(data) < 12 {
		return nil
	}
	now := time.Now().UnixNano()
	stamp := int64(int32(binary.LittleEndian.Uint32(data[4:])))*1e9 + int64(binary.LittleEndian.Uint32(data[8:]))
	k := (stamp - p.base) / p.period
	if k < 0 || k >= int64(len(p.sent)) {
		return nil
	}
	p.mu.Lock()
	if !p.stop {
		p.lat = append(p.lat, time.Duration(now-p.sent[k].Load()))
	}
	p.mu.Unlock()
	return nil
}

// BenchmarkQuadrupedPaced serves the live ANYmal node as shipped
// (params/anymal.yaml: on_state at 100 Hz, the port history, the wrench
// estimate, max_age 0.02 s and stale_periods 3), horizon 100, over Run as
// a robot's estimator feeds it: an AnymalState every 10 ms of the wall
// clock, stamped on a 10 ms grid, sent when due whether or not the node
// has finished the prediction before (BenchmarkQuadrupedLatency waits for
// each). It reports the latency from a state's sending to the
// publication of the prediction that starts from it (p50, p99), the
// fraction of the states predicted from, the states suppressed (stale,
// warming up) and coalesced per state, the port history's restarts, the
// garbage collections during the run (the process's: the sender's
// messages included), and the process's CPU time per prediction. Sub-benchmarks: the two layouts
// of BenchmarkQuadrupedLatency, "paper" and "port_history" (the default).
// b.N is the number of states sent after a second of warm-up (b.N × 10
// ms of wall time); GOMAXPROCS is the -cpu flag's. Run it with the other
// core busy (a CPU-bound process: docs/performance.md).
func BenchmarkQuadrupedPaced(b *testing.B) {
	b.Run("paper", func(b *testing.B) { quadrupedPaced(b, true) })
	b.Run("port_history", func(b *testing.B) { quadrupedPaced(b, false) })
}

func quadrupedPaced(b *testing.B, paper bool) {
	const warm, period = 100, 10 * time.Millisecond
	p := anymalParams(b)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerOnState, Rate: 100, Every: 1}
	if paper {
		p.Spec.History.PortMean = 0
	}
	schema := anymalSchema(b, p)
	model := quadrupedModel(b, p)
	base := time.Now().UnixNano()
	pub := &pacedPub{base: base, period: int64(period), sent: make([]atomic.Int64, warm+b.N)}
	nd, err := node.New(node.Options{Params: p, Model: model, Now: func() int64 { return time.Now().UnixNano() }, Publisher: pub})
	if err != nil {
		b.Fatal(err)
	}
	bus := &node.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nd.Run(ctx, node.Compose(pub, bus), node.RunOptions{}) }()
	for !bus.Subscribed(anymalTopic) {
		time.Sleep(time.Millisecond)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	msg := anymalState(b, schema, t0, mechanics.SE3{R: mechanics.RPY(0.02, 0.01, 1), P: mechanics.Vec3{1, 2, 0.5}}, [6]float64{0.4, 0, 0, 0, 0, 0.2}, rng)
	k := 0
	send := func() {
		stamp := base + int64(k)*int64(period)
		if d := time.Until(time.Unix(0, stamp)); d > 0 {
			time.Sleep(d)
		}
		setStamp(msg, stamp)
		pub.sent[k].Store(time.Now().UnixNano())
		bus.Deliver(anymalTopic, msg)
		k++
	}
	for range warm { // the port history's warm-up
		send()
	}
	time.Sleep(50 * time.Millisecond)
	pub.mu.Lock()
	pub.lat = pub.lat[:0]
	pub.mu.Unlock()
	st0 := nd.Stats()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	c0 := cputime.Process()
	b.ResetTimer()
	for range b.N {
		send()
	}
	time.Sleep(100 * time.Millisecond) // the last prediction
	b.StopTimer()
	cpu := cputime.Process() - c0
	runtime.ReadMemStats(&ms1)
	pub.mu.Lock()
	pub.stop = true
	lat := slices.Clone(pub.lat)
	pub.mu.Unlock()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	st := nd.Stats()
	preds := st.Predictions - st0.Predictions
	b.ReportMetric(float64(preds)/float64(b.N), "predicted/state")
	b.ReportMetric(float64(st.Suppressed-st0.Suppressed)/float64(b.N), "suppressed/state")
	b.ReportMetric(float64(st.Coalesced-st0.Coalesced)/float64(b.N), "coalesced/state")
	b.ReportMetric(float64(st.HistoryRestarts-st0.HistoryRestarts), "restarts")
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC), "GCs")
	if preds == 0 || len(lat) == 0 {
		return
	}
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(preds), "cpu-ms/prediction")
}
