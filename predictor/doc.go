// Package predictor holds everything calisym needs at inference time: the
// structured lift of the CaLiSym method (layout, data section σₑ, projection Π,
// canonical pairs), the base–fibre symplectic normalisation, the GR-SympNet and
// GRB-SympNet maps that are symplectic by construction, the gauge-fixed
// autoregressive rollout (Algorithm 1 of the paper) for one trajectory or a
// batch, the exact Jacobian and symplecticity residual, FLOP and parameter
// counts, and the self-describing model file (safetensors, with SHA-256
// checksums of its tensors and description that Decode verifies).
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
// Inference. Load (or Decode) reads a model file into a Model; Compile turns
// the Model into a read-only Plan; a Plan's NewRoller rolls out one
// trajectory at a time without allocating and its NewBatchRoller rolls out
// many at once (a planner scoring candidate port sequences), each through
// Rollout. A Model also reports its parameter and FLOP counts (NumParams,
// CountFLOPs) and its symplecticity residual (ResidualStats); Presets holds
// the paper's configurations, ParseArch reads an architecture from its
// size ("gr:18x66", "grb:12x8:m2") and ResolveArch from either, and New
// builds a model of any configuration with random parameters; Save and
// Encode write the model file.
//
// Planning. A Plan's NewLinearizer returns a Linearizer: one step in
// physical units with its exact Jacobians with respect to the state and
// the ports (reverse mode through the layers). NewLinearization rolls any
// Linearizer out, recording every step's Jacobians (what iLQR needs), and
// composes the dense rollout Jacobians (Dense) or a cost's gradient with
// respect to the initial state and the port sequence (VJP). Tensors
// exports a Plan's arrays for other runtimes (calisym export writes them
// as an ONNX graph).
//
// Training. A Model's parameters are not exported. Trainable, the training
// handle a trainer makes with NewTrainable, owns everything else: the flat
// parameter vector and its ParamBlocks, initialisation, and the batched
// forward pass on a Tape with its backward pass and tangent map. Its
// SetParams and Init recompute what the model derives from the parameters,
// so a Model is always consistent.
//
// The package knows nothing of robots, files of other formats or ROS.
package predictor
