package node_test

import (
	"testing"

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
