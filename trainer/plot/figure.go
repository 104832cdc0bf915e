package plot

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// figure is one PNG: a header (the title and the caption paragraphs, each
// wrapped to the width), a legend of one or more rows under it, and a grid of
// panels below. The legend lies outside every panel, so it covers no
// curve whatever the data.
type figure struct {
	title   string
	caption []string
	legend  []legendEntry
	// panels are rows of columns of plots; a nil cell stays empty.
	panels [][]*plot.Plot
}

// legendEntry is a legend label with the thumbnails of its curve.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Header geometry, in points.
const (
	headerGap    = 4  // between the header's blocks and above the panels
	thumbWidth   = 22 // a legend entry's line sample
	thumbGap     = 4  // between the sample and the label
	entryGap     = 16 // between legend entries
	legendRowGap = 2  // between legend rows
	legendBelow  = 8  // between the legend and the panels
)

func headerStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

func titleFont() text.Style   { return headerStyle(15) }
func captionFont() text.Style { return headerStyle(10.5) }
func legendFont() text.Style  { return headerStyle(10) }

// figLayout is where a figure's parts go on a canvas.
type figLayout struct {
	title   []textLine // wrapped title lines
	caption []textLine // wrapped caption lines
	// legend bounds every legend entry; entries are each entry's box (sample
	// and label), in legend order.
	legend  vg.Rectangle
	entries []vg.Rectangle
	// body is what is left for the panels.
	body draw.Canvas
}

// textLine is one line of text with its top-centre anchor.
type textLine struct {
	text string
	at   vg.Point
}

// headerHeight returns the height the header takes at the given width.
func (f *figure) headerHeight(width vg.Length) vg.Length {
	dc := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: width, Y: 1e6}}}
	l := f.layout(dc)
	return dc.Max.Y - l.body.Max.Y
}

// layout places the header and the legend at the top of dc and leaves
// the rest to the panels.
func (f *figure) layout(dc draw.Canvas) figLayout {
	var l figLayout
	y := dc.Max.Y
	cx := dc.Center().X
	ts := titleFont()
	for _, line := range wrap(ts, f.title, dc.Max.X-dc.Min.X) {
		l.title = append(l.title, textLine{text: line, at: vg.Point{X: cx, Y: y}})
		y -= ts.FontExtents().Height
	}
	if len(l.title) > 0 {
		y -= headerGap
	}
	cs := captionFont()
	for _, para := range f.caption {
		for _, line := range wrap(cs, para, dc.Max.X-dc.Min.X) {
			l.caption = append(l.caption, textLine{text: line, at: vg.Point{X: cx, Y: y}})
			y -= cs.FontExtents().Height
		}
	}
	if len(l.caption) > 0 {
		y -= headerGap
	}
	if len(f.legend) > 0 {
		ls := legendFont()
		rowH := ls.FontExtents().Height
		widths := make([]vg.Length, len(f.legend))
		for i, e := range f.legend {
			widths[i] = thumbWidth + thumbGap + ls.Width(e.name)
		}
		// Fill rows greedily and centre each.
		avail := dc.Max.X - dc.Min.X
		for i := 0; i < len(widths); {
			j, w := i+1, widths[i]
			for j < len(widths) && w+entryGap+widths[j] <= avail {
				w += entryGap + widths[j]
				j++
			}
			x := cx - w/2
			for k := i; k < j; k++ {
				l.entries = append(l.entries, vg.Rectangle{Min: vg.Point{X: x, Y: y - rowH}, Max: vg.Point{X: x + widths[k], Y: y}})
				x += widths[k] + entryGap
			}
			y -= rowH + legendRowGap
			i = j
		}
		l.legend = l.entries[0]
		for _, r := range l.entries[1:] {
			l.legend.Min.X, l.legend.Min.Y = min(l.legend.Min.X, r.Min.X), min(l.legend.Min.Y, r.Min.Y)
			l.legend.Max.X, l.legend.Max.Y = max(l.legend.Max.X, r.Max.X), max(l.legend.Max.Y, r.Max.Y)
		}
		y += legendRowGap
		y -= legendBelow
	}
	l.body = dc
	l.body.Max.Y = y
	return l
}

// wrap breaks s into lines no wider than width (a longer word keeps a
// line of its own).
func wrap(sty text.Style, s string, width vg.Length) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		if cur != "" && sty.Width(cur+" "+w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur == "" {
			cur = w
		} else {
			cur += " " + w
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// panelCanvases returns the canvas of every panel within body: the whole
// body for a single panel, aligned tiles for a grid.
func (f *figure) panelCanvases(body draw.Canvas) [][]draw.Canvas {
	if len(f.panels) == 1 && len(f.panels[0]) == 1 {
		return [][]draw.Canvas{{body}}
	}
	tiles := draw.Tiles{Rows: len(f.panels), Cols: len(f.panels[0]), PadX: vg.Points(12), PadY: vg.Points(10),
		PadTop: vg.Points(2), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	return plot.Align(f.panels, tiles, body)
}

// draw renders the figure onto dc.
func (f *figure) draw(dc draw.Canvas) {
	l := f.layout(dc)
	ts := titleFont()
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
	for _, line := range l.title {
		dc.FillText(ts, line.at, line.text)
	}
	cs := captionFont()
	cs.XAlign, cs.YAlign = draw.XCenter, draw.YTop
	for _, line := range l.caption {
		dc.FillText(cs, line.at, line.text)
	}
	ls := legendFont()
	ls.XAlign, ls.YAlign = draw.XLeft, draw.YCenter
	for i, e := range f.legend {
		r := l.entries[i]
		icon := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: r.Min, Max: vg.Point{X: r.Min.X + thumbWidth, Y: r.Max.Y}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		dc.FillText(ls, vg.Point{X: r.Min.X + thumbWidth + thumbGap, Y: (r.Min.Y + r.Max.Y) / 2}, e.name)
	}
	cs2 := f.panelCanvases(l.body)
	for r, row := range f.panels {
		for c, p := range row {
			if p != nil {
				p.Draw(cs2[r][c])
			}
		}
	}
}
