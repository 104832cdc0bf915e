package plot

import (
	"image/color"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
)

// figureCase is a figure at its PNG size with the points of every panel
// in data coordinates (rows, columns, points).
type figureCase struct {
	name string
	fig  *figure
	w, h vg.Length
	pts  [][][]plotter.XY
}

func figureCases(t *testing.T) []figureCase {
	t.Helper()
	var cs []figureCase
	tr, err := trainingFigure("training", curves(), true)
	if err != nil {
		t.Fatal(err)
	}
	var trPts []plotter.XY
	for _, s := range curves() {
		for i, v := range s.Values {
			trPts = append(trPts, plotter.XY{X: float64(i + 1), Y: v})
		}
	}
	cs = append(cs, figureCase{"training", tr, Width, Height, [][][]plotter.XY{{trPts}}})
	hs := []int{1, 10, 50, 100, 200}
	hz, err := horizonFigure("horizons", MixedUnits, hs, horizonSeries())
	if err != nil {
		t.Fatal(err)
	}
	var hzPts []plotter.XY
	for _, s := range horizonSeries() {
		for i, v := range s.Values {
			hzPts = append(hzPts, plotter.XY{X: float64(hs[i]), Y: v})
		}
	}
	cs = append(cs, figureCase{"horizon", hz, Width, Height, [][][]plotter.XY{{hzPts}}})
	wide := rolloutData(4)
	wide.Title = "real double pendulum (dfki C.1): OOD rollout of 200 steps (2.00 s) from double_pendulum_hw/trajectories/20230629-143601/measured.csv, t = 12.34–14.34 s"
	// Enough long model names to need a second legend row.
	for _, n := range []string{"CaLiSym-GR with a long name", "another baseline of some length", "a third variant, also long"} {
		wide.Models = append(wide.Models, Prediction{Name: n, Role: Other, Channels: wide.Truth})
	}
	for _, tc := range []struct {
		name string
		f    RolloutFigure
	}{{"rollout-1", rolloutData(1)}, {"rollout-4", rolloutData(4)}, {"rollout-9", rolloutData(9)}, {"rollout-wrapped", wide}} {
		fig, err := rolloutFigure(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		w, h := rolloutSize(fig, len(tc.f.Labels))
		pts := make([][][]plotter.XY, len(fig.panels))
		for r := range pts {
			pts[r] = make([][]plotter.XY, len(fig.panels[0]))
		}
		cols := len(fig.panels[0])
		for c := range tc.f.Labels {
			chans := [][]float64{tc.f.Truth[c]}
			for _, m := range tc.f.Models {
				chans = append(chans, m.Channels[c])
			}
			var ps []plotter.XY
			for _, ch := range chans {
				for i, y := range ch {
					ps = append(ps, plotter.XY{X: tc.f.T[i], Y: y})
				}
			}
			pts[c/cols][c%cols] = ps
		}
		cs = append(cs, figureCase{tc.name, fig, w, h, pts})
	}
	return cs
}

// canvasOf returns the canvas savePNG draws a w×h figure on.
func canvasOf(w, h vg.Length) draw.Canvas {
	return draw.Crop(draw.New(vgimg.New(w, h)), 6, -(marginX - 6), 6, -(marginY - 6))
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func grow(r vg.Rectangle, d vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: r.Min.X - d, Y: r.Min.Y - d}, Max: vg.Point{X: r.Max.X + d, Y: r.Max.Y + d}}
}

func inside(p vg.Point, r vg.Rectangle) bool {
	return p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y
}

// TestLegendCoversNoCurve lays every kind of figure out at its PNG size
// and checks, with gonum's own geometry (Plot.DataCanvas and
// Plot.Transforms, as Plot.Draw uses them), that the legend's box
// overlaps no panel (axes included) and no plotted point, that every
// point lies in its panel's data area, and that the title, caption,
// legend and panels are stacked in that order on the figure.
func TestLegendCoversNoCurve(t *testing.T) {
	for _, tc := range figureCases(t) {
		dc := canvasOf(tc.w, tc.h)
		l := tc.fig.layout(dc)
		if len(l.entries) != len(tc.fig.legend) || len(l.entries) == 0 {
			t.Fatalf("%s: %d entry boxes for %d entries", tc.name, len(l.entries), len(tc.fig.legend))
		}
		if !inside(l.legend.Min, dc.Rectangle) || !inside(l.legend.Max, dc.Rectangle) {
			t.Errorf("%s: legend %v outside the figure %v", tc.name, l.legend, dc.Rectangle)
		}
		for i, a := range l.entries {
			for _, b := range l.entries[i+1:] {
				if overlaps(a, b) {
					t.Errorf("%s: legend entries %v and %v overlap", tc.name, a, b)
				}
			}
		}
		// Title lines, then caption lines, then the legend, top to bottom,
		// each line within the figure's width.
		top := dc.Max.Y
		for _, block := range []struct {
			lines []textLine
			sty   text.Style
		}{{l.title, titleFont()}, {l.caption, captionFont()}} {
			for _, line := range block.lines {
				h, w := block.sty.FontExtents().Height, block.sty.Width(line.text)
				if line.at.Y > top || line.at.Y-h < l.legend.Max.Y {
					t.Errorf("%s: header line %q (%v to %v) out of order (above: %v, legend top %v)", tc.name, line.text, line.at.Y-h, line.at.Y, top, l.legend.Max.Y)
				}
				if line.at.X-w/2 < dc.Min.X || line.at.X+w/2 > dc.Max.X {
					t.Errorf("%s: header line %q (%v wide) runs off the figure %v", tc.name, line.text, w, dc.Rectangle)
				}
				top = line.at.Y - h
			}
		}
		if l.body.Max.Y > l.legend.Min.Y || l.body.Min.Y != dc.Min.Y {
			t.Errorf("%s: panels %v do not lie under the legend %v", tc.name, l.body.Rectangle, l.legend)
		}
		panels := tc.fig.panelCanvases(l.body)
		for r, row := range tc.fig.panels {
			for c, p := range row {
				if p == nil {
					continue
				}
				pc := panels[r][c]
				if overlaps(pc.Rectangle, l.legend) {
					t.Errorf("%s: panel (%d, %d) %v overlaps the legend %v", tc.name, r, c, pc.Rectangle, l.legend)
				}
				da := p.DataCanvas(pc)
				trX, trY := p.Transforms(&da)
				for _, xy := range tc.pts[r][c] {
					pt := vg.Point{X: trX(xy.X), Y: trY(xy.Y)}
					if inside(pt, l.legend) {
						t.Fatalf("%s: panel (%d, %d): point %v at %v lies under the legend %v", tc.name, r, c, xy, pt, l.legend)
					}
					if !inside(pt, grow(da.Rectangle, 1e-9)) {
						t.Fatalf("%s: panel (%d, %d): point %v at %v outside the data area %v", tc.name, r, c, xy, pt, da.Rectangle)
					}
				}
			}
		}
		// What is drawn is what was laid out: every legend label lands in
		// its entry's box.
		rec := &sizedRecorder{w: tc.w, h: tc.h}
		tc.fig.draw(draw.Crop(draw.New(rec), 6, -(marginX - 6), 6, -(marginY - 6)))
		found := 0
		for _, a := range rec.Actions {
			fs, ok := a.(*recorder.FillString)
			if !ok {
				continue
			}
			for i, e := range tc.fig.legend {
				if fs.String == e.name {
					found++
					r := l.entries[i]
					if !inside(fs.Point, r) {
						t.Errorf("%s: legend label %q drawn at %v, outside its box %v", tc.name, e.name, fs.Point, r)
					}
				}
			}
		}
		if found != len(tc.fig.legend) {
			t.Errorf("%s: %d legend labels drawn, want %d", tc.name, found, len(tc.fig.legend))
		}
	}
}

// sizedRecorder is a recorder with a size, for draw.New.
type sizedRecorder struct {
	recorder.Canvas
	w, h vg.Length
}

func (r *sizedRecorder) Size() (vg.Length, vg.Length) { return r.w, r.h }

// lineColour returns the colour of a legend entry's line sample.
func lineColour(t *testing.T, e legendEntry) color.Color {
	t.Helper()
	l, ok := e.thumbs[0].(*plotter.Line)
	if !ok {
		t.Fatalf("legend entry %q: sample %T, want a line", e.name, e.thumbs[0])
	}
	return l.Color
}

// TestPalette checks that a model has its role's colour in every kind of
// figure, whatever the order or number of the models beside it, and that
// the roles' colours differ.
func TestPalette(t *testing.T) {
	roles := []Role{Truth, GR, GRB, MLP, Hold, Physics}
	seen := map[color.Color]Role{}
	for _, r := range roles {
		if o, ok := seen[r.Colour()]; ok {
			t.Errorf("roles %d and %d share a colour", o, r)
		}
		seen[r.Colour()] = r
	}
	var cl colourer
	for i := range 4 {
		if c := cl.of(Other, strings.Repeat("x", i+1)); seen[c] != 0 {
			t.Errorf("extra colour %d is role %d's", i, seen[c])
		}
	}
	if cl.of(Other, "x") != cl.of(Other, "x") || cl.of(Other, "x") == cl.of(Other, "xx") {
		t.Error("Other series: one colour per model name")
	}
	for kind, want := range map[string]Role{"truth": Truth, "gr": GR, "grb": GRB, "mlp": MLP, "hold": Hold, "physics": Physics, "lstm": Other} {
		if KindRole(kind) != want {
			t.Errorf("KindRole(%q) = %d, want %d", kind, KindRole(kind), want)
		}
	}

	want := func(name string) color.Color {
		switch {
		case strings.HasPrefix(name, "CaLiSym-GRB"):
			return GRB.Colour()
		case strings.HasPrefix(name, "CaLiSym-GR"):
			return GR.Colour()
		case strings.HasPrefix(name, "MLP"):
			return MLP.Colour()
		case strings.HasPrefix(name, "state held"):
			return Hold.Colour()
		case name == "truth":
			return Truth.Colour()
		}
		return nil
	}
	check := func(fig *figure, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range fig.legend {
			if got := lineColour(t, e); got != want(e.name) {
				t.Errorf("%q drawn in %v, want %v", e.name, got, want(e.name))
			}
		}
	}
	// MLP alone, then listed first, then after two CaLiSym models.
	mlpOnly := []Series{{Name: "MLP train", Role: MLP, Values: []float64{1, 0.5}}}
	check(trainingFigure("", mlpOnly, false))
	mixed := []Series{{Name: "MLP train", Role: MLP, Values: []float64{1, 0.5}}, {Name: "CaLiSym-GR train", Role: GR, Values: []float64{1, 0.4}},
		{Name: "CaLiSym-GRB val", Role: GRB, Dashed: true, Values: []float64{1, 0.3}}}
	check(trainingFigure("", mixed, true))
	check(horizonFigure("", MixedUnits, []int{5, 10}, mixed))
	r := rolloutData(2)
	r.Models = append([]Prediction{{Name: "CaLiSym-GR", Role: GR, Channels: r.Truth}}, r.Models...)
	r.Models[0], r.Models[2] = r.Models[2], r.Models[0] // MLP first
	check(rolloutFigure(r))
	_, bs, err := barFigure("", MixedUnits, []Bar{{"MLP", MLP, 1, 1}, {"CaLiSym-GRB", GRB, 2, 1}, {"CaLiSym-GR", GR, 3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"MLP", "CaLiSym-GRB", "CaLiSym-GR"} {
		if got := bs.colours[i]; got != want(name) {
			t.Errorf("bar %q in %v, want %v", name, got, want(name))
		}
	}
}
