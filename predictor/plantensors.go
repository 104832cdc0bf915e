package predictor

import "slices"

// PlanTensors is a compiled Plan as plain arrays, for exporters that
// rebuild its rollout in another runtime (calisym export writes it as an
// ONNX graph). In normalised coordinates each layer is
//
//	y = M Z,  g = ∇K̂(y),  Z += Nᵀ g
//
// (rows: Y = Z Mᵀ, Z += G N), with M and N k×2d, row major, and the ridge
// K̂ of the kind: GR K̂(y) = Σⱼ aⱼ tanh(yⱼ + bⱼ); GRB the tensor-product
// spline of Spline on the m = k coordinates of y plus the tail
// Σⱼ aⱼ tanh(TailW_j·y + TailB_j). The section, projection and
// normalisation are those of the model file (docs/model-format.md).
type PlanTensors struct {
	Layout    Layout
	Kind      Kind
	K         int    // ridge rows: width (GR) or m (GRB)
	Spline    Spline // GRB
	TailWidth int    // GRB: tail width
	Layers    []PlanLayerTensors
	// MuX, SX normalise the state (2n), MuE, SE the ports (n_u + n_c).
	MuX, SX, MuE, SE []float64
}

// PlanLayerTensors is one layer of PlanTensors.
type PlanLayerTensors struct {
	M, N []float64 // k×2d each
	// GR: bias and amplitude (k each).
	B, A []float64
	// GRB: spline coefficients ((intervals+3)^m) and tail W (width×m), b, a.
	Coef, TailW, TailB, TailA []float64
}

// Tensors returns copies of the plan's arrays.
func (p *Plan) Tensors() PlanTensors {
	d2 := 2 * p.d
	t := PlanTensors{Layout: p.Layout, Kind: p.Kind, K: p.k, Spline: p.spl.sp, TailWidth: p.tail.width,
		MuX: slices.Clone(p.muX), SX: slices.Clone(p.sX), MuE: slices.Clone(p.muE), SE: slices.Clone(p.sE)}
	if p.Kind == KindGR {
		t.Spline, t.TailWidth = Spline{}, 0
	}
	for _, pl := range p.layers {
		var lt PlanLayerTensors
		lt.M = make([]float64, p.k*d2)
		for r := range p.k {
			copy(lt.M[r*d2:(r+1)*d2], pl.m[r*p.ld:r*p.ld+d2])
		}
		lt.N = slices.Clone(pl.nu)
		switch p.Kind {
		case KindGR:
			lt.B, lt.A = slices.Clone(pl.b), slices.Clone(pl.a)
		case KindGRB:
			lt.Coef = slices.Clone(pl.coef)
			w, b, a := p.tail.split(pl.tp)
			lt.TailW, lt.TailB, lt.TailA = slices.Clone(w), slices.Clone(b), slices.Clone(a)
		}
		t.Layers = append(t.Layers, lt)
	}
	return t
}
