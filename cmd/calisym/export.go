package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/internal/onnx"
	"github.com/calisym/calisym/internal/onnxmodel"
	"github.com/calisym/calisym/trainer"
)

// errExport reports export flags that do not make a graph.
var errExport = errors.New("export")

func newExportCmd() *cobra.Command {
	var onnxOut, batch, dtype string
	var horizon int
	var unroll, jacobian, portHistory bool
	cmd := &cobra.Command{
		Use:   "export MODEL --onnx FILE [--horizon H [--unroll] | --jacobian | --port-history] [--batch dynamic|N] [--dtype float64|float32]",
		Short: "Write a model (GR, GRB or MLP) as an ONNX graph",
		Long: `Export writes the model's one-step map x' = F(x, e) as an ONNX graph in
float64 (inputs "state" [batch, 2n] and "ports" [batch, n_u+n_c], output
"next_state"), or with --horizon H its H-step rollout, an ONNX Loop over one
step or with --unroll H copies of it (inputs "state" and "ports" [batch, H,
n_u+n_c], output "states" [batch, H, 2n]). --batch
dynamic leaves the batch dimension symbolic ("batch"); a number fixes it.
--jacobian adds the step Jacobians to the one-step map: the outputs
"jac_state" (A = dx'/dx, [batch, 2n, 2n]) and "jac_ports" (B = dx'/de,
[batch, 2n, n_u+n_c]). --dtype float32 writes every tensor in float32
(float64, the default, reproduces the Go rollout to rounding).
--port-history writes, instead of the model, the graph that builds a
port-history model's ports from measured ones (inputs "plan" [batch, H,
a+n_c] and "history" [batch, K, a+n_c], outputs "means" and "ports"
[batch, H, n_u+n_c]), for a model converted with convert.history.port_mean.
The graph uses ONNX opset ` + strconv.Itoa(onnx.Opset) + ` and is calisym ONNX version ` + strconv.Itoa(onnxmodel.Version) + `, documented with
the model file in docs/model-format.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if onnxOut == "" {
				return fmt.Errorf("%w: --onnx FILE is required", errExport)
			}
			if unroll && horizon < 1 {
				return fmt.Errorf("%w: --unroll needs --horizon H", errExport)
			}
			if jacobian && horizon != 0 {
				return fmt.Errorf("%w: --jacobian belongs to the one-step map: leave out --horizon (got %d)", errExport, horizon)
			}
			if portHistory && (horizon != 0 || jacobian) {
				return fmt.Errorf("%w: --port-history writes the port-history graph: leave out --horizon and --jacobian", errExport)
			}
			if dtype != "float64" && dtype != "float32" {
				return fmt.Errorf("%w: --dtype %q: want float64 or float32", errExport, dtype)
			}
			opt := onnxmodel.Options{Horizon: horizon, Unroll: unroll, Jacobian: jacobian, Float32: dtype == "float32"}
			if batch != "dynamic" {
				b, err := strconv.Atoi(batch)
				if err != nil || b < 1 {
					return fmt.Errorf("%w: --batch %q: want \"dynamic\" or a positive number", errExport, batch)
				}
				opt.Batch = b
			}
			if horizon < 0 {
				return fmt.Errorf("%w: --horizon %d: want 0 (one step) or a positive number of steps", errExport, horizon)
			}
			if sameFile(onnxOut, args[0]) {
				return fmt.Errorf("%w: --onnx %s is the model file %s: writing the graph there would replace the model; name another file", errExport, onnxOut, args[0])
			}
			sv, err := trainer.OpenModel(args[0])
			if err != nil {
				return err
			}
			if sv.Prior != nil {
				return fmt.Errorf("%w: %s: %w: the ONNX graph would hold the learned map without the %s step", errExport, args[0], trainer.ErrPriorUnsupported, sv.Prior.Kind)
			}
			if sv.Warning != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", sv.Warning)
			}
			for _, kv := range []struct {
				key   string
				names []string
			}{{"calisym.coordinates", sv.Coordinates}, {"calisym.ports", sv.Ports}} {
				if len(kv.names) > 0 {
					b, _ := json.Marshal(kv.names)
					opt.Meta = append(opt.Meta, [2]string{kv.key, string(b)})
				}
			}
			opt.Meta = append(opt.Meta, exportMeta(sv)...)
			build := func(opt onnxmodel.Options) (*onnx.Model, error) {
				if portHistory {
					l := sv.Layout
					if sv.PortMean == 0 || l.N == 0 {
						return nil, fmt.Errorf("%w: --port-history: %s has no port history (port_mean 0; convert.history.port_mean in the params makes one)", errExport, args[0])
					}
					return onnxmodel.PortHistory(sv.PortMean, (l.NU-l.NC)/2, l.NC, opt)
				}
				if sv.Model == nil {
					return onnxmodel.MLP(sv.Net, opt)
				}
				plan, err := sv.Model.Compile()
				if err != nil {
					return nil, err
				}
				return onnxmodel.Symplectic(plan.Tensors(), opt)
			}
			if unroll {
				if err := checkUnrolledSize(build, opt, maxONNXBytes); err != nil {
					return err
				}
			}
			m, err := build(opt)
			if err != nil {
				return err
			}
			if err := m.Check(); err != nil {
				return fmt.Errorf("%w: internal error, the graph is not valid ONNX (%s not written): %w", errExport, onnxOut, err)
			}
			if err := cmd.Context().Err(); err != nil {
				return fmt.Errorf("export: interrupted, %s not written: %w", onnxOut, err)
			}
			b := m.Marshal()
			if err := atomicfile.WriteFile(onnxOut, b); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			what := "one-step map"
			if portHistory {
				what = fmt.Sprintf("port history (m = %d)", sv.PortMean)
			}
			if jacobian {
				what += " with Jacobians"
			}
			if horizon > 0 {
				what = fmt.Sprintf("%d-step rollout", horizon)
				if unroll {
					what += ", unrolled"
				} else {
					what += " (Loop)"
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s (%s): %s, %s, %d nodes, %d bytes -> %s\n", args[0], sv.Kind, what, dtype, m.Graph.Nodes(), len(b), onnxOut)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&onnxOut, "onnx", "", "output ONNX file (required)")
	f.IntVar(&horizon, "horizon", 0, "export the H-step rollout instead of the one-step map (0: one step)")
	f.StringVar(&batch, "batch", "1", `batch dimension: a number, or "dynamic"`)
	f.BoolVar(&unroll, "unroll", false, "write the rollout as H copies of the step instead of an ONNX Loop over one")
	f.BoolVar(&jacobian, "jacobian", false, `add the step Jacobians to the one-step map (outputs "jac_state" and "jac_ports")`)
	f.StringVar(&dtype, "dtype", "float64", "real type of the graph: float64 or float32")
	f.BoolVar(&portHistory, "port-history", false, `write the graph that builds a port-history model's ports from measured ones instead of the model`)
	return cmd
}

// maxONNXBytes bounds the file export writes: an unrolled rollout grows
// with its horizon (a 10,000-step unroll of a quadrotor model is 1.3 GB,
// built in memory).
const maxONNXBytes = 256 << 20

// checkUnrolledSize reports an unrolled rollout whose file would exceed
// limit bytes, before it is built: its size is that of one step plus H − 1
// times what each further step adds, measured on the unrolls of 1 and 2.
func checkUnrolledSize(build func(onnxmodel.Options) (*onnx.Model, error), opt onnxmodel.Options, limit int) error {
	size := func(h int) (int, error) {
		o := opt
		o.Horizon = h
		m, err := build(o)
		if err != nil {
			return 0, err
		}
		return len(m.Marshal()), nil
	}
	one, err := size(1)
	if err != nil {
		return err
	}
	two, err := size(2)
	if err != nil {
		return err
	}
	step := max(two-one, 1)
	maxH := 1 + (limit-one)/step
	if opt.Horizon <= maxH {
		return nil
	}
	return fmt.Errorf("%w: --horizon %d --unroll: the file would be about %d MB (%d KB a step), more than the limit of %d MB; pass --horizon %d or less, or leave out --unroll (the ONNX Loop, whose size does not grow with H)",
		errExport, opt.Horizon, (one+(opt.Horizon-1)*step)>>20, step>>10, limit>>20, maxH)
}

// sameFile reports whether paths a and b name one file (b existing).
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// exportMeta returns the metadata of the model file that the ONNX graph
// carries beside its names: the sampling period, an MLP's layout (a
// SympNet's graph records its own) and the port history's m.
func exportMeta(sv *trainer.SavedModel) [][2]string {
	var meta [][2]string
	if sv.Dt > 0 {
		meta = append(meta, [2]string{"calisym.dt", strconv.FormatFloat(sv.Dt, 'g', -1, 64)})
	}
	if l := sv.Layout; sv.Model == nil && l.N > 0 {
		meta = append(meta, [2]string{"calisym.layout", fmt.Sprintf(`{"n":%d,"n_u":%d,"n_c":%d}`, l.N, l.NU, l.NC)})
	}
	meta = append(meta, [2]string{"calisym.port_mean", strconv.Itoa(sv.PortMean)})
	return meta
}
