package node_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// TestRunCoalescesToTheNewestState: when a prediction is late, the next
// one starts from the newest state, with no queue of stale work. The
// ANYmal node (on_state, port history of 10 samples) is served by Run
// over a transport whose publisher is held shut (a prediction that takes
// long) while 25 state messages arrive, stamped 10 ms apart; once it
// opens, Run takes every message (the port history observes each: no
// restart) but only the newest predicts, the others counted as coalesced
// and none suppressed as stale, and that prediction is bit for bit the
// one of a node that handled the same messages one by one and predicted
// on each.
func TestRunCoalescesToTheNewestState(t *testing.T) {
	const n = 25
	stream := estimatorStream(t, rateParams(t), n, 10*ms, 0, func(int) bool { return false })
	newest := stream[n-1]

	// the reference: every message handled in turn, each predicting
	ref, refPub, now := onStateNode(t, 0)
	for _, a := range stream {
		*now = a.at
		if err := ref.Handle(node.Input{Topic: anymalTopic, Data: a.data, Received: a.at}); err != nil {
			t.Fatal(err)
		}
	}
	want := refPub.predictions(t)
	if len(want) != n-10 { // the port history holds 10 samples before the one predicted from
		t.Fatalf("the reference made %d predictions, want %d", len(want), n-10)
	}

	p := rateParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerOnState, Every: 1}
	p.Node.Queue = 2 * n
	pub := &memPub{gate: make(chan struct{})}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return newest.at }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	bus := &node.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- nd.Run(ctx, node.Compose(pub, bus), node.RunOptions{Tick: time.Hour}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	waitFor(t, "the subscription", func() bool { return bus.Subscribed(anymalTopic) })
	// Run's first Tick publishes the robot description and waits at the
	// shut publisher, as it would in a long prediction.
	for _, a := range stream {
		bus.Deliver(anymalTopic, a.data)
	}
	close(pub.gate)
	waitFor(t, "every message taken", func() bool { return nd.Stats().Inputs[anymalTopic].Accepted == n })
	st := nd.Stats()
	if st.Predictions != 1 || st.Coalesced != n-1 || st.HistoryRestarts != 0 {
		t.Fatalf("%d predictions, %d coalesced, %d history restarts; want 1, %d and 0 (%d suppressed)", st.Predictions, st.Coalesced, st.HistoryRestarts, n-1, st.Suppressed)
	}
	got := pub.predictions(t)
	if len(got) != 1 {
		t.Fatalf("%d predictions published", len(got))
	}
	if s := got[0].Header.Stamp.Nanos(); s != newest.stamp {
		t.Errorf("the prediction starts at %+.0f ms, want the newest state's %+.0f ms", float64(s-t0)/1e6, float64(newest.stamp-t0)/1e6)
	}
	if !samePrediction(got[0], want[len(want)-1]) {
		t.Error("the coalesced prediction differs from the reference's last")
	}
}

// samePrediction reports whether two predictions hold the same bits in
// their stamp, states and ports (the latency aside).
func samePrediction(a, b msgs.PredictedTrajectory) bool {
	return a.Header.Stamp == b.Header.Stamp && slices.Equal(a.Q, b.Q) && slices.Equal(a.P, b.P) && slices.Equal(a.Ports, b.Ports)
}
