package mlp

import (
	"fmt"

	"github.com/calisym/calisym/predictor/kernel"
)

// Linearizer evaluates one Step of an MLP together with its exact
// Jacobians with respect to the state and the ports; it implements
// predictor.Linearizer, so predictor.NewLinearization rolls it out and
// differentiates the rollout as it does the symplectic models. The
// Jacobian of x' = x + σ_Δ ⊙ f(z) is pushed forward as one batch of
// StateDim + PortDim tangents through the layers (dA' = (dA Wᵀ) ⊙ sech²
// for hidden layers). It does not allocate; make one per goroutine, and
// do not change the MLP's parameters while it is in use.
type Linearizer struct {
	m *MLP
	// acts[l] is the input of layer l (acts[0] the normalised input),
	// sech[l] the tanh derivative of hidden layer l.
	acts, sech [][]float64
	out        []float64
	d0, d1     []float64 // tangents, (StateDim+PortDim)×widest
}

// NewLinearizer returns a linearizer of the MLP's current parameters.
func (m *MLP) NewLinearizer() *Linearizer {
	r := m.cfg.In()
	widest := r
	lz := &Linearizer{m: m}
	lz.acts = append(lz.acts, make([]float64, r))
	for l, L := range m.layers {
		widest = max(widest, L.out)
		if l < len(m.layers)-1 {
			lz.acts = append(lz.acts, make([]float64, L.out))
			lz.sech = append(lz.sech, make([]float64, L.out))
		}
	}
	lz.out = make([]float64, m.cfg.StateDim)
	lz.d0, lz.d1 = make([]float64, r*widest), make([]float64, r*widest)
	return lz
}

// Dims returns StateDim and PortDim.
func (lz *Linearizer) Dims() (stateDim, portDim int) { return lz.m.cfg.StateDim, lz.m.cfg.PortDim }

// Linearize writes next = Step(x, e) (the same bits), fx = ∂next/∂x
// (StateDim×StateDim) and fe = ∂next/∂e (StateDim×PortDim), row major.
// It panics on wrong lengths.
func (lz *Linearizer) Linearize(x, e, next, fx, fe []float64) {
	m := lz.m
	nx, ne := m.cfg.StateDim, m.cfg.PortDim
	if len(x) != nx || len(e) != ne || len(next) != nx || len(fx) != nx*nx || len(fe) != nx*ne {
		panic(fmt.Sprintf("mlp: Linearize with len(x)=%d, len(e)=%d, len(next)=%d, len(fx)=%d, len(fe)=%d; want %d, %d, %d, %d, %d",
			len(x), len(e), len(next), len(fx), len(fe), nx, ne, nx, nx*nx, nx*ne))
	}
	in := nx + ne
	m.normalize(x, e, lz.acts[0])
	last := len(m.layers) - 1
	for l, L := range m.layers {
		if l < last {
			h := lz.acts[l+1]
			kernel.MatVec(L.out, L.in, L.w, L.in, lz.acts[l], h)
			kernel.TanhSech2(1, L.out, h, L.out, L.b, m.ones[:L.out], h, L.out, lz.sech[l], L.out)
			continue
		}
		kernel.MatVec(L.out, L.in, L.w, L.in, lz.acts[l], lz.out)
		for i, b := range L.b {
			lz.out[i] += b
		}
	}
	for i := range nx {
		next[i] = x[i] + m.norm.SDelta[i]*lz.out[i]
	}
	// Tangent row i is the derivative with respect to input i: the
	// normalisation scales it by 1/s.
	cur := lz.d0[:in*in]
	clear(cur)
	for i := range nx {
		cur[i*in+i] = m.invSX[i]
	}
	for j := range ne {
		cur[(nx+j)*in+nx+j] = m.invSE[j]
	}
	width := in
	for l, L := range m.layers {
		nxt := lz.d1[:in*L.out]
		kernel.Gemm(false, true, in, L.out, L.in, 1, cur, width, L.w, L.in, 0, nxt, L.out)
		if l < last {
			s := lz.sech[l]
			for r := range in {
				row := nxt[r*L.out : (r+1)*L.out]
				for j := range row {
					row[j] *= s[j]
				}
			}
		}
		lz.d0, lz.d1 = lz.d1, lz.d0
		cur, width = nxt, L.out
	}
	for o := range nx {
		sd := m.norm.SDelta[o]
		for i := range nx {
			v := sd * cur[i*nx+o]
			if i == o {
				v++
			}
			fx[o*nx+i] = v
		}
		for j := range ne {
			fe[o*ne+j] = sd * cur[(nx+j)*nx+o]
		}
	}
}
