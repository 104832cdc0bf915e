package replay_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/foxglove"
	"github.com/calisym/calisym/nodes/foxglove/bridge"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/statemap"
)

// jsTransform is a geometry_msgs/msg/TransformStamped as Foxglove's reader
// decodes it.
type jsTransform struct {
	Header struct {
		Stamp   struct{ Sec, Nanosec int64 } `json:"stamp"`
		FrameID string                       `json:"frame_id"`
	} `json:"header"`
	ChildFrameID string `json:"child_frame_id"`
	Transform    struct {
		Translation struct{ X, Y, Z float64 }    `json:"translation"`
		Rotation    struct{ X, Y, Z, W float64 } `json:"rotation"`
	} `json:"transform"`
}

func (j jsTransform) msg() msgs.TransformStamped {
	r, p := j.Transform.Rotation, j.Transform.Translation
	return msgs.TransformStamped{
		Header:       msgs.Header{Stamp: msgs.Time{Sec: int32(j.Header.Stamp.Sec), Nanosec: uint32(j.Header.Stamp.Nanosec)}, FrameID: j.Header.FrameID},
		ChildFrameID: j.ChildFrameID,
		Transform:    msgs.Transform{Translation: msgs.Vector3{X: p.X, Y: p.Y, Z: p.Z}, Rotation: msgs.Quaternion{X: r.X, Y: r.Y, Z: r.Z, W: r.W}},
	}
}

// TestLiveAnymalRobotFrames runs the predictor node live (node.Run on the
// wall clock, as `calisym node --transport foxglove` does) on ANYmal D
// states from a simulated trot, re-stamped to the wall clock as a state
// estimator would stamp them, served over the Foxglove WebSocket server,
// and connects Foxglove's own client (@foxglove/ws-protocol, decoding with
// @foxglove/rosmsg2-serialization). The client connects after the node's
// first predictions, so the robot description and the static frames reach
// it only because their channels are latched. It checks:
//
//   - /robot_description (the URDF) and /tf_static arrive once each;
//   - /tf carries the measured robot's frames with every state, in order,
//     none left out, and the ghost's with each prediction (the params'
//     on_state trigger at 100 Hz), stamped at the latest state;
//   - every /tf it receives equals, bit for bit, its robot's half of the
//     offline rollout of the model from the input of the same stamp at
//     the default lookahead (the horizon's end) with the URDF's forward
//     kinematics;
//   - every URDF link of each robot is reachable from odom at every /tf
//     of that robot.
func TestLiveAnymalRobotFrames(t *testing.T) {
	nodetest.Require(t)
	root := anymalSim(t)
	logPath := fixtures.Path(t, "anymal_sim", "id", "trot_301.mcap")
	params, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "anymal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// the plain model's rollout, which the offline reference computes: no
	// wrench estimate (its parity with the evaluation is
	// TestWrenchEstimateParity's)
	params.Node.WrenchEstimate = nil
	// the paper's layout, whose ports the offline reference builds:
	// test/TestPortHistoryParity checks the port history
	params.Spec.History.PortMean = 0
	params.Node.MaxAge = 1 // a loaded test machine may tick late; staleness is not what is tested
	sampler, err := statemap.NewSampler(params.Spec, params.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	model := livetest.QuadrupedModel(t, "anymal-test", sampler.Coordinates(), sampler.Ports())

	// 150 states of the trot, 5 s in.
	r, err := logio.Open(logPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ch *logio.Channel
	var states [][]byte
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		ch = m.Channel
		if len(states) < 150 && m.LogTime >= 1730800805_000_000_000 {
			states = append(states, slices.Clone(m.Data))
		}
	}
	r.Close()
	if len(states) < 150 || states[0][1] != 1 {
		t.Fatalf("%d states (encapsulation % x)", len(states), states[0][:4])
	}

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
	fox := bridge.New(srv, nil)
	nd, err := node.New(node.Options{Params: params, Model: model, DataRoot: root, Now: func() int64 { return time.Now().UnixNano() }, Publisher: fox})
	if err != nil {
		t.Fatal(err)
	}
	bus := &node.Bus{}
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- nd.Run(runCtx, node.Compose(fox, bus), node.RunOptions{}) }()

	// sent maps each delivered state's new stamp to its bytes; order
	// gives each stamp's place in the sequence.
	sent := map[int64][]byte{}
	order := map[int64]int{}
	deliver := func(i int) {
		now := time.Now().UnixNano()
		data := slices.Clone(states[i])
		binary.LittleEndian.PutUint32(data[4:], uint32(now/1e9)) // header.stamp.sec (CDR little endian)
		binary.LittleEndian.PutUint32(data[8:], uint32(now%1e9)) // header.stamp.nanosec
		sent[now] = data
		order[now] = len(order)
		for !bus.Deliver(anymalTopic, data) {
			time.Sleep(time.Millisecond) // Run has not subscribed yet
		}
		time.Sleep(10 * time.Millisecond)
	}
	i := 0
	for ; nd.Stats().Predictions < 3; i++ {
		if i == len(states) {
			t.Fatalf("no predictions from %d states: %+v", i, nd.Stats())
		}
		deliver(i)
	}

	// 2n /tf messages, the measured robot's and the ghost's, about n each
	const n = 20
	var stdout, stderr bytes.Buffer
	cmd := nodetest.Start(t, ctx, &stdout, &stderr, "node_predictions.mjs", "ws://"+addr.String(), strconv.Itoa(2*n), "60000",
		"/tf", "/robot_description", "/tf_static")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	id, ok := fox.Channel("/tf")
	if !ok {
		t.Fatal("/tf not advertised")
	}
	if err := srv.WaitSubscribed(ctx, id); err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	for done := false; !done; {
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("node_predictions.mjs: %v\nstderr:\n%s", err, stderr.String())
			}
			done = true
		default:
			if i == len(states) {
				t.Fatalf("node_predictions.mjs did not see %d /tf messages from %d states; stderr:\n%s", 2*n, i, stderr.String())
			}
			deliver(i)
			i++
		}
	}
	stop()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}

	var out struct {
		Messages []struct {
			Topic   string          `json:"topic"`
			Message json.RawMessage `json:"message"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node_predictions.mjs output: %v\n%s", err, stdout.String())
	}
	off := newRobotOffline(t, params, root, model, ch, params.Node.Horizon)
	urdf, err := os.ReadFile(filepath.Join(root, params.Spec.Model.URDF))
	if err != nil {
		t.Fatal(err)
	}
	prefix := params.Node.TF.GhostPrefix
	measuredLinks := slices.Clone(off.tree.Links)
	var ghostLinks []string
	for _, l := range off.tree.Links {
		ghostLinks = append(ghostLinks, prefix+l)
	}
	// The client subscribes to each channel on its own, so the order in
	// which its subscriptions start, and with it that of the first
	// messages, is not fixed: the static frames are taken from wherever
	// they arrived.
	var static []msgs.TransformStamped
	descs, statics := 0, 0
	var frames [][]msgs.TransformStamped
	for _, m := range out.Messages {
		var v struct {
			Data       string        `json:"data"`
			Transforms []jsTransform `json:"transforms"`
		}
		if err := json.Unmarshal(m.Message, &v); err != nil {
			t.Fatal(err)
		}
		var trs []msgs.TransformStamped
		for _, tr := range v.Transforms {
			trs = append(trs, tr.msg())
		}
		switch m.Topic {
		case "/robot_description":
			descs++
			if v.Data != string(urdf) {
				t.Error("/robot_description is not the URDF")
			}
		case "/tf_static":
			statics++
			static = trs
		case "/tf":
			frames = append(frames, trs)
		}
	}
	// Each /tf is one robot's: the measured robot's with each state, the
	// ghost's (frames prefixed) with each prediction, which the params'
	// on_state trigger (at most 100 a second of the states' stamps) starts
	// from the latest state: the measured robot must come
	// with every state sent, in order, none left out, and each ghost at
	// the stamp of the latest measured robot before it (the client may
	// subscribe between the two).
	measured, ghosts := 0, 0
	lastMeasured := int64(-1)
	for i, trs := range frames {
		if len(trs) == 0 {
			t.Fatalf("/tf %d has no transforms", i)
		}
		stamp := trs[0].Header.Stamp.Nanos()
		data, ok := sent[stamp]
		if !ok {
			t.Fatalf("/tf stamped %d: no state of that stamp was sent", stamp)
		}
		all := off.frames(t, data, stamp) // the measured robot's, then the ghost's
		want, links, robot := all[:len(all)/2], measuredLinks, "measured robot"
		if strings.HasPrefix(trs[0].ChildFrameID, prefix) {
			want, links, robot = all[len(all)/2:], ghostLinks, "ghost"
			ghosts++
			if lastMeasured >= 0 && stamp != lastMeasured {
				t.Fatalf("/tf %d: the ghost stamped %d, not at the latest state %d (the measured robot's before it)", i, stamp, lastMeasured)
			}
		} else {
			if lastMeasured >= 0 && order[stamp] != order[lastMeasured]+1 {
				t.Fatalf("/tf %d: the measured robot of state %d follows that of state %d; want every state's", i, order[stamp], order[lastMeasured])
			}
			measured++
			lastMeasured = stamp
		}
		if !slices.Equal(trs, want) {
			t.Fatalf("/tf %d (%s, stamp %d) differs from the offline rollout at the horizon's end and the URDF's kinematics", i, robot, stamp)
		}
		if miss := unreachable("odom", links, static, trs); len(miss) > 0 {
			t.Fatalf("/tf %d (%s): links not reachable from odom: %v", i, robot, miss)
		}
	}
	if descs != 1 || statics != 1 || len(frames) < 2*n || measured < 2 || ghosts < 1 {
		t.Fatalf("the client received %d /robot_description, %d /tf_static and %d /tf messages (%d measured, %d ghost); want 1, 1 and %d, both robots'", descs, statics, len(frames), measured, ghosts, 2*n)
	}
	fixed := 0
	for _, j := range off.tree.Joints {
		if j.Type == mechanics.JointFixed {
			fixed++
		}
	}
	if len(static) != 2*fixed {
		t.Errorf("/tf_static has %d transforms, want %d", len(static), 2*fixed)
	}
	t.Logf("%d states sent, %d predictions, the client checked %d /tf (%d measured, %d ghost)", i, nd.Stats().Predictions, len(frames), measured, ghosts)
}
