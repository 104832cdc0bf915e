package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/foxglove"
	"github.com/calisym/calisym/nodes/foxglove/bridge"
	"github.com/calisym/calisym/nodes/node"
)

// recorder keeps what the node publishes before handing it to the bridge.
type recorder struct {
	node.Publisher
	mu   sync.Mutex
	sent map[string][][]byte
}

func (r *recorder) Publish(topic string, stamp int64, data []byte) error {
	r.mu.Lock()
	r.sent[topic] = append(r.sent[topic], bytes.Clone(data))
	r.mu.Unlock()
	return r.Publisher.Publish(topic, stamp, data)
}

func (r *recorder) get(topic string) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[topic]
}

// TestFoxgloveClientDecodesPredictions serves the predictor node over the
// Foxglove WebSocket server and connects Foxglove's own client from Node:
// it sees the advertised channels, subscribes, and decodes with
// @foxglove/rosmsg2-serialization predictions whose values are exactly the
// Go side's.
func TestFoxgloveClientDecodesPredictions(t *testing.T) {
	nodetest.Require(t)
	srv, err := foxglove.NewServer(&foxglove.Options{Addr: "127.0.0.1:0", Name: "calisym-test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := "ws://" + addr.String()

	params, err := node.LoadParams(livetest.PendulumParams())
	if err != nil {
		t.Fatal(err)
	}
	model := livetest.PendulumModel(t)
	fox := bridge.New(srv, nil)
	rec := &recorder{Publisher: fox, sent: map[string][][]byte{}}
	now := func() int64 { return time.Now().UnixNano() }
	nd, err := node.New(node.Options{Params: params, Model: model, ModelSHA256: "feed", Now: now, Publisher: rec})
	if err != nil {
		t.Fatal(err)
	}
	bus := &node.Bus{}
	runErr := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() { runErr <- nd.Run(runCtx, node.Compose(rec, bus), node.RunOptions{Echo: true}) }()

	const n = 12
	var stdout, stderr bytes.Buffer
	cmd := nodetest.Start(t, ctx, &stdout, &stderr, "node_predictions.mjs", url, strconv.Itoa(n), "60000",
		"/calisym/prediction", "/calisym/predicted_joint_states", "/joint_states")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	predCh, ok := fox.Channel("/calisym/prediction")
	if !ok {
		t.Fatal("prediction channel not advertised")
	}
	subCtx, subCancel := context.WithTimeout(ctx, 60*time.Second)
	if err := srv.WaitSubscribed(subCtx, predCh); err != nil {
		subCancel()
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	subCancel()
	// Joint-state channel subscribed too, so no echo is missed.
	if id, ok := fox.Channel("/joint_states"); ok {
		waitCtx, c := context.WithTimeout(ctx, 30*time.Second)
		_ = srv.WaitSubscribed(waitCtx, id)
		c()
	}
	for i := range n {
		stamp := now()
		bus.Deliver("/joint_states", msgs.Marshal(&msgs.JointState{Header: msgs.Header{Stamp: msgs.TimeFromNanos(stamp)},
			Name: []string{"shoulder", "elbow"}, Position: []float64{0.1 * float64(i), -0.3}, Velocity: []float64{1, 2}}))
		bus.Deliver("/torque_command", msgs.Marshal(&msgs.Float64MultiArray{Data: []float64{0.2 * float64(i), -0.1}}))
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("node_predictions.mjs: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("node_predictions.mjs did not finish; stderr:\n%s", stderr.String())
	}
	stop()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}

	var out struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Advertised []struct {
			Topic          string `json:"topic"`
			Encoding       string `json:"encoding"`
			SchemaName     string `json:"schemaName"`
			SchemaEncoding string `json:"schemaEncoding"`
		} `json:"advertised"`
		Messages []struct {
			Topic     string          `json:"topic"`
			Timestamp string          `json:"timestamp"`
			Message   json.RawMessage `json:"message"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("script output: %v\n%s", err, stdout.String())
	}
	if out.ServerInfo.Name != "calisym-test" {
		t.Errorf("server name %q", out.ServerInfo.Name)
	}
	want := map[string]string{
		"/calisym/prediction": "calisym/msg/PredictedTrajectory", "/calisym/predicted_joint_states": "sensor_msgs/msg/JointState",
		"/diagnostics": "diagnostic_msgs/msg/DiagnosticArray", "/joint_states": "sensor_msgs/msg/JointState",
		"/torque_command": "std_msgs/msg/Float64MultiArray",
	}
	got := map[string]string{}
	for _, a := range out.Advertised {
		got[a.Topic] = a.SchemaName
		if a.Encoding != "cdr" || a.SchemaEncoding != "ros2msg" {
			t.Errorf("channel %+v", a)
		}
	}
	for topic, typ := range want {
		if got[topic] != typ {
			t.Errorf("advertised %s as %q, want %s", topic, got[topic], typ)
		}
	}

	// Every decoded prediction equals the Go one published in the same order.
	goPreds := rec.get("/calisym/prediction")
	k := 0
	var joints int
	for _, m := range out.Messages {
		switch m.Topic {
		case "/calisym/predicted_joint_states":
			joints++
			continue
		case "/calisym/prediction":
		default:
			continue
		}
		if k >= len(goPreds) {
			t.Fatalf("more predictions decoded than published")
		}
		var g msgs.PredictedTrajectory
		if err := msgs.Unmarshal(goPreds[k], &g); err != nil {
			t.Fatal(err)
		}
		k++
		diff, err := livetest.DiffPrediction(m.Message, &g)
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Fatalf("prediction %d: %s", k, diff)
		}
		if g.ModelID != "random pendulum" || g.ModelSHA256 != "feed" || len(g.CoordinateNames) != 2 || g.CoordinateNames[0] != "q1" ||
			len(g.PortNames) != 2 || g.PortNames[1] != "u2" || len(g.Q) != 2*int(g.Horizon) {
			t.Fatalf("prediction %d: %+v", k, g)
		}
	}
	if k != n {
		t.Errorf("compared %d predictions, want %d", k, n)
	}
	if joints == 0 {
		t.Errorf("no predicted joint states received")
	}
	if st := nd.Stats(); st.Predictions < n {
		t.Errorf("node stats %+v", st)
	}
}
