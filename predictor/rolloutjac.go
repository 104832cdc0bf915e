package predictor

import (
	"fmt"
	"slices"

	"github.com/calisym/calisym/predictor/kernel"
)

// Linearizer is a one-step model x' = F(x, e) in physical units that also
// returns its Jacobians: what a gradient-based planner (shooting, iLQR)
// needs of a learned model. A Plan's NewLinearizer is one; the MLP
// baseline (package trainer/mlp) has another. Implementations do not
// allocate in Linearize and are not safe for concurrent use.
type Linearizer interface {
	// Dims returns the state dimension 2n and the port dimension n_u + n_c.
	Dims() (stateDim, portDim int)
	// Linearize writes next = F(x, e), fx = ∂F/∂x (stateDim×stateDim,
	// row major: fx[i*stateDim+j] = ∂next_i/∂x_j) and fe = ∂F/∂e
	// (stateDim×portDim). It panics on wrong lengths.
	Linearize(x, e, next, fx, fe []float64)
}

// PlanLinearizer evaluates one step of a Plan's gauge-fixed rollout — lift
// σₑ, map Φ, projection Π, with the normalisation at both ends — together
// with its exact Jacobians with respect to the state and the ports. The
// step runs the unfused layer kernels, which give the bits of Roller's
// step, recording each layer's ridge coordinate and the Hessian of its
// ridge function there. The Jacobian is then taken in reverse mode: one
// batch of 2n adjoint rows (one per output coordinate) is pulled back
// through the layers,
//
//	μ = Λ Nᵀ,  Λ += (μ ∇²K̂(y)) M,
//
// with the Plan's matrices M and N (see Plan); the forward mode, 2n + n_u
// + n_c tangent rows pushed through dY = dZ Mᵀ, dZ += (dY ∇²K̂) N, takes
// more rows and serves the tests as a cross-check. It does not allocate;
// make one per goroutine.
type PlanLinearizer struct {
	p *Plan
	w *workspace
	// ys holds each layer's ridge coordinate y (layers×k); hs the Hessian
	// of the ridge function at it: GR the diagonal (layers×k), GRB the m×m
	// matrix (layers×k×k).
	ys, hs []float64
	// t, s are scratch of the activations (max(k, tail width)).
	t, s []float64
	// dz, dy, dg hold the tangents or adjoints: up to (2n+ne)×2d and
	// (2n+ne)×k twice.
	dz, dy, dg []float64
	// last is the state the previous Linearize returned (valid once set).
	last  []float64
	valid bool
	// forwardMode selects the forward-mode Jacobian (tests compare it
	// with the default, reverse mode).
	forwardMode bool
}

// NewLinearizer returns a one-step linearizer of the plan.
func (p *Plan) NewLinearizer() *PlanLinearizer {
	r := p.Layout.StateDim() + p.Layout.PortDim()
	L := len(p.layers)
	hsz := p.k
	if p.Kind == KindGRB {
		hsz = p.k * p.k
	}
	act := max(p.k, p.tail.width)
	return &PlanLinearizer{p: p, w: p.newWorkspace(1),
		ys: make([]float64, L*p.k), hs: make([]float64, L*hsz),
		t: make([]float64, act), s: make([]float64, act),
		dz: make([]float64, r*2*p.d), dy: make([]float64, r*p.k), dg: make([]float64, r*p.k),
		last: make([]float64, p.Layout.StateDim())}
}

// Dims returns the state dimension 2n and the port dimension n_u + n_c.
func (pl *PlanLinearizer) Dims() (stateDim, portDim int) {
	return pl.p.Layout.StateDim(), pl.p.Layout.PortDim()
}

// Linearize writes next = F(x, e) (the step Roller.Rollout takes, the same
// bits), fx = ∂F/∂x (2n×2n) and fe = ∂F/∂e (2n×(n_u+n_c)), row major.
// Called with the state it last returned, it continues from that state's
// normalised coordinates as Roller does, so that a rollout made of
// Linearize calls has the bits of Roller.Rollout.
func (pl *PlanLinearizer) Linearize(x, e, next, fx, fe []float64) {
	p := pl.p
	l := p.Layout
	n2, ne := l.StateDim(), l.PortDim()
	if len(x) != n2 || len(e) != ne || len(next) != n2 || len(fx) != n2*n2 || len(fe) != n2*ne {
		panic(fmt.Sprintf("predictor: Linearize with len(x)=%d, len(e)=%d, len(next)=%d, len(fx)=%d, len(fe)=%d; want %d, %d, %d, %d, %d",
			len(x), len(e), len(next), len(fx), len(fe), n2, ne, n2, n2*n2, n2*ne))
	}
	w := pl.w
	// A step from the state the previous call returned continues from its
	// normalised coordinates, which w.xn still holds, as Roller's rollout
	// does: a rollout through Linearize has Roller's bits.
	if !pl.valid || !slices.Equal(x, pl.last) {
		normInto(w.xn[:n2], x, p.muX, p.sX)
	}
	normInto(w.en[:ne], e, p.muE, p.sE)
	p.embed(w, 1)
	pl.forward()
	p.project(w, 1)
	denormInto(next, w.xn[:n2], p.muX, p.sX)
	copy(pl.last, next)
	pl.valid = true

	if pl.forwardMode {
		pl.jacobianForward(fx, fe)
		return
	}
	pl.jacobianReverse(fx, fe)
}

// portIndex returns the index in Z where the section places port j: μ_u,j
// for a control value, λ_c,j for a contact value.
func portIndex(l Layout, j int) int {
	if j < l.NU {
		return l.OffMuU() + j
	}
	return l.OffLambdaC() + j - l.NU
}

// jacobianForward pushes one tangent row per input coordinate (the
// section places x_i at q_i or p_i and e_j at μ_u,j or λ_c,j, normalised
// by its scale) forward through the layers: 2n + n_u + n_c rows.
func (pl *PlanLinearizer) jacobianForward(fx, fe []float64) {
	p := pl.p
	l := p.Layout
	n2, ne := l.StateDim(), l.PortDim()
	d2 := 2 * p.d
	r := n2 + ne
	dz := pl.dz[:r*d2]
	clear(dz)
	for i := range n2 {
		dz[i*d2+stateIndex(l, i)] = 1 / p.sX[i]
	}
	for j := range ne {
		dz[(n2+j)*d2+portIndex(l, j)] = 1 / p.sE[j]
	}
	pl.tangent(r)
	for o := range n2 {
		so, c := p.sX[o], stateIndex(l, o)
		for i := range n2 {
			fx[o*n2+i] = so * dz[i*d2+c]
		}
		for j := range ne {
			fe[o*ne+j] = so * dz[(n2+j)*d2+c]
		}
	}
}

// jacobianReverse pulls one adjoint row per output coordinate (q'_o or
// p'_o, denormalised by its scale) back through the layers: 2n rows, fewer
// than the forward mode's 2n + n_u + n_c. A layer Z' = Z + ∇K̂(Z Mᵀ) N
// maps the row adjoint λ' to λ = λ' + (λ' Nᵀ) ∇²K̂ M.
func (pl *PlanLinearizer) jacobianReverse(fx, fe []float64) {
	p := pl.p
	l := p.Layout
	n2, ne := l.StateDim(), l.PortDim()
	d2, k := 2*p.d, p.k
	lam := pl.dz[:n2*d2]
	clear(lam)
	for o := range n2 {
		lam[o*d2+stateIndex(l, o)] = p.sX[o]
	}
	L := gen(lam, n2, d2, d2)
	for li := len(p.layers) - 1; li >= 0; li-- {
		lay := &p.layers[li]
		gemm(noTrans, trans, 1, L, gen(lay.nu, k, d2, d2), 0, gen(pl.dy, n2, k, k))
		pl.applyHessian(li, n2)
		gemm(noTrans, noTrans, 1, gen(pl.dg, n2, k, k), gen(lay.m, k, d2, p.ld), 1, L)
	}
	for o := range n2 {
		row := lam[o*d2 : (o+1)*d2]
		for i := range n2 {
			fx[o*n2+i] = row[stateIndex(l, i)] / p.sX[i]
		}
		for j := range ne {
			fe[o*ne+j] = row[portIndex(l, j)] / p.sE[j]
		}
	}
}

// applyHessian writes dg = dy ∇²K̂ (rows rows) with layer li's recorded
// Hessian (symmetric, so the same for tangents and adjoints).
func (pl *PlanLinearizer) applyHessian(li, rows int) {
	p := pl.p
	k := p.k
	switch p.Kind {
	case KindGR:
		hd := pl.hs[li*k : (li+1)*k]
		for row := range rows {
			dy, dg := pl.dy[row*k:(row+1)*k], pl.dg[row*k:(row+1)*k]
			for j, v := range dy {
				dg[j] = v * hd[j]
			}
		}
	case KindGRB:
		gemm(noTrans, noTrans, 1, gen(pl.dy, rows, k, k), gen(pl.hs[li*k*k:(li+1)*k*k], k, k, k), 0, gen(pl.dg, rows, k, k))
	}
}

// stateIndex returns the index in Z of physical state coordinate i: q_i
// for i < n, p_{i−n} otherwise.
func stateIndex(l Layout, i int) int {
	if i < l.N {
		return l.OffQ() + i
	}
	return l.OffP() + i - l.N
}

// forward applies the map to the single row w.z as Plan.layerOne does
// unfused (same bits), recording every layer's ridge coordinate and the
// Hessian of its ridge function there.
func (pl *PlanLinearizer) forward() {
	p, w := pl.p, pl.w
	d, k, h := p.d, p.k, p.h
	d2 := 2 * d
	for li := range p.layers {
		lay := &p.layers[li]
		kernel.MatVec(k, d2, lay.m, p.ld, w.z, w.y)
		copy(pl.ys[li*k:(li+1)*k], w.y[:k])
		p.ridge(w, lay, 1)
		kernel.MatTVec(k, d2, lay.m, p.ld, w.g, w.tv)
		kernel.SymplecticUpdate(d, h, w.z, w.tv)
		pl.hessian(li, lay)
	}
}

// hessian records ∇²K̂ at layer li's ridge coordinate.
func (pl *PlanLinearizer) hessian(li int, lay *planLayer) {
	p := pl.p
	k := p.k
	y := pl.ys[li*k : (li+1)*k]
	switch p.Kind {
	case KindGR:
		// K̂(y) = Σ a_j tanh(y_j + b_j): the Hessian is diagonal,
		// a_j·(−2 tanh·sech²).
		kernel.TanhSech2(1, k, y, k, lay.b, lay.a, pl.t, k, pl.s, k)
		hd := pl.hs[li*k : (li+1)*k]
		for j := range k {
			hd[j] = -2 * pl.t[j] * pl.s[j]
		}
	case KindGRB:
		hm := pl.hs[li*k*k : (li+1)*k*k]
		clear(hm)
		w := pl.w
		p.spl.eval(y, &w.row)
		g := w.g[:k] // scratch: gradHess also accumulates the gradient
		clear(g)
		p.spl.gradHess(lay.coef, &w.row, g, hm)
		tw, tb, ta := p.tail.split(lay.tp)
		width := p.tail.width
		for j := range width {
			var z float64
			for i, e := range y {
				z += tw[j*k+i] * e
			}
			pl.t[j] = z
		}
		kernel.TanhSech2(1, width, pl.t, width, tb, ta, pl.t, width, pl.s, width)
		for j := range width {
			c := -2 * pl.t[j] * pl.s[j]
			wj := tw[j*k : (j+1)*k]
			for a := range k {
				for b := range k {
					hm[a*k+b] += c * wj[a] * wj[b]
				}
			}
		}
	}
}

// tangent pushes the r tangent rows of pl.dz through the recorded layers.
func (pl *PlanLinearizer) tangent(r int) {
	p := pl.p
	d2, k := 2*p.d, p.k
	dZ := gen(pl.dz, r, d2, d2)
	dY := gen(pl.dy, r, k, k)
	for li := range p.layers {
		lay := &p.layers[li]
		gemm(noTrans, noTrans, 1, dZ, gen(lay.mt, d2, k, k), 0, dY)
		pl.applyHessian(li, r)
		gemm(noTrans, noTrans, 1, gen(pl.dg, r, k, k), gen(lay.nu, k, d2, d2), 1, dZ)
	}
}

// Linearization is a rollout of a Linearizer together with its Jacobians
// along the trajectory: for every step k the predicted state x̂_{k+1} and
// the step Jacobians A_k = ∂x̂_{k+1}/∂x̂_k and B_k = ∂x̂_{k+1}/∂e_k, which
// is what iLQR needs; VJP turns them into the gradient of a cost with
// respect to the initial state and the whole port sequence (reverse mode,
// what gradient-based shooting needs), and Dense into the full rollout
// Jacobians. Run, VJP and Dense do not allocate. A Linearization is not
// safe for concurrent use.
type Linearization struct {
	lin      Linearizer
	nx, ne   int
	maxH, h  int
	states   []float64 // maxH×nx: x̂_1 … x̂_H
	fx, fe   []float64 // maxH×nx×nx, maxH×nx×ne
	lam, tmp []float64 // nx
}

// NewLinearization returns a Linearization for horizons up to maxHorizon.
func NewLinearization(lin Linearizer, maxHorizon int) *Linearization {
	nx, ne := lin.Dims()
	maxHorizon = max(maxHorizon, 0)
	return &Linearization{lin: lin, nx: nx, ne: ne, maxH: maxHorizon,
		states: make([]float64, maxHorizon*nx),
		fx:     make([]float64, maxHorizon*nx*nx), fe: make([]float64, maxHorizon*nx*ne),
		lam: make([]float64, nx), tmp: make([]float64, nx)}
}

// Run rolls out from x0 (2n values) under ports (horizon×(n_u+n_c), e_0 …
// e_{H−1}), recording the predicted states and the step Jacobians.
func (r *Linearization) Run(x0, ports []float64, horizon int) error {
	nx, ne := r.nx, r.ne
	switch {
	case horizon < 0 || horizon > r.maxH:
		return fmt.Errorf("%w: horizon %d outside [0, %d]", ErrLayout, horizon, r.maxH)
	case len(x0) != nx:
		return fmt.Errorf("%w: initial state has %d values, need %d", ErrLayout, len(x0), nx)
	case len(ports) < horizon*ne:
		return fmt.Errorf("%w: ports have %d values, need %d×%d", ErrLayout, len(ports), horizon, ne)
	}
	r.h = horizon
	prev := x0
	for k := range horizon {
		next := r.states[k*nx : (k+1)*nx]
		r.lin.Linearize(prev, ports[k*ne:(k+1)*ne], next, r.fx[k*nx*nx:(k+1)*nx*nx], r.fe[k*nx*ne:(k+1)*nx*ne])
		prev = next
	}
	return nil
}

// Horizon returns the horizon of the last Run.
func (r *Linearization) Horizon() int { return r.h }

// States returns the predicted states x̂_1 … x̂_H of the last Run
// (H×2n, a view).
func (r *Linearization) States() []float64 { return r.states[:r.h*r.nx] }

// Step returns views of step k's Jacobians A_k = ∂x̂_{k+1}/∂x̂_k (2n×2n) and
// B_k = ∂x̂_{k+1}/∂e_k (2n×(n_u+n_c)), row major, 0 ≤ k < Horizon().
func (r *Linearization) Step(k int) (a, b []float64) {
	nx, ne := r.nx, r.ne
	return r.fx[k*nx*nx : (k+1)*nx*nx], r.fe[k*nx*ne : (k+1)*nx*ne]
}

// VJP takes gStates, the gradient of a scalar cost with respect to the
// predicted states x̂_1 … x̂_H of the last Run (H×2n), and writes its
// gradient with respect to the initial state into gx0 (2n) and with
// respect to the ports into gPorts (H×(n_u+n_c)), by the adjoint
// recursion λ_H = ḡ_H, ē_k = B_kᵀ λ_{k+1}, λ_k = ḡ_k + A_kᵀ λ_{k+1}.
func (r *Linearization) VJP(gStates, gx0, gPorts []float64) error {
	nx, ne, h := r.nx, r.ne, r.h
	if len(gStates) != h*nx || len(gx0) != nx || len(gPorts) != h*ne {
		return fmt.Errorf("%w: VJP with %d state gradients, %d initial and %d port values; need %d, %d and %d",
			ErrLayout, len(gStates), len(gx0), len(gPorts), h*nx, nx, h*ne)
	}
	lam := r.lam
	clear(lam)
	for k := h - 1; k >= 0; k-- {
		g := gStates[k*nx : (k+1)*nx]
		for i := range lam {
			lam[i] += g[i]
		}
		a, b := r.Step(k)
		kernel.MatTVec(nx, ne, b, ne, lam, gPorts[k*ne:(k+1)*ne])
		kernel.MatTVec(nx, nx, a, nx, lam, r.tmp)
		copy(lam, r.tmp)
	}
	copy(gx0, lam)
	return nil
}

// Dense writes the full Jacobians of the last Run: dx0 (H·2n × 2n), whose
// row block k is ∂x̂_{k+1}/∂x_0, and dports (H·2n × H·(n_u+n_c)), whose
// block (k, j) is ∂x̂_{k+1}/∂e_j (zero for j > k: the rollout is causal).
// Both are row major.
func (r *Linearization) Dense(dx0, dports []float64) error {
	nx, ne, h := r.nx, r.ne, r.h
	hne := h * ne
	if len(dx0) != h*nx*nx || len(dports) != h*nx*hne {
		return fmt.Errorf("%w: Dense with %d and %d values, need %d and %d", ErrLayout, len(dx0), len(dports), h*nx*nx, h*nx*hne)
	}
	clear(dports)
	for k := range h {
		a, b := r.Step(k)
		cur := dx0[k*nx*nx : (k+1)*nx*nx]
		curE := dports[k*nx*hne : (k+1)*nx*hne]
		if k == 0 {
			copy(cur, a)
		} else {
			prev := dx0[(k-1)*nx*nx : k*nx*nx]
			gemm(noTrans, noTrans, 1, gen(a, nx, nx, nx), gen(prev, nx, nx, nx), 0, gen(cur, nx, nx, nx))
			// Columns of the ports before step k: A_k times the previous block row.
			if k*ne > 0 {
				prevE := dports[(k-1)*nx*hne : k*nx*hne]
				gemm(noTrans, noTrans, 1, gen(a, nx, nx, nx), gen(prevE, nx, k*ne, hne), 0, gen(curE, nx, k*ne, hne))
			}
		}
		for i := range nx {
			copy(curE[i*hne+k*ne:i*hne+(k+1)*ne], b[i*ne:(i+1)*ne])
		}
	}
	return nil
}
