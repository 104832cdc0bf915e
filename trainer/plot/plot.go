// Package plot renders the training and evaluation figures of calisym as
// PNG files with gonum.org/v1/plot: training curves, rollout grids, the
// paper's OOD bar chart and multi-horizon error curves.
//
// Figures are drawn at 144 dpi (2× the 72 pt/in of the layout), so a
// 600×400 pt figure is a 1200×800 px PNG. One palette colours every
// figure: a curve's Role (truth, CaLiSym GR, CaLiSym GRB, MLP, the state
// held constant) fixes its colour, so a model looks the same in every
// plot. Every figure has its title, an optional caption and its legend
// above the axes, where the legend covers no curve. Series are drawn and
// listed in the order given.
package plot

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/calisym/calisym/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// ErrData wraps every problem found in the data given to a figure.
var ErrData = errors.New("plot: bad data")

// Figure geometry.
const (
	// DPI is the resolution of every PNG.
	DPI = 144
	// Width and Height are the size of a single-panel figure in points
	// (1200×800 px at DPI).
	Width  = 600 * vg.Length(1)
	Height = 400 * vg.Length(1)
)

// newPlot returns a panel with the package's fonts, labels and a light
// grid; its title and legend are the figure's (see figure).
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 12
		a.Tick.Label.Font.Size = 10
	}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// MixedUnits is the unit of an autoregressive MSE over a whole state whose
// coordinates have different physical units (rad and kg·m²/s, m and
// kg·m/s): the mean of their squared errors, each in its own unit.
const MixedUnits = "physical units, mixed"

// errorLabel returns an error axis's label: name and its unit.
func errorLabel(name, unit string) (string, error) {
	if strings.TrimSpace(unit) == "" {
		return "", fmt.Errorf("%w: the %s axis needs a unit (MixedUnits for coordinates of different units)", ErrData, name)
	}
	return name + " (" + unit + ")", nil
}

// logAxis switches an axis to a log scale with decade ticks.
func logAxis(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = plot.TickerFunc(logTicks)
}

// logTicks returns ticks at 1…9 times each decade in [lo, hi], labelled
// (as logLabel writes them) so that every decade with a tick in the range
// has a label: its 1× tick; a decade whose 1× lies below lo, its lowest of
// the 2× and 5× ticks, else its lowest tick. When at most two decades'
// 1× ticks fall in the range, the 2× and 5× ticks are labelled too, and
// an axis that would still show fewer than two labels has every tick
// labelled.
func logTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	var ts []plot.Tick
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	in := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	decades := 0
	for e := e0; e <= e1; e++ {
		if in(math.Pow(10, float64(e))) {
			decades++
		}
	}
	labels := 0
	for e := e0; e <= e1; e++ {
		first := len(ts)
		labelled := false
		for k := 1; k <= 9; k++ {
			v := float64(k) * math.Pow(10, float64(e))
			if !in(v) {
				continue
			}
			t := plot.Tick{Value: v}
			switch {
			case k == 1, decades <= 2 && (k == 2 || k == 5), !labelled && (k == 2 || k == 5):
				t.Label = logLabel(k, e)
				labelled = true
				labels++
			}
			ts = append(ts, t)
		}
		if !labelled && len(ts) > first {
			ts[first].Label = logLabel(int(math.Round(ts[first].Value/math.Pow(10, float64(e)))), e)
			labels++
		}
	}
	if labels < 2 {
		for i := range ts {
			e := int(math.Floor(math.Log10(ts[i].Value) + 1e-9))
			ts[i].Label = logLabel(int(math.Round(ts[i].Value/math.Pow(10, float64(e)))), e)
		}
	}
	return ts
}

// logLabel formats k·10^e: plainly from 0.01 to 9000, else as 1e-6 or
// 2e12 (the bundled fonts lack a superscript minus).
func logLabel(k, e int) string {
	if e >= -2 && e <= 3 {
		return strconv.FormatFloat(float64(k)*math.Pow(10, float64(e)), 'f', max(-e, 0), 64)
	}
	return strconv.Itoa(k) + "e" + strconv.Itoa(e)
}

// marginX and marginY are the blank margins savePNG leaves around a
// figure, in points: 6 left and 14 right, 6 below and 4 above.
const (
	marginX = 20
	marginY = 10
)

// savePNG renders draw onto a w×h canvas at DPI and writes it to path.
func savePNG(path string, w, h vg.Length, render func(draw.Canvas)) (err error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	render(draw.Crop(draw.New(c), 6, -(marginX - 6), 6, -(marginY - 6)))
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Abort()
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// points returns the finite (x, y) pairs, dropping non-positive
// coordinates on log axes. It never returns nil.
func points(x, y []float64, logX, logY bool) plotter.XYs {
	pts := make(plotter.XYs, 0, len(y))
	for i := range y {
		if !finite(x[i]) || !finite(y[i]) || logX && x[i] <= 0 || logY && y[i] <= 0 {
			continue
		}
		pts = append(pts, plotter.XY{X: x[i], Y: y[i]})
	}
	return pts
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Series is one curve of a figure.
type Series struct {
	// Name is the legend label ("CaLiSym-GRB train").
	Name string
	// Role fixes the colour (see Role).
	Role Role
	// Model names the model the series belongs to, so that the Other
	// series of one model share a colour (default: Name).
	Model string
	// Dashed draws a secondary curve of a model: its validation or ID
	// error beside its training or OOD one.
	Dashed bool
	Values []float64
	// Lo and Hi, where set (HorizonCurve only), are the range of each
	// value over repeated runs (the seeds of a study), drawn as error bars
	// from Lo to Hi in the series' colour; Lo ≤ Values ≤ Hi.
	Lo, Hi []float64
}

// spread is a series' points with their Lo–Hi range, for YErrorBars.
type spread struct {
	plotter.XYs
	lo, hi []float64
}

// YError returns the distances from point i down to Lo and up to Hi.
func (s spread) YError(i int) (float64, float64) { return s.XYs[i].Y - s.lo[i], s.hi[i] - s.XYs[i].Y }

// addSpread adds s's Lo–Hi error bars at xs to p (log axes: values ≤ 0
// skipped) in colour c and returns them (nil for a series without).
func addSpread(p *plot.Plot, s Series, xs []float64, c color.Color) (*plotter.YErrorBars, error) {
	if s.Lo == nil && s.Hi == nil {
		return nil, nil
	}
	if len(s.Lo) != len(s.Values) || len(s.Hi) != len(s.Values) {
		return nil, fmt.Errorf("%w: series %q has %d values, %d lows and %d highs", ErrData, s.Name, len(s.Values), len(s.Lo), len(s.Hi))
	}
	var sp spread
	for i, v := range s.Values {
		lo, hi := s.Lo[i], s.Hi[i]
		if !finite(v) || !finite(lo) || !finite(hi) || lo <= 0 || v <= 0 {
			continue
		}
		if lo > v || hi < v {
			return nil, fmt.Errorf("%w: series %q at %g: value %g outside its range [%g, %g]", ErrData, s.Name, xs[i], v, lo, hi)
		}
		sp.XYs = append(sp.XYs, plotter.XY{X: xs[i], Y: v})
		sp.lo, sp.hi = append(sp.lo, lo), append(sp.hi, hi)
	}
	if len(sp.XYs) == 0 {
		return nil, nil
	}
	b, err := plotter.NewYErrorBars(sp)
	if err != nil {
		return nil, fmt.Errorf("%w: series %q: %w", ErrData, s.Name, err)
	}
	b.Color, b.Width, b.CapWidth = c, vg.Points(1.2), vg.Points(6)
	p.Add(b)
	return b, nil
}

// Line styles: a model's secondary curves (and its predictions against
// the truth) are dashed, the state held constant is dotted.
var (
	dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	dots   = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
)

// addLine adds a line (with markers if marks) to p and returns its legend
// entry.
func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color, width vg.Length, dash []vg.Length, marks bool) (legendEntry, error) {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return legendEntry{}, fmt.Errorf("%w: series %q: %w", ErrData, name, err)
	}
	l.Color, l.Width, l.Dashes = c, width, dash
	p.Add(l)
	if !marks {
		return legendEntry{name, []plot.Thumbnailer{l}}, nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return legendEntry{}, fmt.Errorf("%w: series %q: %w", ErrData, name, err)
	}
	s.Color, s.Radius, s.Shape = c, vg.Points(2.5), draw.CircleGlyph{}
	p.Add(s)
	return legendEntry{name, []plot.Thumbnailer{l, s}}, nil
}

// seriesDash returns the dash pattern of a series.
func seriesDash(s Series) []vg.Length {
	switch {
	case s.Role == Hold:
		return dots
	case s.Dashed:
		return dashes
	}
	return nil
}

// Mark is a vertical line at an epoch of a training-curve figure, listed
// in the legend under its label: where the loss changes meaning (the
// switch to multi-step training), so that a jump there is not read as
// divergence.
type Mark struct {
	// Epoch is where the line is drawn: between epochs E−1 and E for the
	// first epoch E of a new phase, pass E − 0.5.
	Epoch float64
	Label string
}

// TrainingCurves plots each series against the epoch (1, 2, …): a
// model's training loss solid, its validation loss (Dashed) dashed, in
// the model's colour, and each mark as a grey vertical line. logY selects
// a log loss axis (non-positive values are then skipped, as are
// non-finite values).
func TrainingCurves(path, title string, series []Series, logY bool, marks ...Mark) error {
	f, err := trainingFigure(title, series, logY, marks...)
	if err != nil {
		return err
	}
	return savePNG(path, Width, Height, f.draw)
}

func trainingFigure(title string, series []Series, logY bool, marks ...Mark) (*figure, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("%w: no series", ErrData)
	}
	p := newPlot("epoch", "loss")
	if logY {
		logAxis(&p.Y)
	}
	f := &figure{title: title, panels: [][]*plot.Plot{{p}}}
	var cols colourer
	for _, s := range series {
		xs := make([]float64, len(s.Values))
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		pts := points(xs, s.Values, false, logY)
		if len(pts) == 0 {
			return nil, fmt.Errorf("%w: series %q has no plottable values", ErrData, s.Name)
		}
		e, err := addLine(p, s.Name, pts, cols.of(s.Role, cmp.Or(s.Model, s.Name)), vg.Points(1.5), seriesDash(s), len(pts) == 1)
		if err != nil {
			return nil, err
		}
		f.legend = append(f.legend, e)
	}
	for _, m := range marks {
		if !finite(m.Epoch) || m.Label == "" {
			return nil, fmt.Errorf("%w: mark %q at epoch %g", ErrData, m.Label, m.Epoch)
		}
		lo, hi := p.Y.Min, p.Y.Max
		l, err := plotter.NewLine(plotter.XYs{{X: m.Epoch, Y: lo}, {X: m.Epoch, Y: hi}})
		if err != nil {
			return nil, fmt.Errorf("%w: mark %q: %w", ErrData, m.Label, err)
		}
		l.Color, l.Width, l.Dashes = color.Gray{Y: 110}, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		f.legend = append(f.legend, legendEntry{m.Label, []plot.Thumbnailer{l}})
	}
	return f, nil
}

// HorizonCurve plots the autoregressive error against the rollout horizon
// (in steps) on log-log axes, one line with markers per series, a model's
// ID error (Dashed) dashed beside its OOD error; every series must have
// one value per horizon, and a series with Lo and Hi gets error bars over
// that range. Non-positive or non-finite values are skipped.
// The error axis names unit (MixedUnits for an error over coordinates of
// different units; required).
func HorizonCurve(path, title, unit string, horizons []int, series []Series) error {
	f, err := horizonFigure(title, unit, horizons, series)
	if err != nil {
		return err
	}
	return savePNG(path, Width, Height, f.draw)
}

func horizonFigure(title, unit string, horizons []int, series []Series) (*figure, error) {
	label, err := errorLabel("AR MSE", unit)
	if err != nil {
		return nil, err
	}
	if len(horizons) == 0 || len(series) == 0 {
		return nil, fmt.Errorf("%w: %d horizons, %d series", ErrData, len(horizons), len(series))
	}
	xs := make([]float64, len(horizons))
	for i, h := range horizons {
		if h <= 0 {
			return nil, fmt.Errorf("%w: horizon %d is not positive", ErrData, h)
		}
		xs[i] = float64(h)
	}
	p := newPlot("horizon [steps]", label)
	logAxis(&p.X)
	logAxis(&p.Y)
	f := &figure{title: title, panels: [][]*plot.Plot{{p}}}
	var cols colourer
	for _, s := range series {
		if len(s.Values) != len(xs) {
			return nil, fmt.Errorf("%w: series %q has %d values for %d horizons", ErrData, s.Name, len(s.Values), len(xs))
		}
		pts := points(xs, s.Values, true, true)
		if len(pts) == 0 {
			return nil, fmt.Errorf("%w: series %q has no positive values", ErrData, s.Name)
		}
		c := cols.of(s.Role, cmp.Or(s.Model, s.Name))
		e, err := addLine(p, s.Name, pts, c, vg.Points(1.5), seriesDash(s), true)
		if err != nil {
			return nil, err
		}
		if _, err := addSpread(p, s, xs, c); err != nil {
			return nil, err
		}
		f.legend = append(f.legend, e)
	}
	return f, nil
}
