package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// anymalReplayBound is the most a replay of one minute of the simulated
// ANYmal (a 4.4 MB MCAP at 100 Hz) may write with replay's defaults;
// docs/live-prediction.md states it and the size measured.
const anymalReplayBound = 32 << 20

// TestReplayAnymalSize replays a whole 60 s ANYmal log with replay's
// defaults (a prediction on every 10th trigger, zstd chunks; none while
// the port history warms up): the file
// stays under anymalReplayBound (a prediction on every trigger wrote
// 216 MB), and Foxglove's own MCAP reader (@mcap/core with Foxglove's zstd)
// opens it and decodes the same predictions, bit for bit.
func TestReplayAnymalSize(t *testing.T) {
	f := newAnymalFixture(t)
	log := fixtures.Path(t, "anymal_sim", "ood", "push_401.mcap")
	in, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "replay.mcap")
	stdout, _, err := runCLI(t, "replay", "--params", f.params, "--model", f.model, "--data", f.root, log, "--out", out)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stdout)
	}
	// One trigger per state message, a prediction on every 10th (replay's
	// --every default) from the first. The node predicts only once its
	// port history holds its m samples (convert.history.port_mean), so the
	// predicting triggers among the first m are suppressed; the log loses
	// no sample, so there is no restart and no other warm-up.
	const messages, every = 6000, 10
	p, err := node.LoadParams(f.params)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Spec.History.PortMean
	if m <= 0 {
		t.Fatalf("params %s: port_mean %d, want a port history (the warm-up this test counts)", f.params, m)
	}
	triggers := (messages + every - 1) / every // triggers 1, 1+every, …
	warmup := (m + every - 1) / every          // those of them ≤ m
	want := triggers - warmup
	report := regexp.MustCompile(`(\d+) input messages, (\d+) predictions, (\d+) suppressed`).FindStringSubmatch(stdout)
	if report == nil {
		t.Fatalf("replay output has no counts:\n%s", stdout)
	}
	if got := fmt.Sprintf("%s/%s/%s", report[1], report[2], report[3]); got != fmt.Sprintf("%d/%d/%d", messages, want, warmup) {
		t.Errorf("replay reported %s input messages, %s predictions, %s suppressed; want %d, %d (%d triggers predicting, less %d in the port history's %d-sample warm-up), %d\n%s",
			report[1], report[2], report[3], messages, want, triggers, warmup, m, warmup, stdout)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a minute of ANYmal (%.1f MB) replayed into %.1f MB", float64(in.Size())/1e6, float64(st.Size())/1e6)
	if st.Size() > anymalReplayBound {
		t.Errorf("replay of %.1f MB wrote %.1f MB, more than the %.0f MiB bound", float64(in.Size())/1e6, float64(st.Size())/1e6, float64(anymalReplayBound)/(1<<20))
	}

	r, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var preds []msgs.PredictedTrajectory
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Channel.Topic == "/calisym/prediction" {
			var p msgs.PredictedTrajectory
			if err := msgs.Unmarshal(m.Data, &p); err != nil {
				t.Fatal(err)
			}
			preds = append(preds, p)
		}
	}
	r.Close()

	nodetest.Require(t)
	raw := nodetest.Run(t, 2*time.Minute, "read_replay.mjs", out, "/calisym/prediction")
	var js struct {
		Messages []struct {
			Value json.RawMessage `json:"value"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("read_replay.mjs output: %v", err)
	}
	if len(js.Messages) != want || len(preds) != want {
		t.Fatalf("@mcap/core read %d predictions, Go %d; want %d", len(js.Messages), len(preds), want)
	}
	for i, m := range js.Messages {
		diff, err := livetest.DiffPrediction(m.Value, &preds[i])
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Fatalf("prediction %d: %s", i, diff)
		}
	}
}
