package experiment

import (
	"context"
	"fmt"
	"math"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// EvalGroup is a named group of evaluation logs, each cut into windows of
// Horizon+1 samples at a stride of Horizon+1 from its start, one window per
// episode: rollouts start at each window's first sample under the measured
// ports. The ANYmal benchmark reports its ID test, the pushes and the rough
// terrain apart, on exactly the windows of the long-horizon study.
type EvalGroup struct {
	Name string
	// Files are the glob patterns of the group's logs (as split rules).
	Files []string
	// Inputs are input globs (relative to the system's data directory)
	// read for the evaluation groups only, beyond the system's inputs: logs
	// that must never enter training (the ANYmal's dev/ payload log).
	Inputs []string
	Data   *dataset.Dataset
}

// GroupResult is the autoregressive error of one model (or of the state
// held constant) on one EvalGroup, at every horizon of the report's
// multi-horizon table, all from the same rollouts of the longest horizon.
type GroupResult struct {
	Group   string `json:"group"`
	Windows int    `json:"windows"`
	// Horizons and MSE: MSE[i] is the mean over windows, steps 1…Horizons[i]
	// and all 2n coordinates (physical units).
	Horizons []int     `json:"horizons"`
	MSE      []float64 `json:"mse"`
	// MSEQ and MSEP split the error at the longest horizon; Base the base's
	// and joints' parts (nil without a floating base).
	MSEQ float64            `json:"mse_q"`
	MSEP float64            `json:"mse_p"`
	Base *trainer.Breakdown `json:"base,omitempty"`
	// PerFile is the error of each log at the longest horizon.
	PerFile []trainer.FileError `json:"per_file,omitempty"`
}

// At returns the group's error at horizon h (NaN when not evaluated).
func (g GroupResult) At(h int) float64 {
	for i, v := range g.Horizons {
		if v == h {
			return g.MSE[i]
		}
	}
	return math.NaN()
}

// EvalGroups rolls a model out on every group at the longest of
// horizons and reads each shorter horizon off the same rollouts (the
// windows are the same: one per episode, from its first sample). With
// force, the rollouts are offset-free (trainer.EvalOptions.Force).
func EvalGroups(ctx context.Context, rollers trainer.RollerFactory, groups []EvalGroup, horizons []int, force *predictor.ForceEstimate) ([]GroupResult, error) {
	return EvalGroupsWith(ctx, rollers, groups, horizons, trainer.EvalOptions{Force: force})
}

// EvalGroupsWith is EvalGroups with the offset-free estimate and the port
// forecast of off (trainer.EvalOptions.Force or Wrench, Forecast; its
// other fields are ignored).
func EvalGroupsWith(ctx context.Context, rollers trainer.RollerFactory, groups []EvalGroup, horizons []int, off trainer.EvalOptions) ([]GroupResult, error) {
	H := 0
	for _, h := range horizons {
		H = max(H, h)
	}
	var out []GroupResult
	for _, g := range groups {
		r, err := trainer.Evaluate(ctx, rollers, g.Data, trainer.EvalOptions{Horizon: H, Stride: H + 1, Force: off.Force, Wrench: off.Wrench, Forecast: off.Forecast})
		if err != nil {
			return out, fmt.Errorf("experiment: group %s: %w", g.Name, err)
		}
		gr := GroupResult{Group: g.Name, Windows: r.Windows, Horizons: horizons, MSEQ: r.MSEQ, MSEP: r.MSEP, PerFile: r.PerFile}
		for _, h := range horizons {
			var s float64
			for _, v := range r.PerStep[:h] {
				s += v
			}
			v := s / float64(h)
			if r.Diverged > 0 {
				v = math.Inf(1)
			}
			gr.MSE = append(gr.MSE, v)
		}
		if b, ok := r.Split(trainer.BaseCoordinates(g.Data.Coordinates)); ok {
			gr.Base = &b
		}
		out = append(out, gr)
	}
	return out, nil
}
