package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/foxglove"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
)

func newNodeCmd() *cobra.Command {
	var paramsPath, modelPath, transport, addr, input, dataRoot string
	var simPendulum, loop, check bool
	var speed float64
	var every int
	var ghost ghostFlags
	var fcFlags forecastFlags
	cmd := &cobra.Command{
		Use:   "node --params FILE [--model MODEL] --transport foxglove [--input LOG | --sim-pendulum]",
		Short: "Serve the predictor node live (Foxglove WebSocket)",
		Long: `node runs the predictor node on the wall clock: it builds the state from the
latest inputs with the params file's convert mapping, predicts over the
horizon and publishes the prediction, the predicted joint states, the
predicted base path of a floating base and diagnostics.

--transport foxglove serves everything, inputs included, over the Foxglove
WebSocket protocol on --addr (127.0.0.1:8765 by default: this machine only).
Its inputs come from --input LOG, played in real time with fresh stamps
(--loop to repeat; a log cut short is played up to the damage, every time
round, with one warning), or from --sim-pendulum, the simulated double
pendulum of params/pendulum_sim.yaml (what 'calisym sim --mcap' records).

The ROS 2 transport is the calisym_ros2 binary of the Go module in
nodes/ros2 (it needs a sourced ROS 2 and cgo; see nodes/ros2/README.md and
the launch files). --check loads what the node loads except the model —
the params, the mechanics model's files under the data root (the URDF, a
pendulum's parameters), the message definitions of the input topics with
every message path the params name, the robot description — and fails
where the node would; it reads no log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if check {
				if paramsPath == "" {
					return errors.New("--params is required")
				}
				p, err := loadNodeParams(paramsPath)
				if err != nil {
					return err
				}
				root, err := liveDataRoot(p, dataRoot)
				if err != nil {
					return err
				}
				if err := node.Check(p, root); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: OK (%d input topics, %s)\n", paramsPath, len(p.Node.Topics), triggerText(p.Node.Trigger))
				return nil
			}
			switch transport {
			case "foxglove":
			case "ros2":
				return errors.New("the ROS 2 transport is the calisym_ros2 binary built from nodes/ros2 (a Go module of its own that needs a sourced ROS 2 and cgo): see nodes/ros2/README.md, or 'ros2 launch calisym <robot>.launch.py'")
			default:
				return fmt.Errorf("--transport %q: want foxglove (or ros2, the calisym_ros2 binary)", transport)
			}
			if (input == "") == !simPendulum {
				return errors.New("give the inputs: --input LOG or --sim-pendulum")
			}
			if err := floatAbove("speed", speed, 0); err != nil {
				return err
			}
			ls, err := loadLive(cmd, paramsPath, modelPath, dataRoot)
			if err != nil {
				return err
			}
			if err := ghost.apply(ls.params); err != nil {
				return err
			}
			if err := fcFlags.apply(ls.params); err != nil {
				return err
			}
			switch {
			case every < 0:
				return fmt.Errorf("--every %d: want 1 or more", every)
			case every > 0:
				ls.params.Node.Trigger.Every = every
			}
			ctx := cmd.Context()
			srv, pub, err := startFoxglove(ctx, addr, false, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer srv.Close()
			// A log's inputs are decoded, and echoed to Foxglove, in the
			// encoding and schema it records them with (CDR for MCAP, ROS 1
			// for a bag), as replay does.
			var types map[string]node.TopicType
			if input != "" {
				if types, err = logInputTypes(input, ls.params); err != nil {
					return err
				}
			}
			now := func() int64 { return time.Now().UnixNano() }
			nd, err := node.New(node.Options{Params: ls.params, Model: ls.model, ModelSHA256: ls.sha, ModelPath: ls.modelPath, DataRoot: ls.root, Types: types, Now: now, Publisher: pub})
			if err != nil {
				return err
			}
			bus := &node.Bus{}
			runErr := make(chan error, 1)
			go func() { runErr <- nd.Run(ctx, node.Compose(pub, bus), node.RunOptions{Echo: true}) }()
			deliver := func(topic string, data []byte) { bus.Deliver(topic, data) }
			types = nd.InputTypes()
			fmt.Fprintf(cmd.ErrOrStderr(), "predicting %d steps of %g s from %s\n", nd.Horizon(), nd.Dt(), topicList(types))
			var playErr error
			if simPendulum {
				playErr = playPendulum(cmd, deliver, speed)
			} else {
				var topics []string
				for t := range types {
					topics = append(topics, t)
				}
				playErr = playLog(ctx, input, topics, deliver, loop, speed, cmd.ErrOrStderr())
			}
			if playErr != nil && ctx.Err() == nil {
				return playErr
			}
			if ctx.Err() == nil {
				// Inputs ended: keep serving until interrupted.
				<-ctx.Done()
			}
			if err := <-runErr; err != nil {
				return err
			}
			st := nd.Stats()
			fmt.Fprintf(cmd.OutOrStdout(), "%d predictions, %d suppressed, %d diagnostics; %d messages dropped by Foxglove clients' queues\n",
				st.Predictions, st.Suppressed, st.Diagnostics, srv.Stats().Dropped)
			printInputStats(cmd.OutOrStdout(), st)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&paramsPath, "params", "", "params YAML with convert: and node: sections")
	f.StringVar(&modelPath, "model", "", "model file (.safetensors); default: node.model of the params")
	f.StringVar(&transport, "transport", "foxglove", "foxglove (ros2: see nodes/ros2)")
	f.StringVar(&addr, "addr", foxglove.DefaultAddr, "Foxglove WebSocket address (0.0.0.0:8765 to listen on every interface)")
	f.StringVar(&input, "input", "", "play this log (MCAP or ROS 1 bag) as the live inputs")
	f.BoolVar(&simPendulum, "sim-pendulum", false, "feed the simulated double pendulum (params/pendulum_sim.yaml topics)")
	f.BoolVar(&loop, "loop", false, "repeat --input")
	f.Float64Var(&speed, "speed", 1, "input playback rate")
	f.IntVar(&every, "every", 0, "predict on every K-th trigger (default: node.trigger.every of the params, 1)")
	f.BoolVar(&check, "check", false, "only load and check what the node loads except the model (params, URDF, message definitions) and exit")
	f.StringVar(&dataRoot, "data", "", "directory of the spec's parameter files and URDFs (default $CALISYM_DATA, else the params file's directory)")
	ghost.add(f)
	fcFlags.add(f)
	return cmd
}

// logInputTypes returns the types of the node's input topics as the log
// at path records them (replay.InputTypes).
func logInputTypes(path string, p *node.Params) (map[string]node.TopicType, error) {
	r, err := logio.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return replay.InputTypes(r, p, 0)
}

// playPendulum feeds the simulated pendulum in real time, as
// experiment.WritePendulumMCAP records it (joint state, then the torque
// command held until the next sample), until the context ends.
func playPendulum(cmd *cobra.Command, deliver func(string, []byte), speed float64) error {
	data, _, err := experiment.PendulumPreset("default")
	if err != nil {
		return err
	}
	trs, err := data.SimulateSplit(cmd.Context(), experiment.Split{Name: "live", Energy: data.TrainEnergy, Seed: 11, Count: 6})
	if err != nil {
		return err
	}
	if speed <= 0 {
		speed = 1
	}
	ctx := cmd.Context()
	torque := msgs.Float64MultiArray{Layout: msgs.MultiArrayLayout{Dim: []msgs.MultiArrayDimension{{Label: "joint", Size: 2, Stride: 2}}}, Data: make([]float64, 2)}
	js := msgs.JointState{Name: experiment.PendulumJointNames[:], Position: make([]float64, 2), Velocity: make([]float64, 2), Effort: make([]float64, 2)}
	step := time.Duration(data.Sim.Dt / speed * float64(time.Second))
	next := time.Now()
	var buf []byte
	for {
		for _, tr := range trs {
			for k := range tr.Len() {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Until(next)):
				}
				next = next.Add(step)
				js.Header.Stamp = msgs.TimeFromNanos(time.Now().UnixNano())
				copy(js.Position, tr.Q[2*k:2*k+2])
				copy(js.Velocity, tr.V[2*k:2*k+2])
				copy(js.Effort, tr.U[2*k:2*k+2])
				buf = msgs.AppendMarshal(buf[:0], &js)
				deliver(experiment.PendulumJointTopic, buf)
				copy(torque.Data, tr.U[2*k:2*k+2])
				buf = msgs.AppendMarshal(buf[:0], &torque)
				deliver(experiment.PendulumTorqueTopic, buf)
			}
		}
	}
}

// playLog plays the given topics of a log in real time, looping if asked.
// A log that ends early or is damaged (a recording cut off, a bad chunk)
// is played up to the damage, each time round, with one warning on log
// that says what was lost; it is an error only when nothing before the
// damage could be played.
func playLog(ctx context.Context, path string, topics []string, deliver func(string, []byte), loop bool, speed float64, log io.Writer) error {
	warned := false
	for {
		r, err := logio.Open(path, nil)
		if err != nil {
			return err
		}
		played := 0
		count := func(topic string, data []byte) {
			played++
			deliver(topic, data)
		}
		err = replay.Play(ctx, r, count, replay.PlayOptions{Topics: topics, Speed: speed})
		if err == nil && !warned {
			if end := logio.MissingEnd(r); end != nil {
				fmt.Fprintf(log, "warning: %s: played all %d input messages: %v\n", path, played, end)
				warned = true
			}
		}
		r.Close()
		if err != nil && ctx.Err() == nil && played > 0 {
			if !warned {
				again := "the node keeps serving"
				if loop {
					again = "each loop plays the part before the damage"
				}
				fmt.Fprintf(log, "warning: %s: %v (%s)\n", path, err, again)
				warned = true
			}
			err = nil
		}
		if err != nil || !loop {
			return err
		}
	}
}

// triggerText describes a trigger for node --check: "trigger on_state",
// "trigger message /joint_states" (only a message trigger has a topic).
func triggerText(tc node.TriggerConfig) string {
	if tc.Kind == node.TriggerMessage {
		return "trigger " + tc.Kind + " " + tc.Topic
	}
	return "trigger " + tc.Kind
}
