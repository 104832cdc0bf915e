package predictor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Kind names a symplectic map architecture.
type Kind string

// The supported architectures.
const (
	// KindGR is GR-SympNet: generalized-ridge layers with a tanh ridge
	// Hamiltonian K(ξ) = Σⱼ aⱼ tanh(wⱼ·ξ + bⱼ) (paper Eq. 16–21).
	KindGR Kind = "gr"
	// KindGRB is GRB-SympNet: the same layer with K = a tensor-product cubic
	// B-spline on an m-dimensional ridge coordinate η = Rξ plus a tanh tail
	// (paper Eq. 22–24, Appendix E).
	KindGRB Kind = "grb"
)

// Arch fixes the architecture of the symplectic map.
type Arch struct {
	Kind   Kind `json:"kind"`
	Layers int  `json:"layers"`
	// Width is the number of tanh units: the ridge network of a GR layer or
	// the smooth tail of a GRB layer.
	Width int `json:"width"`
	// RidgeDim is m, the dimension of the GRB spline's ridge coordinate.
	RidgeDim int `json:"ridge_dim,omitempty"`
	// Spline is the GRB knot grid.
	Spline Spline `json:"spline,omitzero"`
	// StepSize is the flow time h of every layer.
	StepSize float64 `json:"step_size"`
}

// Validate checks the architecture.
func (a Arch) Validate() error {
	if a.Layers < 1 || a.Width < 0 || !(a.StepSize > 0) || math.IsInf(a.StepSize, 0) {
		return fmt.Errorf("predictor: invalid architecture: %d layers, width %d, step %v", a.Layers, a.Width, a.StepSize)
	}
	switch a.Kind {
	case KindGR:
		if a.Width < 1 {
			return errors.New("predictor: a GR-SympNet needs width ≥ 1")
		}
	case KindGRB:
		if a.RidgeDim < 1 || a.RidgeDim > maxRidgeDim {
			return fmt.Errorf("predictor: GRB ridge dimension %d outside [1, %d]", a.RidgeDim, maxRidgeDim)
		}
		if err := a.Spline.Validate(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("predictor: unknown architecture kind %q (want %q or %q)", a.Kind, KindGR, KindGRB)
	}
	return nil
}

// layerDef records where one layer's parameters live inside θ.
type layerDef struct {
	off        int // first parameter
	s1, s2, s3 int // offsets of the raw S matrices (d×d)
	ridge      int // offset of the ridge parameters
	n          int // number of parameters
	swap       bool
}

// Model is a lifted symplectic predictor: layout, normalisation,
// architecture, metadata and the trained parameters. Load, Decode and New
// make one; Compile turns it into a Plan for rollouts. Its parameters are
// not exported: only its training handle (see Trainable) changes them, and
// it keeps the layer matrices derived from them up to date, so a Model is
// always ready to Compile or Save.
type Model struct {
	Layout Layout
	Norm   Normalization
	Arch   Arch
	Meta   Metadata

	theta []float64 // the flat parameter vector θ, in paramBlocks order
	defs  []layerDef
	ab    []float64 // per layer: A then B (effective, after role alternation), d×d each
	cd    []float64 // per layer: C = [B | A] then D = [hA | −hB], d×2d each (see layerCD)

	verified bool // decoded from a file whose checksums matched
}

// Metadata is the provenance and evaluation record carried in a model file.
type Metadata struct {
	Name       string             `json:"name,omitempty"`
	Created    string             `json:"created,omitempty"`
	Provenance map[string]string  `json:"provenance,omitempty"`
	Metrics    map[string]float64 `json:"metrics,omitempty"`
	// Coordinates optionally names the n configuration coordinates.
	Coordinates []string `json:"coordinates,omitempty"`
	// Ports optionally names the n_u + n_c port values.
	Ports []string `json:"ports,omitempty"`
	// Dt is the sampling period the model was trained at, in seconds.
	Dt float64 `json:"dt,omitempty"`
	// PortMean is the port history's m (convert.history.port_mean): the
	// last a + n_c of the n_u control values are the means of the a
	// measured control and n_c contact values over the m samples before
	// (see PortHistory); 0 or absent: none. Files written before it was
	// recorded carry it in their port names only; Decode fills it in.
	PortMean int `json:"port_mean,omitempty"`
}

func (m *Model) gr() tanhRidge { return tanhRidge{in: m.Layout.D(), width: m.Arch.Width} }
func (m *Model) tail() tanhRidge {
	return tanhRidge{in: m.Arch.RidgeDim, width: m.Arch.Width}
}
func (m *Model) spl() splineRidge { return splineRidge{m: m.Arch.RidgeDim, sp: m.Arch.Spline} }

// ridgeParams returns the number of ridge-function parameters per layer.
func (m *Model) ridgeParams() int {
	d := m.Layout.D()
	if m.Arch.Kind == KindGR {
		return m.gr().nParams()
	}
	return m.Arch.RidgeDim*d + m.spl().nParams() + m.tail().nParams()
}

// New builds a model with parameters drawn from rng (see Trainable.Init,
// at scale 1; a nil rng uses a fixed seed) and the identity normalisation.
func New(l Layout, a Arch, rng *rand.Rand) (*Model, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 1))
	}
	m := &Model{Layout: l, Norm: IdentityNormalization(l), Arch: a}
	m.buildDefs()
	m.theta = make([]float64, m.NumParams())
	m.initParams(rng, 1)
	return m, nil
}

func (m *Model) buildDefs() {
	d := m.Layout.D()
	per := 3*d*d + m.ridgeParams()
	m.defs = make([]layerDef, m.Arch.Layers)
	for i := range m.defs {
		off := i * per
		m.defs[i] = layerDef{off: off, s1: off, s2: off + d*d, s3: off + 2*d*d, ridge: off + 3*d*d, n: per, swap: i%2 == 1}
	}
	m.ab = make([]float64, m.Arch.Layers*2*d*d)
	m.cd = make([]float64, m.Arch.Layers*4*d*d)
}

// NumParams returns the number of trainable parameters.
func (m *Model) NumParams() int {
	d := m.Layout.D()
	return m.Arch.Layers * (3*d*d + m.ridgeParams())
}

// initParams draws fresh parameters (see Trainable.Init) and recomputes the
// derived layer matrices.
func (m *Model) initParams(rng *rand.Rand, scale float64) {
	d := m.Layout.D()
	for _, df := range m.defs {
		p := m.theta[df.off : df.off+df.n]
		sd := 0.5 * scale / math.Sqrt(float64(d))
		for i := range 3 * d * d {
			p[i] = rng.NormFloat64() * sd
		}
		rp := m.theta[df.ridge : df.off+df.n]
		switch m.Arch.Kind {
		case KindGR:
			initTanh(m.gr(), rp, rng, scale)
		case KindGRB:
			md := m.Arch.RidgeDim
			for i := range md * d {
				rp[i] = rng.NormFloat64() * scale / math.Sqrt(float64(d))
			}
			c := rp[md*d : md*d+m.spl().nParams()]
			for i := range c {
				c[i] = rng.NormFloat64() * 0.01 * scale
			}
			initTanh(m.tail(), rp[md*d+len(c):], rng, scale)
		}
	}
	m.syncDerived()
}

func initTanh(r tanhRidge, p []float64, rng *rand.Rand, scale float64) {
	w, b, a := r.split(p)
	for i := range w {
		w[i] = rng.NormFloat64() * scale / math.Sqrt(float64(r.in))
	}
	for i := range b {
		b[i] = rng.NormFloat64() * 0.1 * scale
	}
	for i := range a {
		a[i] = rng.NormFloat64() * 0.01 * scale
	}
}

// ParamBlock names one block of a flat parameter vector: the Rows×Cols
// values (row major) starting at Offset. Matrices have Rows, Cols > 1;
// vectors have Cols = 1. It is the one description of parameter blocks that
// the model file, the optimisers (package trainer/optim) and the MLP
// baseline share.
type ParamBlock struct {
	Name   string `json:"name"`
	Rows   int    `json:"rows"`
	Cols   int    `json:"cols"`
	Offset int    `json:"offset"`
}

// Size returns Rows·Cols.
func (b ParamBlock) Size() int { return b.Rows * b.Cols }

// paramBlocks lists the parameter blocks in θ order; the model file stores
// each under its name.
func (m *Model) paramBlocks() []ParamBlock {
	d := m.Layout.D()
	var ts []ParamBlock
	for i, df := range m.defs {
		pre := fmt.Sprintf("layers.%d.", i)
		ts = append(ts,
			ParamBlock{pre + "S1", d, d, df.s1},
			ParamBlock{pre + "S2", d, d, df.s2},
			ParamBlock{pre + "S3", d, d, df.s3})
		off := df.ridge
		add := func(name string, r, c int) {
			ts = append(ts, ParamBlock{pre + name, r, c, off})
			off += r * c
		}
		switch m.Arch.Kind {
		case KindGR:
			add("K.W", m.Arch.Width, d)
			add("K.b", m.Arch.Width, 1)
			add("K.a", m.Arch.Width, 1)
		case KindGRB:
			add("R", m.Arch.RidgeDim, d)
			add("spline", m.spl().nParams(), 1)
			add("tail.W", m.Arch.Width, m.Arch.RidgeDim)
			add("tail.b", m.Arch.Width, 1)
			add("tail.a", m.Arch.Width, 1)
		}
	}
	return ts
}

// syncDerived recomputes the derived layer matrices A and B from θ. Every
// change of θ (New, Decode, Trainable.SetParams and Trainable.Init) ends
// with it.
func (m *Model) syncDerived() {
	d := m.Layout.D()
	s1 := make([]float64, d*d)
	s2 := make([]float64, d*d)
	s3 := make([]float64, d*d)
	t := make([]float64, d*d)
	for i, df := range m.defs {
		symInto(s1, m.theta[df.s1:df.s1+d*d], d)
		symInto(s2, m.theta[df.s2:df.s2+d*d], d)
		symInto(s3, m.theta[df.s3:df.s3+d*d], d)
		a := m.ab[i*2*d*d : i*2*d*d+d*d]
		b := m.ab[i*2*d*d+d*d : (i+1)*2*d*d]
		if df.swap {
			a, b = b, a
		}
		// a = I + S1 S2
		gemm(noTrans, noTrans, 1, gen(s1, d, d, d), gen(s2, d, d, d), 0, gen(t, d, d, d))
		copy(a, t)
		for k := range d {
			a[k*d+k]++
		}
		// b = S1 + S1 S2 S3 + S3
		gemm(noTrans, noTrans, 1, gen(t, d, d, d), gen(s3, d, d, d), 0, gen(b, d, d, d))
		for k := range b {
			b[k] += s1[k] + s3[k]
		}
	}
	for i := range m.defs {
		a, b := m.layerAB(i)
		c, dm := m.layerCD(i)
		for r := range d {
			copy(c[r*2*d:r*2*d+d], b[r*d:(r+1)*d])
			copy(c[r*2*d+d:(r+1)*2*d], a[r*d:(r+1)*d])
		}
		updateMatrix(dm, c, d, d, 2*d, m.Arch.StepSize)
	}
}

// symInto writes (x + xᵀ)/2 into dst.
func symInto(dst, x []float64, d int) {
	for i := range d {
		for j := range d {
			dst[i*d+j] = 0.5 * (x[i*d+j] + x[j*d+i])
		}
	}
}

// layerAB returns views of the effective A and B matrices (d×d, row major)
// of layer i, in the form ξ = A·P + B·Q, Q' = Q + h Aᵀ∇K(ξ), P' = P − h Bᵀ∇K(ξ).
func (m *Model) layerAB(i int) (a, b []float64) {
	d := m.Layout.D()
	base := i * 2 * d * d
	return m.ab[base : base+d*d], m.ab[base+d*d : base+2*d*d]
}

// layerCD returns the matrices of layer i with both halves of Z = (Q, P)
// side by side (d×2d, row major): C = [B | A], so that the rows of ξ are
// Z Cᵀ (ξ = B Q + A P), and D = [hA | −hB], so that the layer's update is
// Z += G D with G the rows of ∇K(ξ), and its adjoint Ḡ = Z̄ Dᵀ. The forward
// pass, the tangent and the backward pass all read these two.
func (m *Model) layerCD(i int) (c, dm []float64) {
	d := m.Layout.D()
	base := i * 4 * d * d
	return m.cd[base : base+2*d*d], m.cd[base+2*d*d : base+4*d*d]
}
