package predictor

// FLOPs counts floating-point operations of one rollout step (lift, map,
// projection), operator by operator: a multiply or an add counts one, a
// transcendental (tanh) counts one, copies and zeroing count nothing.
type FLOPs struct {
	// Lift is the normalisation of the state and ports into the section.
	Lift int `json:"lift"`
	// Map is the symplectic map in the paper's formulation: per layer
	// ξ = AP + BQ, ∇K(ξ), Q += hAᵀ∇K, P −= hBᵀ∇K.
	Map int `json:"map"`
	// Project is the projection and de-normalisation of (q, p).
	Project int `json:"project"`
	// Fused is what the compiled Plan executes for the map instead of Map:
	// y = MZ and t = Mᵀg with the ridge folded into M (see Plan).
	Fused int `json:"fused_map"`
}

// Total returns Lift + Map + Project: the paper-comparable count.
func (f FLOPs) Total() int { return f.Lift + f.Map + f.Project }

// TotalFused returns Lift + Fused + Project: what a compiled rollout executes.
func (f FLOPs) TotalFused() int { return f.Lift + f.Fused + f.Project }

// CountFLOPs returns the operation counts of one step of the model.
func (m *Model) CountFLOPs() FLOPs {
	l, a := m.Layout, m.Arch
	d, n, ne, w := l.D(), l.N, l.PortDim(), a.Width
	var f FLOPs
	f.Lift = 2 * (2*n + ne)
	f.Project = 2 * 2 * n
	linear := 4*d*d + d + 4*d*d + 2*d + 2*d // ξ = AP+BQ, Aᵀg and Bᵀg, h·, update
	update := 2*d + 2*d
	var ridge, k int
	switch a.Kind {
	case KindGR:
		ridge = 2*w*d + w + w + 2*w + w + 2*w*d // Wξ, +b, tanh, 1−t², a·, Wᵀ(·)
		k = w
	case KindGRB:
		md := a.RidgeDim
		terms := 1 << (2 * md)
		spline := md*24 + terms*md*(md+1)
		tail := 2*w*md + w + w + 2*w + w + 2*w*md + md
		ridge = 2*md*d + spline + tail + 2*md*d // η = Rξ, spline ∇, tail ∇, Rᵀ g
		k = md
	}
	f.Map = a.Layers * (linear + ridge)
	fusedRidge := ridge
	if a.Kind == KindGR {
		fusedRidge = w + w + 2*w + w // +b, tanh, 1−t², a·
	} else {
		fusedRidge = ridge - 4*a.RidgeDim*d
	}
	f.Fused = a.Layers * (2*k*2*d + fusedRidge + 2*k*2*d + update)
	return f
}
