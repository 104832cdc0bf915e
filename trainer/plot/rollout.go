package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// RolloutFigure is one rollout against the truth, a panel per channel.
type RolloutFigure struct {
	// Title names what is shown (system, window, time).
	Title string
	// Caption paragraphs, wrapped to the figure's width under the title:
	// why this window, the errors in it.
	Caption []string
	// T are the times in seconds.
	T []float64
	// Labels name the channels, e.g. "q1 [rad]", "p1 [kg·m²/s]".
	Labels []string
	// Truth holds one slice of len(T) values per channel.
	Truth [][]float64
	// Models are the predictions, listed in the legend in this order.
	Models []Prediction
}

// Prediction is one model's rollout, one slice of len(T) values per channel.
type Prediction struct {
	Name     string
	Role     Role
	Channels [][]float64
}

// panelHeight is the height of one rollout panel in points.
const panelHeight = 220

// Rollout draws f: a grid of panels, one per channel, each with the truth
// as a solid black line and every model as a dashed line of its role's
// colour (the state held constant dotted). The title, caption and legend
// are above the panels. Each panel's value axis spans every value drawn
// in it, with a margin of 5% of the span on each side. For systems with many channels pass a subset: the
// figure grows with the channel count.
func Rollout(path string, f RolloutFigure) error {
	fig, err := rolloutFigure(f)
	if err != nil {
		return err
	}
	w, h := rolloutSize(fig, len(f.Labels))
	return savePNG(path, w, h, fig.draw)
}

// rolloutSize returns the size of a rollout figure of nc channels: the
// panels, the header over them and savePNG's margins.
func rolloutSize(fig *figure, nc int) (w, h vg.Length) {
	rows, cols := len(fig.panels), len(fig.panels[0])
	w = max(Width, 300*vg.Length(cols))
	panelH := vg.Length(panelHeight)
	if nc == 1 {
		panelH = Height
	}
	return w, fig.headerHeight(w-marginX) + marginY + panelH*vg.Length(rows)
}

func rolloutFigure(f RolloutFigure) (*figure, error) {
	nc := len(f.Labels)
	if nc == 0 || len(f.T) == 0 {
		return nil, fmt.Errorf("%w: %d channels, %d times", ErrData, nc, len(f.T))
	}
	if len(f.Truth) != nc {
		return nil, fmt.Errorf("%w: truth has %d channels for %d labels", ErrData, len(f.Truth), nc)
	}
	for c, v := range f.Truth {
		if len(v) != len(f.T) {
			return nil, fmt.Errorf("%w: truth channel %q has %d values for %d times", ErrData, f.Labels[c], len(v), len(f.T))
		}
	}
	for _, m := range f.Models {
		if len(m.Channels) != nc {
			return nil, fmt.Errorf("%w: model %q has %d channels for %d labels", ErrData, m.Name, len(m.Channels), nc)
		}
		for c, v := range m.Channels {
			if len(v) != len(f.T) {
				return nil, fmt.Errorf("%w: model %q channel %q has %d values for %d times", ErrData, m.Name, f.Labels[c], len(v), len(f.T))
			}
		}
	}
	cols := min(nc, int(math.Ceil(math.Sqrt(float64(nc)))))
	rows := (nc + cols - 1) / cols
	fig := &figure{title: f.Title, caption: f.Caption, panels: make([][]*plot.Plot, rows)}
	for r := range fig.panels {
		fig.panels[r] = make([]*plot.Plot, cols)
	}
	var colours colourer
	for c, label := range f.Labels {
		p := newPlot("time [s]", label)
		e, err := addLine(p, "truth", points(f.T, f.Truth[c], false, false), Truth.Colour(), vg.Points(2), nil, false)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			fig.legend = append(fig.legend, e)
		}
		for _, m := range f.Models {
			dash := dashes
			if m.Role == Hold {
				dash = dots
			}
			e, err := addLine(p, m.Name, points(f.T, m.Channels[c], false, false), colours.of(m.Role, m.Name), vg.Points(1.5), dash, false)
			if err != nil {
				return nil, err
			}
			if c == 0 {
				fig.legend = append(fig.legend, e)
			}
		}
		padY(p, 0.05)
		fig.panels[c/cols][c%cols] = p
	}
	return fig, nil
}

// padY widens p's value range by frac of its span on both sides (by frac
// of the value where the span is 0), so that no curve runs along the
// frame, where its start or its extreme is lost.
func padY(p *plot.Plot, frac float64) {
	span := p.Y.Max - p.Y.Min
	if span == 0 {
		span = math.Abs(p.Y.Max)
	}
	if span == 0 {
		span = 1
	}
	p.Y.Min -= frac * span
	p.Y.Max += frac * span
}
