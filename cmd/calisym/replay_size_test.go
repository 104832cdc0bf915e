package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/msgs"
)

// anymalReplayBound is the most a replay of one minute of the simulated
// ANYmal (a 4.4 MB MCAP at 100 Hz) may write with replay's defaults;
// docs/live-prediction.md states it and the size measured.
const anymalReplayBound = 32 << 20

// TestReplayAnymalSize replays a whole 60 s ANYmal log with replay's
// defaults (a prediction on every 10th trigger, zstd chunks): the file
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
	if !strings.Contains(stdout, "6000 input messages, 600 predictions, 0 suppressed") {
		t.Errorf("replay output:\n%s", stdout)
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
	if len(js.Messages) != 600 || len(preds) != 600 {
		t.Fatalf("@mcap/core read %d predictions, Go %d; want 600", len(js.Messages), len(preds))
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
