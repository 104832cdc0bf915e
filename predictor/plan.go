package predictor

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/predictor/kernel"
)

// Plan is a model compiled for inference. Each layer's ridge coordinate is
// folded into one k×2d matrix acting on Z = (Q, P) directly,
//
//	M = W·[B | A]   (GR, k = width)      M = R·[B | A]   (GRB, k = m),
//
// so that a layer costs two matrix–vector products of size k×2d:
//
//	y = M Z,  g = ∇K̂(y),  Q += h M_Pᵀ g,  P −= h M_Qᵀ g,
//
// with M_Q, M_P the column blocks of M acting on Q and P. A single GR
// trajectory runs each layer as one fused kernel (kernel.TanhRidgeStep), which
// streams M once: row blocks of M are multiplied by Z, pass through the
// ridge and are added into Mᵀg while they are still in the L1 cache, and
// the update of Q and P follows in the same assembly. Batches
// of rows run as matrix products on copies laid out for the panel kernels:
// Mᵀ (2d×k) for Y = Z Mᵀ, and N = h·[M_P | −M_Q] (k×2d) for the update
// Z += G N of both halves in one product. The rollout works in normalised
// coordinates and converts only at its boundaries; in its first layer the
// product skips the columns that the data section σₑ sets to zero, and in
// its last layer the update computes only q and p, the coordinates Π keeps.
// A Plan is read-only after Compile and safe for concurrent use by any number
// of Rollers.
type Plan struct {
	Layout Layout
	Kind   Kind
	d, k   int
	ld     int // row stride of the layers' M: 2d rounded up to whole cache lines
	h      float64
	layers []planLayer
	spl    splineRidge
	tail   tanhRidge

	muX, sX []float64 // physical (q, p) normalisation
	muE, sE []float64 // port (u, f_c) normalisation
}

type planLayer struct {
	m    []float64 // k×2d, leading dimension Plan.ld
	mt   []float64 // 2d×k, Mᵀ (batches)
	nu   []float64 // k×2d, h·[M_P | −M_Q] (batches)
	b, a []float64 // GR: bias and amplitude (k)
	// GR: b and a repeated sech2Group(k) times, so that Sech2 runs over
	// groups of rows whose length is a whole number of vectors (no
	// partial vector at the end of every row); nil when the group is 1.
	bg, ag []float64
	coef   []float64 // GRB spline coefficients
	tp     []float64 // GRB tail parameters
}

// Compile builds the inference plan of the model's current parameters.
func (m *Model) Compile() (*Plan, error) {
	l := m.Layout
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if err := m.Norm.Validate(l); err != nil {
		return nil, err
	}
	if len(m.theta) != m.NumParams() {
		return nil, fmt.Errorf("%w: model has %d parameters, architecture needs %d", ErrLayout, len(m.theta), m.NumParams())
	}
	for i, v := range m.theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("predictor: parameter %d is %v", i, v)
		}
	}
	d, n := l.D(), l.N
	p := &Plan{Layout: l, Kind: m.Arch.Kind, d: d, h: m.Arch.StepSize,
		spl: m.spl(), tail: m.tail()}
	switch m.Arch.Kind {
	case KindGR:
		p.k = m.Arch.Width
	case KindGRB:
		p.k = m.Arch.RidgeDim
	}
	// Every layer's M in one slab, each row padded to ld: large allocations
	// start on a page, so with ld a multiple of 8 every row starts on a
	// cache line and the fused kernel's loads never straddle two (a 132-wide
	// row would every other row; aligned, the quadruped's step is 7% faster).
	p.ld = (2*d + 7) &^ 7
	slab := make([]float64, len(m.defs)*p.k*p.ld)
	for i, df := range m.defs {
		cat, _ := m.layerCD(i) // [B | A], d×2d
		rp := m.theta[df.ridge : df.off+df.n]
		var pl planLayer
		pl.m = slab[i*p.k*p.ld : (i+1)*p.k*p.ld]
		var left []float64
		switch m.Arch.Kind {
		case KindGR:
			w, bb, aa := m.gr().split(rp)
			left = w
			pl.b = append([]float64(nil), bb...)
			pl.a = append([]float64(nil), aa...)
			if g := sech2Group(p.k); g > 1 {
				for range g {
					pl.bg = append(pl.bg, bb...)
					pl.ag = append(pl.ag, aa...)
				}
			}
		case KindGRB:
			md := m.Arch.RidgeDim
			left = rp[:md*d]
			nc := p.spl.nParams()
			pl.coef = append([]float64(nil), rp[md*d:md*d+nc]...)
			pl.tp = append([]float64(nil), rp[md*d+nc:]...)
		}
		gemm(noTrans, noTrans, 1, gen(left, p.k, d, d), gen(cat, d, 2*d, 2*d), 0, gen(pl.m, p.k, 2*d, p.ld))
		pl.mt = make([]float64, 2*d*p.k)
		for r := range p.k {
			for c, v := range pl.m[r*p.ld : r*p.ld+2*d] {
				pl.mt[c*p.k+r] = v
			}
		}
		pl.nu = make([]float64, p.k*2*d)
		updateMatrix(pl.nu, pl.m, p.k, d, p.ld, p.h)
		p.layers = append(p.layers, pl)
	}
	p.muX = make([]float64, 2*n)
	p.sX = make([]float64, 2*n)
	for i := range 2 * n {
		p.muX[i], p.sX[i] = m.Norm.Mu[i], m.Norm.Scale[i]
	}
	ne := l.PortDim()
	p.muE = append([]float64(nil), m.Norm.Mu[2*n:2*n+ne]...)
	p.sE = append([]float64(nil), m.Norm.Scale[2*n:2*n+ne]...)
	return p, nil
}

// workspace holds the scratch of one rollout worker for up to rows rows.
type workspace struct {
	rows int
	z    []float64 // rows×2d
	y, g []float64 // rows×k
	tv   []float64 // 2d, Mᵀ g of a single row
	xn   []float64 // rows×2n normalised state
	en   []float64 // rows×ne normalised ports
	tz   []float64 // tail pre-activations of one row (GRB, width)
	row  splineRow
}

func (p *Plan) newWorkspace(rows int) *workspace {
	d2, n2, ne := 2*p.d, 2*p.Layout.N, p.Layout.PortDim()
	w := &workspace{rows: rows,
		z: make([]float64, rows*d2), tv: make([]float64, d2),
		y: make([]float64, rows*p.k), g: make([]float64, rows*p.k),
		xn: make([]float64, rows*n2), en: make([]float64, rows*ne)}
	if p.Kind == KindGRB {
		w.tz = make([]float64, p.tail.width)
	}
	return w
}

// mapRows applies the network map (normalised coordinates) to rows rows of
// w.z. With fromSection set, the rows are data sections σₑ (for large lifts
// the zeros of the section are not multiplied); with projOnly set, the last
// layer updates only the coordinates q and p of a batch (Π keeps no others).
func (p *Plan) mapRows(w *workspace, rows int, fromSection, projOnly bool) {
	d, k := p.d, p.k
	d2 := 2 * d
	l := p.Layout
	n := l.N
	Z := gen(w.z, rows, d2, d2)
	Y := gen(w.y, rows, k, k)
	G := gen(w.g, rows, k, k)
	for li := range p.layers {
		pl := &p.layers[li]
		last := li == len(p.layers)-1
		if rows == 1 {
			// The next layer's matrix (the first's after the last, for
			// the next step of a rollout) is the fused kernel's prefetch
			// hint.
			p.layerOne(w, pl, p.layers[(li+1)%len(p.layers)].m)
			continue
		}
		Mt := gen(pl.mt, d2, k, k)
		if li == 0 && fromSection && d >= sectionSkipMin {
			// Non-zero columns of σₑ: q, λ_c (the tail of Q) and p, μ_u (contiguous in P).
			oc, op := l.OffLambdaC(), l.OffP()
			gemm(noTrans, noTrans, 1, gen(w.z, rows, n, d2), gen(pl.mt, n, k, k), 0, Y)
			gemm(noTrans, noTrans, 1, gen(w.z[oc:], rows, d-oc, d2), gen(pl.mt[oc*k:], d-oc, k, k), 1, Y)
			gemm(noTrans, noTrans, 1, gen(w.z[op:], rows, n+l.NU, d2), gen(pl.mt[op*k:], n+l.NU, k, k), 1, Y)
		} else {
			gemm(noTrans, noTrans, 1, Z, Mt, 0, Y)
		}
		p.ridge(w, pl, rows)
		if last && projOnly {
			// Π keeps q (the head of Q) and p (the second block of P).
			gemm(noTrans, noTrans, 1, G, gen(pl.nu, k, n, d2), 1, gen(w.z, rows, n, d2))
			gemm(noTrans, noTrans, 1, G, gen(pl.nu[d+n:], k, n, d2), 1, gen(w.z[d+n:], rows, n, d2))
			continue
		}
		gemm(noTrans, noTrans, 1, G, gen(pl.nu, k, d2, d2), 1, Z)
	}
}

// layerOne applies one layer to the single row w.z: y = M z, g = ∇K̂(y),
// t = Mᵀ g, then Q += h t_P, P −= h t_Q. For GR layers that is one fused
// kernel (kernel.TanhRidgeStep: one pass over M, the update on vectors in
// the same assembly); for GRB layers the two matrix–vector products around
// the spline ridge, then kernel.SymplecticUpdate (the same rounding). next
// is the matrix of the layer that runs after this one, which the fused
// kernel starts fetching (a hint).
func (p *Plan) layerOne(w *workspace, pl *planLayer, next []float64) {
	d, k, h := p.d, p.k, p.h
	d2 := 2 * d
	if p.Kind == KindGR && d2 >= fuseMin {
		kernel.TanhRidgeStep(k, d, pl.m, p.ld, pl.b, pl.a, h, w.z, w.g, w.tv, next)
		return
	}
	kernel.MatVec(k, d2, pl.m, p.ld, w.z, w.y)
	p.ridge(w, pl, 1)
	kernel.MatTVec(k, d2, pl.m, p.ld, w.g, w.tv)
	kernel.SymplecticUpdate(d, h, w.z, w.tv)
}

// fuseMin is the smallest lifted dimension 2d for which a single
// trajectory runs a GR layer as one fused kernel (kernel.TanhRidgeStep)
// rather than as MatVec, Sech2 and MatTVec, which compute the same bits.
// Fused, M streams from memory once; below fuseMin it is a few kilobytes
// that stay in L1 anyway, and the fused kernel's tail of rows and lanes
// costs more than the two passes: on the Zen 4 of docs/performance.md, k×2d =
// 36×36 (the quadrotor) takes 255–265 ns fused and 225–230 unfused per
// layer, 24×48 162–174 fused and 176–208 unfused, and the quadruped's 18
// layers of 66×132 21.2 µs fused and 28 µs unfused.
const fuseMin = 48

// sectionSkipMin is the smallest d for which the first layer of a rollout
// multiplies only the non-zero blocks of the data section: below it the
// extra kernel calls cost more than the skipped products.
const sectionSkipMin = 32

// sech2Group returns the number of rows of k entries whose total length is
// a multiple of 8 (the vector length of the widest kernel set).
func sech2Group(k int) int {
	g := 1
	for g*k%8 != 0 {
		g *= 2
	}
	return g
}

// ridge writes g = ∇K̂(y) for rows rows.
func (p *Plan) ridge(w *workspace, pl *planLayer, rows int) {
	k := p.k
	switch p.Kind {
	case KindGR:
		// y and g are contiguous: a group of rows is one row of g·k
		// entries with b and a repeated (the same operations per entry).
		g := len(pl.bg) / k
		if q := rows - rows%max(g, 1); g > 1 && q > 0 {
			kernel.Sech2(q/g, g*k, w.y, g*k, pl.bg, pl.ag, w.g, g*k)
			if q < rows {
				kernel.Sech2(rows-q, k, w.y[q*k:], k, pl.b, pl.a, w.g[q*k:], k)
			}
			return
		}
		kernel.Sech2(rows, k, w.y, k, pl.b, pl.a, w.g, k)
	case KindGRB:
		tw, tb, ta := p.tail.split(pl.tp)
		md, width := k, p.tail.width
		for r := range rows {
			eta := w.y[r*md : (r+1)*md]
			g := w.g[r*md : (r+1)*md]
			clear(g)
			p.spl.eval(eta, &w.row)
			p.spl.gradHess(pl.coef, &w.row, g, nil)
			// Tail: g += Σ_j a_j sech²(w_j·η + b_j) w_j.
			if md == 2 {
				// The paper's m = 2, unrolled (the same operations in the
				// same order as the general loops, so the same bits).
				e0, e1 := eta[0], eta[1]
				for j := range width {
					w.tz[j] = tw[2*j]*e0 + tw[2*j+1]*e1
				}
				kernel.Sech2(1, width, w.tz, width, tb, ta, w.tz, width)
				g0, g1 := g[0], g[1]
				for j, c := range w.tz[:width] {
					g0 += c * tw[2*j]
					g1 += c * tw[2*j+1]
				}
				g[0], g[1] = g0, g1
				continue
			}
			for j := range width {
				var z float64
				for i, e := range eta {
					z += tw[j*md+i] * e
				}
				w.tz[j] = z
			}
			kernel.Sech2(1, width, w.tz, width, tb, ta, w.tz, width)
			for j, c := range w.tz[:width] {
				wj := tw[j*md : (j+1)*md]
				for i := range g {
					g[i] += c * wj[i]
				}
			}
		}
	}
}

// embed writes σ(x̃, ẽ) for rows rows from w.xn and w.en into w.z.
func (p *Plan) embed(w *workspace, rows int) {
	l := p.Layout
	d2, n2, ne := 2*p.d, 2*l.N, l.PortDim()
	for r := range rows {
		l.Section(w.z[r*d2:(r+1)*d2], w.xn[r*n2:(r+1)*n2], w.en[r*ne:(r+1)*ne])
	}
}

// project writes Π(z) into w.xn for rows rows.
func (p *Plan) project(w *workspace, rows int) {
	d2, n2 := 2*p.d, 2*p.Layout.N
	for r := range rows {
		p.Layout.Project(w.xn[r*n2:(r+1)*n2], w.z[r*d2:(r+1)*d2])
	}
}

func normInto(dst, src, mu, s []float64) {
	for i := range dst {
		dst[i] = (src[i] - mu[i]) / s[i]
	}
}

func denormInto(dst, src, mu, s []float64) {
	for i := range dst {
		dst[i] = src[i]*s[i] + mu[i]
	}
}

// rowChunk is the most trajectories one pass of rollRows advances together,
// so that a worker's Z, Y and G (270 KB for 128 rows of the quadruped) stay
// in the L2 cache beside a layer's matrices however large the batch (for 256
// rows on one core it measured 12.5 µs a trajectory-step, against 12.6
// without chunks). Rows are independent, so the chunking changes no bits.
const rowChunk = 128

// rollRows runs Algorithm 1 for rows trajectories: x0 is rows×2n, ports is
// rows×H×ne and out is rows×H×2n, all in physical units.
func (p *Plan) rollRows(w *workspace, rows, horizon int, x0, ports, out []float64) {
	n2, ne := 2*p.Layout.N, p.Layout.PortDim()
	for r0 := 0; r0 < rows; r0 += rowChunk {
		c := min(rowChunk, rows-r0)
		p.rollChunk(w, c, horizon, x0[r0*n2:], ports[r0*horizon*ne:], out[r0*horizon*n2:])
	}
}

// rollChunk is rollRows for at most rowChunk rows.
func (p *Plan) rollChunk(w *workspace, rows, horizon int, x0, ports, out []float64) {
	n2, ne := 2*p.Layout.N, p.Layout.PortDim()
	for r := range rows {
		normInto(w.xn[r*n2:(r+1)*n2], x0[r*n2:(r+1)*n2], p.muX, p.sX)
	}
	for k := range horizon {
		for r := range rows {
			e := ports[(r*horizon+k)*ne : (r*horizon+k+1)*ne]
			normInto(w.en[r*ne:(r+1)*ne], e, p.muE, p.sE)
		}
		p.embed(w, rows)
		p.mapRows(w, rows, true, true)
		p.project(w, rows)
		for r := range rows {
			denormInto(out[(r*horizon+k)*n2:(r*horizon+k+1)*n2], w.xn[r*n2:(r+1)*n2], p.muX, p.sX)
		}
	}
}

// checkRollout validates slice lengths of a rollout request.
func (p *Plan) checkRollout(rows, horizon int, x0, ports, out []float64) error {
	n2, ne := 2*p.Layout.N, p.Layout.PortDim()
	switch {
	case horizon < 0 || rows < 0:
		return fmt.Errorf("%w: negative horizon %d or batch %d", ErrLayout, horizon, rows)
	case len(x0) < rows*n2:
		return fmt.Errorf("%w: initial states have %d values, need %d×%d", ErrLayout, len(x0), rows, n2)
	case len(ports) < rows*horizon*ne:
		return fmt.Errorf("%w: ports have %d values, need %d×%d×%d", ErrLayout, len(ports), rows, horizon, ne)
	case len(out) < rows*horizon*n2:
		return fmt.Errorf("%w: output has room for %d values, need %d×%d×%d", ErrLayout, len(out), rows, horizon, n2)
	}
	return nil
}

// Roller rolls out one trajectory at a time without allocating. It is not
// safe for concurrent use; make one per goroutine.
type Roller struct {
	p *Plan
	w *workspace
}

// NewRoller returns a single-trajectory roller for the plan.
func (p *Plan) NewRoller() *Roller { return &Roller{p: p, w: p.newWorkspace(1)} }

// Rollout runs Algorithm 1 from the physical state x0 (2n values) under the
// port sequence ports (horizon × (n_u + n_c) values, e_0 … e_{H−1}) and writes
// the predicted states x̂_1 … x̂_H into out (horizon × 2n). It does not allocate.
func (r *Roller) Rollout(x0, ports []float64, horizon int, out []float64) error {
	if err := r.p.checkRollout(1, horizon, x0, ports, out); err != nil {
		return err
	}
	r.p.rollRows(r.w, 1, horizon, x0, ports, out)
	return nil
}

// liftedMap applies the network map to one normalised lifted state z (2d) in
// place, as the rollout does (tests compare it with the training path).
func (r *Roller) liftedMap(z []float64) {
	copy(r.w.z, z)
	r.p.mapRows(r.w, 1, false, false)
	copy(z, r.w.z)
}

// updateMatrix writes into dst (rows×2d, dense) the rows
// [h·src_P | −h·src_Q] of the rows×2d matrix src (leading dimension lds),
// whose halves act on Q and P: G·dst adds h·G·src_P to Q and subtracts
// h·G·src_Q from P, a layer's symplectic update as one product.
func updateMatrix(dst, src []float64, rows, d, lds int, h float64) {
	for r := range rows {
		s, o := src[r*lds:r*lds+2*d], dst[r*2*d:(r+1)*2*d]
		for c := range d {
			o[c] = h * s[d+c]
			o[d+c] = -h * s[c]
		}
	}
}
