package predictor

// Tape holds what a batched forward pass of the map (Trainable.Forward)
// records for the backward pass and the tangent map: per layer the input
// state, the ridge coordinate and the ridge function's intermediate values.
// Trainable.NewTape makes one for a model; it serves batches of up to Cap
// rows of that model. A Tape is not safe for concurrent use (give each
// goroutine its own).
type Tape struct {
	m   *Model
	cap int
	n   int

	zin  [][]float64 // per layer, n×2d inputs
	xi   [][]float64 // per layer, n×d ridge coordinates ξ
	g    [][]float64 // per layer, n×d ∇K(ξ)
	t, s [][]float64 // per layer, n×width tanh values and a⊙sech² (GR ridge or GRB tail)
	eta  [][]float64 // GRB: per layer n×m
	geta [][]float64 // GRB: per layer n×m ∇K(η)
	rows [][]splineRow

	// scratch
	u, s2   []float64 // n×width
	gbar    []float64 // n×d
	xibar   []float64 // n×d
	etaBar  []float64 // n×m
	etaBar2 []float64 // n×m
	gEtaBar []float64 // n×m
	hess    []float64 // m×m
	dA, dB  []float64 // d×d
	dS, tmp []float64 // d×d
	tmp2    []float64 // d×d
	symS    [3][]float64
}

// newTape allocates a tape for batches of up to capacity rows.
func (m *Model) newTape(capacity int) *Tape {
	l, d, w := m.Arch.Layers, m.Layout.D(), m.Arch.Width
	mk := func(rows, cols int) [][]float64 {
		out := make([][]float64, l)
		for i := range out {
			out[i] = make([]float64, rows*cols)
		}
		return out
	}
	t := &Tape{m: m, cap: capacity,
		zin: mk(capacity, 2*d), xi: mk(capacity, d), g: mk(capacity, d),
		t: mk(capacity, w), s: mk(capacity, w),
		u: make([]float64, capacity*w), s2: make([]float64, capacity*w),
		gbar: make([]float64, capacity*d), xibar: make([]float64, capacity*d),
		dA: make([]float64, d*d), dB: make([]float64, d*d), dS: make([]float64, d*d),
		tmp: make([]float64, d*d), tmp2: make([]float64, d*d),
	}
	for i := range t.symS {
		t.symS[i] = make([]float64, d*d)
	}
	if m.Arch.Kind == KindGRB {
		md := m.Arch.RidgeDim
		t.eta, t.geta = mk(capacity, md), mk(capacity, md)
		t.rows = make([][]splineRow, l)
		for i := range t.rows {
			t.rows[i] = make([]splineRow, capacity)
		}
		t.etaBar = make([]float64, capacity*md)
		t.etaBar2 = make([]float64, capacity*md)
		t.gEtaBar = make([]float64, capacity*md)
		t.hess = make([]float64, md*md)
	}
	return t
}

// Cap returns the largest batch the tape accepts.
func (t *Tape) Cap() int { return t.cap }

// forward applies the map (in normalised lifted coordinates) to the n rows of
// z (n×2d, row major) in place and records the pass on the tape.
func (m *Model) forward(t *Tape, z []float64, n int) {
	if n > t.cap {
		panic("predictor: batch larger than tape capacity")
	}
	t.n = n
	d := m.Layout.D()
	for i, df := range m.defs {
		copy(t.zin[i][:n*2*d], z[:n*2*d])
		c, dm := m.layerCD(i)
		Z := gen(z, n, 2*d, 2*d)
		// ξ = Z Cᵀ = Q Bᵀ + P Aᵀ (row form of A P + B Q)
		gemm(noTrans, trans, 1, Z, gen(c, d, 2*d, 2*d), 0, gen(t.xi[i], n, d, d))
		m.ridgeGrad(t, i, df, n)
		// Z += G D: Q += h G A ; P −= h G B
		gemm(noTrans, noTrans, 1, gen(t.g[i], n, d, d), gen(dm, d, 2*d, 2*d), 1, Z)
	}
}

// ridgeGrad fills t.g[i] = ∇K(ξ) for layer i.
func (m *Model) ridgeGrad(t *Tape, i int, df layerDef, n int) {
	d := m.Layout.D()
	p := m.theta[df.ridge : df.off+df.n]
	switch m.Arch.Kind {
	case KindGR:
		m.gr().grad(p, n, t.xi[i], t.g[i], t.t[i], t.s[i])
	case KindGRB:
		md := m.Arch.RidgeDim
		R := gen(p[:md*d], md, d, d)
		c := p[md*d : md*d+m.spl().nParams()]
		tp := p[md*d+len(c):]
		eta, geta := t.eta[i], t.geta[i]
		gemm(noTrans, trans, 1, gen(t.xi[i], n, d, d), R, 0, gen(eta, n, md, md))
		m.tail().grad(tp, n, eta, geta, t.t[i], t.s[i])
		sr := m.spl()
		for r := range n {
			row := &t.rows[i][r]
			sr.eval(eta[r*md:(r+1)*md], row)
			sr.gradHess(c, row, geta[r*md:(r+1)*md], nil)
		}
		gemm(noTrans, noTrans, 1, gen(geta, n, md, md), R, 0, gen(t.g[i], n, d, d))
	}
}

// backward propagates zbar, the adjoint of the output of the last forward
// (n×2d), back to the adjoint of its input (in place), and accumulates the
// gradient with respect to θ into grad (len NumParams).
func (m *Model) backward(t *Tape, zbar, grad []float64) {
	n := t.n
	d := m.Layout.D()
	h := m.Arch.StepSize
	for i := len(m.defs) - 1; i >= 0; i-- {
		df := m.defs[i]
		c, dm := m.layerCD(i)
		Zb := gen(zbar, n, 2*d, 2*d)
		Qb, Pb := gen(zbar, n, d, 2*d), gen(zbar[d:], n, d, 2*d)
		G := gen(t.g[i], n, d, d)
		// ḡ = Z̄' Dᵀ = h (Q̄' Aᵀ − P̄' Bᵀ)
		gemm(noTrans, trans, 1, Zb, gen(dm, d, 2*d, 2*d), 0, gen(t.gbar, n, d, d))
		dA, dB := gen(t.dA, d, d, d), gen(t.dB, d, d, d)
		// Ā = h Gᵀ Q̄' ; B̄ = −h Gᵀ P̄'
		gemm(trans, noTrans, h, G, Qb, 0, dA)
		gemm(trans, noTrans, -h, G, Pb, 0, dB)
		m.ridgeBackward(t, i, df, n, grad)
		xb := gen(t.xibar, n, d, d)
		zin := t.zin[i]
		Qin, Pin := gen(zin, n, d, 2*d), gen(zin[d:], n, d, 2*d)
		// Ā += ξ̄ᵀ P ; B̄ += ξ̄ᵀ Q
		gemm(trans, noTrans, 1, xb, Pin, 1, dA)
		gemm(trans, noTrans, 1, xb, Qin, 1, dB)
		// Z̄ = Z̄' + ξ̄ C: Q̄ = Q̄' + ξ̄ B ; P̄ = P̄' + ξ̄ A
		gemm(noTrans, noTrans, 1, xb, gen(c, d, 2*d, 2*d), 1, Zb)
		m.abToS(t, df, grad)
	}
}

// ridgeBackward sets t.xibar = ∇²K(ξ)·ḡ and accumulates ridge parameter
// gradients of ⟨ḡ, ∇K(ξ)⟩.
func (m *Model) ridgeBackward(t *Tape, i int, df layerDef, n int, grad []float64) {
	d := m.Layout.D()
	p := m.theta[df.ridge : df.off+df.n]
	dp := grad[df.ridge : df.off+df.n]
	switch m.Arch.Kind {
	case KindGR:
		m.gr().backward(p, dp, n, t.xi[i], t.t[i], t.gbar, t.xibar, t.u, t.s2)
	case KindGRB:
		md := m.Arch.RidgeDim
		R := gen(p[:md*d], md, d, d)
		dR := gen(dp[:md*d], md, d, d)
		nc := m.spl().nParams()
		c, dc := p[md*d:md*d+nc], dp[md*d:md*d+nc]
		tp, dtp := p[md*d+nc:], dp[md*d+nc:]
		gEb := gen(t.gEtaBar, n, md, md)
		// ḡη = ḡ Rᵀ
		gemm(noTrans, trans, 1, gen(t.gbar, n, d, d), R, 0, gEb)
		// tail: η̄ = H_tail ḡη, tail parameter gradients
		m.tail().backward(tp, dtp, n, t.eta[i], t.t[i], t.gEtaBar, t.etaBar, t.u, t.s2)
		sr := m.spl()
		for r := range n {
			row := &t.rows[i][r]
			gr := t.gEtaBar[r*md : (r+1)*md]
			sr.paramGrad(dc, row, gr)
			clear(t.hess)
			scratch := t.etaBar2[r*md : (r+1)*md]
			clear(scratch)
			sr.gradHess(c, row, scratch, t.hess)
			eb := t.etaBar[r*md : (r+1)*md]
			for j := range md {
				var v float64
				for k := range md {
					v += t.hess[j*md+k] * gr[k]
				}
				eb[j] += v
			}
		}
		// R̄ += gηᵀ ḡ + η̄ᵀ ξ ; ξ̄ = η̄ R
		gemm(trans, noTrans, 1, gen(t.geta[i], n, md, md), gen(t.gbar, n, d, d), 1, dR)
		gemm(trans, noTrans, 1, gen(t.etaBar, n, md, md), gen(t.xi[i], n, d, d), 1, dR)
		gemm(noTrans, noTrans, 1, gen(t.etaBar, n, md, md), R, 0, gen(t.xibar, n, d, d))
	}
}

// abToS converts the gradients with respect to the effective A and B of a
// layer into gradients with respect to its raw S matrices.
func (m *Model) abToS(t *Tape, df layerDef, grad []float64) {
	d := m.Layout.D()
	s1, s2, s3 := t.symS[0], t.symS[1], t.symS[2]
	symInto(s1, m.theta[df.s1:df.s1+d*d], d)
	symInto(s2, m.theta[df.s2:df.s2+d*d], d)
	symInto(s3, m.theta[df.s3:df.s3+d*d], d)
	// canonical roles: Ac = I + S1S2, Bc = S1 + S1S2S3 + S3
	dAc, dBc := t.dA, t.dB
	if df.swap {
		dAc, dBc = dBc, dAc
	}
	S1, S2, S3 := gen(s1, d, d, d), gen(s2, d, d, d), gen(s3, d, d, d)
	Ab, Bb := gen(dAc, d, d, d), gen(dBc, d, d, d)
	dS := gen(t.dS, d, d, d)
	tmp := gen(t.tmp, d, d, d)
	// S̄1 = Āc S2 + B̄c + B̄c S3 S2
	gemm(noTrans, noTrans, 1, Ab, S2, 0, dS)
	gemm(noTrans, noTrans, 1, Bb, S3, 0, tmp)
	gemm(noTrans, noTrans, 1, tmp, S2, 1, dS)
	for k := range t.dS {
		t.dS[k] += dBc[k]
	}
	addSym(grad[df.s1:df.s1+d*d], t.dS, d)
	// S̄2 = S1 Āc + S1 B̄c S3
	gemm(noTrans, noTrans, 1, S1, Ab, 0, dS)
	gemm(noTrans, noTrans, 1, S1, Bb, 0, tmp)
	gemm(noTrans, noTrans, 1, tmp, S3, 1, dS)
	addSym(grad[df.s2:df.s2+d*d], t.dS, d)
	// S̄3 = B̄c + S2 S1 B̄c
	gemm(noTrans, noTrans, 1, S2, S1, 0, tmp)
	gemm(noTrans, noTrans, 1, tmp, Bb, 0, dS)
	for k := range t.dS {
		t.dS[k] += dBc[k]
	}
	addSym(grad[df.s3:df.s3+d*d], t.dS, d)
}

// addSym adds (g + gᵀ)/2 to dst: the gradient through S = (X + Xᵀ)/2.
func addSym(dst, g []float64, d int) {
	for i := range d {
		for j := range d {
			dst[i*d+j] += 0.5 * (g[i*d+j] + g[j*d+i])
		}
	}
}

// tangent pushes n tangent vectors dz (n×2d, row major) through the map's
// Jacobian at the states recorded by the last forward, in place.
func (m *Model) tangent(t *Tape, dz []float64) {
	n := t.n
	d := m.Layout.D()
	for i, df := range m.defs {
		c, dm := m.layerCD(i)
		dZ := gen(dz, n, 2*d, 2*d)
		// dξ = dZ Cᵀ, dG = ∇²K(ξ) dξ, dZ += dG D
		gemm(noTrans, trans, 1, dZ, gen(c, d, 2*d, 2*d), 0, gen(t.gbar, n, d, d))
		m.ridgeHVP(t, i, df, n, t.gbar, t.xibar)
		gemm(noTrans, noTrans, 1, gen(t.xibar, n, d, d), gen(dm, d, 2*d, 2*d), 1, dZ)
	}
}

// ridgeHVP writes out = ∇²K(ξ)·v for layer i at the recorded states.
func (m *Model) ridgeHVP(t *Tape, i int, df layerDef, n int, v, out []float64) {
	d := m.Layout.D()
	p := m.theta[df.ridge : df.off+df.n]
	switch m.Arch.Kind {
	case KindGR:
		m.gr().hvp(p, n, t.t[i], v, out, t.u)
	case KindGRB:
		md := m.Arch.RidgeDim
		R := gen(p[:md*d], md, d, d)
		nc := m.spl().nParams()
		c, tp := p[md*d:md*d+nc], p[md*d+nc:]
		ve := gen(t.gEtaBar, n, md, md)
		gemm(noTrans, trans, 1, gen(v, n, d, d), R, 0, ve)
		m.tail().hvp(tp, n, t.t[i], t.gEtaBar, t.etaBar, t.u)
		sr := m.spl()
		for r := range n {
			clear(t.hess)
			scratch := t.etaBar2[r*md : (r+1)*md]
			clear(scratch)
			sr.gradHess(c, &t.rows[i][r], scratch, t.hess)
			vr := t.gEtaBar[r*md : (r+1)*md]
			eb := t.etaBar[r*md : (r+1)*md]
			for j := range md {
				for k := range md {
					eb[j] += t.hess[j*md+k] * vr[k]
				}
			}
		}
		gemm(noTrans, noTrans, 1, gen(t.etaBar, n, md, md), R, 0, gen(out, n, d, d))
	}
}

// layerK returns K(ξ), the ridge Hamiltonian of layer i at one ridge
// coordinate ξ; it is used by tests of the ridge gradients.
func (m *Model) layerK(i int, xi []float64) float64 {
	df := m.defs[i]
	d := m.Layout.D()
	p := m.theta[df.ridge : df.off+df.n]
	switch m.Arch.Kind {
	case KindGR:
		return m.gr().value(p, xi)
	default:
		md := m.Arch.RidgeDim
		eta := make([]float64, md)
		for j := range md {
			for k := range d {
				eta[j] += p[j*d+k] * xi[k]
			}
		}
		nc := m.spl().nParams()
		var row splineRow
		m.spl().eval(eta, &row)
		return m.spl().value(p[md*d:md*d+nc], &row) + m.tail().value(p[md*d+nc:], eta)
	}
}
