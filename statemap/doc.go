// Package statemap owns the mapping from a robot's channels to the state
// and ports of calisym's learned dynamics, written once in a params file's
// "convert:" section and shared by dataset conversion (bagtools/convert)
// and the live predictor node (nodes/node), so that training and serving
// cannot drift apart:
//
//   - Spec: where every configuration, velocity, control and contact
//     component comes from (a table column or a message path, with its
//     unit, scale and offset) and the mechanics model behind p = M(q)v;
//   - Plan: the spec's scalar inputs and their roles;
//   - Model: the mass models (the analytic double pendulum, a free rigid
//     body, a URDF tree by the composite-rigid-body algorithm plus its
//     joints' reflected drive inertias, and the identity, p = q̇, for a
//     first try without a URDF) and the quadrotor rotor Allocation;
//   - Mapper: the per-sample mapping from one sample's inputs in SI units
//     and the base pose to the joint positions, the body-frame velocity,
//     p = M(q)v, the ports and the contact forces in body axes;
//   - Sampler: the live side, from the latest raw channel values through
//     the Mapper to x = (q, p) and e = (u, f_c), allocation-free;
//   - Spec.BaseCoordinates and Spec.BasePose: the floating base relative
//     to a window's first pose, and back.
//
// Conversion applies alignment, resampling and filtering before the
// mapping; a live sample has none of these. Of calisym's packages it
// imports only mechanics and msgs/rosmsg (message paths).
package statemap
