// Package mpc is model-predictive control on calisym's learned models: an
// iterative LQR solver (ILQR) over any predictor.Linearizer — a GR/GRB
// model's Plan, the MLP baseline, or a simulator differentiated by finite
// differences (PendulumModel) — and a receding-horizon loop (Run) that
// drives a plant to a target with it.
package mpc

import (
	"errors"
	"fmt"
	"math"

	"github.com/calisym/calisym/predictor"
)

// ErrConfig reports an unusable controller configuration.
var ErrConfig = errors.New("mpc: invalid configuration")

// Cost is the quadratic tracking cost of a horizon of H steps,
//
//	J = Σ_{k=1}^{H} (x_k − x*)ᵀ W_k (x_k − x*) + Σ_{k=0}^{H−1} u_kᵀ R u_k,
//
// with W_k = Q for k < H and Qf for k = H, all diagonal; controls are
// clamped to [ULo, UHi].
type Cost struct {
	Target   []float64 // x* (stateDim)
	Q, Qf, R []float64 // diagonals (stateDim, stateDim, portDim)
	ULo, UHi []float64 // control bounds (portDim)
}

func (c *Cost) validate(nx, ne int) error {
	if len(c.Target) != nx || len(c.Q) != nx || len(c.Qf) != nx || len(c.R) != ne || len(c.ULo) != ne || len(c.UHi) != ne {
		return fmt.Errorf("%w: cost of lengths target %d, Q %d, Qf %d, R %d, bounds %d/%d for state %d and ports %d",
			ErrConfig, len(c.Target), len(c.Q), len(c.Qf), len(c.R), len(c.ULo), len(c.UHi), nx, ne)
	}
	for i := range ne {
		if !(c.R[i] > 0) || !(c.ULo[i] < c.UHi[i]) {
			return fmt.Errorf("%w: control %d has weight %v and bounds [%v, %v] (need R > 0, lo < hi)", ErrConfig, i, c.R[i], c.ULo[i], c.UHi[i])
		}
	}
	for i := range nx {
		if !(c.Q[i] >= 0) || !(c.Qf[i] >= 0) {
			return fmt.Errorf("%w: state weight %d is %v / %v", ErrConfig, i, c.Q[i], c.Qf[i])
		}
	}
	return nil
}

// traj is a state–control trajectory with its step Jacobians.
type traj struct {
	x    []float64 // (H+1)×nx, x[0] the initial state
	u    []float64 // H×ne
	a, b []float64 // H×nx×nx, H×nx×ne
	cost float64
}

func newTraj(h, nx, ne int) *traj {
	return &traj{x: make([]float64, (h+1)*nx), u: make([]float64, h*ne),
		a: make([]float64, h*nx*nx), b: make([]float64, h*nx*ne)}
}

// ILQR is an iterative LQR solver (Gauss–Newton: the model's second
// derivatives are dropped) with a Levenberg–Marquardt regularisation of
// the control Hessian and a backtracking line search on the feed-forward
// term. Each forward pass calls the model's Linearize, so the accepted
// trajectory arrives with the Jacobians the next backward pass needs. It
// keeps its plan between Solve calls (Shift advances it by one step, the
// warm start of receding-horizon control) and does not allocate after New.
// It is not safe for concurrent use.
type ILQR struct {
	model  predictor.Linearizer
	cost   Cost
	h      int
	nx, ne int

	cur, cand *traj
	k, d      []float64 // feedback gains H×ne×nx, feed-forward H×ne
	vx, vxx   []float64 // value gradient and Hessian
	qx, qu    []float64
	qxx, quu  []float64
	qux       []float64
	vb, vab   []float64 // V'_xx B (nx×ne), V'_xx A (nx×nx)
	chol, tmp []float64
	dx        []float64
	mu        float64
}

// Stats reports one Solve.
type Stats struct {
	Iterations int
	Cost       float64 // of the returned plan, under the model
}

// NewILQR returns a solver for plans of horizon steps.
func NewILQR(model predictor.Linearizer, horizon int, cost Cost) (*ILQR, error) {
	nx, ne := model.Dims()
	if horizon < 1 {
		return nil, fmt.Errorf("%w: horizon %d", ErrConfig, horizon)
	}
	if ne < 1 {
		return nil, fmt.Errorf("%w: a model without ports cannot be controlled", ErrConfig)
	}
	if err := cost.validate(nx, ne); err != nil {
		return nil, err
	}
	return &ILQR{model: model, cost: cost, h: horizon, nx: nx, ne: ne,
		cur: newTraj(horizon, nx, ne), cand: newTraj(horizon, nx, ne),
		k: make([]float64, horizon*ne*nx), d: make([]float64, horizon*ne),
		vx: make([]float64, nx), vxx: make([]float64, nx*nx),
		qx: make([]float64, nx), qu: make([]float64, ne),
		qxx: make([]float64, nx*nx), quu: make([]float64, ne*ne), qux: make([]float64, ne*nx),
		vb: make([]float64, nx*ne), vab: make([]float64, nx*nx),
		chol: make([]float64, ne*ne), tmp: make([]float64, 2*ne),
		dx: make([]float64, nx), mu: 1e-6}, nil
}

// Plan returns the current control plan (H×portDim, a view).
func (c *ILQR) Plan() []float64 { return c.cur.u }

// Predicted returns the states the model predicts under the plan
// ((H+1)×stateDim, x_0 first; a view).
func (c *ILQR) Predicted() []float64 { return c.cur.x }

// Shift advances the plan by one step: u_k ← u_{k+1}, the last control
// repeated (the warm start for the next control step).
func (c *ILQR) Shift() {
	ne := c.ne
	copy(c.cur.u, c.cur.u[ne:])
}

// Solve improves the plan from x0 for at most iters iterations (stopping
// early when an iteration lowers the cost by less than a relative 1e-6)
// and returns the first control of the plan in u0.
func (c *ILQR) Solve(x0, u0 []float64, iters int) (Stats, error) {
	nx, ne := c.nx, c.ne
	if len(x0) != nx || len(u0) != ne {
		return Stats{}, fmt.Errorf("%w: Solve with %d states and %d controls, want %d and %d", ErrConfig, len(x0), len(u0), nx, ne)
	}
	// Roll the current plan out from the new state.
	copy(c.cur.x[:nx], x0)
	c.clampPlan(c.cur.u)
	c.cur.cost = c.rollout(c.cur)
	var st Stats
	for st.Iterations < iters {
		st.Iterations++
		if !c.backward() {
			c.mu = math.Min(c.mu*10, 1e6)
			continue
		}
		accepted := false
		for alpha := 1.0; alpha > 1e-3; alpha *= 0.5 {
			c.forward(alpha)
			if c.cand.cost < c.cur.cost {
				accepted = true
				break
			}
		}
		if !accepted {
			c.mu = math.Min(c.mu*10, 1e6)
			if c.mu >= 1e6 {
				break
			}
			continue
		}
		improve := (c.cur.cost - c.cand.cost) / math.Max(c.cur.cost, 1e-300)
		c.cur, c.cand = c.cand, c.cur
		c.mu = math.Max(c.mu/10, 1e-9)
		if improve < 1e-6 {
			break
		}
	}
	copy(u0, c.cur.u[:ne])
	st.Cost = c.cur.cost
	return st, nil
}

func (c *ILQR) clampPlan(u []float64) {
	ne := c.ne
	for i := range u {
		j := i % ne
		u[i] = math.Min(math.Max(u[i], c.cost.ULo[j]), c.cost.UHi[j])
	}
}

// rollout runs the model under t.u from t.x[0], records the Jacobians
// and returns the cost.
func (c *ILQR) rollout(t *traj) float64 {
	nx, ne := c.nx, c.ne
	var j float64
	for k := range c.h {
		c.model.Linearize(t.x[k*nx:(k+1)*nx], t.u[k*ne:(k+1)*ne], t.x[(k+1)*nx:(k+2)*nx],
			t.a[k*nx*nx:(k+1)*nx*nx], t.b[k*nx*ne:(k+1)*nx*ne])
		j += c.stageCost(t, k)
	}
	return j
}

// stageCost is u_kᵀ R u_k + (x_{k+1} − x*)ᵀ W (x_{k+1} − x*).
func (c *ILQR) stageCost(t *traj, k int) float64 {
	nx, ne := c.nx, c.ne
	w := c.cost.Q
	if k == c.h-1 {
		w = c.cost.Qf
	}
	var j float64
	for i := range ne {
		u := t.u[k*ne+i]
		j += c.cost.R[i] * u * u
	}
	x := t.x[(k+1)*nx : (k+2)*nx]
	for i := range nx {
		e := x[i] - c.cost.Target[i]
		j += w[i] * e * e
	}
	if math.IsNaN(j) {
		return math.Inf(1)
	}
	return j
}

// forward applies the gains with step alpha on the feed-forward term to
// make the candidate trajectory.
func (c *ILQR) forward(alpha float64) {
	nx, ne := c.nx, c.ne
	cur, cand := c.cur, c.cand
	copy(cand.x[:nx], cur.x[:nx])
	var j float64
	for k := range c.h {
		xk := cand.x[k*nx : (k+1)*nx]
		for i := range nx {
			c.dx[i] = xk[i] - cur.x[k*nx+i]
		}
		for r := range ne {
			v := cur.u[k*ne+r] + alpha*c.d[k*ne+r]
			g := c.k[(k*ne+r)*nx : (k*ne+r+1)*nx]
			for i := range nx {
				v += g[i] * c.dx[i]
			}
			cand.u[k*ne+r] = math.Min(math.Max(v, c.cost.ULo[r]), c.cost.UHi[r])
		}
		c.model.Linearize(xk, cand.u[k*ne:(k+1)*ne], cand.x[(k+1)*nx:(k+2)*nx],
			cand.a[k*nx*nx:(k+1)*nx*nx], cand.b[k*nx*ne:(k+1)*nx*ne])
		j += c.stageCost(cand, k)
	}
	cand.cost = j
}

// backward computes the gains K_k and d_k along the current trajectory.
// It reports false when a regularised control Hessian is not positive
// definite.
func (c *ILQR) backward() bool {
	nx, ne := c.nx, c.ne
	t := c.cur
	clear(c.vx)
	clear(c.vxx)
	for k := c.h - 1; k >= 0; k-- {
		// V' = V + stage state cost at x_{k+1}.
		w := c.cost.Q
		if k == c.h-1 {
			w = c.cost.Qf
		}
		x := t.x[(k+1)*nx : (k+2)*nx]
		for i := range nx {
			c.vx[i] += 2 * w[i] * (x[i] - c.cost.Target[i])
			c.vxx[i*nx+i] += 2 * w[i]
		}
		a := t.a[k*nx*nx : (k+1)*nx*nx]
		b := t.b[k*nx*ne : (k+1)*nx*ne]
		u := t.u[k*ne : (k+1)*ne]
		// vab = V'xx A, vb = V'xx B
		matMul(c.vab, c.vxx, a, nx, nx, nx)
		matMul(c.vb, c.vxx, b, nx, nx, ne)
		// Qx = Aᵀ V'x, Qu = 2 R u + Bᵀ V'x
		for i := range nx {
			var s float64
			for r := range nx {
				s += a[r*nx+i] * c.vx[r]
			}
			c.qx[i] = s
		}
		for i := range ne {
			s := 2 * c.cost.R[i] * u[i]
			for r := range nx {
				s += b[r*ne+i] * c.vx[r]
			}
			c.qu[i] = s
		}
		// Qxx = Aᵀ V'xx A, Quu = 2R + Bᵀ V'xx B + μI, Qux = Bᵀ V'xx A
		matTMul(c.qxx, a, c.vab, nx, nx, nx)
		matTMul(c.quu, b, c.vb, nx, ne, ne)
		for i := range ne {
			c.quu[i*ne+i] += 2*c.cost.R[i] + c.mu
		}
		matTMul(c.qux, b, c.vab, nx, ne, nx)
		if !cholesky(c.chol, c.quu, ne) {
			return false
		}
		// d = −Quu⁻¹ Qu, K = −Quu⁻¹ Qux
		dk := c.d[k*ne : (k+1)*ne]
		for i := range ne {
			dk[i] = -c.qu[i]
		}
		cholSolve(c.chol, dk, ne, c.tmp)
		kk := c.k[k*ne*nx : (k+1)*ne*nx]
		for col := range nx {
			for i := range ne {
				c.tmp[i] = -c.qux[i*nx+col]
			}
			cholSolve(c.chol, c.tmp[:ne], ne, c.tmp[ne:])
			for i := range ne {
				kk[i*nx+col] = c.tmp[i]
			}
		}
		// V_x = Qx + Kᵀ Quu d + Kᵀ Qu + Quxᵀ d
		// V_xx = Qxx + Kᵀ Quu K + Kᵀ Qux + Quxᵀ K
		for i := range nx {
			s := c.qx[i]
			for r := range ne {
				var quud float64
				for q := range ne {
					quud += c.quu[r*ne+q] * dk[q]
				}
				s += kk[r*nx+i]*(quud+c.qu[r]) + c.qux[r*nx+i]*dk[r]
			}
			c.vx[i] = s
		}
		for i := range nx {
			for j := range nx {
				s := c.qxx[i*nx+j]
				for r := range ne {
					var quuk float64
					for q := range ne {
						quuk += c.quu[r*ne+q] * kk[q*nx+j]
					}
					s += kk[r*nx+i]*quuk + kk[r*nx+i]*c.qux[r*nx+j] + c.qux[r*nx+i]*kk[r*nx+j]
				}
				c.vxx[i*nx+j] = s
			}
		}
		for i := range nx {
			for j := range i {
				v := 0.5 * (c.vxx[i*nx+j] + c.vxx[j*nx+i])
				c.vxx[i*nx+j], c.vxx[j*nx+i] = v, v
			}
		}
	}
	return true
}

// matMul writes dst (m×p) = a (m×n) · b (n×p).
func matMul(dst, a, b []float64, m, n, p int) {
	for i := range m {
		for j := range p {
			var s float64
			for k := range n {
				s += a[i*n+k] * b[k*p+j]
			}
			dst[i*p+j] = s
		}
	}
}

// matTMul writes dst (n×p) = aᵀ · b for a (m×n) and b (m×p).
func matTMul(dst, a, b []float64, m, n, p int) {
	for i := range n {
		for j := range p {
			var s float64
			for k := range m {
				s += a[k*n+i] * b[k*p+j]
			}
			dst[i*p+j] = s
		}
	}
}

// cholesky writes the lower Cholesky factor of the n×n matrix a into l and
// reports whether a is positive definite.
func cholesky(l, a []float64, n int) bool {
	clear(l[:n*n])
	for i := range n {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			if i == j {
				if !(s > 0) {
					return false
				}
				l[i*n+i] = math.Sqrt(s)
			} else {
				l[i*n+j] = s / l[j*n+j]
			}
		}
	}
	return true
}

// cholSolve solves L Lᵀ x = b in place (b becomes x); y is n scratch.
func cholSolve(l, b []float64, n int, y []float64) {
	for i := range n {
		s := b[i]
		for k := range i {
			s -= l[i*n+k] * y[k]
		}
		y[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * b[k]
		}
		b[i] = s / l[i*n+i]
	}
}
