package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/internal/outguard"
	"github.com/calisym/calisym/nodes/foxglove"
	"github.com/calisym/calisym/nodes/foxglove/bridge"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
	"github.com/calisym/calisym/predictor"
)

// liveSetup is what replay and node share: the params, the model and its
// identity.
type liveSetup struct {
	params *node.Params
	model  *predictor.Model
	sha    string
	root   string
	// modelPath is the model file's path.
	modelPath string
}

// loadNodeParams loads a params file for the live node: the whole
// convert section as dataset conversion checks it (the node itself reads
// only the mapping and the rate), then the node's view of it.
func loadNodeParams(path string) (*node.Params, error) {
	if _, err := convert.LoadSpec(path); err != nil {
		return nil, err
	}
	return node.LoadParams(path)
}

// loadLive loads the params file and the model (the flag, else the params'
// node.model; a model file without checksums is loaded with openModel's
// warning), refuses a model whose ports were computed otherwise than the
// params compute them (node.CheckPortMap; one that does not record how is
// loaded with a warning), and resolves the data root (the flag, else $CALISYM_DATA, else
// the params file's directory).
func loadLive(cmd *cobra.Command, paramsPath, modelPath, dataRoot string) (*liveSetup, error) {
	if paramsPath == "" {
		return nil, errors.New("--params is required")
	}
	p, err := loadNodeParams(paramsPath)
	if err != nil {
		return nil, err
	}
	if modelPath == "" {
		modelPath = p.Resolve(p.Node.Model)
	}
	if modelPath == "" {
		return nil, fmt.Errorf("no model: give --model or node.model in %s", paramsPath)
	}
	raw, err := os.ReadFile(modelPath)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	saved, err := openModel(cmd, modelPath)
	if err != nil {
		return nil, err
	}
	if saved.Model == nil {
		return nil, fmt.Errorf("model %s is a %s baseline; the predictor node serves CaLiSym models (.safetensors)", modelPath, saved.Kind)
	}
	// ports computed otherwise than in training are refused before a log
	// is opened; a model that cannot be checked is served with a warning
	w, err := node.CheckPortMap(p.Spec, saved.Model)
	if err != nil {
		return nil, fmt.Errorf("model %s with params %s: %w", modelPath, paramsPath, err)
	}
	if w != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %s: %s\n", cmd.CommandPath(), modelPath, w)
	}
	sum := sha256.Sum256(raw)
	dataRoot, err = liveDataRoot(p, dataRoot)
	if err != nil {
		return nil, err
	}
	return &liveSetup{params: p, model: saved.Model, sha: hex.EncodeToString(sum[:]), root: dataRoot, modelPath: modelPath}, nil
}

// liveDataRoot resolves the data root of replay and node (flag, the --data
// flag's value: the flag, else $CALISYM_DATA, else "", the params file's
// directory) and checks that the params' model files are found under it.
func liveDataRoot(p *node.Params, flag string) (string, error) {
	root, source := flag, "--data"
	if root == "" {
		root, source = os.Getenv("CALISYM_DATA"), "$CALISYM_DATA"
	}
	if root == "" {
		source = "the params file's directory, as neither --data nor $CALISYM_DATA is set"
	}
	return root, checkDataRoot(p, root, source)
}

// checkDataRoot reports a model file of the params (model.urdf,
// model.pendulum.params_file) that is relative to the data root and not
// found there, naming where the root came from and --data, before the
// node opens it with a bare "no such file".
func checkDataRoot(p *node.Params, root, source string) error {
	if root == "" {
		root = p.Resolve(".")
	}
	m := &p.Spec.Model
	for _, f := range []struct{ field, path string }{
		{"model.urdf", m.URDF},
		{"model.pendulum.params_file", m.Pendulum.ParamsFile},
	} {
		if f.path == "" || filepath.IsAbs(f.path) {
			continue
		}
		full := filepath.Join(root, f.path)
		if _, err := os.Stat(full); err != nil {
			return fmt.Errorf("%s: %s %q is relative to the data root, and %s does not exist (data root %s: %s); give --data DIR (or set $CALISYM_DATA), the directory %s is relative to",
				p.Path, f.field, f.path, full, root, source, f.field)
		}
	}
	return nil
}

// ros2Distros returns the ROS 2 distributions whose rosbag2 conventions
// replay --distro names.
func ros2Distros() []string {
	return []string{"foxy", "galactic", "humble", "iron", "jazzy", "kilted", "rolling"}
}

// interruptedName is where an interrupted replay keeps what it wrote:
// out with ".interrupted" before its extension (r.mcap:
// r.interrupted.mcap), which Foxglove still opens as MCAP.
func interruptedName(out string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + ".interrupted" + ext
}

func newReplayCmd() *cobra.Command {
	var paramsPath, modelPath, out, fox, compression, distro, dataRoot string
	var speed float64
	var every int
	var ghost ghostFlags
	var fcFlags forecastFlags
	cmd := &cobra.Command{
		Use:   "replay --params FILE --model MODEL LOG [--out OUT.mcap] [--foxglove ADDR]",
		Short: "Run the predictor node over a recorded log: MCAP out, or live to Foxglove",
		Long: `replay hands every message of LOG (MCAP or ROS 1 bag) on the node's input
topics to the predictor node at its log time, on a clock that is the log time,
so the output depends on the log alone: the same command writes the same
bytes. --out writes the inputs and every output (predictions, predicted joint
states and base path, diagnostics) to a ROS 2 MCAP file that Foxglove and
'ros2 bag play' open. The inputs of a ROS 1 bag are left out of it (and out of
--foxglove): they are ROS 1 messages, not CDR; the output says how many. The latencies in it are zero: the log clock does not
advance while the node computes. The file appears only when the replay
succeeds: a replay that fails, or in which the node made no prediction
(every input rejected: the counts say why), exits non-zero and writes none.
An interrupted replay (Ctrl-C) exits non-zero too and keeps what it
replayed so far, a valid MCAP, as OUT.interrupted.mcap, never at --out;
with --foxglove, Ctrl-C is how a replay served in real time ends: it
keeps the same file and exits 0.

--every K (default 10) predicts on every K-th trigger, 10 Hz for the robots
whose inputs arrive at 100 Hz: a prediction is about 60 KB for a quadruped,
and one at every 100 Hz input makes a minute of ANYmal some 216 MB (zstd)
where the input is 4.4 MB. --every 1 predicts on every trigger. It
overrides the params' node.trigger.every.

A log cut short (a recorder killed before it wrote the summary, a copy that
did not finish) is replayed up to the damage, with a warning on stderr that
says how many input messages were kept. An MCAP log whose data section is
complete but which has no footer is replayed in full, with a warning that
says so.

--foxglove ADDR also serves everything over the Foxglove WebSocket protocol
(foxglove.websocket.v1) on ADDR (use 127.0.0.1:8765; only loopback unless you
say otherwise) and paces the replay in real time (--speed changes the rate).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" && fox == "" {
				return errors.New("give --out, --foxglove or both")
			}
			if err := floatIn("speed", speed, 0, math.Inf(1)); err != nil {
				return fmt.Errorf("replay: %w (0: as fast as possible, 1: real time)", err)
			}
			if !slices.Contains(ros2Distros(), distro) {
				return fmt.Errorf("replay: --distro %q: want a ROS 2 distribution, one of %s", distro, strings.Join(ros2Distros(), ", "))
			}
			ls, err := loadLive(cmd, paramsPath, modelPath, dataRoot)
			if err != nil {
				return err
			}
			if err := outguard.Check([]outguard.Path{{Flag: "LOG", Path: args[0]}, {Flag: "--params", Path: paramsPath},
				{Flag: "--model", Path: cmp.Or(modelPath, ls.params.Resolve(ls.params.Node.Model))}},
				[]outguard.Path{{Flag: "--out", Path: out}}); err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			if err := ghost.apply(ls.params); err != nil {
				return err
			}
			if err := fcFlags.apply(ls.params); err != nil {
				return err
			}
			if every < 1 {
				return fmt.Errorf("--every %d: want 1 or more", every)
			}
			ls.params.Node.Trigger.Every = every
			r, err := logio.Open(args[0], nil)
			if err != nil {
				return err
			}
			defer r.Close()
			ctx := cmd.Context()
			o := replay.Options{Params: ls.params, Model: ls.model, ModelSHA256: ls.sha, ModelPath: ls.modelPath, DataRoot: ls.root, Speed: speed}
			// The MCAP is written under a temporary name and renamed onto
			// --out only when the replay succeeded: a failed replay leaves
			// no file that looks like a complete one.
			var w *logio.ROS2Writer
			var file *atomicfile.File
			if out != "" {
				if file, err = atomicfile.Create(out); err != nil {
					return fmt.Errorf("replay: %w", err)
				}
				defer file.Abort()
				if w, err = logio.NewROS2Writer(file, &logio.ROS2WriterOptions{Compression: compression, Distro: distro, FileName: filepath.Base(out)}); err != nil {
					return err
				}
				defer w.Close()
				o.Out = w
			}
			if fox != "" {
				srv, pub, err := startFoxglove(ctx, fox, true, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer srv.Close()
				o.Live = pub
				if !cmd.Flags().Changed("speed") {
					o.Speed = 1
				}
			}
			res, err := replay.Run(ctx, r, o)
			if res != nil {
				printReplay(cmd.OutOrStdout(), res)
				if res.Truncated != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %v\n", args[0], res.Truncated)
				}
				if res.Unfinished != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %v\n", args[0], res.Unfinished)
				}
			}
			// Interrupted (Ctrl-C): what was replayed so far is kept as
			// a valid MCAP under a name that says it is partial, never
			// at --out, and the command fails, unless it was serving
			// Foxglove in real time, which Ctrl-C ends as it ends node.
			stopped := err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())
			served := stopped && fox != ""
			if err != nil && !stopped {
				if out != "" {
					return fmt.Errorf("%w (%s not written)", namedErr(args[0], err), out)
				}
				return namedErr(args[0], err)
			}
			if w != nil {
				if err := w.Close(); err != nil {
					return err
				}
				if stopped {
					partial := interruptedName(out)
					if err := file.CommitTo(partial); err != nil {
						return fmt.Errorf("replay: interrupted: %w", err)
					}
					if served {
						fmt.Fprintf(cmd.OutOrStdout(), "stopped: %s not written; the messages replayed so far are in %s\n", out, partial)
						return nil
					}
					return fmt.Errorf("replay: interrupted: %s not written; the messages replayed so far are in %s: %w", out, partial, err)
				}
				if err := file.Commit(); err != nil {
					return fmt.Errorf("replay: %w", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			}
			if stopped && !served {
				return fmt.Errorf("replay: interrupted: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&paramsPath, "params", "", "params YAML with convert: and node: sections")
	f.StringVar(&modelPath, "model", "", "model file (.safetensors); default: node.model of the params")
	f.StringVar(&out, "out", "", "MCAP file to write")
	f.StringVar(&fox, "foxglove", "", "also serve over Foxglove WebSocket on this address (e.g. 127.0.0.1:8765), in real time")
	f.Float64Var(&speed, "speed", 0, "pace: 0 as fast as possible, 1 real time (the default with --foxglove)")
	f.IntVar(&every, "every", 10, "predict on every K-th trigger (1: on each)")
	f.StringVar(&compression, "compression", "zstd", "MCAP chunk compression: zstd, lz4 or none")
	f.StringVar(&distro, "distro", "jazzy", "ROS 2 distribution whose rosbag2 conventions the MCAP follows")
	f.StringVar(&dataRoot, "data", "", "directory of the spec's parameter files and URDFs (default $CALISYM_DATA, else the params file's directory)")
	ghost.add(f)
	fcFlags.add(f)
	return cmd
}

func printReplay(w io.Writer, res *replay.Result) {
	st := res.Stats
	fmt.Fprintf(w, "%d input messages, %d predictions, %d suppressed, %d diagnostics\n", res.Messages, st.Predictions, st.Suppressed, st.Diagnostics)
	printInputStats(w, st)
	if res.Skipped > 0 {
		fmt.Fprintf(w, "  %d input messages not copied to the MCAP (ROS 1 messages, not CDR)\n", res.Skipped)
	}
}

// printInputStats writes the counts of every input topic that had
// messages rejected or dropped, sorted by topic.
func printInputStats(w io.Writer, st node.Stats) {
	for _, topic := range slices.Sorted(maps.Keys(st.Inputs)) {
		in := st.Inputs[topic]
		if in.Received != in.Accepted || in.Dropped > 0 {
			fmt.Fprintf(w, "  %s: %d received, %d accepted, %d NaN, %d mismatched, %d undecodable, %d out of order, %d duplicates, %d dropped\n",
				topic, in.Received, in.Accepted, in.RejectedNaN, in.RejectedMismatch, in.RejectedDecode, in.OutOfOrder, in.Duplicates, in.Dropped)
		}
	}
}

// startFoxglove starts a Foxglove WebSocket server on addr and returns it
// with a node publisher on it.
func startFoxglove(ctx context.Context, addr string, logTime bool, log io.Writer) (*foxglove.Server, *bridge.Publisher, error) {
	o := &foxglove.Options{Addr: addr}
	if logTime {
		o.Capabilities = []string{foxglove.CapabilityTime}
	}
	srv, err := foxglove.NewServer(o)
	if err != nil {
		return nil, nil, err
	}
	bound, err := srv.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(log, "serving Foxglove WebSocket on ws://%s (open it in Foxglove: Open connection → Foxglove WebSocket)\n", bound)
	return srv, bridge.New(srv, &bridge.Options{BroadcastTime: logTime}), nil
}

// topicList formats topics for messages.
func topicList(m map[string]node.TopicType) string {
	var s []string
	for t, typ := range m {
		s = append(s, t+" ("+typ.Type+")")
	}
	return strings.Join(s, ", ")
}
