// Command calisym_ros2 is calisym's predictor node on ROS 2, through rclgo:
// it subscribes to the inputs a params file names and publishes the
// predictions, the predicted joint states and base path, and diagnostics.
//
// Every message crosses ROS 2 serialized: subscriptions take the CDR bytes
// (rcl_take_serialized_message) and publishers send bytes, with type
// supports loaded by name at run time. Decoding, the state mapping, the
// rollout and encoding are the main module's (nodes/node, msgs,
// msgs/rosmsg), which are tested there through the MCAP replay and Foxglove
// transports; this program adds nothing but the transport.
//
//	calisym_ros2 --params params/pendulum_sim.yaml --model model.safetensors [--ros-args ...]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tiiuae/rclgo/pkg/rclgo"
	"github.com/tiiuae/rclgo/pkg/rclgo/types"

	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "calisym_ros2:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, argv []string) error {
	rosArgs, rest, err := rclgo.ParseArgs(argv)
	if err != nil {
		return fmt.Errorf("ROS arguments: %w", err)
	}
	fs := flag.NewFlagSet("calisym_ros2", flag.ContinueOnError)
	paramsPath := fs.String("params", "", "params YAML with convert: and node: sections")
	modelPath := fs.String("model", "", "model file (.safetensors); default: node.model of the params")
	dataRoot := fs.String("data", "", "directory of the spec's parameter files and URDFs (default: the params file's directory)")
	name := fs.String("name", "calisym_predictor", "node name")
	reliable := fs.Bool("reliable-inputs", false, "subscribe with reliable QoS (default best effort, which matches reliable and best-effort publishers)")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if *paramsPath == "" {
		return errors.New("--params is required")
	}
	p, err := node.LoadParams(*paramsPath)
	if err != nil {
		return err
	}
	mp := *modelPath
	if mp == "" {
		mp = p.Resolve(p.Node.Model)
	}
	raw, err := os.ReadFile(mp)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	model, err := predictor.Decode(raw)
	if err != nil {
		return fmt.Errorf("model %s: %w", mp, err)
	}
	sum := sha256.Sum256(raw)

	rctx, err := rclgo.NewContextWithOpts(rosArgs, rclgo.NewDefaultContextOptions())
	if err != nil {
		return fmt.Errorf("rcl init: %w", err)
	}
	defer rctx.Close()
	rn, err := rctx.NewNode(*name, "")
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	t := &transport{ctx: rctx, node: rn, pubs: map[string]*rclgo.Publisher{}, reliable: *reliable}
	defer t.close()
	nd, err := node.New(node.Options{
		Params: p, Model: model, ModelSHA256: hex.EncodeToString(sum[:]), ModelPath: mp, DataRoot: *dataRoot,
		Now: func() int64 { return time.Now().UnixNano() }, Publisher: t,
	})
	if err != nil {
		return err
	}
	if w := nd.ModelWarning(); w != "" {
		rn.Logger().Warnf("%s: %s", mp, w)
	}
	rn.Logger().Infof("predicting %d steps of %g s from %s", nd.Horizon(), nd.Dt(), topicList(nd.InputTypes()))
	return nd.Run(ctx, t, node.RunOptions{})
}

func topicList(m map[string]node.TopicType) string {
	var s []string
	for topic, t := range m {
		s = append(s, topic+" ("+t.Type+")")
	}
	return strings.Join(s, ", ")
}

// transport is the node's Transport over rclgo: serialized publishers and
// subscriptions of type supports loaded by name.
type transport struct {
	ctx      *rclgo.Context
	node     *rclgo.Node
	reliable bool

	mu    sync.Mutex
	pubs  map[string]*rclgo.Publisher
	spins []chan error
	stops []context.CancelFunc
}

// typeSupport loads the type support of "pkg/msg/Type".
func typeSupport(rosType string) (types.MessageTypeSupport, error) {
	parts := strings.Split(rosType, "/")
	if len(parts) == 2 {
		parts = []string{parts[0], "msg", parts[1]}
	}
	if len(parts) != 3 || parts[1] != "msg" {
		return nil, fmt.Errorf("message type %q is not pkg/msg/Type", rosType)
	}
	ts, err := rclgo.LoadDynamicMessageTypeSupport(parts[0], parts[2])
	if err != nil {
		return nil, fmt.Errorf("type support of %s (is its package installed and sourced?): %w", rosType, err)
	}
	return ts, nil
}

// Advertise creates a publisher.
func (t *transport) Advertise(topic string, typ node.TopicType) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.pubs[topic]; ok {
		return nil
	}
	ts, err := typeSupport(typ.Type)
	if err != nil {
		return err
	}
	var opts *rclgo.PublisherOptions
	if typ.Latched {
		// /robot_description and /tf_static: kept for late subscribers,
		// as robot_state_publisher offers them
		opts = rclgo.NewDefaultPublisherOptions()
		opts.Qos.Durability = rclgo.DurabilityTransientLocal
		opts.Qos.Depth = 1
	}
	pub, err := t.node.NewPublisher(topic, ts, opts)
	if err != nil {
		return fmt.Errorf("publisher %s: %w", topic, err)
	}
	t.pubs[topic] = pub
	return nil
}

// Publish sends one CDR message (encapsulation header included, as rmw
// serialized messages carry it).
func (t *transport) Publish(topic string, _ int64, data []byte) error {
	t.mu.Lock()
	pub := t.pubs[topic]
	t.mu.Unlock()
	if pub == nil {
		return fmt.Errorf("publish on %s, which was not advertised", topic)
	}
	if err := pub.PublishSerialized(data); err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	return nil
}

// Subscribe takes every message of topic serialized and hands it to
// handle from the subscription's wait-set goroutine.
func (t *transport) Subscribe(topic string, typ node.TopicType, handle func([]byte)) error {
	ts, err := typeSupport(typ.Type)
	if err != nil {
		return err
	}
	// Default profile: keep last 10, reliable, volatile.
	opts := rclgo.NewDefaultSubscriptionOptions()
	if !t.reliable {
		opts.Qos.Reliability = rclgo.ReliabilityBestEffort
	}
	sub, err := t.node.NewSubscription(topic, ts, opts, func(s *rclgo.Subscription) {
		// A fresh copy of the CDR bytes (encapsulation header included);
		// an error here is a spurious wake-up (nothing to take).
		data, _, err := s.TakeSerializedMessage()
		if err != nil {
			return
		}
		handle(data)
	})
	if err != nil {
		return fmt.Errorf("subscription %s: %w", topic, err)
	}
	ws, err := t.ctx.NewWaitSet()
	if err != nil {
		return errors.Join(fmt.Errorf("wait set: %w", err), sub.Close())
	}
	ws.AddSubscriptions(sub)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := ws.Run(ctx)
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		done <- errors.Join(err, ws.Close())
	}()
	t.mu.Lock()
	t.spins, t.stops = append(t.spins, done), append(t.stops, cancel)
	t.mu.Unlock()
	return nil
}

// close stops the wait sets.
func (t *transport) close() {
	t.mu.Lock()
	stops, spins := t.stops, t.spins
	t.mu.Unlock()
	for _, s := range stops {
		s()
	}
	for _, d := range spins {
		<-d
	}
}
