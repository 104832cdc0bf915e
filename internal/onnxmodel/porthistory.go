package onnxmodel

import (
	"fmt"
	"strconv"

	"github.com/calisym/calisym/internal/onnx"
)

// PortHistory returns the ONNX graph that builds a port-history model's
// ports from measured ones (convert.history.port_mean, statemap.PortHistory;
// docs/model-format.md): with m the history's length, a the actuated
// ports and nc the contact forces, it takes "plan" (batch × H × (a + nc),
// the measured ports (u, f_c) of the plan's steps) and "history" (batch ×
// K × (a + nc), the measured ports of the K samples before the plan,
// oldest first, K ≥ 0 the same for the whole batch) and outputs "means"
// (batch × H × (a + nc)): step k's means over the m samples before it,
// the history's and the plan's own earlier steps, the newest m of them,
// over fewer where fewer are held, and the step's own ports where none
// are (k = 0, K = 0); and "ports" (batch × H × (2a + 2nc)), the model's
// port input (u, the means, f_c). The means are one matrix product of a
// weight matrix built from K and H with the history and the plan
// stacked: they equal conversion's, which sums the samples first and
// divides after, to rounding.
func PortHistory(m, a, nc int, opt Options) (*onnx.Model, error) {
	if m < 1 || a < 0 || nc < 0 || a+nc == 0 {
		return nil, fmt.Errorf("%w: a port history of m = %d over %d actuated ports and %d contact forces", ErrOptions, m, a, nc)
	}
	if opt.Batch < 0 {
		return nil, fmt.Errorf("%w: batch %d", ErrOptions, opt.Batch)
	}
	g := newGraph("calisym_port_history", opt)
	nm := a + nc
	batch := onnx.Symbolic("batch")
	if opt.Batch > 0 {
		batch = onnx.Fixed(opt.Batch)
	}
	plan := g.Input(onnx.Value{Name: "plan", Shape: []onnx.Dim{batch, onnx.Symbolic("horizon"), onnx.Fixed(nm)},
		Doc: "measured ports (u, f_c) of the plan's steps"})
	hist := g.Input(onnx.Value{Name: "history", Shape: []onnx.Dim{batch, onnx.Symbolic("held"), onnx.Fixed(nm)},
		Doc: "measured ports (u, f_c) of the samples before the plan, oldest first (0 rows or more)"})
	op := func(o string, in ...string) string { return g.Op(o, in) }
	toReal := func(v string) string { return g.Op("Cast", []string{v}, onnx.IntAttr("to", g.RealType())) }
	ax := g.Int64s("axes", []int64{1}, 1)
	ax0 := g.Int64s("axes", []int64{1}, 0)
	// K and H, int64 scalars, from the inputs' shapes.
	dim := func(v string) string {
		return g.Op("Gather", []string{op("Shape", v), g.Int64s("dim", nil, 1)}, onnx.IntAttr("axis", 0))
	}
	k, h := dim(hist), dim(plan)
	zero, one := g.Int64s("zero", nil, 0), g.Int64s("one", nil, 1)
	// pos (1 × (K+H)): the positions of the stacked samples; now (H × 1):
	// step j's position K + j; lo = max(now − m, 0) the window's first.
	pos := op("Unsqueeze", toReal(op("Range", zero, op("Add", k, h), one)), ax0)
	now := op("Unsqueeze", toReal(op("Add", op("Range", zero, h, one), k)), ax)
	lo := op("Max", op("Sub", now, g.Scalar(float64(m))), g.Scalar(0))
	held := op("Sub", now, lo)
	// Inside the window lo ≤ p < now, weighed 1/held; where held = 0, the
	// step's own sample p = now, weighed 1.
	in := op("And", op("Not", op("Less", pos, lo)), op("Less", pos, now))
	w := op("Div", toReal(in), op("Max", held, g.Scalar(1)))
	own := op("Mul", toReal(op("Equal", pos, now)), toReal(op("Equal", held, g.Scalar(0))))
	w = op("Add", w, own) // H × (K+H)
	seq := g.Op("Concat", []string{hist, plan}, onnx.IntAttr("axis", 1))
	means := op("MatMul", w, seq)
	g.Output(onnx.Value{Name: "means", Shape: []onnx.Dim{batch, onnx.Symbolic("horizon"), onnx.Fixed(nm)},
		Doc: "the port history's means for each step of the plan"}, means)
	cut := func(x string, from, to int) string {
		return op("Slice", x, g.Int64s("start", []int64{1}, int64(from)), g.Int64s("end", []int64{1}, int64(to)), g.Int64s("axes", []int64{1}, 2))
	}
	parts := []string{}
	if a > 0 {
		parts = append(parts, cut(plan, 0, a))
	}
	parts = append(parts, means)
	if nc > 0 {
		parts = append(parts, cut(plan, a, nm))
	}
	ports := g.Op("Concat", parts, onnx.IntAttr("axis", 2))
	g.Output(onnx.Value{Name: "ports", Shape: []onnx.Dim{batch, onnx.Symbolic("horizon"), onnx.Fixed(nm + nm)},
		Doc: "the model's ports (u, the means, f_c) for each step of the plan"}, ports)
	dtype := "float64"
	if opt.Float32 {
		dtype = "float32"
	}
	meta := [][2]string{
		{"calisym.onnx_version", strconv.Itoa(Version)},
		{"calisym.graph", "port_history"},
		{"calisym.port_mean", strconv.Itoa(m)},
		{"calisym.dtype", dtype},
	}
	meta, err := metadata(meta, opt.Meta)
	if err != nil {
		return nil, err
	}
	return &onnx.Model{Graph: g, ProducerName: "calisym", ProducerVersion: strconv.Itoa(Version),
		Doc:      "calisym port-history graph exported by calisym export --port-history (docs/model-format.md)",
		Metadata: meta}, nil
}
