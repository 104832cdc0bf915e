package trainer

// This file holds the K-step path of the workers: the loss of a row of a
// Batch with K > 1 is the mean one-step loss along the gauge-fixed rollout
// from its initial state under its measured ports, x̂_{k+1} = Π Φ σ_{e_k}(x̂_k),
// and its gradient is back-propagated through every step: through the map
// (Trainable.Backward, which also returns the adjoint of the map's input),
// the projection Π and the section σ that re-embeds x̂_{k+1} with the next
// measured ports (the fibres restart at zero, so only q and p carry an
// adjoint from one step to the next).

// lossGradSeq is LossGrad for a batch of K-step sequences.
func (w *sympWorker) lossGradSeq(b Batch, grad []float64) float64 {
	m := w.s.Model()
	l := m.Layout
	n, d := l.N, l.D()
	d2, nx, ne := 2*d, l.StateDim(), l.PortDim()
	K, N := b.K, b.N
	w.growSeq(K)
	c := 1 / float64(K)
	var total float64
	// forward: step k's input rows in zs[k], its output in place
	for k := range K {
		z := w.zs[k*w.capacity*d2 : (k*w.capacity+N)*d2]
		for r := range N {
			zr := z[r*d2 : (r+1)*d2]
			e := b.E[(r*K+k)*ne : (r*K+k+1)*ne]
			if k == 0 {
				w.embedRow(zr, b.X[r*nx:(r+1)*nx], e)
				continue
			}
			// σ_{e_k}(Π z_{k−1}): the state stays normalised
			prev := w.zs[((k-1)*w.capacity+r)*d2 : ((k-1)*w.capacity+r+1)*d2]
			for i := range l.PortDim() {
				w.en[i] = (e[i] - m.Norm.Mu[2*n+i]) / m.Norm.Scale[2*n+i]
			}
			l.Project(w.xn, prev)
			l.Section(zr, w.xn, w.en)
		}
		w.s.T.Forward(w.tapes[k], z, N)
		zb := w.zbs[k*w.capacity*d2 : (k*w.capacity+N)*d2]
		for r := range N {
			wr := b.W[r]
			total += wr * c * w.stepLoss(z[r*d2:(r+1)*d2], zb[r*d2:(r+1)*d2],
				b.XNext[(r*K+k)*nx:(r*K+k+1)*nx], b.E[(r*K+k)*ne:(r*K+k+1)*ne], wr*c)
		}
	}
	// backward: the adjoint of step k's input state feeds step k−1's output
	for k := K - 1; k >= 0; k-- {
		zb := w.zbs[k*w.capacity*d2 : (k*w.capacity+N)*d2]
		w.s.T.Backward(w.tapes[k], zb, grad)
		if k == 0 {
			break
		}
		prev := w.zbs[(k-1)*w.capacity*d2 : ((k-1)*w.capacity+N)*d2]
		for r := range N {
			in, out := zb[r*d2:(r+1)*d2], prev[r*d2:(r+1)*d2]
			for i := range n {
				out[i] += in[i]         // q: Q[0:n]
				out[d+n+i] += in[d+n+i] // p: P[n:2n]
			}
		}
	}
	return total
}

// growSeq makes room for K steps of capacity rows.
func (w *sympWorker) growSeq(K int) {
	d2 := w.s.Model().Layout.Dim()
	for len(w.tapes) < K {
		w.tapes = append(w.tapes, w.s.T.NewTape(w.capacity))
	}
	if len(w.zs) < K*w.capacity*d2 {
		w.zs = make([]float64, K*w.capacity*d2)
		w.zbs = make([]float64, K*w.capacity*d2)
	}
}

// lossGradSeq is LossGrad for a batch of K-step sequences: the MLP's
// rollout x̂_{k+1} = x̂_k + s·f(x̂_k, e_k) in physical units, its loss the
// mean of the K weighted squared errors, back-propagated through every step.
func (w *mlpWorker) lossGradSeq(b Batch, grad []float64) float64 {
	nx := len(w.cw)
	ne := w.ne
	K, N := b.K, b.N
	w.growSeq(K)
	c := 1 / float64(K)
	rows := w.capacity * nx
	copy(w.xs[:N*nx], b.X[:N*nx])
	var total float64
	for k := range K {
		ek := w.ek[:N*ne]
		for r := range N {
			copy(ek[r*ne:(r+1)*ne], b.E[(r*K+k)*ne:(r*K+k+1)*ne])
		}
		w.m.Net.Forward(w.ws[k], w.xs[k*rows:k*rows+N*nx], ek, N, w.xs[(k+1)*rows:(k+1)*rows+N*nx])
	}
	// backward: dPred of step k is its loss's gradient plus the adjoint of
	// step k+1's input
	dp := w.dPred[:N*nx]
	dx := w.dx[:N*nx]
	clear(dx)
	for k := K - 1; k >= 0; k-- {
		p := w.xs[(k+1)*rows : (k+1)*rows+N*nx]
		for r := range N {
			wr := b.W[r] * c
			t := b.XNext[(r*K+k)*nx : (r*K+k+1)*nx]
			for j := range nx {
				e := p[r*nx+j] - t[j]
				total += wr * w.cw[j] * e * e
				dp[r*nx+j] = 2*wr*w.cw[j]*e + dx[r*nx+j]
			}
		}
		if k == 0 {
			w.m.Net.Backward(w.ws[k], dp, grad, nil)
			break
		}
		w.m.Net.Backward(w.ws[k], dp, grad, dx)
	}
	return total
}

// growSeq makes room for K steps of capacity rows.
func (w *mlpWorker) growSeq(K int) {
	nx, ne := len(w.cw), w.ne
	for len(w.ws) < K {
		w.ws = append(w.ws, w.m.Net.NewWorkspace(w.capacity))
	}
	if len(w.xs) < (K+1)*w.capacity*nx {
		w.xs = make([]float64, (K+1)*w.capacity*nx)
	}
	if len(w.ek) < w.capacity*ne {
		w.ek = make([]float64, w.capacity*ne)
		w.dx = make([]float64, w.capacity*nx)
	}
}
