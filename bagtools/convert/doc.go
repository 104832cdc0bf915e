// Package convert turns robot logs into calisym datasets, driven by the
// "convert:" section of a robot's params YAML (Spec, LoadSpec).
//
// The pipeline, per input file:
//
//  1. A Source yields the named channels the spec maps to q, v, u and f_c,
//     each with its own timestamps. TableSource reads CSV and parquet
//     files (bagtools/logio); MessageSource streams MCAP files and ROS 1
//     bags, reading message paths ("/joint_states.position[name==\"j1\"]")
//     on the header-stamp or log-time clock; OpenSource picks one by the
//     extension. A missing channel is an error that lists the available
//     ones; units are converted to SI.
//  2. Validation on the raw samples: NaN counts (a channel that is all NaN
//     fails), quaternion norms, configuration steps faster than the speed
//     limits (position jumps), samples outside a channel's physical range
//     (validate.bounds: short runs repaired by interpolation, longer ones
//     rejected, a channel mostly out of range an ErrRange).
//  3. Alignment of all channels onto one uniform working clock
//     (bagtools/signal.Align): linear interpolation for Euclidean
//     coordinates, slerp for orientations, hold or linear for ports; gaps
//     longer than validate.max_gap are marked. Samples whose time goes
//     backwards are sorted, with a warning; a time value too far from the
//     others for any clock (1e300 s) is an ErrTime naming where it lies
//     (Locator).
//  4. A zero-phase Butterworth low-pass (signal.FiltFilt, scipy's
//     sosfiltfilt) over every stretch of valid samples, then decimation to
//     the dataset rate (the paper: 6th order, 18 Hz, 400 → 100 Hz).
//  5. The state, by the per-sample mapping the live node shares
//     (statemap.Mapper, from the spec's statemap.Spec): q (joint angles;
//     for a floating base the SE(3) logarithm relative to each window's
//     first pose, or the gravity-aware variant), p = M(q)v from the
//     mechanics model (analytic double pendulum, rigid body
//     diag(m I₃, I_body), URDF by CRBA), u (channels, or the quadrotor
//     body wrench from motor commands through the rotor allocation), f_c.
//  6. Windows of window.length samples every window.stride samples; a
//     window is rejected when it covers a gap, NaN, bad quaternion,
//     position jump, out-of-range sample, too-short stretch or momentum
//     discontinuity, and the reasons are counted in the Report.
//
// Kept windows are assigned to splits (by file, by time range, by energy)
// and written as one dataset.Dataset per split: consecutive windows share
// an episode where q is absolute; where q is relative to a window's first
// pose every window is its own episode (window.storage "window") or
// consecutive windows share one with q relative to its first pose, to be
// re-expressed with RebaseSE3 or RebaseGravity ("episode").
//
// A file that fails to convert stops the conversion, or with
// Options.SkipBad is left out and listed in Report.Skipped. Result.Save
// keeps one conversion per output directory: it removes the split folders
// of an earlier conversion that the new one does not write.
package convert
