// Package predictor holds everything calisym needs at inference time: the
// structured lift of the CaLiSym method (layout, data section σₑ, projection Π,
// canonical pairs), the base–fibre symplectic normalisation, the GR-SympNet and
// GRB-SympNet maps that are symplectic by construction, the gauge-fixed
// autoregressive rollout (Algorithm 1 of the paper) for one trajectory or a
// batch, the exact Jacobian and symplecticity residual, FLOP and parameter
// counts, and the self-describing model file.
//
// Coordinates. A physical state is x = (q, p) with n configuration coordinates
// (in local, tangent form) and n momenta. Ports are e = (u, f_c) with n_u
// control values and n_c contact values. The lifted canonical state is
//
//	Z = (Q, P),  Q = (q, y, λ_u, λ_c),  P = (r, p, μ_u, π_c),  d = 2n + n_u + n_c
//
// stored as one slice of 2d values, Q first. The canonical pairs are (Q_k, P_k).
// The data section is σₑ(x): Q = (q, 0, 0, f_c), P = (0, p, u, 0) and the
// projection is Π(Q, P) = (q, p).
//
// The package knows nothing of robots, files of other formats or ROS.
package predictor
