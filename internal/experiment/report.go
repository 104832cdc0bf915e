package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/plot"
)

// Plot file names written into the output directory.
const (
	PlotTraining = "training_curves.png"
	PlotRollout  = "rollout_ood.png"
	PlotBars     = "ood_error_vs_size.png"
	PlotHorizon  = "multi_horizon.png"
)

// writeReport writes the report md (report.md), then report.json, the
// file that says a run finished, into outDir; an interrupted ctx writes
// neither.
func writeReport(ctx context.Context, rep *Report, md, outDir string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("experiment: interrupted before the report was written: %w", err)
	}
	b, err := json.MarshalIndent(sanitize(rep), "", "  ")
	if err != nil {
		return fmt.Errorf("experiment: report: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "report.md"), []byte(md)); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "report.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// ReadReport reads a report.json that a run wrote. Values a diverged model
// left non-finite were written as null and are read back as NaN
// (decodeReport).
func ReadReport(path string) (*Report, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	rep, err := decodeReport(raw)
	if err != nil {
		return nil, fmt.Errorf("experiment: report %s: %w", path, err)
	}
	return rep, nil
}

// decodeReport decodes a report.json. A number written as null (a
// non-finite value, sanitize) is NaN in the report, not zero, so that a
// diverged model's errors never read as perfect ones; a report.json that
// records a failed write ({"error": …}) is an error.
func decodeReport(raw []byte) (*Report, error) {
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, err
	}
	var g any
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	if m, ok := g.(map[string]any); ok {
		if e, ok := m["error"].(string); ok && len(m) == 1 {
			return nil, fmt.Errorf("the run could not write its report (%s): remove its directory to run it again", e)
		}
	}
	nullsToNaN(reflect.ValueOf(&rep).Elem(), g)
	return &rep, nil
}

// nullsToNaN sets every float of v whose value in g, the same JSON decoded
// generically, is null to NaN, following the fields' JSON names.
func nullsToNaN(v reflect.Value, g any) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if g == nil && v.CanSet() {
			v.SetFloat(math.NaN())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			nullsToNaN(v.Elem(), g)
		}
	case reflect.Slice, reflect.Array:
		if a, ok := g.([]any); ok {
			for i := range min(v.Len(), len(a)) {
				nullsToNaN(v.Index(i), a[i])
			}
		}
	case reflect.Struct:
		m, ok := g.(map[string]any)
		if !ok {
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				nullsToNaN(v.Field(i), g)
				continue
			}
			if name == "" {
				name = f.Name
			}
			if e, ok := m[name]; ok {
				nullsToNaN(v.Field(i), e)
			}
		}
	}
}

// Configuration returns what a real-robot report says of its training
// configuration ("modest (default)" or "full (paper, Appendix D)"; "" when
// it does not say).
func (r *Report) Configuration() string { return r.Extra["configuration"] }

// sanitize returns a JSON-safe copy of the report: encoding/json rejects
// NaN and ±Inf, which a diverged model legitimately produces, so they are
// marked by toGeneric and written as null.
func sanitize(rep *Report) any {
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case float64:
			if x == nonFinite {
				return nil
			}
			return x
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
			return x
		}
		return v
	}
	return walk(toGeneric(rep))
}

// toGeneric converts the report to generic maps and slices through JSON,
// with every non-finite float replaced by the nonFinite marker first
// (finiteCopy: wherever it is, a model's error, a training epoch's
// validation error, a group's or a file's).
func toGeneric(rep *Report) any {
	cp := finiteCopy(reflect.ValueOf(rep).Elem()).Interface().(Report)
	b, err := json.Marshal(&cp)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var g any
	_ = json.Unmarshal(b, &g)
	return g
}

// finiteCopy returns a deep copy of v in which every NaN and ±Inf float
// is the nonFinite marker; v itself is not changed. Unexported struct
// fields, which JSON does not write, are copied as they are.
func finiteCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			out := reflect.New(v.Type()).Elem()
			out.SetFloat(nonFinite)
			return out
		}
		return v
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(finiteCopy(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(finiteCopy(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(finiteCopy(v.Index(i)))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(finiteCopy(v.Elem()))
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), finiteCopy(it.Value()))
		}
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(finiteCopy(v.Elem()))
		return out
	}
	return v
}

// nonFinite marks a value JSON cannot carry; sanitize turns it into null.
const nonFinite = -1.7976931348623157e308

// Markdown renders the report as a human-readable summary.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: CaLiSym against the MLP baseline\n\n", rep.System)
	fmt.Fprintf(&b, "Created %s. Training set: %v episodes, %v windows (%v unique transitions); ID %v and OOD %v episodes. ",
		rep.Created, rep.Data["train_episodes"], rep.Data["train_windows"], rep.Data["train_transitions"], rep.Data["id_episodes"], rep.Data["ood_episodes"])
	if rep.Kernels != "" {
		fmt.Fprintf(&b, "Kernels: %s. ", rep.Kernels)
	}
	if et, eo := rep.Data["mean_energy_train"], rep.Data["mean_energy_ood"]; et != nil && eo != nil {
		if a, ok := et.(float64); ok && a > 0 {
			fmt.Fprintf(&b, "Mean mechanical energy of the windows: train %.1f J, OOD %.1f J (%+.0f%%).", a, eo.(float64), 100*(eo.(float64)/a-1))
		}
	}
	b.WriteString("\n\n")
	b.WriteString(Table(rep))
	if rep.OODChangePercent != nil {
		fmt.Fprintf(&b, "\nCaLiSym's OOD autoregressive MSE is %+.1f%% relative to the MLP's (paper: −69.5%%, 2.341 vs 7.688).\n", *rep.OODChangePercent)
	}
	b.WriteString("\n## Multi-horizon autoregressive MSE (Appendix A)\n\n| model | horizon | ID MSE | OOD MSE |\n|---|---:|---:|---:|\n")
	for _, m := range rep.Models {
		for _, r := range m.MultiHorizon {
			fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", m.Name, r.Horizon, num(r.IDMSE), num(r.OODMSE))
		}
	}
	b.WriteString(GroupTable(rep))
	fmt.Fprintf(&b, "\n## Plots\n\n![training curves](%s)\n\n![OOD rollout](%s)\n\n![OOD error and size](%s)\n\n![multi-horizon](%s)\n", PlotTraining, PlotRollout, PlotBars, PlotHorizon)
	return b.String()
}

// GroupTable renders the error of every model and of the state held
// constant on each evaluation group at every horizon ("" without groups).
func GroupTable(rep *Report) string {
	if len(rep.HoldGroups) == 0 {
		return ""
	}
	var b strings.Builder
	hs := rep.HoldGroups[0].Horizons
	b.WriteString("\n## AR MSE by evaluation group (one window per 101 samples from each log's start)\n\n| group | model | windows |")
	for _, h := range hs {
		fmt.Fprintf(&b, " %d |", h)
	}
	b.WriteString(" base share at the longest |\n|---|---|---:|")
	for range hs {
		b.WriteString("---:|")
	}
	b.WriteString("---:|\n")
	row := func(name string, g GroupResult) {
		fmt.Fprintf(&b, "| %s | %s | %d |", g.Group, name, g.Windows)
		for _, h := range hs {
			fmt.Fprintf(&b, " %s |", num(g.At(h)))
		}
		if g.Base != nil {
			fmt.Fprintf(&b, " %.1f%% |\n", 100*g.Base.BaseShare)
		} else {
			b.WriteString(" |\n")
		}
	}
	for i, hg := range rep.HoldGroups {
		for _, m := range rep.Models {
			if i < len(m.Groups) {
				name := m.Name
				if len(m.Live) > 0 {
					name += ", logged ports (a planner's case)"
				}
				row(name, m.Groups[i])
			}
			for _, l := range m.Live {
				if i < len(l.Groups) {
					row(m.Name+", live ("+l.Forecast+" forecast)", l.Groups[i])
				}
			}
		}
		row("state held constant", hg)
	}
	for _, m := range rep.Models {
		if f := m.Forecaster; f != nil {
			fmt.Fprintf(&b, "\nLive rows: %s's ports over the horizon as the node forecasts them: held (hold) or by the learned forecaster in the loop (learned, %s: fitted on %d pairs of the training logs, ridge penalty %g chosen on %s), without the offset-free estimate.\n",
				m.Name, f.File, f.Fit.Rows, f.Fit.Lambda, strings.Join(f.Fit.ValFiles, ", "))
		}
	}
	return b.String()
}

// Table renders the comparison table (one row per model).
func Table(rep *Report) string {
	var b strings.Builder
	b.WriteString("| model | OOD AR MSE | ID AR MSE | horizon | params | FLOPs/step | ε_J max | train s | transitions/s |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range rep.Models {
		name := m.Name
		if m.Diverged {
			name += " (diverged)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %.1e | %.0f | %.0f |\n", name, num(m.OODARMSE), num(m.IDARMSE), m.Horizon,
			m.Params, m.FLOPsPerStep, m.SymplecticResidualMax, m.TrainSeconds, m.TransitionsPerSecond)
	}
	return b.String()
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "∞ (diverged)"
	}
	return fmt.Sprintf("%.4g", v)
}

// trainingTitle returns the title of the training-curve figure and its
// marks. Where every model trains one step throughout, the losses are
// one-step losses. Where a model trains multi-step from some epoch, its
// training loss from there on is the mean loss along K-step rollouts,
// larger than the one-step loss before it: the title says so and a mark
// at the first multi-step epoch (of each model, where they differ) shows
// where the jump comes from; the validation loss stays one-step.
func trainingTitle(system string, models []ModelReport) (string, []plot.Mark) {
	var marks []plot.Mark
	seen := map[int]bool{}
	kmax := 0
	for _, m := range models {
		for _, e := range m.History {
			if e.K > 1 {
				kmax = max(kmax, e.K)
			}
		}
		for _, e := range m.History {
			if e.K > 1 {
				if !seen[e.Epoch] {
					seen[e.Epoch] = true
					marks = append(marks, plot.Mark{Epoch: float64(e.Epoch) - 0.5, Label: fmt.Sprintf("multi-step from epoch %d", e.Epoch)})
				}
				break
			}
		}
	}
	if len(marks) == 0 {
		return system + ": one-step loss", nil
	}
	return fmt.Sprintf("%s: training loss one-step, then mean over rollouts of up to %d steps (grey line); validation one-step", system, kmax), marks
}

func writePlots(ctx context.Context, rep *Report, spec Spec, data Datasets, outDir string) error {
	var curves, mh []plot.Series
	var bars []plot.Bar
	var hs []int
	for _, m := range rep.Models {
		role := plot.KindRole(m.Kind)
		var tl, vl []float64
		for _, e := range m.History {
			tl = append(tl, e.Loss)
			vl = append(vl, e.ValLoss)
		}
		curves = append(curves, plot.Series{Name: m.Name + " train", Role: role, Model: m.Name, Values: tl},
			plot.Series{Name: m.Name + " val", Role: role, Model: m.Name, Dashed: true, Values: vl})
		bars = append(bars, plot.Bar{Name: m.Name, Role: role, MSE: m.OODARMSE, Params: m.Params})
		var ids, oods []float64
		hs = hs[:0]
		for _, r := range m.MultiHorizon {
			hs = append(hs, r.Horizon)
			ids = append(ids, r.IDMSE)
			oods = append(oods, r.OODMSE)
		}
		mh = append(mh, plot.Series{Name: m.Name + " OOD", Role: role, Model: m.Name, Values: oods},
			plot.Series{Name: m.Name + " ID", Role: role, Model: m.Name, Dashed: true, Values: ids})
	}
	title, marks := trainingTitle(rep.System, rep.Models)
	if err := plot.TrainingCurves(filepath.Join(outDir, PlotTraining), title, curves, true, marks...); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := plot.BarCompare(filepath.Join(outDir, PlotBars), fmt.Sprintf("%s: OOD AR MSE at horizon %d", rep.System, spec.Horizon), plot.MixedUnits, bars); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if len(hs) > 0 {
		if err := plot.HorizonCurve(filepath.Join(outDir, PlotHorizon), rep.System+": AR MSE by horizon", plot.MixedUnits, hs, mh); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
	}
	fig, err := rolloutFigure(ctx, rep, spec, data, outDir)
	if err != nil || fig == nil {
		return err
	}
	if err := plot.Rollout(filepath.Join(outDir, PlotRollout), *fig); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// holdName labels the state held constant, x̂ₖ = x₀, in the rollout plot.
const holdName = "state held constant"

// rolloutFigure returns one OOD rollout of every saved model, and of the
// state held constant, against the truth (nil when no OOD episode is
// longer than the horizon). The window is chosen by a stated rule, which
// the caption gives with the errors in it: of the OOD windows the report's
// AR MSE averages, the one where the first CaLiSym model (the first model
// when there is none) has its median error, i.e. a typical window of that
// model, neither its best nor its worst (the lower median for an even
// count; equal errors rank in window order).
func rolloutFigure(ctx context.Context, rep *Report, spec Spec, data Datasets, outDir string) (*plot.RolloutFigure, error) {
	H, ds := spec.Horizon, data.OOD
	ws := trainer.EvalWindows(ds, H, spec.EvalStride, spec.MaxEvalWindows)
	if len(ws) == 0 || len(rep.Models) == 0 {
		return nil, nil
	}
	rollers := make([]trainer.RollerFactory, len(rep.Models))
	sel := -1
	for i, m := range rep.Models {
		sv, err := trainer.OpenModel(filepath.Join(outDir, m.File))
		if err != nil {
			return nil, err
		}
		rollers[i] = sv.Rollers
		if sel < 0 && m.Kind != "mlp" {
			sel = i
		}
	}
	sel = max(sel, 0)
	errs, err := windowErrors(ctx, rollers[sel], ds, ws, H)
	if err != nil {
		return nil, err
	}
	pick, rank := medianWindow(errs)
	w := ws[pick]
	ep := &ds.Episodes[w.Episode]
	nx, ne := ds.StateDim(), ds.PortDim()
	// The state channels shown: those of spec.RolloutSelect in range, or
	// all without a selection.
	var show []int
	for _, c := range spec.RolloutSelect {
		if c >= 0 && c < nx {
			show = append(show, c)
		}
	}
	if len(spec.RolloutSelect) == 0 {
		for c := range nx {
			show = append(show, c)
		}
	}
	f := plot.RolloutFigure{T: make([]float64, H+1), Labels: make([]string, len(show)), Truth: make([][]float64, len(show))}
	for i, c := range show {
		if len(spec.RolloutChannels) == nx {
			f.Labels[i] = spec.RolloutChannels[c]
		} else {
			f.Labels[i] = fmt.Sprintf("x%d", c+1)
		}
	}
	x0 := ep.X[w.Start*nx : (w.Start+1)*nx]
	truth := ep.X[(w.Start+1)*nx : (w.Start+1+H)*nx]
	for k := range H + 1 {
		f.T[k] = float64(k) * ds.Dt
		for i, c := range show {
			f.Truth[i] = append(f.Truth[i], ep.X[(w.Start+k)*nx+c])
		}
	}
	// channels returns the shown channels of a rollout out (x̂₁ … x̂_H) from x0.
	channels := func(out []float64) [][]float64 {
		ch := make([][]float64, len(show))
		for i, c := range show {
			ch[i] = append(ch[i], x0[c])
			for k := range H {
				ch[i] = append(ch[i], out[k*nx+c])
			}
		}
		return ch
	}
	var inWindow []string
	out := make([]float64, H*nx)
	for i, m := range rep.Models {
		r, err := rollers[i]()
		if err != nil {
			return nil, err
		}
		if err := r.Rollout(x0, ep.E[w.Start*ne:(w.Start+H)*ne], H, out); err != nil {
			return nil, err
		}
		f.Models = append(f.Models, plot.Prediction{Name: m.Name, Role: plot.KindRole(m.Kind), Channels: channels(out)})
		inWindow = append(inWindow, fmt.Sprintf("%s %s (%s)", m.Name, num(windowMSE(out, truth)), num(m.OODARMSE)))
	}
	for k := range H {
		copy(out[k*nx:(k+1)*nx], x0)
	}
	f.Models = append(f.Models, plot.Prediction{Name: holdName, Role: plot.Hold, Channels: channels(out)})
	inWindow = append(inWindow, fmt.Sprintf("%s %s", holdName, num(windowMSE(out, truth))))

	// The window's start in its log: the episode's own start (t0, for
	// episodes cut from a longer log) plus the window's offset in it.
	t0 := ep.Tags["t0"] + float64(w.Start)*ds.Dt
	f.Title = fmt.Sprintf("%s: OOD rollout of %d steps (%.2f s) from %s, t = %.2f–%.2f s", rep.System, H, float64(H)*ds.Dt, trainer.EpisodeFile(ep.Name), t0, t0+float64(H)*ds.Dt)
	f.Caption = []string{
		fmt.Sprintf("Window chosen by rule: the median %s error among the report's %d OOD windows (rank %d of %d), a typical window, neither a good nor a bad one.",
			rep.Models[sel].Name, len(ws), rank, len(ws)),
		"AR MSE in this window (over all OOD windows): " + strings.Join(inWindow, ", ") + ".",
	}
	return &f, ctx.Err()
}

// windowErrors returns the AR MSE of a model over each window: the mean
// over steps 1…H and the state coordinates of the squared error, as
// trainer.Evaluate averages it (+Inf for a rollout that diverges).
func windowErrors(ctx context.Context, newRoller trainer.RollerFactory, ds *dataset.Dataset, ws []dataset.Window, H int) ([]float64, error) {
	r, err := newRoller()
	if err != nil {
		return nil, err
	}
	nx, ne := ds.StateDim(), ds.PortDim()
	out := make([]float64, H*nx)
	errs := make([]float64, len(ws))
	for i, w := range ws {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ep := &ds.Episodes[w.Episode]
		if err := r.Rollout(ep.X[w.Start*nx:(w.Start+1)*nx], ep.E[w.Start*ne:(w.Start+H)*ne], H, out); err != nil {
			return nil, err
		}
		errs[i] = windowMSE(out, ep.X[(w.Start+1)*nx:(w.Start+1+H)*nx])
	}
	return errs, nil
}

// windowMSE is the mean squared difference of a rollout and its truth,
// +Inf when it is not finite.
func windowMSE(out, truth []float64) float64 {
	var s float64
	for i, v := range out {
		e := v - truth[i]
		s += e * e
	}
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return math.Inf(1)
	}
	return s / float64(len(out))
}

// medianWindow returns the index of the window with the median error (the
// lower median for an even count; equal errors rank in window order) and
// its rank, 1 for the smallest error.
func medianWindow(errs []float64) (index, rank int) {
	order := make([]int, len(errs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(errs[a], errs[b]) })
	k := (len(order) - 1) / 2
	return order[k], k + 1
}
