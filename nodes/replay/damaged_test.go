package replay_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
	"github.com/calisym/calisym/predictor"
)

// randomPendulum is the pendulum preset with random parameters: the tests
// of this file are about which messages the node sees, not about what it
// predicts.
func randomPendulum(t *testing.T) *predictor.Model { return livetest.PendulumModel(t) }

// replayed is one replay into memory.
type replayed struct {
	res   *replay.Result
	err   error
	out   []byte
	preds [][]byte // the /calisym/prediction messages, in order
}

func replayLog(t *testing.T, params *node.Params, model *predictor.Model, log string, o replay.Options) replayed {
	t.Helper()
	r, err := logio.Open(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	w, err := logio.NewROS2Writer(&buf, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	o.Params, o.Model, o.ModelSHA256, o.Out = params, model, "abc", w
	res, runErr := replay.Run(context.Background(), r, o)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := replayed{res: res, err: runErr, out: buf.Bytes()}
	rb, err := logio.NewMCAPReader(bytes.NewReader(got.out), nil)
	if err != nil {
		t.Fatal(err)
	}
	for m, err := range logio.Messages(rb) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Channel.Topic == "/calisym/prediction" {
			got.preds = append(got.preds, bytes.Clone(m.Data))
		}
	}
	return got
}

// TestReplayDamagedLogs replays a pendulum log cut in the middle of a
// chunk, one without its summary (a killed recorder: no data end, no
// summary, no footer) and one without its footer only. None lists its
// topics up front. Each replays up to its damage, with the same
// predictions as the whole log up to there; only the cut ones say that
// they are truncated, and how many messages they kept; the one without its
// footer says that it has none (Result.Unfinished).
func TestReplayDamagedLogs(t *testing.T) {
	params, err := node.LoadParams(livetest.PendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	model := randomPendulum(t)
	logs := livetest.PendulumDamaged(t, t.TempDir(), livetest.PendulumTrajectories(t, 1, 100))

	whole := replayLog(t, params, model, logs.Whole, replay.Options{})
	if whole.err != nil || whole.res.Truncated != nil || whole.res.Unfinished != nil || whole.res.Messages != logs.Messages || len(whole.preds) != logs.Messages/2 {
		t.Fatalf("whole log: %v, truncated %v, %d messages and %d predictions; want %d and %d",
			whole.err, whole.res.Truncated, whole.res.Messages, len(whole.preds), logs.Messages, logs.Messages/2)
	}
	for _, tc := range []struct {
		name, log string
		messages  int
		truncated bool
	}{
		{"cut mid-chunk", logs.MidChunk, logs.MidChunkMessages, true},
		{"no summary", logs.NoSummary, logs.Messages, true},
		{"no footer", logs.NoFooter, logs.Messages, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := replayLog(t, params, model, tc.log, replay.Options{})
			if got.err != nil {
				t.Fatalf("replay: %v", got.err)
			}
			if got.res.Messages != tc.messages {
				t.Errorf("%d messages replayed, want the %d before the damage", got.res.Messages, tc.messages)
			}
			if tc.truncated != (got.res.Truncated != nil) {
				t.Fatalf("Truncated = %v, want truncated %v", got.res.Truncated, tc.truncated)
			}
			if unfinished := tc.log == logs.NoFooter; unfinished != (got.res.Unfinished != nil) ||
				unfinished && (!errors.Is(got.res.Unfinished, logio.ErrNoFooter) || !strings.Contains(got.res.Unfinished.Error(), "all "+itoa(tc.messages)+" input messages")) {
				t.Errorf("Unfinished = %v, want it set for the log without its footer alone", got.res.Unfinished)
			}
			if tc.truncated {
				msg := got.res.Truncated.Error()
				if !errors.Is(got.res.Truncated, logio.ErrTruncated) || !strings.Contains(msg, "ends early") ||
					!strings.Contains(msg, "after them is lost") || !strings.Contains(msg, " "+itoa(tc.messages)+" input messages") {
					t.Errorf("Truncated = %v", got.res.Truncated)
				}
			}
			n := len(got.preds)
			if n == 0 || n > len(whole.preds) || math.Abs(float64(n-tc.messages/2)) > 1 {
				t.Fatalf("%d predictions from %d messages", n, tc.messages)
			}
			for i := range n {
				if !bytes.Equal(got.preds[i], whole.preds[i]) {
					t.Fatalf("prediction %d differs from the whole log's", i)
				}
			}
			if !tc.truncated && !bytes.Equal(got.out, whole.out) {
				t.Errorf("the replay of a log without its footer differs from the whole log's")
			}
		})
	}

	// A damaged chunk that is not a truncation is an error.
	if got := replayLog(t, params, model, logs.Corrupt, replay.Options{}); got.err == nil || errors.Is(got.err, logio.ErrTruncated) || !errors.Is(got.err, logio.ErrTooLarge) {
		t.Errorf("corrupt log: %v, want an error wrapping logio.ErrTooLarge", got.err)
	}

	// A log that does not list its topics up front is read ahead, at most
	// MaxLookahead bytes of input messages, until every input topic has
	// appeared; the messages read ahead are replayed.
	late := lateTopicLog(t, filepath.Join(t.TempDir(), "late.mcap"), 50, 30)
	_, err = replay.Run(context.Background(), open(t, late), replay.Options{Params: params, Model: model, MaxLookahead: 1000})
	if err == nil || !strings.Contains(err.Error(), "no message on /torque_command") || !strings.Contains(err.Error(), "its topics so far: /joint_states (sensor_msgs/msg/JointState)") {
		t.Errorf("look-ahead limit: %v", err)
	}
	got := replayLog(t, params, model, late, replay.Options{})
	if got.err != nil || got.res.Messages != 50+2*30 || got.res.Stats.Inputs["/joint_states"].Accepted != 80 || len(got.preds) != 30 {
		t.Errorf("late topic: %v, %d messages, stats %+v, %d predictions; want 110 messages, 80 joint states and 30 predictions",
			got.err, got.res.Messages, got.res.Stats, len(got.preds))
	}
	// A topic the log lacks is named with the topics it has, summary or
	// not.
	missing := *params
	cfg := *params.Node
	cfg.Topics = append(cfg.Topics[:1:1], node.TopicConfig{Topic: "/torque_cmd", Type: "std_msgs/msg/Float64MultiArray"})
	missing.Node = &cfg
	for _, log := range []string{logs.Whole, logs.NoSummary, logs.MidChunk} {
		_, err := replay.Run(context.Background(), open(t, log), replay.Options{Params: &missing, Model: model})
		if err == nil || !strings.Contains(err.Error(), "no topic /torque_cmd") ||
			!strings.Contains(err.Error(), "/joint_states (sensor_msgs/msg/JointState), /torque_command (std_msgs/msg/Float64MultiArray)") {
			t.Errorf("%s: missing topic: %v", filepath.Base(log), err)
		}
	}
}

// lateTopicLog writes a pendulum-like log without its footer, so that a
// reader meets its channels as it streams: first `before` joint states
// alone, then the torque topic is declared, then `after` samples of both.
func lateTopicLog(t *testing.T, path string, before, after int) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := logio.NewROS2Writer(&buf, &logio.ROS2WriterOptions{Compression: "none", ChunkSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	js := &msgs.JointState{Name: experiment.PendulumJointNames[:], Position: []float64{0.1, 0.2}, Velocity: []float64{0, 0}, Effort: []float64{0, 0}}
	u := &msgs.Float64MultiArray{Data: []float64{0, 0}}
	if err := w.AddTypedTopic("/joint_states", js, nil); err != nil {
		t.Fatal(err)
	}
	t0 := int64(experiment.PendulumMCAPEpoch)
	for k := range before + after {
		if k == before {
			if err := w.AddTypedTopic("/torque_command", u, nil); err != nil {
				t.Fatal(err)
			}
		}
		now := t0 + int64(k)*10_000_000
		js.Header.Stamp = msgs.TimeFromNanos(now)
		if err := w.Write("/joint_states", uint64(now), uint64(now), msgs.AppendMarshal(nil, js)); err != nil {
			t.Fatal(err)
		}
		if k >= before {
			if err := w.Write("/torque_command", uint64(now), uint64(now), msgs.AppendMarshal(nil, u)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	const footerLen = 1 + 8 + 20 + len(logio.MCAPMagic)
	if err := os.WriteFile(path, buf.Bytes()[:buf.Len()-footerLen], 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func itoa(n int) string { return strconv.Itoa(n) }

func open(t *testing.T, path string) logio.MessageReader {
	t.Helper()
	r, err := logio.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
