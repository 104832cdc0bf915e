package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/nodes/node"
)

// onStateNode is the ANYmal node (port history of 10 samples, max_age
// 0.02 s, horizon 10) with the on_state trigger at rate, on a clock the
// test sets.
func onStateNode(t *testing.T, rate float64) (*node.Node, *memPub, *int64) {
	t.Helper()
	p := rateParams(t)
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerOnState, Rate: rate, Every: 1}
	now := new(int64)
	*now = t0
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return *now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	return nd, pub, now
}

// TestOnStateTrigger: with trigger kind on_state the node predicts when
// the state arrives, within Handle (no timer runs here): once per
// accepted state message, starting from that message's stamp, as soon as
// the port history holds its 10 samples. It does not predict on a
// message it refuses (a duplicate, one out of order), while the history
// warms up, or on a message that is stale on arrival (a backlog: 40 ms
// and 31 ms old against the stale limit of three 10 ms periods); the next
// fresh one predicts.
func TestOnStateTrigger(t *testing.T) {
	nd, pub, now := onStateNode(t, 0)
	stream := estimatorStream(t, rateParams(t), 30, 10*ms, 0, func(int) bool { return false })
	handle := func(a arrival, at int64) {
		t.Helper()
		*now = at
		if err := nd.Handle(node.Input{Topic: anymalTopic, Data: a.data, Received: at}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(k int, predictions, suppressed uint64) {
		t.Helper()
		st := nd.Stats()
		if st.Predictions != predictions || st.Suppressed != suppressed {
			t.Fatalf("after message %d: %d predictions, %d suppressed; want %d and %d", k, st.Predictions, st.Suppressed, predictions, suppressed)
		}
		if predictions > 0 {
			preds := pub.predictions(t)
			if got := preds[len(preds)-1].Header.Stamp.Nanos(); got != stream[k].stamp {
				t.Fatalf("after message %d: the prediction starts at %d, want the message's stamp %d", k, got, stream[k].stamp)
			}
		}
	}
	for k := range 10 {
		handle(stream[k], stream[k].at)
		want(k, 0, uint64(k+1)) // warming up
	}
	for k := 10; k < 20; k++ {
		handle(stream[k], stream[k].at)
		want(k, uint64(k-9), 10)
	}
	// refused: a duplicate and one out of order
	handle(stream[19], stream[19].at+ms)
	handle(stream[18], stream[19].at+ms)
	want(19, 10, 10)
	// a backlog: 20 and 21 arrive stale, 22 fresh
	handle(stream[20], stream[20].stamp+40*ms)
	want(19, 10, 11)
	handle(stream[21], stream[20].stamp+41*ms)
	want(19, 10, 12)
	handle(stream[22], stream[20].stamp+42*ms)
	want(22, 11, 12)
	if st := nd.Stats(); st.HistoryRestarts != 0 || st.Inputs[anymalTopic].Duplicates != 1 || st.Inputs[anymalTopic].OutOfOrder != 1 {
		t.Errorf("stats %+v: want no restart of the history, one duplicate, one out of order", st)
	}
}

// TestOnStateRate: on_state with a rate predicts on the state message
// whose stamp is one period (less half the input's measured period) after
// the state the last prediction started from: a 400 Hz estimator with
// rate 100 gives a prediction every 10 ms of its stamps, each started by
// the message itself; without the rate, one per message.
func TestOnStateRate(t *testing.T) {
	for _, c := range []struct {
		name string
		rate float64
		gap  int64 // between predicted stamps
	}{
		{"rate100", 100, 10 * ms},
		{"each", 0, 10 * ms / 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd, pub, now := onStateNode(t, c.rate)
			stream := estimatorStream(t, rateParams(t), 401, 10*ms/4, 0, func(int) bool { return false })
			for _, a := range stream {
				*now = a.at
				before := nd.Stats().Predictions
				if err := nd.Handle(node.Input{Topic: anymalTopic, Data: a.data, Received: a.at}); err != nil {
					t.Fatal(err)
				}
				if st := nd.Stats(); st.Predictions > before {
					preds := pub.predictions(t)
					if got := preds[len(preds)-1].Header.Stamp.Nanos(); got != a.stamp {
						t.Fatalf("a prediction at %d from the state stamped %d", a.stamp, got)
					}
				}
			}
			preds := pub.predictions(t)
			if len(preds) < 2 {
				t.Fatalf("%d predictions", len(preds))
			}
			for i := 1; i < len(preds); i++ {
				if d := preds[i].Header.Stamp.Nanos() - preds[i-1].Header.Stamp.Nanos(); d != c.gap {
					t.Fatalf("predictions %d and %d start %d ns apart, want %d", i-1, i, d, c.gap)
				}
			}
			last := stream[len(stream)-1].stamp
			if got := preds[len(preds)-1].Header.Stamp.Nanos(); last-got >= c.gap {
				t.Errorf("the last prediction starts at %d, %d ns before the last state", got, last-got)
			}
			// the warm-up: the history's 10 samples at every 10 ms
			if first := preds[0].Header.Stamp.Nanos() - t0; first != 100*ms {
				t.Errorf("the first prediction starts %d ns after the first state, want 100 ms", first)
			}
		})
	}
}

// TestOnStateConfig: on_state takes no topic and a rate of 0 or more; the
// error names the key, what it takes and the value.
func TestOnStateConfig(t *testing.T) {
	for _, c := range []struct {
		name    string
		trigger string
		want    string
	}{
		{"ok", "  trigger:\n    kind: on_state\n", ""},
		{"ok rate", "  trigger:\n    kind: on_state\n    rate: 100\n", ""},
		{"topic", "  trigger:\n    kind: on_state\n    topic: /state_estimator/anymal_state\n", `node.trigger.topic: kind "on_state" predicts on the inputs that carry state channels and takes no topic, got "/state_estimator/anymal_state"`},
		{"negative rate", "  trigger:\n    kind: on_state\n    rate: -1\n", `node.trigger.rate: kind "on_state" takes 0 (a prediction per state message) or a positive rate, got -1`},
		{"unknown kind", "  trigger:\n    kind: onstate\n", `node.trigger.kind: "onstate" is not "message", "timer" or "on_state"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := editedParams(t, "anymal.yaml", func(text string) string {
				i := strings.Index(text, "  trigger:\n")
				j := strings.Index(text, "  ports:\n")
				if i < 0 || j < i {
					t.Fatal("params/anymal.yaml: no trigger section before ports")
				}
				return text[:i] + c.trigger + text[j:]
			})
			p, err := node.LoadParams(path)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Node.Trigger.Kind != node.TriggerOnState || p.Node.Trigger.Topic != "" {
					t.Errorf("trigger %+v", p.Node.Trigger)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// editedParams writes params/NAME, changed by edit, to a temporary file
// and returns its path.
func editedParams(t *testing.T, name string, edit func(string) string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "params", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(edit(string(raw))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
