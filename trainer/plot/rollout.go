package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Rollout draws a grid of panels, one per channel (labels, e.g. "q1 [rad]",
// "p1 [kg·m²/s]"), each showing truth[c] against t (seconds) as a solid
// black line and every model of preds (name → per-channel predictions) as
// a dashed coloured line. Every channel of truth and of each model must
// have len(t) values. The legend is in the first panel. For systems with
// many channels pass a subset: the figure grows with the channel count.
func Rollout(path, title string, t []float64, labels []string, truth [][]float64, preds map[string][][]float64) error {
	nc := len(labels)
	if nc == 0 || len(t) == 0 {
		return fmt.Errorf("%w: %d channels, %d times", ErrData, nc, len(t))
	}
	if len(truth) != nc {
		return fmt.Errorf("%w: truth has %d channels for %d labels", ErrData, len(truth), nc)
	}
	for c, v := range truth {
		if len(v) != len(t) {
			return fmt.Errorf("%w: truth channel %q has %d values for %d times", ErrData, labels[c], len(v), len(t))
		}
	}
	models := sortedKeys(preds)
	for _, m := range models {
		if len(preds[m]) != nc {
			return fmt.Errorf("%w: model %q has %d channels for %d labels", ErrData, m, len(preds[m]), nc)
		}
		for c, v := range preds[m] {
			if len(v) != len(t) {
				return fmt.Errorf("%w: model %q channel %q has %d values for %d times", ErrData, m, labels[c], len(v), len(t))
			}
		}
	}
	cols := min(nc, int(math.Ceil(math.Sqrt(float64(nc)))))
	rows := (nc + cols - 1) / cols
	panelH := 220 * vg.Length(1)
	if nc == 1 {
		panelH = Height
	}
	const titleH = 30
	w := max(Width, 300*vg.Length(cols))
	h := titleH + panelH*vg.Length(rows)

	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for c, label := range labels {
		p := newPlot("", "time [s]", label)
		p.Legend.Top = true
		if err := addLine(p, "truth", points(t, truth[c], false, false), colourBlack(), vg.Points(2), false, false); err != nil {
			return err
		}
		for i, m := range models {
			if err := addLine(p, m, points(t, preds[m][c], false, false), colour(i), vg.Points(1.5), true, false); err != nil {
				return err
			}
		}
		if c > 0 {
			p.Legend = plot.NewLegend()
		} else {
			p.Legend.TextStyle.Font.Size = 10
			p.Legend.Top = true
		}
		plots[c/cols][c%cols] = p
	}
	return savePNG(path, w, h, func(dc draw.Canvas) {
		dc.FillText(titleStyle(), vg.Point{X: dc.Center().X, Y: dc.Max.Y - 6}, title)
		body := draw.Crop(dc, 0, 0, 0, -titleH)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12), PadY: vg.Points(10),
			PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
		cs := plot.Align(plots, tiles, body)
		for r := range plots {
			for c, p := range plots[r] {
				if p != nil {
					p.Draw(cs[r][c])
				}
			}
		}
	})
}
