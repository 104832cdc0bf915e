package plot

import (
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// decode checks that path is a PNG of the given size in pixels.
func decode(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s: %d×%d px, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
}

// example data shared by the tests and the rendering checks.
func curves() []Series {
	var s []Series
	for _, m := range []struct {
		name string
		role Role
		k    float64
	}{{"CaLiSym-GRB", GRB, 0.02}, {"MLP", MLP, 0.01}} {
		tr, va := make([]float64, 120), make([]float64, 120)
		for i := range tr {
			tr[i] = math.Exp(-m.k*float64(i)) + 1e-3
			va[i] = 1.3*math.Exp(-m.k*float64(i)) + 2e-3
		}
		s = append(s, Series{Name: m.name + " train", Role: m.role, Values: tr},
			Series{Name: m.name + " val", Role: m.role, Dashed: true, Values: va})
	}
	return s
}

// rolloutData is a rollout of nc channels over 2 s: sines that fill every
// panel from edge to edge, where a legend inside the axes would cover them.
func rolloutData(nc int) RolloutFigure {
	const n = 200
	f := RolloutFigure{Title: "Double pendulum OOD rollout", T: make([]float64, n),
		Caption: []string{"The window of median CaLiSym-GRB error over the OOD windows; a long caption wraps to the width of the figure instead of running off its edge."}}
	for i := range n {
		f.T[i] = 0.01 * float64(i)
	}
	f.Models = []Prediction{{Name: "CaLiSym-GRB", Role: GRB}, {Name: "MLP", Role: MLP}, {Name: "state held", Role: Hold}}
	for c := range nc {
		f.Labels = append(f.Labels, fmt.Sprintf("x%d", c+1))
		w := 2 + float64(c)
		truth, grb, mlp, hold := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for i, t := range f.T {
			truth[i] = math.Sin(w * t)
			grb[i] = 0.98 * math.Sin(w*t*1.01)
			mlp[i] = math.Sin(w*t) + 0.1*t*t
			hold[i] = truth[0]
		}
		f.Truth = append(f.Truth, truth)
		for k, v := range [][]float64{grb, mlp, hold} {
			f.Models[k].Channels = append(f.Models[k].Channels, v)
		}
	}
	return f
}

func TestTrainingCurves(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		series  []Series
		logY    bool
		wantErr bool
	}{
		{"log", curves(), true, false},
		{"linear", curves(), false, false},
		{"single-point", []Series{{Name: "x", Values: []float64{1}}}, false, false},
		{"nan-skipped", []Series{{Name: "x", Values: []float64{1, math.NaN(), 0.5}}}, true, false},
		{"empty", nil, false, true},
		{"no-positive", []Series{{Name: "x", Values: []float64{0, -1}}}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".png")
			err := TrainingCurves(path, "Double pendulum: training", tc.series, tc.logY)
			if tc.wantErr {
				if !errors.Is(err, ErrData) {
					t.Errorf("err = %v, want ErrData", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			decode(t, path, 1200, 800)
		})
	}
}

// TestTrainingMarks: a mark is a vertical line across the loss axis at
// its epoch, listed in the legend; a mark without a label is refused.
func TestTrainingMarks(t *testing.T) {
	f, err := trainingFigure("t", curves(), true, Mark{Epoch: 5.5, Label: "multi-step from epoch 6"})
	if err != nil {
		t.Fatal(err)
	}
	last := f.legend[len(f.legend)-1]
	if last.name != "multi-step from epoch 6" {
		t.Fatalf("legend ends with %q", last.name)
	}
	l, ok := last.thumbs[0].(*plotter.Line)
	p := f.panels[0][0]
	if !ok || len(l.XYs) != 2 || l.XYs[0].X != 5.5 || l.XYs[1].X != 5.5 || l.XYs[0].Y > p.Y.Min || l.XYs[1].Y < p.Y.Max {
		t.Errorf("mark line %+v, want x = 5.5 across [%g, %g]", l, p.Y.Min, p.Y.Max)
	}
	if err := TrainingCurves(filepath.Join(t.TempDir(), "m.png"), "t", curves(), true, Mark{Epoch: 3}); !errors.Is(err, ErrData) {
		t.Errorf("a mark without a label: %v, want ErrData", err)
	}
}

// TestHorizonSpread: a series with Lo and Hi gets error bars over that
// range in the horizon curve; a value outside its range, or a range of
// another length, is refused.
func TestHorizonSpread(t *testing.T) {
	s := Series{Name: "GR", Role: GR, Values: []float64{0.01, 0.1, 1}, Lo: []float64{0.008, 0.05, 0.9}, Hi: []float64{0.02, 0.3, 1}}
	f, err := horizonFigure("t", MixedUnits, []int{5, 10, 50}, []Series{s})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.panels[0][0]; p.Y.Min > 0.008 || p.Y.Max < 1 {
		t.Errorf("error axis [%g, %g], want it to hold the bars [0.008, 1]", p.Y.Min, p.Y.Max)
	}
	bars, err := addSpread(newPlot("x", "y"), s, []float64{5, 10, 50}, GR.Colour())
	if err != nil || bars == nil || len(bars.XYs) != 3 {
		t.Fatalf("error bars %+v (%v), want three", bars, err)
	}
	for i, e := range bars.YErrors {
		if lo, hi := s.Values[i]-e.Low, s.Values[i]+e.High; math.Abs(lo-s.Lo[i]) > 1e-15 || math.Abs(hi-s.Hi[i]) > 1e-15 {
			t.Errorf("bar %d from %g to %g, want %g to %g", i, lo, hi, s.Lo[i], s.Hi[i])
		}
	}
	for name, bad := range map[string]Series{
		"outside": {Name: "x", Values: []float64{1, 1, 1}, Lo: []float64{0.5, 2, 0.5}, Hi: []float64{2, 3, 2}},
		"length":  {Name: "x", Values: []float64{1, 1, 1}, Lo: []float64{0.5}, Hi: []float64{2}},
	} {
		if _, err := horizonFigure("t", MixedUnits, []int{5, 10, 50}, []Series{bad}); !errors.Is(err, ErrData) {
			t.Errorf("%s: %v, want ErrData", name, err)
		}
	}
}

func TestRollout(t *testing.T) {
	dir := t.TempDir()
	f := rolloutData(4)
	if err := Rollout(filepath.Join(dir, "r.png"), f); err != nil {
		t.Fatal(err)
	}
	fig, _ := rolloutFigure(f)
	w, h := rolloutSize(fig, 4)
	if w != Width || h <= 2*panelHeight+marginY || h > 2*panelHeight+marginY+90 {
		t.Errorf("4 channels: %v×%v pt, want %v wide and two panels of %v plus a header", w, h, Width, panelHeight)
	}
	decode(t, filepath.Join(dir, "r.png"), int(w*DPI/72+0.5), int(h*DPI/72+0.5))
	// Every panel's value axis holds every value drawn in it, with a margin.
	for c := range f.Labels {
		p := fig.panels[c/2][c%2]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range append([][]float64{f.Truth[c]}, f.Models[0].Channels[c], f.Models[1].Channels[c], f.Models[2].Channels[c]) {
			lo, hi = min(lo, slices.Min(v)), max(hi, slices.Max(v))
		}
		if margin := 0.04 * (hi - lo); !(p.Y.Min <= lo-margin) || !(p.Y.Max >= hi+margin) || !(p.X.Min <= f.T[0]) || !(p.X.Max >= f.T[len(f.T)-1]) {
			t.Errorf("panel %s: axes [%g, %g] × [%g, %g], data [%g, %g] × [%g, %g]: want the data inside, values with a margin",
				f.Labels[c], p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, f.T[0], f.T[len(f.T)-1], lo, hi)
		}
	}
	one := RolloutFigure{Title: "one", T: f.T, Labels: f.Labels[:1], Truth: f.Truth[:1]}
	if err := Rollout(filepath.Join(dir, "one.png"), one); err != nil {
		t.Fatal(err)
	}
	bad := func(mod func(*RolloutFigure)) RolloutFigure {
		g := rolloutData(4)
		mod(&g)
		return g
	}
	tests := []struct {
		name string
		f    RolloutFigure
	}{
		{"labels", bad(func(g *RolloutFigure) { g.Labels = g.Labels[:3] })},
		{"truth-length", bad(func(g *RolloutFigure) { g.T = g.T[:10] })},
		{"model-channels", bad(func(g *RolloutFigure) { g.Models[0].Channels = g.Models[0].Channels[:2] })},
		{"model-length", bad(func(g *RolloutFigure) { g.Models[1].Channels[3] = g.Models[1].Channels[3][:3] })},
		{"empty", RolloutFigure{}},
	}
	for _, tc := range tests {
		if err := Rollout(filepath.Join(dir, "bad.png"), tc.f); !errors.Is(err, ErrData) {
			t.Errorf("%s: err = %v, want ErrData", tc.name, err)
		}
	}
}

func TestBarCompare(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		bars    []Bar
		wantErr bool
	}{
		{"log", []Bar{{"CaLiSym-GRB", GRB, 2.1e-3, 3660}, {"MLP", MLP, 4.5e-1, 10372}, {"LSTM", Other, 8e-2, 12100}}, false},
		{"linear", []Bar{{"A", GR, 0.5, 100}, {"B", MLP, 0.7, 1000000}}, false},
		{"zero-linear", []Bar{{"A", GR, 0, 1}, {"B", MLP, 0.7, 2}}, false},
		{"empty", nil, true},
		{"negative", []Bar{{"A", GR, -1, 1}}, true},
		{"nan", []Bar{{"A", GR, math.NaN(), 1}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".png")
			err := BarCompare(path, "OOD AR MSE (200 steps)", MixedUnits, tc.bars)
			if tc.wantErr {
				if !errors.Is(err, ErrData) {
					t.Errorf("err = %v, want ErrData", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			decode(t, path, 1200, 800)
		})
	}
}

func horizonSeries() []Series {
	return []Series{
		{Name: "CaLiSym-GRB ood", Role: GRB, Values: []float64{1e-6, 1e-5, 1e-4, 4e-4, 2e-3}},
		{Name: "CaLiSym-GRB id", Role: GRB, Dashed: true, Values: []float64{1e-6, 8e-6, 9e-5, 3e-4, 1e-3}},
		{Name: "MLP ood", Role: MLP, Values: []float64{1e-6, 5e-5, 2e-3, 2e-2, 4e-1}},
		{Name: "MLP id", Role: MLP, Dashed: true, Values: []float64{1e-6, 4e-5, 1e-3, 1e-2, 2e-1}},
	}
}

func TestHorizonCurve(t *testing.T) {
	dir := t.TempDir()
	hs := []int{1, 10, 50, 100, 200}
	tests := []struct {
		name    string
		h       []int
		series  []Series
		wantErr bool
	}{
		{"ok", hs, horizonSeries(), false},
		{"mismatch", hs, []Series{{Name: "x", Values: []float64{1, 2}}}, true},
		{"bad-horizon", []int{0, 1}, []Series{{Name: "x", Values: []float64{1, 2}}}, true},
		{"empty", nil, nil, true},
		{"no-positive", hs, []Series{{Name: "x", Values: []float64{0, 0, 0, 0, 0}}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".png")
			err := HorizonCurve(path, "Multi-horizon OOD error", MixedUnits, tc.h, tc.series)
			if tc.wantErr {
				if !errors.Is(err, ErrData) {
					t.Errorf("err = %v, want ErrData", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			decode(t, path, 1200, 800)
		})
	}
}

func TestUnwritablePath(t *testing.T) {
	err := TrainingCurves(filepath.Join(t.TempDir(), "missing", "x.png"), "", []Series{{Name: "a", Values: []float64{1, 2}}}, false)
	if err == nil || errors.Is(err, ErrData) {
		t.Errorf("err = %v, want a file error", err)
	}
}

func TestGroupDigits(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {316008, "316,008"}, {-1234567, "-1,234,567"}}
	for _, tc := range tests {
		if got := groupDigits(tc.n); got != tc.want {
			t.Errorf("groupDigits(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		labels []string
	}{
		{1e-6, 0.4, []string{"1e-6", "1e-5", "1e-4", "1e-3", "0.01", "0.1"}},
		{1, 2000, []string{"1", "10", "100", "1000"}},
		{0.09, 1.3, []string{"0.09", "0.1", "0.2", "0.5", "1"}},
		{0.15, 0.9, []string{"0.2", "0.5"}},
		{0.5, 3, []string{"0.5", "1", "2"}},
		{1e12, 1e13, []string{"1e12", "2e12", "5e12", "1e13"}},
		{0, 1, nil},
		// A decade whose 1× lies below the range is labelled too.
		{2e-3, 5, []string{"2e-3", "0.01", "0.1", "1"}},
		{6e-3, 0.5, []string{"6e-3", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5"}},
		{0.0065, 1.5, []string{"7e-3", "0.01", "0.1", "1"}},
		// Less than a decade without a 2× or 5× tick: every tick.
		{0.6, 0.95, []string{"0.6", "0.7", "0.8", "0.9"}},
		{3, 4.5, []string{"3", "4"}},
	}
	for _, tc := range tests {
		var got []string
		for _, tk := range logTicks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tc.labels) {
			t.Errorf("logTicks(%g, %g) labels %q, want %q", tc.lo, tc.hi, got, tc.labels)
		}
		// Every decade with a tick has a label.
		ticked, labelled := map[int]bool{}, map[int]bool{}
		for _, tk := range logTicks(tc.lo, tc.hi) {
			e := int(math.Floor(math.Log10(tk.Value) + 1e-9))
			ticked[e] = true
			labelled[e] = labelled[e] || tk.Label != ""
		}
		for e := range ticked {
			if !labelled[e] {
				t.Errorf("logTicks(%g, %g): the decade 1e%d has ticks but no label", tc.lo, tc.hi, e)
			}
		}
	}
}

// TestARMSEAxisUnit: the error axes of the bar chart and the horizon curve
// name their unit, and a plot without one is refused.
func TestARMSEAxisUnit(t *testing.T) {
	bs := []Bar{{"A", GR, 0.5, 100}, {"B", MLP, 0.7, 1000}}
	f, _, err := barFigure("", MixedUnits, bs)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.panels[0][0].Y.Label.Text; got != "OOD AR MSE (physical units, mixed)" {
		t.Errorf("bar chart's error axis %q", got)
	}
	h, err := horizonFigure("", "rad²", []int{1, 10}, []Series{{Name: "x", Values: []float64{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.panels[0][0].Y.Label.Text; got != "AR MSE (rad²)" {
		t.Errorf("horizon curve's error axis %q", got)
	}
	for _, unit := range []string{"", " "} {
		if _, _, err := barFigure("", unit, bs); !errors.Is(err, ErrData) {
			t.Errorf("bar chart with unit %q: %v, want ErrData", unit, err)
		}
		if _, err := horizonFigure("", unit, []int{1, 10}, []Series{{Name: "x", Values: []float64{1, 2}}}); !errors.Is(err, ErrData) {
			t.Errorf("horizon curve with unit %q: %v, want ErrData", unit, err)
		}
	}
}
