package plot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// bars draws one filled bar per value from base (the axis floor on a log
// axis, 0 on a linear one) at x = 0, 1, …, labelled with its value.
type bars struct {
	vals    []float64
	colours []color.Color
	base    float64
	width   vg.Length
	label   text.Style
}

// Plot implements plot.Plotter.
func (b *bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, v := range b.vals {
		x := trX(float64(i))
		y0, y1 := trY(b.base), trY(v)
		pts := []vg.Point{{X: x - b.width/2, Y: y0}, {X: x - b.width/2, Y: y1}, {X: x + b.width/2, Y: y1}, {X: x + b.width/2, Y: y0}}
		c.FillPolygon(b.colours[i], c.ClipPolygonY(pts))
		c.StrokeLines(draw.LineStyle{Color: color.Black, Width: vg.Points(0.75)}, c.ClipLinesY(append(pts, pts[0]))...)
		c.FillText(b.label, vg.Point{X: x, Y: y1 + vg.Points(3)}, strconv.FormatFloat(v, 'g', 3, 64))
	}
}

// DataRange implements plot.DataRanger.
func (b *bars) DataRange() (xmin, xmax, ymin, ymax float64) {
	ymin, ymax = b.base, b.base
	for _, v := range b.vals {
		ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
	}
	return -0.5, float64(len(b.vals)) - 0.5, ymin, ymax
}

// GlyphBoxes implements plot.GlyphBoxer so that value labels stay inside.
func (b *bars) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	bs := make([]plot.GlyphBox, len(b.vals))
	h := b.label.Height("0") + vg.Points(3)
	for i, v := range b.vals {
		bs[i] = plot.GlyphBox{X: p.X.Norm(float64(i)), Y: p.Y.Norm(v),
			Rectangle: vg.Rectangle{Min: vg.Point{X: -b.width / 2}, Max: vg.Point{X: b.width / 2, Y: h}}}
	}
	return bs
}

// groupDigits formats n with thousands separators: 316008 → "316,008".
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Bar is one bar of BarCompare: a model, its OOD error and its size.
type Bar struct {
	Name   string
	Role   Role
	MSE    float64
	Params int
}

// BarCompare draws the paper's comparison bar chart: one bar per model in
// its role's colour with its OOD autoregressive MSE, the value printed
// above the bar and the parameter count under the model name. The MSE
// axis is logarithmic when the values span more than a factor 20 (all
// must then be positive), else linear from 0, and names unit (MixedUnits
// for an error over coordinates of different units; required).
func BarCompare(path, title, unit string, bs []Bar) error {
	f, _, err := barFigure(title, unit, bs)
	if err != nil {
		return err
	}
	return savePNG(path, Width, Height, f.draw)
}

// barFigure returns the figure and its bars.
func barFigure(title, unit string, bs []Bar) (*figure, *bars, error) {
	label, err := errorLabel("OOD AR MSE", unit)
	if err != nil {
		return nil, nil, err
	}
	n := len(bs)
	if n == 0 {
		return nil, nil, fmt.Errorf("%w: no models", ErrData)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	vals := make([]float64, n)
	cols := make([]color.Color, n)
	names := make([]string, n)
	var colours colourer
	for i, b := range bs {
		if !finite(b.MSE) || b.MSE < 0 {
			return nil, nil, fmt.Errorf("%w: model %q has MSE %v", ErrData, b.Name, b.MSE)
		}
		lo, hi = math.Min(lo, b.MSE), math.Max(hi, b.MSE)
		vals[i], cols[i] = b.MSE, colours.of(b.Role, b.Name)
		names[i] = b.Name + "\n" + groupDigits(b.Params) + " params"
	}
	p := newPlot("", label)
	logY := lo > 0 && hi/lo > 20
	b := &bars{vals: vals, colours: cols, width: vg.Points(min(60, 420/float64(n))), label: p.Y.Tick.Label}
	b.label.Font.Size = 10
	b.label.XAlign, b.label.YAlign = draw.XCenter, draw.YBottom
	if logY {
		logAxis(&p.Y)
		b.base = math.Pow(10, math.Floor(math.Log10(lo)))
		p.Y.Min = b.base
	}
	p.Add(b)
	p.NominalX(names...)
	p.X.Tick.Label.Font.Size = 10
	p.X.Padding = 0
	return &figure{title: title, panels: [][]*plot.Plot{{p}}}, b, nil
}
