package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// Roller rolls a one-step model out autoregressively: from x0 (2n values)
// under ports (horizon × (n_u+n_c)) it writes x̂_1 … x̂_H into out.
type Roller interface {
	Rollout(x0, ports []float64, horizon int, out []float64) error
}

// RollerFactory makes independent rollers (one per goroutine).
type RollerFactory func() (Roller, error)

// HoldRollers makes rollers of the state held constant, x̂_k = x_0 for
// every k: the reference every learned model has to beat. Evaluated by
// Evaluate like a model, on the same windows.
func HoldRollers() (Roller, error) { return holdRoller{}, nil }

// holdRoller predicts that the state stays where it is.
type holdRoller struct{}

// Rollout implements Roller.
func (holdRoller) Rollout(x0, _ []float64, horizon int, out []float64) error {
	for k := range horizon {
		copy(out[k*len(x0):(k+1)*len(x0)], x0)
	}
	return nil
}

// MeanRollers makes rollers that predict the constant state mu at every
// step, whatever the initial state (mu is the training states' mean, for
// instance): the reference a chaotic system's long horizons are read
// against, since a prediction that has lost the motion's phase scores
// about the states' variance around mu at best and twice it with the
// right energy. The rollers refuse an initial state of another size.
func MeanRollers(mu []float64) RollerFactory {
	mu = slices.Clone(mu)
	return func() (Roller, error) { return meanRoller(mu), nil }
}

// meanRoller predicts its constant state at every step.
type meanRoller []float64

// Rollout implements Roller.
func (m meanRoller) Rollout(x0, _ []float64, horizon int, out []float64) error {
	n := len(m)
	if len(x0) != n || len(out) < horizon*n {
		return fmt.Errorf("trainer: constant prediction of %d values: initial state %d, output room %d for %d steps", n, len(x0), len(out), horizon)
	}
	for k := range horizon {
		copy(out[k*n:(k+1)*n], m)
	}
	return nil
}

// StateMean returns the mean of the states of every sample of ds, the
// training set's centre that MeanRollers predicts, reading an opened
// dataset's samples from its files.
func StateMean(ds *dataset.Dataset) ([]float64, error) {
	nx, ne := ds.StateDim(), ds.PortDim()
	n := ds.Samples()
	if n == 0 {
		return nil, fmt.Errorf("trainer: the mean state of a dataset without samples")
	}
	sel := make([]bool, n)
	for i := range sel {
		sel[i] = true
	}
	x, e := make([]float64, n*nx), make([]float64, n*ne)
	if err := ds.ReadSelected(sel, x, e); err != nil {
		return nil, fmt.Errorf("trainer: mean state: %w", err)
	}
	mu := make([]float64, nx)
	for k := range n {
		for j, v := range x[k*nx : (k+1)*nx] {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	return mu, nil
}

// EvalOptions configure an autoregressive evaluation.
type EvalOptions struct {
	// Horizon is the rollout length in steps.
	Horizon int
	// Stride is the spacing of rollout start points within an episode.
	Stride int
	// Workers is the number of goroutines (default 2).
	Workers int
	// MaxWindows caps the number of windows evaluated (0: all), taken evenly.
	MaxWindows int
	// Force, when set, makes the rollouts offset-free
	// (predictor.ForceEstimator): each window's estimate is fed the
	// measured samples before its start in its log (episodes named
	// file@first-sample, the conversion's names), up to Force.Window+1 of
	// them and none across a gap, as the live node feeds it.
	Force *predictor.ForceEstimate
	// Wrench, when set, makes the rollouts offset-free by an external
	// wrench on the floating base (predictor.WrenchEstimator), fed as
	// Force is; the dataset's coordinates must start with a floating base
	// (statemap.BaseKind). Force and Wrench exclude each other.
	Wrench *predictor.WrenchEstimate
	// Episodes, when set, keeps only the windows of the episodes it
	// accepts (the others still give the samples before a window).
	Episodes func(episode int) bool
	// Forecast, when set, forecasts the ports of every step in the loop
	// from the window's first measured ports, as the live node does,
	// instead of reading the logged ports over the horizon.
	Forecast *Forecast
}

// WrenchBase returns how a wrench estimate reads the base of a dataset
// whose q is named coords (statemap.BaseKind), or an error without a
// floating base.
func WrenchBase(coords []string) (predictor.WrenchBase, error) {
	switch statemap.BaseKind(coords) {
	case statemap.StateFloatingBase:
		return predictor.WrenchBaseSE3, nil
	case statemap.StateFloatingBaseGravity:
		return predictor.WrenchBaseGravity, nil
	}
	return 0, fmt.Errorf("trainer: a wrench estimate needs a floating base: the coordinates do not start with %v or %v", statemap.BaseCoordinates(statemap.StateFloatingBase), statemap.BaseCoordinates(statemap.StateFloatingBaseGravity))
}

// newOffset wraps r in the offset-free estimator opt asks for (nil when
// none).
func (opt EvalOptions) newOffset(r Roller, ds *dataset.Dataset) (predictor.OffsetEstimator, error) {
	n, ne := ds.N, ds.PortDim()
	switch {
	case opt.Force != nil && opt.Wrench != nil:
		return nil, fmt.Errorf("trainer: a force estimate (%s) and a wrench estimate (%s): choose one", opt.Force, opt.Wrench)
	case opt.Force != nil:
		est, err := predictor.NewForceEstimator(r, n, ne, *opt.Force)
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		return est, nil
	case opt.Wrench != nil:
		base, err := WrenchBase(ds.Coordinates)
		if err != nil {
			return nil, err
		}
		est, err := predictor.NewWrenchEstimator(r, n, ne, base, *opt.Wrench)
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		return est, nil
	}
	return nil, nil
}

// EvalResult is the autoregressive error of a model on a dataset.
type EvalResult struct {
	Horizon int `json:"horizon"`
	Windows int `json:"windows"`
	// MSE is the mean over windows, steps 1…H and the 2n state coordinates of
	// the squared error in physical units.
	MSE float64 `json:"mse"`
	// MSEQ and MSEP split MSE into configuration and momentum parts.
	MSEQ float64 `json:"mse_q"`
	MSEP float64 `json:"mse_p"`
	// PerStep is the MSE at each step k = 1…H (mean over windows and coordinates).
	PerStep []float64 `json:"per_step,omitempty"`
	// PerCoord is the MSE of each of the 2n state coordinates (mean over
	// windows and steps 1…H): q first, then p.
	PerCoord []float64 `json:"per_coord,omitempty"`
	// PerFile is the MSE of the windows of each log file (the episode name
	// up to its "@"), in the order the files first appear.
	PerFile []FileError `json:"per_file,omitempty"`
	// Diverged counts windows whose rollout produced a non-finite value.
	Diverged int `json:"diverged"`
}

// FileError is the autoregressive error of the windows of one log file.
type FileError struct {
	File    string  `json:"file"`
	Windows int     `json:"windows"`
	MSE     float64 `json:"mse"`
	MSEQ    float64 `json:"mse_q"`
	MSEP    float64 `json:"mse_p"`
}

// EpisodeFile returns the log file an episode was cut from: its name up to
// the last "@" (conversion names episodes file@start).
func EpisodeFile(name string) string {
	if i := strings.LastIndex(name, "@"); i >= 0 {
		return name[:i]
	}
	return name
}

// Breakdown splits an evaluation's error into the floating base and the
// joints, each into configuration and momentum (physical units, mean over
// the coordinates of the part).
type Breakdown struct {
	BaseQ, BaseP, JointQ, JointP float64
	// BaseShare is the base's share of the total squared error.
	BaseShare float64
}

// BaseCoordinates returns how many leading coordinates of q (and of p)
// belong to a floating base: 6 where coords starts with the six base
// coordinates conversion names (statemap.BaseCoordinates, relative SE(3)
// log or gravity-aware), 0 otherwise.
func BaseCoordinates(coords []string) int {
	return len(statemap.BaseCoordinates(statemap.BaseKind(coords)))
}

// Split returns the error of r split into base and joints, for a dataset
// whose q starts with nb base coordinates (BaseCoordinates). It reports
// false when the result has no per-coordinate errors or there is no base,
// or no joint.
func (r EvalResult) Split(nb int) (Breakdown, bool) {
	n := len(r.PerCoord) / 2
	if nb <= 0 || nb >= n {
		return Breakdown{}, false
	}
	mean := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	q, p := r.PerCoord[:n], r.PerCoord[n:]
	b := Breakdown{BaseQ: mean(q[:nb]), BaseP: mean(p[:nb]), JointQ: mean(q[nb:]), JointP: mean(p[nb:])}
	var base, all float64
	for j, v := range r.PerCoord {
		all += v
		if j%n < nb {
			base += v
		}
	}
	if all > 0 {
		b.BaseShare = base / all
	}
	return b, true
}

// EvalWindows returns the rollout windows (start points) used by Evaluate.
func EvalWindows(ds *dataset.Dataset, horizon, stride, maxWindows int) []dataset.Window {
	ws := ds.WindowsOf(horizon+1, max(stride, 1))
	if maxWindows > 0 && len(ws) > maxWindows {
		out := make([]dataset.Window, maxWindows)
		for i := range out {
			out[i] = ws[i*len(ws)/maxWindows]
		}
		ws = out
	}
	return ws
}

// evalLanes is the number of accumulators Evaluate sums windows into
// (window i into accumulator i mod evalLanes), evalBlock the number of
// windows rolled out before they are added.
const (
	evalLanes = 2
	evalBlock = 256
)

// Evaluate rolls the model out from every evaluation window of ds and
// returns the autoregressive MSE at the requested horizon.
func Evaluate(ctx context.Context, newRoller RollerFactory, ds *dataset.Dataset, opt EvalOptions) (EvalResult, error) {
	if opt.Horizon < 1 {
		return EvalResult{}, fmt.Errorf("trainer: evaluation horizon %d < 1", opt.Horizon)
	}
	ws := EvalWindows(ds, opt.Horizon, opt.Stride, opt.MaxWindows)
	if opt.Episodes != nil {
		ws = slices.DeleteFunc(ws, func(w dataset.Window) bool { return !opt.Episodes(w.Episode) })
	}
	if len(ws) == 0 {
		return EvalResult{}, fmt.Errorf("trainer: no episode of the evaluation set is longer than the horizon %d", opt.Horizon)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = 2
	}
	nx, ne, n := ds.StateDim(), ds.PortDim(), ds.N
	H := opt.Horizon
	// files: the log file of every window, by index into fileNames.
	var fileNames []string
	fileOf := make([]int, len(ws))
	seen := map[string]int{}
	for i, win := range ws {
		f := EpisodeFile(ds.Episodes[win.Episode].Name)
		k, ok := seen[f]
		if !ok {
			k = len(fileNames)
			seen[f] = k
			fileNames = append(fileNames, f)
		}
		fileOf[i] = k
	}
	type acc struct {
		sq, sqq, sqp float64
		per, coord   []float64
		fq, fp       []float64 // per file
		fn           []int
		bad          int
		err          error
	}
	// Window i is added to accumulator i mod evalLanes, in window order,
	// and the accumulators in order: the sums do not depend on the number
	// of workers (and are those of two workers taking every other window,
	// the rule before). The workers roll out a block of windows, then the
	// block is added.
	type record struct {
		sqq, sqp   float64
		per, coord []float64
		finite     bool
		err        error
	}
	accs := make([]acc, evalLanes)
	for i := range accs {
		a := &accs[i]
		a.per, a.coord = make([]float64, H), make([]float64, nx)
		a.fq, a.fp, a.fn = make([]float64, len(fileNames)), make([]float64, len(fileNames)), make([]int, len(fileNames))
	}
	block := min(len(ws), evalBlock)
	recs := make([]record, block)
	for i := range recs {
		recs[i].per, recs[i].coord = make([]float64, H), make([]float64, nx)
	}
	rollers := make([]Roller, workers)
	outs := make([][]float64, workers)
	var (
		hist  *LogHistory
		ests  []predictor.OffsetEstimator
		lasts []FeedPos // where each worker's estimator was fed up to
		bufs  [][]float64
		fws   []*ForecastRoller
	)
	if opt.Force != nil || opt.Wrench != nil {
		hist = NewLogHistory(ds)
		ests, bufs, lasts = make([]predictor.OffsetEstimator, workers), make([][]float64, workers), make([]FeedPos, workers)
	}
	if opt.Forecast != nil {
		if hist == nil {
			hist = NewLogHistory(ds)
		}
		fws = make([]*ForecastRoller, workers)
		for w := range fws {
			var err error
			if fws[w], err = NewForecastRoller(opt.Forecast, ds, H); err != nil {
				return EvalResult{}, err
			}
		}
	}
	for w := range rollers {
		r, err := newRoller()
		if err != nil {
			return EvalResult{}, err
		}
		rollers[w], outs[w] = r, make([]float64, H*nx)
		if ests != nil {
			if ests[w], err = opt.newOffset(r, ds); err != nil {
				return EvalResult{}, err
			}
			rollers[w], bufs[w] = ests[w], make([]float64, nx)
		}
	}
	for b0 := 0; b0 < len(ws); b0 += block {
		b1 := min(b0+block, len(ws))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				r, out := rollers[w], outs[w]
				for i := b0 + w; i < b1; i += workers {
					rec := &recs[i-b0]
					if rec.err = ctx.Err(); rec.err != nil {
						return
					}
					win := ws[i]
					if ests != nil {
						if rec.err = hist.FeedFrom(ests[w], win.Episode, win.Start, bufs[w], &lasts[w]); rec.err != nil {
							return
						}
					}
					ep := &ds.Episodes[win.Episode]
					x0 := ep.X[win.Start*nx : (win.Start+1)*nx]
					ports := ep.E[win.Start*ne : (win.Start+H)*ne]
					if fws != nil {
						rec.err = fws[w].Rollout(r, hist, ds, win.Episode, win.Start, H, out)
					} else {
						rec.err = r.Rollout(x0, ports, H, out)
					}
					if rec.err != nil {
						if !errors.Is(rec.err, mechanics.ErrOutOfDomain) {
							return
						}
						// a composed model's rollout that left its
						// physics prior's domain has diverged
						rec.err, rec.finite = nil, false
						continue
					}
					truth := ep.X[(win.Start+1)*nx : (win.Start+1+H)*nx]
					rec.sqq, rec.sqp, rec.finite = 0, 0, true
					clear(rec.coord)
					for k := range H {
						var s float64
						for j := range nx {
							e := out[k*nx+j] - truth[k*nx+j]
							e2 := e * e
							s += e2
							rec.coord[j] += e2
							if j < n {
								rec.sqq += e2
							} else {
								rec.sqp += e2
							}
						}
						rec.per[k] = s
						if math.IsNaN(s) || math.IsInf(s, 0) {
							rec.finite = false
							break
						}
					}
				}
			})
		}
		wg.Wait()
		for i := b0; i < b1; i++ {
			rec, a := &recs[i-b0], &accs[i%evalLanes]
			if rec.err != nil {
				return EvalResult{}, rec.err
			}
			if !rec.finite {
				a.bad++
				continue
			}
			for k, v := range rec.per {
				a.per[k] += v
			}
			for j, v := range rec.coord {
				a.coord[j] += v
			}
			f := fileOf[i]
			a.fq[f] += rec.sqq
			a.fp[f] += rec.sqp
			a.fn[f]++
			a.sq += rec.sqq + rec.sqp
			a.sqq += rec.sqq
			a.sqp += rec.sqp
		}
	}
	res := EvalResult{Horizon: H, Windows: len(ws), PerStep: make([]float64, H), PerCoord: make([]float64, nx)}
	var sq, sqq, sqp float64
	fq, fp, fn := make([]float64, len(fileNames)), make([]float64, len(fileNames)), make([]int, len(fileNames))
	for _, a := range accs {
		if a.err != nil {
			return res, a.err
		}
		sq += a.sq
		sqq += a.sqq
		sqp += a.sqp
		res.Diverged += a.bad
		for k, v := range a.per {
			res.PerStep[k] += v
		}
		for j, v := range a.coord {
			res.PerCoord[j] += v
		}
		for f := range fileNames {
			fq[f] += a.fq[f]
			fp[f] += a.fp[f]
			fn[f] += a.fn[f]
		}
	}
	cnt := float64((len(ws) - res.Diverged) * H)
	res.MSE = sq / (cnt * float64(nx))
	res.MSEQ = sqq / (cnt * float64(n))
	res.MSEP = sqp / (cnt * float64(n))
	good := float64(len(ws) - res.Diverged)
	for k := range res.PerStep {
		res.PerStep[k] /= math.Max(good, 1) * float64(nx)
	}
	for j := range res.PerCoord {
		res.PerCoord[j] /= math.Max(cnt, 1)
	}
	labels := fileLabels(fileNames)
	for f := range fileNames {
		c := float64(max(fn[f], 1) * H)
		res.PerFile = append(res.PerFile, FileError{File: labels[f], Windows: fn[f],
			MSE: (fq[f] + fp[f]) / (c * float64(nx)), MSEQ: fq[f] / (c * float64(n)), MSEP: fp[f] / (c * float64(n))})
	}
	if res.Diverged > 0 {
		// A rollout that leaves the finite numbers has unbounded error.
		res.MSE = math.Inf(1)
	}
	return res, nil
}

// MultiHorizon evaluates at each horizon (Appendix A's table).
func MultiHorizon(ctx context.Context, newRoller RollerFactory, ds *dataset.Dataset, horizons []int, opt EvalOptions) ([]EvalResult, error) {
	var out []EvalResult
	for _, h := range horizons {
		o := opt
		o.Horizon = h
		r, err := Evaluate(ctx, newRoller, ds, o)
		if err != nil {
			return out, fmt.Errorf("horizon %d: %w", h, err)
		}
		r.PerStep = nil
		out = append(out, r)
	}
	return out, nil
}
