// Package plot renders the training and evaluation figures of calisym as
// PNG files with gonum.org/v1/plot: training curves, rollout grids, the
// paper's OOD bar chart and multi-horizon error curves.
//
// Figures are drawn at 144 dpi (2× the 72 pt/in of the layout), so a
// 600×400 pt figure is a 1200×800 px PNG. Series given as maps are drawn
// in sorted name order, so colours and legends are deterministic.
package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// colour returns the i-th colour of the tab10 palette (cycling).
func colour(i int) color.Color {
	p := [...]color.RGBA{
		{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
		{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
		{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
		{0x17, 0xbe, 0xcf, 0xff},
	}
	return p[((i%len(p))+len(p))%len(p)]
}

// newPlot returns a plot with the package's fonts, labels and a light grid.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 15
	p.Title.Padding = 6
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 12
		a.Tick.Label.Font.Size = 10
	}
	p.Legend.TextStyle.Font.Size = 10
	p.Legend.Top = true
	p.Legend.Padding = 2
	p.Legend.XOffs = vg.Points(-4)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

// logAxis switches an axis to a log scale with decade ticks.
func logAxis(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = plot.TickerFunc(logTicks)
}

// logTicks returns labelled ticks at the decades in [lo, hi] (written
// as logLabel does) and unlabelled ones at 2…9 times each
// decade. When at most two decades fall in the range, the 2× and 5×
// ticks are labelled too.
func logTicks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return nil
	}
	var ts []plot.Tick
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	decades := 0
	for e := e0; e <= e1; e++ {
		if v := math.Pow(10, float64(e)); v >= lo*(1-1e-12) && v <= hi*(1+1e-12) {
			decades++
		}
	}
	for e := e0; e <= e1; e++ {
		for k := 1; k <= 9; k++ {
			v := float64(k) * math.Pow(10, float64(e))
			if v < lo*(1-1e-12) || v > hi*(1+1e-12) {
				continue
			}
			t := plot.Tick{Value: v}
			switch {
			case k == 1, decades <= 2 && (k == 2 || k == 5):
				t.Label = logLabel(k, e)
			}
			ts = append(ts, t)
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

// savePNG renders draw onto a w×h canvas at DPI and writes it to path.
func savePNG(path string, w, h vg.Length, render func(draw.Canvas)) (err error) {
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	render(draw.Crop(draw.New(c), 6, -14, 6, -4))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("plot: closing %s: %w", path, cerr)
		}
	}()
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
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

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// addLine adds a line (with markers if marks) to p and the legend.
func addLine(p *plot.Plot, name string, pts plotter.XYs, c color.Color, width vg.Length, dashed, marks bool) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("%w: series %q: %w", ErrData, name, err)
	}
	l.Color, l.Width = c, width
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	p.Add(l)
	if !marks {
		p.Legend.Add(name, l)
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("%w: series %q: %w", ErrData, name, err)
	}
	s.Color, s.Radius, s.Shape = c, vg.Points(2.5), draw.CircleGlyph{}
	p.Add(s)
	p.Legend.Add(name, l, s)
	return nil
}

// splitRole splits a training-curve name into the group that selects its
// colour and whether its last word marks a dashed (validation-like) line.
func splitRole(name string) (group string, dashed bool) {
	i := strings.LastIndexByte(name, ' ')
	if i < 0 {
		return name, false
	}
	switch strings.ToLower(name[i+1:]) {
	case "train", "training":
		return name[:i], false
	case "val", "valid", "validation", "test", "ood", "id":
		return name[:i], true
	}
	return name, false
}

// TrainingCurves plots one line per series against the epoch (1, 2, …),
// e.g. {"GRB train", "GRB val", "MLP train", "MLP val"}. Series sharing a
// name apart from a last word train/val/validation/test/ood/id share a
// colour; validation-like ones are dashed. logY selects a log loss axis
// (non-positive values are then skipped, as are non-finite values).
func TrainingCurves(path, title string, series map[string][]float64, logY bool) error {
	if len(series) == 0 {
		return fmt.Errorf("%w: no series", ErrData)
	}
	p := newPlot(title, "epoch", "loss")
	if logY {
		logAxis(&p.Y)
	}
	groups := map[string]int{}
	for _, name := range sortedKeys(series) {
		g, _ := splitRole(name)
		if _, ok := groups[g]; !ok {
			groups[g] = len(groups)
		}
	}
	for _, name := range sortedKeys(series) {
		ys := series[name]
		xs := make([]float64, len(ys))
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		pts := points(xs, ys, false, logY)
		if len(pts) == 0 {
			return fmt.Errorf("%w: series %q has no plottable values", ErrData, name)
		}
		g, dashed := splitRole(name)
		if err := addLine(p, name, pts, colour(groups[g]), vg.Points(1.5), dashed, len(pts) == 1); err != nil {
			return err
		}
	}
	return savePNG(path, Width, Height, p.Draw)
}

// HorizonCurve plots the autoregressive error against the rollout horizon
// (in steps) on log-log axes, one line with markers per series; every
// series must have one value per horizon. Non-positive or non-finite values
// are skipped.
func HorizonCurve(path, title string, horizons []int, series map[string][]float64) error {
	if len(horizons) == 0 || len(series) == 0 {
		return fmt.Errorf("%w: %d horizons, %d series", ErrData, len(horizons), len(series))
	}
	xs := make([]float64, len(horizons))
	for i, h := range horizons {
		if h <= 0 {
			return fmt.Errorf("%w: horizon %d is not positive", ErrData, h)
		}
		xs[i] = float64(h)
	}
	p := newPlot(title, "horizon [steps]", "AR MSE")
	p.Legend.Left, p.Legend.XOffs = true, vg.Points(8)
	logAxis(&p.X)
	logAxis(&p.Y)
	for i, name := range sortedKeys(series) {
		ys := series[name]
		if len(ys) != len(xs) {
			return fmt.Errorf("%w: series %q has %d values for %d horizons", ErrData, name, len(ys), len(xs))
		}
		pts := points(xs, ys, true, true)
		if len(pts) == 0 {
			return fmt.Errorf("%w: series %q has no positive values", ErrData, name)
		}
		if err := addLine(p, name, pts, colour(i), vg.Points(1.5), false, true); err != nil {
			return err
		}
	}
	return savePNG(path, Width, Height, p.Draw)
}

// titleStyle is the style of a figure title drawn outside a plot.
func titleStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 16), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
}

func colourBlack() color.Color { return color.Black }
