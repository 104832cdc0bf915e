package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"

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

func writeReport(rep *Report, outDir string) error {
	b, err := json.MarshalIndent(sanitize(rep), "", "  ")
	if err != nil {
		return fmt.Errorf("experiment: report: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "report.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(outDir, "report.md"), []byte(Markdown(rep))); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

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
// with non-finite floats replaced by the nonFinite marker first.
func toGeneric(rep *Report) any {
	cp := *rep
	cp.Models = make([]ModelReport, len(rep.Models))
	for i, m := range rep.Models {
		m.OOD.PerStep, m.ID.PerStep = fin(m.OOD.PerStep), fin(m.ID.PerStep)
		m.OODARMSE, m.IDARMSE = finOr(m.OODARMSE), finOr(m.IDARMSE)
		m.OOD.MSE, m.ID.MSE = finOr(m.OOD.MSE), finOr(m.ID.MSE)
		m.OOD.MSEQ, m.OOD.MSEP, m.ID.MSEQ, m.ID.MSEP = finOr(m.OOD.MSEQ), finOr(m.OOD.MSEP), finOr(m.ID.MSEQ), finOr(m.ID.MSEP)
		m.FinalLoss, m.FinalValLoss = finOr(m.FinalLoss), finOr(m.FinalValLoss)
		rows := make([]HorizonRow, len(m.MultiHorizon))
		for j, r := range m.MultiHorizon {
			rows[j] = HorizonRow{r.Horizon, finOr(r.IDMSE), finOr(r.OODMSE)}
		}
		m.MultiHorizon = rows
		hist := make([]trainer.EpochStats, len(m.History))
		for j, h := range m.History {
			h.Loss, h.ValLoss, h.GradNorm = finOr(h.Loss), finOr(h.ValLoss), finOr(h.GradNorm)
			hist[j] = h
		}
		m.History = hist
		cp.Models[i] = m
	}
	b, err := json.Marshal(&cp)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var g any
	_ = json.Unmarshal(b, &g)
	return g
}

// nonFinite marks a value JSON cannot carry; sanitize turns it into null.
const nonFinite = -1.7976931348623157e308

func finOr(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nonFinite
	}
	return v
}

func fin(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = finOr(x)
	}
	return out
}

// Markdown renders the report as a human-readable summary.
func Markdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: CaLiSym against the MLP baseline\n\n", rep.System)
	fmt.Fprintf(&b, "Created %s. Training set: %v episodes, %v windows (%v unique transitions); ID %v and OOD %v episodes. ",
		rep.Created, rep.Data["train_episodes"], rep.Data["train_windows"], rep.Data["train_transitions"], rep.Data["id_episodes"], rep.Data["ood_episodes"])
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
	fmt.Fprintf(&b, "\n## Plots\n\n![training curves](%s)\n\n![OOD rollout](%s)\n\n![OOD error and size](%s)\n\n![multi-horizon](%s)\n", PlotTraining, PlotRollout, PlotBars, PlotHorizon)
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

func writePlots(ctx context.Context, rep *Report, spec Spec, data Datasets, outDir string) error {
	curves := map[string][]float64{}
	for _, m := range rep.Models {
		var tl, vl []float64
		for _, e := range m.History {
			tl = append(tl, e.Loss)
			vl = append(vl, e.ValLoss)
		}
		curves[m.Name+" train"] = tl
		curves[m.Name+" val"] = vl
	}
	if err := plot.TrainingCurves(filepath.Join(outDir, PlotTraining), rep.System+": one-step loss", curves, true); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	var names []string
	var ood []float64
	var params []int
	mh := map[string][]float64{}
	var hs []int
	for _, m := range rep.Models {
		names = append(names, m.Name)
		ood = append(ood, m.OODARMSE)
		params = append(params, m.Params)
		var ids, oods []float64
		hs = hs[:0]
		for _, r := range m.MultiHorizon {
			hs = append(hs, r.Horizon)
			ids = append(ids, r.IDMSE)
			oods = append(oods, r.OODMSE)
		}
		mh[m.Name+" id"], mh[m.Name+" ood"] = ids, oods
	}
	if err := plot.BarCompare(filepath.Join(outDir, PlotBars), fmt.Sprintf("%s: OOD AR MSE at horizon %d", rep.System, spec.Horizon), names, ood, params); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if len(hs) > 0 {
		if err := plot.HorizonCurve(filepath.Join(outDir, PlotHorizon), rep.System+": AR MSE by horizon", hs, mh); err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
	}
	return rolloutPlot(ctx, rep, spec, data, outDir)
}

// rolloutPlot draws one OOD rollout (the middle evaluation window) of every
// saved model against the truth.
func rolloutPlot(ctx context.Context, rep *Report, spec Spec, data Datasets, outDir string) error {
	ws := trainer.EvalWindows(data.OOD, spec.Horizon, spec.EvalStride, 0)
	if len(ws) == 0 {
		return nil
	}
	w := ws[len(ws)/2]
	ep := &data.OOD.Episodes[w.Episode]
	nx, ne, H := data.OOD.StateDim(), data.OOD.PortDim(), spec.Horizon
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
	labels := make([]string, len(show))
	for i, c := range show {
		if len(spec.RolloutChannels) == nx {
			labels[i] = spec.RolloutChannels[c]
		} else {
			labels[i] = fmt.Sprintf("x%d", c+1)
		}
	}
	t := make([]float64, H+1)
	truth := make([][]float64, len(show))
	for k := range H + 1 {
		t[k] = float64(k) * data.OOD.Dt
		for i, c := range show {
			truth[i] = append(truth[i], ep.X[(w.Start+k)*nx+c])
		}
	}
	preds := map[string][][]float64{}
	for _, m := range rep.Models {
		sv, err := trainer.OpenModel(filepath.Join(outDir, m.File))
		if err != nil {
			return err
		}
		r, err := sv.Rollers()
		if err != nil {
			return err
		}
		out := make([]float64, H*nx)
		x0 := ep.X[w.Start*nx : (w.Start+1)*nx]
		if err := r.Rollout(x0, ep.E[w.Start*ne:(w.Start+H)*ne], H, out); err != nil {
			return err
		}
		ch := make([][]float64, len(show))
		for i, c := range show {
			ch[i] = append(ch[i], x0[c])
			for k := range H {
				ch[i] = append(ch[i], out[k*nx+c])
			}
		}
		preds[m.Name] = ch
	}
	// The window's start in its log: the episode's own start (t0, for
	// episodes cut from a longer log) plus the window's offset in it.
	title := fmt.Sprintf("%s: OOD rollout, %d steps from %s, t = %.2f s", rep.System, H, logName(ep.Name), ep.Tags["t0"]+float64(w.Start)*data.OOD.Dt)
	if err := plot.Rollout(filepath.Join(outDir, PlotRollout), title, t, labels, truth, preds); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return ctx.Err()
}

// logName strips the "@sample" suffix that names a window's episode.
func logName(episode string) string {
	if i := strings.LastIndex(episode, "@"); i >= 0 {
		return episode[:i]
	}
	return episode
}
