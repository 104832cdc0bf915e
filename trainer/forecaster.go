package trainer

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/forecast"
)

// ForecasterOptions configure FitForecaster.
type ForecasterOptions struct {
	// Features is the number of random tanh features (0, the default: a
	// linear policy).
	Features int
	// Feedback fits the state-feedback policy (the ports of step k from
	// the state the rollout reached, the first state and the first ports)
	// instead of the direct one (forecast.Learned.Steps: the ports of
	// steps 1 … Steps from the start alone, open loop). The direct linear
	// policy is the default: it was chosen on the ANYmal's validation
	// files (docs/live-prediction.md#the-port-forecast).
	Feedback bool
	// Rollers, when set, are the dynamics model's: the penalty is then
	// chosen by the AR MSE of the model rolled out with each candidate in
	// the loop from the validation windows (ForecasterReport.ValARMSE),
	// what the node's predictions make of it, instead of by the ports'
	// one-step error. Episode-stored data with fewer than four files and
	// no Validation (validated by position) are chosen by the ports'
	// error all the same.
	Rollers RollerFactory
	// Workers are the evaluation's goroutines (default 2).
	Workers int
	// Seed draws the random features (default 1).
	Seed uint64
	// Steps is the largest step k of the pairs (x_k, m_k) fitted after
	// each start (default 100: the node's horizon).
	Steps int
	// Lambdas are the ridge penalties tried, relative to the mean
	// diagonal of the features' Gram matrix (default 1e-4 … 10).
	Lambdas []float64
	// Validation names the log files (episode names up to "@") whose
	// windows choose the penalty; none: every fourth file of the
	// dataset's, in the order they first appear, where it has four or
	// more, else the last quarter of the windows.
	Validation []string
}

// Defaults fills unset fields.
func (o *ForecasterOptions) Defaults() {
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Steps == 0 {
		o.Steps = 100
	}
	if len(o.Lambdas) == 0 {
		o.Lambdas = []float64{1e-4, 1e-3, 1e-2, 1e-1, 1, 10}
	}
}

// ForecasterReport says what FitForecaster fitted and chose.
type ForecasterReport struct {
	// Rows is the number of pairs fitted (training files only), ValRows
	// the number that chose the penalty.
	Rows    int `json:"rows"`
	ValRows int `json:"val_rows"`
	// Files and ValFiles are the log files of each.
	Files    []string `json:"files"`
	ValFiles []string `json:"val_files"`
	// Lambdas and ValMSE are the penalties tried and the validation mean
	// squared error of each (standardised ports; the hold forecast's,
	// m_k = m_0, is HoldMSE).
	Lambdas []float64 `json:"lambdas"`
	ValMSE  []float64 `json:"val_mse"`
	HoldMSE float64   `json:"hold_mse"`
	// ValARMSE is the AR MSE at ValHorizon of the model rolled out with
	// each penalty's forecaster in the loop from the validation windows
	// (ForecasterOptions.Rollers; empty without), HoldARMSE that of the
	// hold forecast on the same windows.
	ValARMSE   []float64 `json:"val_ar_mse,omitempty"`
	HoldARMSE  float64   `json:"hold_ar_mse,omitempty"`
	ValHorizon int       `json:"val_horizon,omitempty"`
	// Direct says the policy is direct (open loop).
	Direct bool `json:"direct,omitempty"`
	// Lambda is the penalty chosen, refitted on every file.
	Lambda float64 `json:"lambda"`
}

// FitForecaster fits a forecast.Learned policy of measured ports to ds:
// the pairs z = (x_k, x_s, m_s) → m_k for k = s+1 … s+Steps after every
// start s, m = measure(e). Window-stored data (every episode one window,
// its base relative to its first sample, where a prediction starts) give
// one start per window, its first sample; episodes give a start every
// ds.Stride samples. The penalty is chosen on the validation pairs
// (ForecasterOptions.Validation: whole files; by default every fourth
// file, or with fewer than four files the last quarter of the windows or
// of each episode's starts), then the policy is refitted on every pair.
func FitForecaster(ctx context.Context, ds *dataset.Dataset, nm int, measure forecast.Measure, opt ForecasterOptions) (*forecast.Learned, ForecasterReport, error) {
	opt.Defaults()
	if nm < 1 {
		return nil, ForecasterReport{}, fmt.Errorf("trainer: forecaster: a policy of %d measured ports", nm)
	}
	if opt.Features < 0 || opt.Features > forecast.MaxFeatures || opt.Steps < 1 {
		return nil, ForecasterReport{}, fmt.Errorf("trainer: forecaster: %d features (want 0 … %d) and %d steps (want ≥ 1)", opt.Features, forecast.MaxFeatures, opt.Steps)
	}
	n := ds.N
	ni := forecast.Inputs(n, nm)
	nx, ne := ds.StateDim(), ds.PortDim()
	// ny: the targets of one pair, the ports of one step, or of K steps
	K, ny := 1, nm
	longest := 0
	for _, ep := range ds.Episodes {
		longest = max(longest, ep.Len)
	}
	if !opt.Feedback {
		ni = forecast.DirectInputs(n, nm)
		K = min(opt.Steps, longest-1)
		if K < 1 {
			return nil, ForecasterReport{}, fmt.Errorf("trainer: forecaster: episodes of %d samples: a direct policy needs two or more", longest)
		}
		ny = K * nm
	}

	// The episodes' files and the validation split.
	var files []string
	fileOf := make([]int, len(ds.Episodes))
	seen := map[string]int{}
	for e, ep := range ds.Episodes {
		f := EpisodeFile(ep.Name)
		k, ok := seen[f]
		if !ok {
			k = len(files)
			seen[f] = k
			files = append(files, f)
		}
		fileOf[e] = k
	}
	// Window-stored data (every episode one window) give one start per
	// window, its first sample, where a prediction starts; episodes give
	// a start every stride samples.
	windowed := true
	for _, ep := range ds.Episodes {
		windowed = windowed && ep.Len == ds.WindowLen
	}
	stride := max(ds.Stride, 1)
	var rep ForecasterReport
	// isVal says whether the pairs from start s of episode e validate.
	var isVal func(e, s int) bool
	switch {
	case len(opt.Validation) > 0:
		for _, f := range opt.Validation {
			if _, ok := seen[f]; !ok {
				return nil, rep, fmt.Errorf("trainer: forecaster: validation file %q is not one of the dataset's %q", f, files)
			}
		}
		isVal = func(e, _ int) bool { return slices.Contains(opt.Validation, files[fileOf[e]]) }
	case len(files) >= 4:
		isVal = func(e, _ int) bool { return fileOf[e]%4 == 3 }
	case windowed:
		isVal = func(e, _ int) bool { return e >= len(ds.Episodes)*3/4 }
	default:
		isVal = func(e, s int) bool { return s >= ds.Episodes[e].Len*3/4 }
	}
	trainFile, valFile := make([]bool, len(files)), make([]bool, len(files))

	// pairs calls f with z and m_k of every pair from the starts sel keeps.
	m0, mk := make([]float64, nm), make([]float64, ny)
	z := make([]float64, ni)
	pairs := func(sel func(e, s int) bool, f func(z, y, m0 []float64)) error {
		for e := range ds.Episodes {
			if err := ctx.Err(); err != nil {
				return err
			}
			ep := &ds.Episodes[e]
			if len(ep.X) < ep.Len*nx || len(ep.E) < ep.Len*ne {
				return fmt.Errorf("trainer: forecaster: episode %q is not loaded", ep.Name)
			}
			for s := 0; s < ep.Len-1; s += stride {
				if windowed && s > 0 {
					break
				}
				if !sel(e, s) || !opt.Feedback && s+K >= ep.Len {
					continue
				}
				if isVal(e, s) {
					valFile[fileOf[e]] = true
				} else {
					trainFile[fileOf[e]] = true
				}
				measure(ep.E[s*ne:(s+1)*ne], m0)
				x0 := ep.X[s*nx : (s+1)*nx]
				if !opt.Feedback {
					copy(z[:nx], x0)
					copy(z[nx:], m0)
					for k := range K {
						measure(ep.E[(s+k+1)*ne:(s+k+2)*ne], mk[k*nm:(k+1)*nm])
					}
					f(z, mk, m0)
					continue
				}
				for k := s + 1; k <= s+opt.Steps && k < ep.Len; k++ {
					copy(z[:nx], ep.X[k*nx:(k+1)*nx])
					copy(z[nx:2*nx], x0)
					copy(z[2*nx:], m0)
					measure(ep.E[k*ne:(k+1)*ne], mk)
					f(z, mk, m0)
				}
			}
		}
		return nil
	}
	all := func(int, int) bool { return true }

	// Standardisation over every pair.
	var cnt float64
	inMean, inScale := make([]float64, ni), make([]float64, ni)
	outMean, outScale := make([]float64, nm), make([]float64, nm)
	sq, osq := make([]float64, ni), make([]float64, nm)
	if err := pairs(all, func(z, y, _ []float64) {
		cnt++
		for j, v := range z {
			inMean[j] += v
			sq[j] += v * v
		}
		for j, v := range y {
			outMean[j%nm] += v / float64(K)
			osq[j%nm] += v * v / float64(K)
		}
	}); err != nil {
		return nil, rep, err
	}
	if cnt < 2 {
		return nil, rep, fmt.Errorf("trainer: forecaster: %v pairs to fit a policy: the episodes need at least two samples", cnt)
	}
	standard := func(mean, scale, sq []float64) {
		for j := range mean {
			mean[j] /= cnt
			v := sq[j]/cnt - mean[j]*mean[j]
			scale[j] = math.Sqrt(max(v, 0))
			if !(scale[j] > 1e-12*max(1, math.Abs(mean[j]))) {
				scale[j] = 1 // a constant value: its standardised value is 0
			}
		}
	}
	standard(inMean, inScale, sq)
	standard(outMean, outScale, osq)
	l := forecast.NewLearned(n, nm, opt.Features, opt.Seed, inMean, inScale, outMean, outScale)
	if !opt.Feedback {
		l = forecast.NewDirect(n, nm, K, opt.Features, opt.Seed, inMean, inScale, outMean, outScale)
	}

	// Normal equations of the training and the validation pairs.
	p := l.Cols()
	type gram struct {
		a, b   []float64 // p×p (upper), p×ny
		yy     float64   // Σ |y|² (standardised)
		hold   float64   // Σ |m_0 − m_k|² (standardised)
		rows   int
		phi, y []float64 // chunk
		fill   int
	}
	const chunk = 512
	newGram := func() *gram {
		return &gram{a: make([]float64, p*p), b: make([]float64, p*ny), phi: make([]float64, chunk*p), y: make([]float64, chunk*ny)}
	}
	flush := func(g *gram) {
		if g.fill == 0 {
			return
		}
		ph := blas64.General{Rows: g.fill, Cols: p, Stride: p, Data: g.phi[:g.fill*p]}
		blas64.Syrk(blas.Trans, 1, ph, 1, blas64.Symmetric{N: p, Stride: p, Uplo: blas.Upper, Data: g.a})
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, ph, blas64.General{Rows: g.fill, Cols: ny, Stride: ny, Data: g.y[:g.fill*ny]},
			1, blas64.General{Rows: p, Cols: ny, Stride: ny, Data: g.b})
		g.fill = 0
	}
	tr, va := newGram(), newGram()
	zs := make([]float64, ni)
	add := func(g *gram) func(z, y, m0 []float64) {
		return func(z, y, m0 []float64) {
			copy(zs, z)
			row := g.phi[g.fill*p : (g.fill+1)*p]
			l.Featurize(zs, row)
			yr := g.y[g.fill*ny : (g.fill+1)*ny]
			for j, v := range y {
				i := j % nm
				yr[j] = (v - outMean[i]) / outScale[i]
				g.yy += yr[j] * yr[j]
				d := (m0[i] - v) / outScale[i]
				g.hold += d * d
			}
			g.rows++
			if g.fill++; g.fill == chunk {
				flush(g)
			}
		}
	}
	if err := pairs(func(e, s int) bool { return !isVal(e, s) }, add(tr)); err != nil {
		return nil, rep, err
	}
	if err := pairs(isVal, add(va)); err != nil {
		return nil, rep, err
	}
	flush(tr)
	flush(va)
	rep.Rows, rep.ValRows = tr.rows, va.rows
	for i, f := range files {
		if trainFile[i] {
			rep.Files = append(rep.Files, f)
		}
		if valFile[i] {
			rep.ValFiles = append(rep.ValFiles, f)
		}
	}
	if tr.rows == 0 || va.rows == 0 {
		return nil, rep, fmt.Errorf("trainer: forecaster: %d training and %d validation pairs: both need some (files %q, validation %q)", tr.rows, va.rows, rep.Files, rep.ValFiles)
	}
	rep.HoldMSE = va.hold / float64(va.rows*ny)

	// solve writes into w (ny × p, row major) the ridge solution of the
	// normal equations a, b with penalty lam times the mean diagonal.
	solve := func(a, b []float64, lam float64, w []float64) error {
		var diag float64
		for i := 1; i < p; i++ {
			diag += a[i*p+i]
		}
		diag /= float64(max(p-1, 1))
		s := mat.NewSymDense(p, nil)
		for i := range p {
			for j := i; j < p; j++ {
				s.SetSym(i, j, a[i*p+j])
			}
			if i > 0 {
				s.SetSym(i, i, a[i*p+i]+lam*diag)
			} else {
				s.SetSym(i, i, a[i*p+i]*(1+1e-12))
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(s) {
			return fmt.Errorf("trainer: forecaster: the ridge system with penalty %g is not positive definite", lam)
		}
		var sol mat.Dense
		if err := ch.SolveTo(&sol, mat.NewDense(p, ny, slices.Clone(b))); err != nil {
			return fmt.Errorf("trainer: forecaster: ridge solve: %w", err)
		}
		for i := range ny {
			for j := range p {
				w[i*p+j] = sol.At(j, i)
			}
		}
		return nil
	}
	// valMSE is the validation error of w from the validation Gram:
	// Σ|y − Wφ|² = yy − 2 Σ_i w_iᵀ b_i + Σ_i w_iᵀ A w_i.
	full := make([]float64, p*p) // the validation Gram, both triangles
	for j := range p {
		for k := range p {
			full[j*p+k] = va.a[min(j, k)*p+max(j, k)]
		}
	}
	aw := make([]float64, ny*p)
	valMSE := func(w []float64) float64 {
		// aw = W A (ny × p)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: ny, Cols: p, Stride: p, Data: w},
			blas64.General{Rows: p, Cols: p, Stride: p, Data: full}, 0, blas64.General{Rows: ny, Cols: p, Stride: p, Data: aw})
		s := va.yy
		for i := range ny {
			wi, ai := w[i*p:(i+1)*p], aw[i*p:(i+1)*p]
			for j := range p {
				s += wi[j] * (ai[j] - 2*va.b[j*ny+i])
			}
		}
		return s / float64(va.rows*ny)
	}
	// closedLoop is the AR MSE of the model with the policy of weights w
	// in the loop on the validation windows (one per window, from its
	// first sample; windows in episodes).
	var closedLoop func(w []float64) (float64, error)
	// (Episodes validated by position, not whole, have no validation
	// windows of their own: their penalty is chosen by the ports' error.)
	if opt.Rollers != nil && (windowed || len(opt.Validation) > 0 || len(files) >= 4) {
		rep.ValHorizon = min(opt.Steps, longest-1)
		valEp := func(e int) bool { return isVal(e, 0) }
		eval := func(newPol func() forecast.Policy) (float64, error) {
			r, err := Evaluate(ctx, opt.Rollers, ds, EvalOptions{Horizon: rep.ValHorizon, Stride: max(ds.Stride, 1), Workers: opt.Workers,
				Episodes: valEp, Forecast: &Forecast{Kind: forecast.KindLearned, NewPolicy: newPol}})
			if err != nil {
				return 0, fmt.Errorf("trainer: forecaster: closed-loop validation: %w", err)
			}
			return r.MSE, nil
		}
		var err error
		if rep.HoldARMSE, err = eval(func() forecast.Policy { return forecast.Hold{} }); err != nil {
			return nil, rep, err
		}
		closedLoop = func(w []float64) (float64, error) {
			c := l.Clone()
			c.W = slices.Clone(w)
			return eval(func() forecast.Policy { return c.Clone() })
		}
	}
	rep.Direct = !opt.Feedback
	best := -1
	w := make([]float64, ny*p)
	for i, lam := range opt.Lambdas {
		if err := ctx.Err(); err != nil {
			return nil, rep, err
		}
		if !(lam > 0) {
			return nil, rep, fmt.Errorf("trainer: forecaster: ridge penalty %v, want > 0", lam)
		}
		if err := solve(tr.a, tr.b, lam, w); err != nil {
			return nil, rep, err
		}
		mse := valMSE(w)
		rep.Lambdas = append(rep.Lambdas, lam)
		rep.ValMSE = append(rep.ValMSE, mse)
		score := rep.ValMSE
		if closedLoop != nil {
			ar, err := closedLoop(w)
			if err != nil {
				return nil, rep, err
			}
			rep.ValARMSE = append(rep.ValARMSE, ar)
			score = rep.ValARMSE
		}
		if best < 0 || score[i] < score[best] {
			best = i
		}
	}
	rep.Lambda = opt.Lambdas[best]
	// refit on every pair
	for i := range tr.a {
		tr.a[i] += va.a[i]
	}
	for i := range tr.b {
		tr.b[i] += va.b[i]
	}
	w = make([]float64, ny*p)
	if err := solve(tr.a, tr.b, rep.Lambda, w); err != nil {
		return nil, rep, err
	}
	if err := l.SetWeights(w); err != nil {
		return nil, rep, fmt.Errorf("trainer: forecaster: %w", err)
	}
	return l, rep, nil
}
