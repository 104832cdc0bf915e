// Package trainer fits calisym models: datasets of windows, the one-step
// teacher-forcing loss of the paper (Eq. 27–30) with section and port terms,
// analytic gradients through the backward passes of the predictor's
// training handle (predictor.Trainable), AdamW and Muon (package optim), the
// teacher-forcing α schedule, checkpoints (which record a fingerprint of
// their training data, so a run resumes only on the same data), evaluation
// by autoregressive rollout (ID/OOD, multi-horizon) beside the
// state-held-constant reference (HoldRollers), the MLP baseline (package
// mlp) and its checksummed JSON file, opening saved models of either kind
// and checking them against a dataset's dimensions and names (OpenModel,
// SavedModel.CheckDataset) and reports with plots (package plot).
//
// All arithmetic is float64. Batches are split across workers (by default
// both cores), each with its own tape and gradient buffer.
package trainer
