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
	"slices"
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
	// Jacobian adds the step Jacobians to the one-step map (Horizon 0):
	// the outputs "jac_state" (A = ∂x'/∂x, batch×2n×2n) and "jac_ports"
	// (B = ∂x'/∂e, batch×2n×(n_u+n_c)), computed in the graph by forward
	// mode through the layers.
	Jacobian bool
	// Float32 writes every real tensor, the inputs and outputs included,
	// as float32 instead of float64.
	Float32 bool
	// Meta is added to the model's metadata_props.
	Meta [][2]string
}

// model is a one-step map under construction: begin turns the input
// state into what the rollout carries from step to step (the normalised
// state of a SympNet, the state itself for the MLP), step advances it
// under one port vector and finish turns it into a physical state.
// stepJac is step with the Jacobian of the physical next state with
// respect to the physical state and ports, transposed: jt[b, i, o] =
// ∂x'_o/∂(x, e)_i (batch × (2n+n_u+n_c) × 2n).
type model struct {
	g       *onnx.Graph
	nx, ne  int
	kind    string
	begin   func(state string) string
	step    func(carry, ports string) string
	stepJac func(carry, ports string) (next, jt string)
	finish  func(carry string) string
}

// newGraph returns an empty graph of the options' real type.
func newGraph(name string, opt Options) *onnx.Graph {
	if opt.Float32 {
		return onnx.NewFloat32Graph(name)
	}
	return onnx.NewGraph(name)
}

// Symplectic returns the ONNX model of a compiled GR or GRB plan.
func Symplectic(t predictor.PlanTensors, opt Options) (*onnx.Model, error) {
	l := t.Layout
	g := newGraph("calisym_"+string(t.Kind), opt)
	n, d := l.N, l.D()
	d2, nx, ne := 2*d, l.StateDim(), l.PortDim()
	k := t.K
	if t.Kind != predictor.KindGR && t.Kind != predictor.KindGRB {
		return nil, fmt.Errorf("%w: kind %q", ErrOptions, t.Kind)
	}
	// stateIdx and portIdx place x_i and e_j in Z (the section).
	stateIdx := func(i int) int {
		if i < n {
			return l.OffQ() + i
		}
		return l.OffP() + i - n
	}
	portIdx := func(j int) int {
		if j < l.NU {
			return l.OffMuU() + j
		}
		return l.OffLambdaC() + j - l.NU
	}
	// Section and projection as 0/1 matrices: products with them copy
	// values exactly.
	ex := make([]float64, nx*d2)
	pr := make([]float64, d2*nx)
	for i := range nx {
		ex[i*d2+stateIdx(i)] = 1
		pr[stateIdx(i)*nx+i] = 1
	}
	ee := make([]float64, ne*d2)
	for j := range ne {
		ee[j*d2+portIdx(j)] = 1
	}
	cEx := g.Const("embed_state", []int64{int64(nx), int64(d2)}, ex)
	cEe := g.Const("embed_ports", []int64{int64(ne), int64(d2)}, ee)
	cPr := g.Const("project", []int64{int64(d2), int64(nx)}, pr)
	muX := g.Const("mu_x", []int64{int64(nx)}, t.MuX)
	sX := g.Const("s_x", []int64{int64(nx)}, t.SX)
	muE := g.Const("mu_e", []int64{int64(ne)}, t.MuE)
	sE := g.Const("s_e", []int64{int64(ne)}, t.SE)
	one := lazy(func() string { return g.Scalar(1) })
	// The constants only the tangents use, made with the first of them
	// (an initializer no node uses draws onnxruntime's warning).
	var minus2, ax1, ax2 string
	tangentConsts := func() {
		if minus2 == "" {
			minus2 = g.Scalar(-2)
			if t.Kind == predictor.KindGR {
				ax1 = g.Int64s("axis", []int64{1}, 1)
			} else {
				ax2 = g.Int64s("axis", []int64{1}, 2)
			}
		}
	}
	// The layers' constants, made on first use (an initializer no node
	// uses draws onnxruntime's warning): the fast GRB step
	// (grbFastLayer) and the Jacobian's tangents use different ones.
	type layer struct {
		mt, nu, b, a, tw, twt, tb, ta func() string
		spl                           *splineLayer
		fast                          func() grbFast
	}
	var sp *splineGraph
	if t.Kind == predictor.KindGRB {
		sp = newSplineGraph(g, t.Spline, k)
		// onnxruntime loads an unrolled graph of table lookups (H copies
		// of each layer's Gathers from its table) far slower than one of
		// coefficient lookups: minutes against seconds for the pendulum
		// preset's 100 steps, so the unrolled rollout keeps the latter.
		sp.table = sp.table && !opt.Unroll
	}
	var layers []layer
	for i, lt := range t.Layers {
		mt := make([]float64, d2*k)
		for r := range k {
			for c := range d2 {
				mt[c*k+r] = lt.M[r*d2+c]
			}
		}
		ly := layer{mt: lazy(func() string { return g.Const(fmt.Sprintf("layer%d_Mt", i), []int64{int64(d2), int64(k)}, mt) }),
			nu: lazy(func() string { return g.Const(fmt.Sprintf("layer%d_N", i), []int64{int64(k), int64(d2)}, lt.N) })}
		switch t.Kind {
		case predictor.KindGR:
			ly.b = lazy(func() string { return g.Const(fmt.Sprintf("layer%d_b", i), []int64{int64(k)}, lt.B) })
			ly.a = lazy(func() string { return g.Const(fmt.Sprintf("layer%d_a", i), []int64{int64(k)}, lt.A) })
		case predictor.KindGRB:
			w := t.TailWidth
			twt := make([]float64, k*w)
			for j := range w {
				for c := range k {
					twt[c*w+j] = lt.TailW[j*k+c]
				}
			}
			prefix := fmt.Sprintf("layer%d_", i)
			ly.spl = sp.layer(prefix, lt.Coef)
			ly.tw = lazy(func() string { return g.Const(prefix+"tailW", []int64{int64(w), int64(k)}, lt.TailW) })
			ly.twt = lazy(func() string { return g.Const(prefix+"tailWt", []int64{int64(k), int64(w)}, twt) })
			ly.tb = lazy(func() string { return g.Const(prefix+"tailb", []int64{int64(w)}, lt.TailB) })
			ly.ta = lazy(func() string { return g.Const(prefix+"taila", []int64{int64(w)}, lt.TailA) })
			var fast *grbFast
			ly.fast = func() grbFast {
				if fast == nil {
					f := sp.fastLayer(prefix, lt, mt, d2, w)
					fast = &f
				}
				return *fast
			}
		}
		layers = append(layers, ly)
	}
	op := func(o string, in ...string) string { return g.Op(o, in) }
	// tanh(z) and a ⊙ sech²(z) = a ⊙ (1 − tanh²(z)).
	sech2 := func(z, a string) (th, s string) {
		th = op("Tanh", z)
		return th, op("Mul", op("Sub", one(), op("Mul", th, th)), a)
	}
	// mapZ applies the layers to Z (N×2d) and, when tz is not empty, to
	// the tangent rows tz (r×2d or N×r×2d): dY = dZ Mᵀ, dZ += (dY ∇²K̂) N.
	mapZ := func(z, tz string) (string, string) {
		if tz != "" {
			tangentConsts()
		}
		for _, ly := range layers {
			if sp != nil && sp.table && tz == "" {
				z = sp.fastStep(z, ly.fast())
				continue
			}
			y := op("MatMul", z, ly.mt())
			var gr, hd, hm string // ∇K̂; GR: diagonal of ∇²K̂ (N×k); GRB: ∇²K̂ (N×k×k)
			switch t.Kind {
			case predictor.KindGR:
				th, s := sech2(op("Add", y, ly.b()), ly.a())
				gr = s
				if tz != "" {
					hd = op("Mul", op("Mul", th, s), minus2)
				}
			case predictor.KindGRB:
				th, s := sech2(op("Add", op("MatMul", y, ly.twt()), ly.tb()), ly.ta())
				sg, sh := sp.eval(y, ly.spl, tz != "")
				gr = op("Add", sg, op("MatMul", s, ly.tw()))
				if tz != "" {
					// The tail's Hessian Wᵀ diag(−2 tanh·a sech²) W.
					c := op("Mul", op("Mul", th, s), minus2)
					hm = op("Add", sh, op("MatMul", ly.twt(), op("Mul", op("Unsqueeze", c, ax2), ly.tw())))
				}
			}
			z = op("Add", z, op("MatMul", gr, ly.nu()))
			if tz != "" {
				dy := op("MatMul", tz, ly.mt())
				var dg string
				if hd != "" {
					dg = op("Mul", dy, op("Unsqueeze", hd, ax1))
				} else {
					dg = op("MatMul", dy, hm)
				}
				tz = op("Add", tz, op("MatMul", dg, ly.nu()))
			}
		}
		return z, tz
	}
	embed := func(xn, ports string) string {
		en := op("Div", op("Sub", ports, muE), sE)
		return op("Add", op("MatMul", xn, cEx), op("MatMul", en, cEe))
	}
	// The tangents of the section: row i < 2n is ∂Z/∂x_i = e_{σ(i)}/s_x,i,
	// row 2n + j is ∂Z/∂e_j = e_{σ(j)}/s_e,j.
	tz0 := make([]float64, (nx+ne)*d2)
	for i := range nx {
		tz0[i*d2+stateIdx(i)] = 1 / t.SX[i]
	}
	for j := range ne {
		tz0[(nx+j)*d2+portIdx(j)] = 1 / t.SE[j]
	}
	var cT0 string
	m := &model{g: g, nx: nx, ne: ne, kind: string(t.Kind),
		begin: func(state string) string {
			return op("Div", op("Sub", state, muX), sX)
		},
		step: func(xn, ports string) string {
			z, _ := mapZ(embed(xn, ports), "")
			return op("MatMul", z, cPr)
		},
		stepJac: func(xn, ports string) (string, string) {
			if cT0 == "" {
				cT0 = g.Const("section_tangents", []int64{int64(nx + ne), int64(d2)}, tz0)
			}
			z, tz := mapZ(embed(xn, ports), cT0)
			return op("MatMul", z, cPr), op("Mul", op("MatMul", tz, cPr), sX)
		},
		finish: func(xn string) string {
			return op("Add", op("Mul", xn, sX), muX)
		},
	}
	return m.build(opt, [][2]string{
		{"calisym.layout", fmt.Sprintf(`{"n":%d,"n_u":%d,"n_c":%d}`, l.N, l.NU, l.NC)},
	})
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
	g := newGraph("calisym_mlp", opt)
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
	op := func(o string, in ...string) string { return g.Op(o, in) }
	normIn := func(x, ports string) string {
		return g.Op("Concat", []string{
			op("Mul", op("Sub", x, muX), isX),
			op("Mul", op("Sub", ports, muE), isE),
		}, onnx.IntAttr("axis", 1))
	}
	r := nx + ne
	m := &model{g: g, nx: nx, ne: ne, kind: "mlp",
		begin:  func(state string) string { return state },
		finish: func(x string) string { return x },
		step: func(x, ports string) string {
			a := normIn(x, ports)
			for l := range wts {
				a = op("Add", op("MatMul", a, wts[l]), bs[l])
				if l < len(wts)-1 {
					a = op("Tanh", a)
				}
			}
			return op("Add", x, op("Mul", sD, a))
		},
		stepJac: func(x, ports string) (string, string) {
			one, ax1 := g.Scalar(1), g.Int64s("axis", []int64{1}, 1)
			// Tangent rows: row i is ∂a/∂(x, e)_i, starting from the
			// normalisation's diagonal.
			t0 := make([]float64, r*r)
			id := make([]float64, r*nx)
			for i, s := range append(inv(w["norm.s_x"]), inv(w["norm.s_e"])...) {
				t0[i*r+i] = s
			}
			for i := range nx {
				id[i*nx+i] = 1
			}
			a, tg := normIn(x, ports), g.Const("input_tangents", []int64{int64(r), int64(r)}, t0)
			for l := range wts {
				a = op("Add", op("MatMul", a, wts[l]), bs[l])
				tg = op("MatMul", tg, wts[l])
				if l < len(wts)-1 {
					a = op("Tanh", a)
					tg = op("Mul", tg, op("Unsqueeze", op("Sub", one, op("Mul", a, a)), ax1))
				}
			}
			jt := op("Add", g.Const("state_identity", []int64{int64(r), int64(nx)}, id), op("Mul", tg, sD))
			if len(wts) == 1 {
				// A linear MLP's Jacobian is constant: give it the batch
				// dimension (zeros of batch×1×1 added).
				zero := op("Unsqueeze", g.Op("ReduceSum", []string{op("Mul", x, g.Scalar(0)), ax1}, onnx.IntAttr("keepdims", 1)), ax1)
				jt = op("Add", jt, zero)
			}
			return op("Add", x, op("Mul", sD, a)), jt
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
	if opt.Jacobian && opt.Horizon != 0 {
		return nil, fmt.Errorf("%w: the Jacobian outputs belong to the one-step map (horizon 0), not to a %d-step rollout", ErrOptions, opt.Horizon)
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
		if opt.Jacobian {
			next, jt := m.stepJac(m.begin(state), ports)
			g.Output(onnx.Value{Name: "next_state", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)},
				Doc: "predicted state after one step"}, m.finish(next))
			split := g.Int64s("split", []int64{2}, int64(m.nx), int64(m.ne))
			jac := g.OpN("Split", []string{g.Op("Transpose", []string{jt}, onnx.IntsAttr("perm", 0, 2, 1)), split}, 2, onnx.IntAttr("axis", 2))
			g.Output(onnx.Value{Name: "jac_state", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx), onnx.Fixed(m.nx)},
				Doc: "A = ∂next_state/∂state: jac_state[b, i, j] = ∂x'_i/∂x_j"}, jac[0])
			g.Output(onnx.Value{Name: "jac_ports", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx), onnx.Fixed(m.ne)},
				Doc: "B = ∂next_state/∂ports: jac_ports[b, i, j] = ∂x'_i/∂e_j"}, jac[1])
		} else {
			next := m.finish(m.step(m.begin(state), ports))
			g.Output(onnx.Value{Name: "next_state", Shape: []onnx.Dim{batch, onnx.Fixed(m.nx)},
				Doc: "predicted state after one step"}, next)
		}
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
	dtype := "float64"
	if opt.Float32 {
		dtype = "float32"
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
		{"calisym.dtype", dtype},
		{"calisym.jacobian", strconv.FormatBool(opt.Jacobian)},
	}
	meta, err := metadata(append(meta, extra...), opt.Meta)
	if err != nil {
		return nil, err
	}
	return &onnx.Model{Graph: g, ProducerName: "calisym", ProducerVersion: strconv.Itoa(Version),
		Doc: "calisym model exported by calisym export (docs/model-format.md)", Metadata: meta}, nil
}

// metadata returns a graph's own metadata followed by the caller's
// (Options.Meta), each key once: an entry of extra whose key own already
// has is dropped when it says the same (the port-history graph records
// its m, and export passes the model file's), and an error when it
// contradicts it. metadata_props with a key twice fails onnx.checker.
func metadata(own, extra [][2]string) ([][2]string, error) {
	out := slices.Clone(own)
	for _, kv := range extra {
		i := slices.IndexFunc(out, func(o [2]string) bool { return o[0] == kv[0] })
		switch {
		case i < 0:
			out = append(out, kv)
		case out[i][1] != kv[1]:
			return nil, fmt.Errorf("onnxmodel: metadata %s is %q in the graph and %q in the options", kv[0], out[i][1], kv[1])
		}
	}
	return out, nil
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
