package mlp

import (
	"fmt"

	"github.com/calisym/calisym/predictor/kernel"
)

// Workspace holds the activations of one batch between Forward and
// Backward. Each goroutine needs its own; it is reusable across batches of
// up to its capacity.
type Workspace struct {
	capacity int
	n        int
	// acts[0] is the normalised input (N×In); acts[l] for l ≥ 1 is the tanh
	// output of hidden layer l (N×Hidden[l−1]); acts[len(layers)] is the
	// raw network output f (N×StateDim).
	acts [][]float64
	// sech[l] is sech² of hidden layer l+1's pre-activation, the tanh
	// derivative Backward needs (N×Hidden[l]).
	sech   [][]float64
	d0, d1 []float64
}

// NewWorkspace returns a workspace for batches of up to capacity rows.
func (m *MLP) NewWorkspace(capacity int) *Workspace {
	capacity = max(capacity, 1)
	ws := &Workspace{capacity: capacity}
	widest := m.cfg.In()
	ws.acts = append(ws.acts, make([]float64, capacity*m.cfg.In()))
	for l, L := range m.layers {
		ws.acts = append(ws.acts, make([]float64, capacity*L.out))
		if l < len(m.layers)-1 {
			ws.sech = append(ws.sech, make([]float64, capacity*L.out))
		}
		widest = max(widest, L.out)
	}
	ws.d0 = make([]float64, capacity*widest)
	ws.d1 = make([]float64, capacity*widest)
	return ws
}

// Capacity returns the largest batch the workspace can hold.
func (ws *Workspace) Capacity() int { return ws.capacity }

// Forward predicts a batch of n transitions: x (n×StateDim) and e
// (n×PortDim) row-major in, pred (n×StateDim) out, keeping the activations
// in ws for Backward. Each row has the bits Step gives it. It allocates
// nothing and panics if n exceeds the workspace capacity or a length does
// not match.
func (m *MLP) Forward(ws *Workspace, x, e []float64, n int, pred []float64) {
	nx, ne, in := m.cfg.StateDim, m.cfg.PortDim, m.cfg.In()
	if n < 0 || n > ws.capacity || len(ws.acts) != len(m.layers)+1 || len(ws.acts[0]) < ws.capacity*in {
		panic(fmt.Sprintf("mlp: Forward of %d rows with a workspace of capacity %d for another architecture", n, ws.capacity))
	}
	if len(x) != n*nx || len(e) != n*ne || len(pred) != n*nx {
		panic(fmt.Sprintf("mlp: Forward of %d rows with len(x)=%d, len(e)=%d, len(pred)=%d", n, len(x), len(e), len(pred)))
	}
	ws.n = n
	if n == 0 {
		return
	}
	z := ws.acts[0][:n*in]
	for r := range n {
		m.normalize(x[r*nx:(r+1)*nx], e[r*ne:(r+1)*ne], z[r*in:(r+1)*in])
	}
	last := len(m.layers) - 1
	for l, L := range m.layers {
		h := ws.acts[l+1][:n*L.out]
		if l < last {
			// h = tanh(A·Wᵀ + b), sech² kept for Backward
			kernel.Gemm(false, true, n, L.out, L.in, 1, ws.acts[l], L.in, L.w, L.in, 0, h, L.out)
			kernel.TanhSech2(n, L.out, h, L.out, L.b, m.ones[:L.out], h, L.out, ws.sech[l], L.out)
			continue
		}
		for r := range n {
			copy(h[r*L.out:(r+1)*L.out], L.b)
		}
		kernel.Gemm(false, true, n, L.out, L.in, 1, ws.acts[l], L.in, L.w, L.in, 1, h, L.out)
	}
	f := ws.acts[len(m.layers)][:n*nx]
	sd := m.norm.SDelta
	for r := range n {
		pr, xr, fr := pred[r*nx:(r+1)*nx], x[r*nx:(r+1)*nx], f[r*nx:(r+1)*nx]
		for i := range pr {
			pr[i] = xr[i] + sd[i]*fr[i]
		}
	}
}

// Backward back-propagates dPred = ∂L/∂pred (n×StateDim, physical units)
// through the batch of the last Forward on ws. It adds ∂L/∂θ into grad
// (laid out like Theta) and, if dx is non-nil, writes ∂L/∂x (n×StateDim,
// through both the residual and the network). It allocates nothing.
func (m *MLP) Backward(ws *Workspace, dPred, grad, dx []float64) {
	n, nx, in := ws.n, m.cfg.StateDim, m.cfg.In()
	if len(dPred) != n*nx || len(grad) != len(m.theta) || dx != nil && len(dx) != n*nx {
		panic(fmt.Sprintf("mlp: Backward of %d rows with len(dPred)=%d, len(grad)=%d, len(dx)=%d", n, len(dPred), len(grad), len(dx)))
	}
	if n == 0 {
		return
	}
	dh := ws.d0[:n*nx]
	sd := m.norm.SDelta
	for r := range n {
		for i := range nx {
			dh[r*nx+i] = dPred[r*nx+i] * sd[i]
		}
	}
	da := ws.d1
	for l := len(m.layers) - 1; l >= 0; l-- {
		L := m.layers[l]
		a := ws.acts[l]
		// ∂L/∂W += dHᵀ·A, ∂L/∂b += Σ_rows dH
		kernel.Gemm(true, false, L.out, L.in, n, 1, dh, L.out, a, L.in, 1, grad[L.wOff:L.wOff+L.in*L.out], L.in)
		gb := grad[L.bOff : L.bOff+L.out]
		for r := range n {
			for j, v := range dh[r*L.out : (r+1)*L.out] {
				gb[j] += v
			}
		}
		if l == 0 && dx == nil {
			break
		}
		dA := da[:n*L.in]
		kernel.Gemm(false, false, n, L.in, L.out, 1, dh, L.out, L.w, L.in, 0, dA, L.in)
		if l > 0 {
			for i, s := range ws.sech[l-1][:n*L.in] {
				dA[i] *= s
			}
			dh, da = dA, dh[:cap(dh)]
			continue
		}
		for r := range n {
			for i := range nx {
				dx[r*nx+i] = dPred[r*nx+i] + dA[r*in+i]*m.invSX[i]
			}
		}
	}
}

// WeightedSquaredError returns Σ_r Σ_j w_j·(pred_rj − target_rj)² over
// row-major n×len(w) matrices and, if dPred is non-nil, writes its
// gradient 2·w_j·(pred_rj − target_rj) into dPred.
func WeightedSquaredError(pred, target, w, dPred []float64) float64 {
	nc := len(w)
	if nc == 0 || len(pred)%nc != 0 || len(target) != len(pred) || dPred != nil && len(dPred) != len(pred) {
		panic(fmt.Sprintf("mlp: WeightedSquaredError with len(pred)=%d, len(target)=%d, len(w)=%d, len(dPred)=%d", len(pred), len(target), nc, len(dPred)))
	}
	var s float64
	for i, p := range pred {
		d := p - target[i]
		wj := w[i%nc]
		s += wj * d * d
		if dPred != nil {
			dPred[i] = 2 * wj * d
		}
	}
	return s
}
