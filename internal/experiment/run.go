package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/predictor/kernel"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// ModelSpec describes one model of an experiment.
type ModelSpec struct {
	// Name labels the model in reports ("CaLiSym-GRB", "MLP").
	Name string `json:"name"`
	// Kind is "gr", "grb" (lifted symplectic) or "mlp" (baseline).
	Kind string `json:"kind"`
	// Arch is the symplectic architecture (ignored for the MLP).
	Arch predictor.Arch `json:"arch"`
	// InitScale scales the initial parameters of a symplectic model (0: 1).
	InitScale float64 `json:"init_scale,omitempty"`
	// Hidden are the MLP's hidden widths.
	Hidden []int `json:"hidden,omitempty"`
	// Loss weights the one-step objective.
	Loss trainer.LossWeights `json:"loss"`
	// Train configures the training loop.
	Train trainer.Config `json:"train"`
	// Prior, when set, puts one step of an identified physics model in
	// front of the model, GR/GRB or MLP (trainer.Composed): the double
	// pendulum's (one-step training only) or the quadrotor's
	// (mechanics.PriorQuadrotorRK4, which trains K-step too).
	// PriorParams or QuadrotorPrior are its parameters, which the study
	// fills in from the benchmark's identified model
	// (RealBenchmark.Pendulum, RealBenchmark.Quadrotor).
	Prior          mechanics.PriorKind        `json:"prior,omitempty"`
	PriorParams    *mechanics.PendulumParams  `json:"prior_params,omitempty"`
	QuadrotorPrior *mechanics.QuadrotorParams `json:"quadrotor_prior,omitempty"`
	// PriorWrenchPort is the port the quadrotor prior's body wrench starts
	// at (mechanics.QuadrotorParams.WrenchPort), kept when the study fills
	// in QuadrotorPrior: 6 drives it by the port history's means.
	PriorWrenchPort int `json:"prior_wrench_port,omitempty"`
}

// Spec is a whole experiment on prepared datasets.
type Spec struct {
	// System names the benchmark ("double pendulum").
	System string      `json:"system"`
	Models []ModelSpec `json:"models"`
	// Horizon is the headline autoregressive horizon (paper: 200 for the pendulum).
	Horizon int `json:"horizon"`
	// Horizons are the multi-horizon table's horizons (Appendix A).
	Horizons []int `json:"horizons"`
	// EvalStride spaces rollout start points; MaxEvalWindows caps their number.
	EvalStride     int `json:"eval_stride"`
	MaxEvalWindows int `json:"max_eval_windows"`
	// RolloutChannels label the state channels in the rollout plot.
	RolloutChannels []string `json:"rollout_channels"`
	// RolloutSelect are the state channels the rollout plot shows (nil:
	// all), e.g. the base position and one leg of a quadruped.
	RolloutSelect []int `json:"rollout_select,omitempty"`
}

// Datasets are an experiment's data.
type Datasets struct {
	Train, ID, OOD *dataset.Dataset
	// Groups are evaluated apart at every horizon of the multi-horizon
	// table (none: no group table).
	Groups []EvalGroup
}

// ModelReport is the outcome for one model.
type ModelReport struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// OODARMSE and IDARMSE are autoregressive MSEs at Horizon (physical units).
	OODARMSE float64 `json:"ood_ar_mse"`
	IDARMSE  float64 `json:"id_ar_mse"`
	Horizon  int     `json:"horizon"`
	Params   int     `json:"params"`
	// FLOPsPerStep counts lift + map + projection for one prediction step.
	FLOPsPerStep int `json:"flops_per_step"`
	// SymplecticResidualMax/Mean is ε_J (Eq. 29) of the lifted map over
	// lifted OOD states; for the MLP it is the same residual of its 2n×2n
	// state Jacobian (central differences), which nothing keeps small.
	SymplecticResidualMax  float64 `json:"symplectic_residual_max"`
	SymplecticResidualMean float64 `json:"symplectic_residual_mean"`
	TrainSeconds           float64 `json:"train_seconds"`
	// TransitionsPerSecond is the training throughput (all workers).
	TransitionsPerSecond float64 `json:"transitions_per_second"`
	FinalLoss            float64 `json:"final_train_loss"`
	FinalValLoss         float64 `json:"final_val_loss"`
	// OOD and ID carry the split of the error into q and p parts.
	OOD trainer.EvalResult `json:"ood"`
	ID  trainer.EvalResult `json:"id"`
	// MultiHorizon holds the Appendix A table rows.
	MultiHorizon []HorizonRow `json:"multi_horizon"`
	// Groups is the error on each of the data's evaluation groups, with
	// the logged ports over the horizon (a planner's case).
	Groups []GroupResult `json:"groups,omitempty"`
	// Live is the error on each evaluation group with the live node's port
	// forecasts in the loop instead of the logged ports (CaLiSym models
	// only; LiveResult).
	Live []LiveResult `json:"live,omitempty"`
	// Forecaster is the learned port forecast fitted on the training set
	// beside the model (File's forecaster), relative to the output
	// directory, with what its fit chose.
	Forecaster *ForecasterResult `json:"forecaster,omitempty"`
	// Diverged is set when training stopped on a non-finite loss.
	Diverged bool                 `json:"diverged,omitempty"`
	History  []trainer.EpochStats `json:"history"`
	// File is the saved model, relative to the output directory.
	File string `json:"file"`
}

// LiveResult is a model's error on the evaluation groups with one port
// forecast in the loop (forecast.KindHold, forecast.KindLearned): what the
// node publishes, without the offset-free estimate (as Groups).
type LiveResult struct {
	Forecast string        `json:"forecast"`
	Groups   []GroupResult `json:"groups"`
}

// ForecasterResult is the learned port forecast fitted beside a model.
type ForecasterResult struct {
	File string                   `json:"file"`
	Fit  trainer.ForecasterReport `json:"fit"`
}

// HorizonRow is one row of the multi-horizon table.
type HorizonRow struct {
	Horizon int     `json:"horizon"`
	IDMSE   float64 `json:"id_mse"`
	OODMSE  float64 `json:"ood_mse"`
	// OODPerFile splits OODMSE by OOD log (the same rollouts), so that a
	// study can report each OOD run or flight apart (withSplitGroups).
	OODPerFile []trainer.FileError `json:"ood_per_file,omitempty"`
}

// Report is the outcome of an experiment.
type Report struct {
	System  string            `json:"system"`
	Created string            `json:"created"`
	Data    map[string]any    `json:"data"`
	Models  []ModelReport     `json:"models"`
	Spec    Spec              `json:"spec"`
	Extra   map[string]string `json:"extra,omitempty"`
	// Kernels is the kernel set that ran (kernel.Selection). Every set gives
	// the same bits; the training times depend on it.
	Kernels string `json:"kernels,omitempty"`
	// Comparison is CaLiSym's OOD error relative to the MLP's, in percent
	// (negative: CaLiSym is better); absent without both models.
	OODChangePercent *float64 `json:"ood_change_percent,omitempty"`
	// HoldGroups is the state held constant on each evaluation group.
	HoldGroups []GroupResult `json:"hold_groups,omitempty"`
	// PhysicsGroups is the identified physics model alone on each
	// evaluation group, where the benchmark has one (the real double
	// pendulum's study: PhysicsRollers).
	PhysicsGroups []GroupResult `json:"physics_groups,omitempty"`
}

// trained is a model after training, ready to evaluate.
type trained struct {
	spec    ModelSpec
	learner trainer.Learner
	rollers trainer.RollerFactory
	sym     *predictor.Model
	mlp     *trainer.MLP
	hist    *trainer.History
	err     error
}

// Run trains and evaluates every model of spec and writes the models, the
// plots and, last, the report (report.md, then report.json) into outDir:
// a report is there only when everything it describes and links is, so
// that an interrupted or failed run leaves none. log receives progress
// lines (nil: silent).
func Run(ctx context.Context, spec Spec, data Datasets, outDir string, log io.Writer) (*Report, error) {
	rep, err := runPlotted(ctx, spec, data, outDir, log)
	if err != nil {
		return rep, err
	}
	return rep, writeReport(ctx, rep, Markdown(rep), outDir)
}

// runPlotted is Run without the report: the models and the plots.
func runPlotted(ctx context.Context, spec Spec, data Datasets, outDir string, log io.Writer) (*Report, error) {
	if log == nil {
		log = io.Discard
	}
	if len(spec.Models) == 0 {
		return nil, fmt.Errorf("experiment: no models")
	}
	if spec.Horizon < 1 {
		return nil, fmt.Errorf("experiment: horizon %d", spec.Horizon)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	// A report says that a run finished: an earlier run's must not stay
	// beside the models and plots this run rewrites, should it fail.
	for _, f := range []string{"report.json", "report.md"} {
		if err := atomicfile.Remove(filepath.Join(outDir, f)); err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
	}
	rep := &Report{System: spec.System, Created: time.Now().UTC().Format(time.RFC3339), Spec: spec,
		Kernels: kernel.Selection(),
		Data: map[string]any{
			"train_windows": len(data.Train.Windows()), "train_transitions": len(data.Train.UniqueTransitions()),
			"train_episodes": len(data.Train.Episodes), "id_episodes": len(data.ID.Episodes), "ood_episodes": len(data.OOD.Episodes),
			"mean_energy_train": meanTag(data.Train, "mean_energy"), "mean_energy_ood": meanTag(data.OOD, "mean_energy"),
			"initial_energy_train": meanTag(data.Train, "initial_energy"), "initial_energy_ood": meanTag(data.OOD, "initial_energy"),
		}}
	fmt.Fprintf(log, "kernels: %s\n", rep.Kernels)
	if len(data.Groups) > 0 {
		var err error
		if rep.HoldGroups, err = EvalGroups(ctx, trainer.HoldRollers, data.Groups, spec.Horizons, nil); err != nil {
			return rep, err
		}
	}
	for _, ms := range spec.Models {
		fmt.Fprintf(log, "training %s (%s)\n", ms.Name, ms.Kind)
		ms.Train.OnResume = func(epoch int, seconds float64) {
			fmt.Fprintf(log, "resuming %s from %s (epoch %d of %d, %.0f s trained)\n", ms.Name, ms.Train.CheckpointPath, epoch, ms.Train.Epochs, seconds)
		}
		tr, err := train(ctx, ms, data)
		if err != nil {
			return rep, err
		}
		mr, err := evaluate(ctx, spec, tr, data, outDir)
		if err != nil {
			return rep, err
		}
		fmt.Fprintf(log, "%s: OOD AR MSE %.4g, ID AR MSE %.4g at horizon %d (%d params, %.1f s training)\n",
			mr.Name, mr.OODARMSE, mr.IDARMSE, mr.Horizon, mr.Params, mr.TrainSeconds)
		rep.Models = append(rep.Models, mr)
	}
	rep.OODChangePercent = oodChange(rep.Models)
	if err := writePlots(ctx, rep, spec, data, outDir); err != nil {
		return rep, err
	}
	return rep, nil
}

func meanTag(ds *dataset.Dataset, tag string) float64 {
	var s float64
	for _, ep := range ds.Episodes {
		s += ep.Tags[tag]
	}
	return s / math.Max(1, float64(len(ds.Episodes)))
}

// oodChange compares the first symplectic model with the MLP.
func oodChange(ms []ModelReport) *float64 {
	var sym, base *ModelReport
	for i := range ms {
		switch {
		case ms[i].Kind == "mlp" && base == nil:
			base = &ms[i]
		case ms[i].Kind != "mlp" && sym == nil:
			sym = &ms[i]
		}
	}
	if sym == nil || base == nil || !(base.OODARMSE > 0) || math.IsInf(base.OODARMSE, 0) {
		return nil
	}
	v := 100 * (sym.OODARMSE - base.OODARMSE) / base.OODARMSE
	return &v
}

// NewLearner builds the model a spec describes for the training data.
func NewLearner(ms ModelSpec, train *dataset.Dataset) (trainer.Learner, error) {
	switch ms.Kind {
	case "mlp":
		if ms.Prior == "" {
			return trainer.NewMLP(train, ms.Hidden, ms.Loss, ms.Train.Seed)
		}
		prior, err := newPrior(ms, train)
		if err != nil {
			return nil, err
		}
		c, err := trainer.NewComposedMLP(train, ms.Hidden, ms.Loss, ms.Train.Seed, prior)
		if err != nil {
			return nil, fmt.Errorf("experiment: %s: %w", ms.Name, err)
		}
		return c, nil
	case "gr", "grb":
		l := predictor.Layout{N: train.N, NU: train.NU, NC: train.NC}
		m, err := predictor.New(l, ms.Arch, rand.New(rand.NewPCG(ms.Train.Seed, 0x73796d70)))
		if err != nil {
			return nil, fmt.Errorf("experiment: %s: %w", ms.Name, err)
		}
		if string(ms.Arch.Kind) != ms.Kind {
			return nil, fmt.Errorf("experiment: %s: kind %q but architecture %q", ms.Name, ms.Kind, ms.Arch.Kind)
		}
		t := predictor.NewTrainable(m)
		if ms.InitScale > 0 {
			t.Init(rand.New(rand.NewPCG(ms.Train.Seed, 0x73796d70)), ms.InitScale)
		}
		st, err := trainer.Stats(train)
		if err != nil {
			return nil, err
		}
		m.Norm = st.Normalization(l)
		m.Meta.Coordinates, m.Meta.Ports, m.Meta.Dt = train.Coordinates, train.Ports, train.Dt
		if m.Meta.PortMean, err = predictor.PortMeanFromNames(train.Ports, train.NU, train.NC); err != nil {
			return nil, fmt.Errorf("experiment: %s: %w", ms.Name, err)
		}
		if pm := train.Source[statemap.PortMapKey]; pm != "" {
			m.Meta.Provenance = map[string]string{statemap.PortMapKey: pm}
		}
		sym := &trainer.Symplectic{T: t, W: ms.Loss}
		if ms.Prior == "" {
			return sym, nil
		}
		prior, err := newPrior(ms, train)
		if err != nil {
			return nil, err
		}
		c, err := trainer.NewComposed(sym, prior)
		if err != nil {
			return nil, fmt.Errorf("experiment: %s: %w", ms.Name, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("experiment: %s: unknown model kind %q (want gr, grb or mlp)", ms.Name, ms.Kind)
}

// newPrior builds the physics prior of a model spec (ModelSpec.Prior) at
// the training data's sampling period.
func newPrior(ms ModelSpec, train *dataset.Dataset) (mechanics.Prior, error) {
	if ms.Prior == mechanics.PriorQuadrotorRK4 {
		if ms.QuadrotorPrior == nil {
			return nil, fmt.Errorf("experiment: %s: prior %s needs the quadrotor's constants (a gravity-aware quadrotor benchmark's RealBenchmark.Quadrotor)", ms.Name, ms.Prior)
		}
		prior, err := mechanics.NewQuadrotorPrior(*ms.QuadrotorPrior, train.Dt)
		if err != nil {
			return nil, fmt.Errorf("experiment: %s: %w", ms.Name, err)
		}
		return prior, nil
	}
	if ms.PriorParams == nil {
		return nil, fmt.Errorf("experiment: %s: prior %s needs the identified pendulum parameters (a double-pendulum benchmark's RealBenchmark.Pendulum)", ms.Name, ms.Prior)
	}
	prior, err := mechanics.NewPendulumPrior(ms.Prior, *ms.PriorParams, train.Dt)
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: %w", ms.Name, err)
	}
	return prior, nil
}

func train(ctx context.Context, ms ModelSpec, data Datasets) (*trained, error) {
	l, err := NewLearner(ms, data.Train)
	if err != nil {
		return nil, err
	}
	tr := &trained{spec: ms, learner: l}
	switch v := l.(type) {
	case *trainer.Symplectic:
		tr.sym, tr.rollers = v.Model(), v.Rollers()
	case *trainer.Composed:
		tr.rollers = v.Rollers()
		switch in := v.Inner.(type) {
		case *trainer.Symplectic:
			tr.sym = in.Model()
		case *trainer.MLP:
			tr.mlp = in
		}
	case *trainer.MLP:
		tr.mlp, tr.rollers = v, v.Rollers()
	}
	hist, err := trainer.Train(ctx, l, data.Train, data.ID, ms.Train)
	tr.hist = hist
	if err != nil {
		if ctx.Err() != nil || hist == nil {
			return nil, fmt.Errorf("experiment: training %s: %w", ms.Name, err)
		}
		tr.err = err // diverged: report it, evaluate what we have
	}
	return tr, nil
}

func evaluate(ctx context.Context, spec Spec, tr *trained, data Datasets, outDir string) (ModelReport, error) {
	ms := tr.spec
	mr := ModelReport{Name: ms.Name, Kind: ms.Kind, Horizon: spec.Horizon, Params: tr.learner.NumParams(),
		Diverged: tr.err != nil}
	if tr.hist != nil {
		mr.History = tr.hist.Epochs
		mr.TrainSeconds = tr.hist.Seconds
		var n float64
		for _, e := range tr.hist.Epochs {
			n += float64(e.Transitions)
		}
		if tr.hist.Seconds > 0 {
			mr.TransitionsPerSecond = n / tr.hist.Seconds
		}
		if k := len(tr.hist.Epochs); k > 0 {
			mr.FinalLoss, mr.FinalValLoss = tr.hist.Epochs[k-1].Loss, tr.hist.Epochs[k-1].ValLoss
		}
	}
	opt := trainer.EvalOptions{Horizon: spec.Horizon, Stride: spec.EvalStride, MaxWindows: spec.MaxEvalWindows}
	var err error
	if mr.OOD, err = trainer.Evaluate(ctx, tr.rollers, data.OOD, opt); err != nil {
		return mr, fmt.Errorf("experiment: %s OOD evaluation: %w", ms.Name, err)
	}
	if mr.ID, err = trainer.Evaluate(ctx, tr.rollers, data.ID, opt); err != nil {
		return mr, fmt.Errorf("experiment: %s ID evaluation: %w", ms.Name, err)
	}
	mr.OODARMSE, mr.IDARMSE = mr.OOD.MSE, mr.ID.MSE
	mr.MultiHorizon, _ = multiHorizonRows(ctx, tr.rollers, data, spec.Horizons, opt)
	if len(data.Groups) > 0 {
		if mr.Groups, err = EvalGroups(ctx, tr.rollers, data.Groups, spec.Horizons, nil); err != nil {
			return mr, err
		}
	}
	states := liftedStates(data.OOD, 256)
	switch {
	case tr.sym != nil:
		m := tr.sym
		mr.FLOPsPerStep = m.CountFLOPs().Total()
		zs := make([][]float64, len(states))
		l := m.Layout
		for i, s := range states {
			z := make([]float64, l.Dim())
			l.Section(z, s[:l.StateDim()], s[l.StateDim():])
			m.Norm.Apply(l, z)
			zs[i] = z
		}
		if mr.SymplecticResidualMean, mr.SymplecticResidualMax, err = m.ResidualStats(zs); err != nil {
			return mr, err
		}
		m.Meta.Name = ms.Name
		m.Meta.Created = time.Now().UTC().Format(time.RFC3339)
		m.Meta.Metrics = map[string]float64{"ood_ar_mse": mr.OODARMSE, "id_ar_mse": mr.IDARMSE, "horizon": float64(mr.Horizon)}
		prov := map[string]string{"system": spec.System, "trainer": "calisym experiment"}
		for _, k := range []string{trainer.PriorKey, statemap.PortMapKey} { // what NewLearner recorded
			if v, ok := m.Meta.Provenance[k]; ok {
				prov[k] = v
			}
		}
		m.Meta.Provenance = prov
		mr.File = "calisym-" + ms.Kind + ".safetensors"
		if err := m.Save(filepath.Join(outDir, mr.File)); err != nil {
			return mr, err
		}
		if err := liveRows(ctx, &mr, tr, data, spec, outDir); err != nil {
			return mr, err
		}
	case tr.mlp != nil:
		mr.FLOPsPerStep = tr.mlp.Net.FLOPs()
		mr.SymplecticResidualMean, mr.SymplecticResidualMax = mlpResidual(tr.mlp, states)
		mr.File = "mlp.json"
		if err := tr.mlp.Save(filepath.Join(outDir, mr.File)); err != nil {
			return mr, err
		}
	}
	return mr, nil
}

// liftedStates picks up to n samples (x, e) evenly from ds.
func liftedStates(ds *dataset.Dataset, n int) [][]float64 {
	nx, ne := ds.StateDim(), ds.PortDim()
	total := 0
	for _, ep := range ds.Episodes {
		total += ep.Len
	}
	var out [][]float64
	stride := max(1, total/n)
	k := 0
	for _, ep := range ds.Episodes {
		for t := 0; t < ep.Len; t++ {
			if k%stride == 0 && len(out) < n {
				s := append(append([]float64{}, ep.X[t*nx:(t+1)*nx]...), ep.E[t*ne:(t+1)*ne]...)
				out = append(out, s)
			}
			k++
		}
	}
	return out
}

// mlpResidual returns ε_J of the MLP's state map x_t ↦ x_{t+1} (ports
// fixed) by central differences, in the standardised coordinates.
func mlpResidual(m *trainer.MLP, states [][]float64) (mean, maxv float64) {
	cfg := m.Net.Config()
	nx := cfg.StateDim
	norm := m.Net.Norm()
	jac := make([]float64, nx*nx)
	xp, xm := make([]float64, nx), make([]float64, nx)
	yp, ym := make([]float64, nx), make([]float64, nx)
	for _, s := range states {
		x, e := s[:nx], s[nx:]
		for j := range nx {
			h := 1e-6 * norm.SX[j]
			copy(xp, x)
			copy(xm, x)
			xp[j] += h
			xm[j] -= h
			m.Net.Step(xp, e, yp)
			m.Net.Step(xm, e, ym)
			for i := range nx {
				// standardised: ∂(y_i/s_i)/∂(x_j/s_j)
				jac[i*nx+j] = (yp[i] - ym[i]) / (2 * h) * norm.SX[j] / norm.SX[i]
			}
		}
		r, err := predictor.SymplecticResidual(jac, nx)
		if err != nil {
			continue
		}
		mean += r
		maxv = max(maxv, r)
	}
	return mean / math.Max(1, float64(len(states))), maxv
}

// multiHorizonRows evaluates the ID-test and OOD sets at each horizon
// (opt's other settings, e.g. an offset-free estimate, as given); a
// horizon a set cannot be evaluated at (longer than its windows) is NaN
// there, and oodErrs[i] says why at horizons[i] on the OOD set.
func multiHorizonRows(ctx context.Context, rollers trainer.RollerFactory, data Datasets, horizons []int, opt trainer.EvalOptions) (rows []HorizonRow, oodErrs []error) {
	for _, h := range horizons {
		o := opt
		o.Horizon = h
		row := HorizonRow{Horizon: h, IDMSE: math.NaN(), OODMSE: math.NaN()}
		if r, err := trainer.Evaluate(ctx, rollers, data.ID, o); err == nil {
			row.IDMSE = r.MSE
		}
		r, err := trainer.Evaluate(ctx, rollers, data.OOD, o)
		if err == nil {
			row.OODMSE, row.OODPerFile = r.MSE, r.PerFile
		}
		rows, oodErrs = append(rows, row), append(oodErrs, err)
	}
	return rows, oodErrs
}
