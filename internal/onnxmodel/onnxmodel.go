// Package onnxmodel builds the ONNX graphs of calisym's models (calisym
// ONNX version 1, documented in docs/model-format.md): the one-step map
// x' = F(x, e) of a GR/GRB-SympNet or of the MLP baseline, or its H-step
// autoregressive rollout (an ONNX Loop, or unrolled), in float64, with the inputs "state"
// and "ports" and the output "next_state" or "states".
package onnxmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/calisym/calisym/internal/onnx"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer/mlp"
)

// Version is the calisym ONNX graph version, recorded in the model's
// metadata as "calisym.onnx_version".
const Version = 1

// ErrOptions reports export options that do not make a graph.
var ErrOptions = errors.New("onnxmodel: invalid export options")

// Options chooses the graph.
type Options struct {
	// Horizon is 0 for the one-step map, H ≥ 1 for the H-step rollout.
	Horizon int
	// Unroll writes the rollout as H copies of the step instead of an
	// ONNX Loop over one copy (the default: a graph of constant size, which
	// onnxruntime loads in a fraction of the unrolled graph's time).
	Unroll bool
	// Batch is the fixed number of trajectories, or 0 for a symbolic
	// ("batch") first dimension.
	Batch int
	// Meta is added to the model's metadata_props.
	Meta [][2]string
}

// model is a one-step map under construction: begin turns the input
// state into what the rollout carries from step to step (the normalised
// state of a SympNet, the state itself for the MLP), step advances it
// under one port vector and finish turns it into a physical state.
type model struct {
	g      *onnx.Graph
	nx, ne int
	kind   string
	begin  func(state string) string
	step   func(carry, ports string) string
	finish func(carry string) string
}

// Symplectic returns the ONNX model of a compiled GR or GRB plan.
func Symplectic(t predictor.PlanTensors, opt Options) (*onnx.Model, error) {
	l := t.Layout
	g := onnx.NewGraph("calisym_" + string(t.Kind))
	n, d := l.N, l.D()
	d2, nx, ne := 2*d, l.StateDim(), l.PortDim()
	k := t.K
	// Section and projection as 0/1 matrices: products with them copy
	// values exactly.
	ex := make([]float64, nx*d2)
	for i := range nx {
		idx := l.OffQ() + i
		if i >= n {
			idx = l.OffP() + i - n
		}
		ex[i*d2+idx] = 1
	}
	ee := make([]float64, ne*d2)
	for j := range ne {
		idx := l.OffMuU() + j
		if j >= l.NU {
			idx = l.OffLambdaC() + j - l.NU
		}
		ee[j*d2+idx] = 1
	}
	pr := make([]float64, d2*nx)
	for i := range nx {
		idx := l.OffQ() + i
		if i >= n {
			idx = l.OffP() + i - n
		}
		pr[idx*nx+i] = 1
	}
	cEx := g.Const("embed_state", []int64{int64(nx), int64(d2)}, ex)
	cEe := g.Const("embed_ports", []int64{int64(ne), int64(d2)}, ee)
	cPr := g.Const("project", []int64{int64(d2), int64(nx)}, pr)
	muX := g.Const("mu_x", []int64{int64(nx)}, t.MuX)
	sX := g.Const("s_x", []int64{int64(nx)}, t.SX)
	muE := g.Const("mu_e", []int64{int64(ne)}, t.MuE)
	sE := g.Const("s_e", []int64{int64(ne)}, t.SE)
	one := g.Scalar(1)
	type layer struct{ mt, nu, b, a, coef, tw, twt, tb, ta string }
	var layers []layer
	for i, lt := range t.Layers {
		mt := make([]float64, d2*k)
		for r := range k {
			for c := range d2 {
				mt[c*k+r] = lt.M[r*d2+c]
			}
		}
		ly := layer{mt: g.Const(fmt.Sprintf("layer%d_Mt", i), []int64{int64(d2), int64(k)}, mt),
			nu: g.Const(fmt.Sprintf("layer%d_N", i), []int64{int64(k), int64(d2)}, lt.N)}
		switch t.Kind {
		case predictor.KindGR:
			ly.b = g.Const(fmt.Sprintf("layer%d_b", i), []int64{int64(k)}, lt.B)
			ly.a = g.Const(fmt.Sprintf("layer%d_a", i), []int64{int64(k)}, lt.A)
		case predictor.KindGRB:
			w := t.TailWidth
			ly.coef = g.Const(fmt.Sprintf("layer%d_spline", i), []int64{int64(len(lt.Coef)), 1}, lt.Coef)
			twt := make([]float64, k*w)
			for j := range w {
				for c := range k {
					twt[c*w+j] = lt.TailW[j*k+c]
				}
			}
			ly.tw = g.Const(fmt.Sprintf("layer%d_tailW", i), []int64{int64(w), int64(k)}, lt.TailW)
			ly.twt = g.Const(fmt.Sprintf("layer%d_tailWt", i), []int64{int64(k), int64(w)}, twt)
			ly.tb = g.Const(fmt.Sprintf("layer%d_tailb", i), []int64{int64(w)}, lt.TailB)
			ly.ta = g.Const(fmt.Sprintf("layer%d_taila", i), []int64{int64(w)}, lt.TailA)
		default:
			return nil, fmt.Errorf("%w: kind %q", ErrOptions, t.Kind)
		}
		layers = append(layers, ly)
	}
	// a ⊙ sech²(z): 1 − tanh² times a.
	sech2 := func(z, a string) string {
		th := g.Op("Tanh", []string{z})
		return g.Op("Mul", []string{g.Op("Sub", []string{one, g.Op("Mul", []string{th, th})}), a})
	}
	var sp *splineGraph
	if t.Kind == predictor.KindGRB {
		sp = newSplineGraph(g, t.Spline, k)
	}
	mapZ := func(z string) string {
		for _, ly := range layers {
			y := g.Op("MatMul", []string{z, ly.mt})
			var gr string
			switch t.Kind {
			case predictor.KindGR:
				gr = sech2(g.Op("Add", []string{y, ly.b}), ly.a)
			case predictor.KindGRB:
				tail := g.Op("MatMul", []string{sech2(g.Op("Add", []string{g.Op("MatMul", []string{y, ly.twt}), ly.tb}), ly.ta), ly.tw})
				gr = g.Op("Add", []string{sp.grad(y, ly.coef), tail})
			}
			z = g.Op("Add", []string{z, g.Op("MatMul", []string{gr, ly.nu})})
		}
		return z
	}
	m := &model{g: g, nx: nx, ne: ne, kind: string(t.Kind),
		begin: func(state string) string {
			return g.Op("Div", []string{g.Op("Sub", []string{state, muX}), sX})
		},
		step: func(xn, ports string) string {
			en := g.Op("Div", []string{g.Op("Sub", []string{ports, muE}), sE})
			z := g.Op("Add", []string{g.Op("MatMul", []string{xn, cEx}), g.Op("MatMul", []string{en, cEe})})
			return g.Op("MatMul", []string{mapZ(z), cPr})
		},
		finish: func(xn string) string {
			return g.Op("Add", []string{g.Op("Mul", []string{xn, sX}), muX})
		},
	}
	return m.build(opt, [][2]string{
		{"calisym.layout", fmt.Sprintf(`{"n":%d,"n_u":%d,"n_c":%d}`, l.N, l.NU, l.NC)},
	})
}

// splineGraph evaluates the gradient of a tensor-product cubic B-spline
// on an m-dimensional input inside a graph, densely: every basis function
// of every dimension, the four local polynomials placed by masks that are
// exactly 0 or 1.
type splineGraph struct {
	g              *onnx.Graph
	sp             predictor.Spline
	m              int
	lo, h, ih, j   string
	c              [5]string // 0 … 4 as scalars
	idx            []string  // column index j of η, as [1] int64
	two, six, neg3 string
	reshape        string
	ax1, ax2       string
}

func newSplineGraph(g *onnx.Graph, sp predictor.Spline, m int) *splineGraph {
	s := &splineGraph{g: g, sp: sp, m: m}
	h := (sp.Hi - sp.Lo) / float64(sp.Intervals)
	s.lo, s.h, s.ih = g.Scalar(sp.Lo), g.Scalar(h), g.Scalar(1/h)
	nb := sp.NumBasis()
	js := make([]float64, nb)
	for i := range js {
		js[i] = float64(i)
	}
	s.j = g.Const("basis_index", []int64{1, int64(nb)}, js)
	for i := range s.c {
		s.c[i] = g.Scalar(float64(i))
	}
	for j := range m {
		s.idx = append(s.idx, g.Int64s("col", []int64{1}, int64(j)))
	}
	s.two, s.six, s.neg3 = g.Scalar(2), g.Scalar(6), g.Scalar(-3)
	s.reshape = g.Int64s("flat", []int64{2}, 0, -1)
	s.ax1, s.ax2 = g.Int64s("axis", []int64{1}, 1), g.Int64s("axis", []int64{1}, 2)
	return s
}

// basis returns the values and derivatives of the NumBasis basis functions
// at the column x (N×1) as N×NumBasis tensors, with the operations of
// predictor.Spline.Eval.
func (s *splineGraph) basis(x string) (b, db string) {
	g := s.g
	op := func(o string, in ...string) string { return g.Op(o, in) }
	t := op("Div", op("Sub", x, s.lo), s.h)
	k := op("Floor", t)
	u := op("Sub", t, k)
	v := op("Sub", s.c[1], u)
	u2 := op("Mul", u, u)
	u3 := op("Mul", u2, u)
	three, four := s.c[3], s.c[4]
	two := s.two
	local := [4]string{
		op("Div", op("Mul", op("Mul", v, v), v), s.six),
		op("Div", op("Add", op("Sub", op("Mul", three, u3), op("Mul", s.six, u2)), four), s.six),
		op("Div", op("Add", op("Add", op("Add", op("Mul", s.neg3, u3), op("Mul", three, u2)), op("Mul", three, u)), s.c[1]), s.six),
		op("Div", u3, s.six),
	}
	dlocal := [4]string{
		op("Mul", op("Div", op("Mul", op("Neg", v), v), two), s.ih),
		op("Mul", op("Div", op("Sub", op("Mul", three, u2), op("Mul", four, u)), two), s.ih),
		op("Mul", op("Div", op("Add", op("Add", op("Mul", s.neg3, u2), op("Mul", two, u)), s.c[1]), two), s.ih),
		op("Mul", op("Div", u2, two), s.ih),
	}
	// diff = j − k (N×NumBasis): basis function j takes local polynomial
	// i where diff = i; mask_i = relu(1 − |diff − i|) is exactly 1 there
	// and 0 elsewhere, and beyond the support every mask is 0.
	diff := op("Sub", s.j, k)
	for i := range 4 {
		mask := op("Relu", op("Sub", s.c[1], op("Abs", op("Sub", diff, s.c[i]))))
		bi, dbi := op("Mul", mask, local[i]), op("Mul", mask, dlocal[i])
		if i == 0 {
			b, db = bi, dbi
			continue
		}
		b, db = op("Add", b, bi), op("Add", db, dbi)
	}
	return b, db
}

// grad returns ∇S(η) (N×m) for η (N×m) and the coefficients as a column
// (NumBasis^m × 1, dimension 0 slowest).
func (s *splineGraph) grad(eta, coef string) string {
	g := s.g
	var bs, dbs []string
	for j := range s.m {
		b, db := s.basis(g.Op("Gather", []string{eta, s.idx[j]}, onnx.IntAttr("axis", 1)))
		bs, dbs = append(bs, b), append(dbs, db)
	}
	var cols []string
	for j := range s.m {
		pick := func(i int) string {
			if i == j {
				return dbs[i]
			}
			return bs[i]
		}
		prod := pick(0)
		for i := 1; i < s.m; i++ {
			outer := g.Op("Mul", []string{g.Op("Unsqueeze", []string{prod, s.ax2}), g.Op("Unsqueeze", []string{pick(i), s.ax1})})
			prod = g.Op("Reshape", []string{outer, s.reshape})
		}
		cols = append(cols, g.Op("MatMul", []string{prod, coef}))
	}
	if len(cols) == 1 {
		return cols[0]
	}
	return g.Op("Concat", cols, onnx.IntAttr("axis", 1))
}

// MLP returns the ONNX model of an MLP baseline.
func MLP(net *mlp.MLP, opt Options) (*onnx.Model, error) {
	cfgJSON, w, err := net.Export()
	if err != nil {
		return nil, err
	}
	var cfg mlp.Config
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return nil, fmt.Errorf("onnxmodel: %w", err)
	}
	g := onnx.NewGraph("calisym_mlp")
	nx, ne := cfg.StateDim, cfg.PortDim
	inv := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, s := range v {
			out[i] = 1 / s
		}
		return out
	}
	muX := g.Const("mu_x", []int64{int64(nx)}, w["norm.mu_x"])
	isX := g.Const("inv_s_x", []int64{int64(nx)}, inv(w["norm.s_x"]))
	muE := g.Const("mu_e", []int64{int64(ne)}, w["norm.mu_e"])
	isE := g.Const("inv_s_e", []int64{int64(ne)}, inv(w["norm.s_e"]))
	sD := g.Const("s_delta", []int64{int64(nx)}, w["norm.s_delta"])
	widths := cfg.Widths()
	var wts, bs []string
	for l := 1; l < len(widths); l++ {
		in, out := widths[l-1], widths[l]
		wl := w[fmt.Sprintf("layers.%d.weight", l-1)]
		wt := make([]float64, in*out)
		for r := range out {
			for c := range in {
				wt[c*out+r] = wl[r*in+c]
			}
		}
		wts = append(wts, g.Const(fmt.Sprintf("layer%d_Wt", l-1), []int64{int64(in), int64(out)}, wt))
		bs = append(bs, g.Const(fmt.Sprintf("layer%d_b", l-1), []int64{int64(out)}, w[fmt.Sprintf("layers.%d.bias", l-1)]))
	}
	m := &model{g: g, nx: nx, ne: ne, kind: "mlp",
		begin:  func(state string) string { return state },
		finish: func(x string) string { return x },
		step: func(x, ports string) string {
			a := g.Op("Concat", []string{
				g.Op("Mul", []string{g.Op("Sub", []string{x, muX}), isX}),
				g.Op("Mul", []string{g.Op("Sub", []string{ports, muE}), isE}),
			}, onnx.IntAttr("axis", 1))
			for l := range wts {
				a = g.Op("Add", []string{g.Op("MatMul", []string{a, wts[l]}), bs[l]})
				if l < len(wts)-1 {
					a = g.Op("Tanh", []string{a})
				}
			}
			return g.Op("Add", []string{x, g.Op("Mul", []string{sD, a})})
		},
	}
	return m.build(opt, nil)
}

// build adds the inputs, the step or the unrolled rollout, the outputs
// and the metadata.
func (m *model) build(opt Options, extra [][2]string) (*onnx.Model, error) {
	if opt.Horizon < 0 || opt.Batch < 0 {
		return nil, fmt.Errorf("%w: horizon %d, batch %d", ErrOptions, opt.Horizon, opt.Batch)
	}
	if m.ne == 0 {
		return nil, fmt.Errorf("%w: a model without ports has no port input", ErrOptions)
	}
	g := m.g
	batch := onnx.Symbolic("batch")
	if opt.Batch > 0 {
		batch = onnx.Fixed(opt.Batch)
	}
	state := g.Input(onnx.Value{Name: "state", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)},
		Doc: "initial state x = (q, p), physical units"})
	if opt.Horizon == 0 {
		ports := g.Input(onnx.Value{Name: "ports", Shape: []onnx.Dim{batch, onnx.Fixed(m.ne)},
			Doc: "ports e = (u, f_c) applied during the step"})
		next := m.finish(m.step(m.begin(state), ports))
		g.Output(onnx.Value{Name: "next_state", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)},
			Doc: "predicted state after one step"}, next)
	} else {
		h := opt.Horizon
		ports := g.Input(onnx.Value{Name: "ports", Shape: []onnx.Dim{batch, onnx.Fixed(h), onnx.Fixed(m.ne)},
			Doc: "port sequence e_0 … e_{H-1}"})
		var all string
		if opt.Unroll {
			all = m.unrolled(state, ports, h)
		} else {
			all = m.loop(state, ports, h, batch)
		}
		g.Output(onnx.Value{Name: "states", Shape: []onnx.Dim{batch, onnx.Fixed(h), onnx.Fixed(m.nx)},
			Doc: "predicted states x_1 … x_H"}, all)
	}
	form := "step"
	switch {
	case opt.Horizon > 0 && opt.Unroll:
		form = "unrolled"
	case opt.Horizon > 0:
		form = "loop"
	}
	meta := [][2]string{
		{"calisym.onnx_version", strconv.Itoa(Version)},
		{"calisym.graph", form},
		{"calisym.kind", m.kind},
		{"calisym.state_dim", strconv.Itoa(m.nx)},
		{"calisym.port_dim", strconv.Itoa(m.ne)},
		{"calisym.horizon", strconv.Itoa(opt.Horizon)},
	}
	meta = append(append(meta, extra...), opt.Meta...)
	return &onnx.Model{Graph: g, ProducerName: "calisym", ProducerVersion: strconv.Itoa(Version),
		Doc: "calisym model exported by calisym export (docs/model-format.md)", Metadata: meta}, nil
}

// unrolled builds the rollout as h copies of the step and returns the
// stacked states (batch × h × 2n).
func (m *model) unrolled(state, ports string, h int) string {
	g := m.g
	ax1 := g.Int64s("axis", []int64{1}, 1)
	carry := m.begin(state)
	var outs []string
	for k := range h {
		e := g.Op("Gather", []string{ports, g.Int64s("step", nil, int64(k))}, onnx.IntAttr("axis", 1))
		carry = m.step(carry, e)
		outs = append(outs, g.Op("Unsqueeze", []string{m.finish(carry), ax1}))
	}
	if h == 1 {
		return outs[0]
	}
	return g.Op("Concat", outs, onnx.IntAttr("axis", 1))
}

// loop builds the rollout as an ONNX Loop of h iterations whose body is
// one step (the carried state in, the next out, the physical state as the
// scan output) and returns the states (batch × h × 2n).
func (m *model) loop(state, ports string, h int, batch onnx.Dim) string {
	g := m.g
	trips := g.Int64s("trips", nil, int64(h))
	carry0 := m.begin(state)
	body := g.BeginBody("step")
	iter := body.Input(onnx.Value{Name: "loop_iter", Elem: onnx.Int64})
	cond := body.Input(onnx.Value{Name: "loop_cond_in", Elem: onnx.Bool})
	xin := body.Input(onnx.Value{Name: "loop_carry_in", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)}})
	e := g.Op("Gather", []string{ports, iter}, onnx.IntAttr("axis", 1))
	next := m.step(xin, e)
	out := m.finish(next)
	body.Output(onnx.Value{Name: "loop_cond_out", Elem: onnx.Bool}, cond)
	body.Output(onnx.Value{Name: "loop_carry_out", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)}}, next)
	body.Output(onnx.Value{Name: "loop_state_out", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)}}, out)
	g.EndBody()
	outs := g.OpN("Loop", []string{trips, "", carry0}, 2, onnx.GraphAttr("body", body))
	// The scan output stacks the steps first: h × batch × 2n.
	return g.Op("Transpose", []string{outs[1]}, onnx.IntsAttr("perm", 1, 0, 2))
}
