package plot

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
func curves() map[string][]float64 {
	s := map[string][]float64{}
	for _, m := range []struct {
		name string
		k    float64
	}{{"GRB", 0.02}, {"MLP", 0.01}} {
		tr, va := make([]float64, 120), make([]float64, 120)
		for i := range tr {
			tr[i] = math.Exp(-m.k*float64(i)) + 1e-3
			va[i] = 1.3*math.Exp(-m.k*float64(i)) + 2e-3
		}
		s[m.name+" train"], s[m.name+" val"] = tr, va
	}
	return s
}

func rolloutData() ([]float64, []string, [][]float64, map[string][][]float64) {
	const n = 200
	t := make([]float64, n)
	labels := []string{"q1 [rad]", "q2 [rad]", "p1 [kg·m²/s]", "p2 [kg·m²/s]"}
	truth := make([][]float64, 4)
	preds := map[string][][]float64{"GRB-SympNet": make([][]float64, 4), "MLP": make([][]float64, 4)}
	for c := range 4 {
		truth[c] = make([]float64, n)
		preds["GRB-SympNet"][c] = make([]float64, n)
		preds["MLP"][c] = make([]float64, n)
		for i := range n {
			t[i] = 0.01 * float64(i)
			w := 2 + float64(c)
			truth[c][i] = math.Sin(w * t[i])
			preds["GRB-SympNet"][c][i] = 0.98 * math.Sin(w*t[i]*1.01)
			preds["MLP"][c][i] = math.Sin(w*t[i]) + 0.1*t[i]*t[i]
		}
	}
	return t, labels, truth, preds
}

func TestTrainingCurves(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		series  map[string][]float64
		logY    bool
		wantErr bool
	}{
		{"log", curves(), true, false},
		{"linear", curves(), false, false},
		{"single-point", map[string][]float64{"x": {1}}, false, false},
		{"nan-skipped", map[string][]float64{"x": {1, math.NaN(), 0.5}}, true, false},
		{"empty-map", nil, false, true},
		{"no-positive", map[string][]float64{"x": {0, -1}}, true, true},
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

func TestRollout(t *testing.T) {
	dir := t.TempDir()
	ts, labels, truth, preds := rolloutData()
	if err := Rollout(filepath.Join(dir, "r.png"), "Double pendulum OOD rollout", ts, labels, truth, preds); err != nil {
		t.Fatal(err)
	}
	decode(t, filepath.Join(dir, "r.png"), 1200, 2*(30+2*220))
	if err := Rollout(filepath.Join(dir, "one.png"), "one", ts, labels[:1], truth[:1], nil); err != nil {
		t.Fatal(err)
	}
	decode(t, filepath.Join(dir, "one.png"), 1200, 2*(30+400))
	tests := []struct {
		name   string
		t      []float64
		labels []string
		truth  [][]float64
		preds  map[string][][]float64
	}{
		{"labels", ts, labels[:3], truth, preds},
		{"truth-length", ts[:10], labels, truth, preds},
		{"model-channels", ts, labels, truth, map[string][][]float64{"m": truth[:2]}},
		{"model-length", ts, labels, truth, map[string][][]float64{"m": {ts, ts, ts, ts[:3]}}},
		{"empty", nil, nil, nil, nil},
	}
	for _, tc := range tests {
		if err := Rollout(filepath.Join(dir, "bad.png"), "", tc.t, tc.labels, tc.truth, tc.preds); !errors.Is(err, ErrData) {
			t.Errorf("%s: err = %v, want ErrData", tc.name, err)
		}
	}
}

func TestBarCompare(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		models  []string
		mse     []float64
		params  []int
		wantErr bool
	}{
		{"log", []string{"GRB-SympNet", "MLP", "LSTM"}, []float64{2.1e-3, 4.5e-1, 8e-2}, []int{3660, 10372, 12100}, false},
		{"linear", []string{"A", "B"}, []float64{0.5, 0.7}, []int{100, 1000000}, false},
		{"zero-linear", []string{"A", "B"}, []float64{0, 0.7}, []int{1, 2}, false},
		{"lengths", []string{"A", "B"}, []float64{0.5}, []int{1, 2}, true},
		{"params", []string{"A"}, []float64{0.5}, nil, true},
		{"negative", []string{"A"}, []float64{-1}, []int{1}, true},
		{"nan", []string{"A"}, []float64{math.NaN()}, []int{1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".png")
			err := BarCompare(path, "OOD AR MSE (200 steps)", tc.models, tc.mse, tc.params)
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

func TestHorizonCurve(t *testing.T) {
	dir := t.TempDir()
	hs := []int{1, 10, 50, 100, 200}
	tests := []struct {
		name    string
		h       []int
		series  map[string][]float64
		wantErr bool
	}{
		{"ok", hs, map[string][]float64{"GRB-SympNet": {1e-6, 1e-5, 1e-4, 4e-4, 2e-3}, "MLP": {1e-6, 5e-5, 2e-3, 2e-2, 4e-1}}, false},
		{"mismatch", hs, map[string][]float64{"x": {1, 2}}, true},
		{"bad-horizon", []int{0, 1}, map[string][]float64{"x": {1, 2}}, true},
		{"empty", nil, nil, true},
		{"no-positive", hs, map[string][]float64{"x": {0, 0, 0, 0, 0}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".png")
			err := HorizonCurve(path, "Multi-horizon OOD error", tc.h, tc.series)
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
	err := TrainingCurves(filepath.Join(t.TempDir(), "missing", "x.png"), "", map[string][]float64{"a": {1, 2}}, false)
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
		{0.09, 1.3, []string{"0.1", "0.2", "0.5", "1"}},
		{0.15, 0.9, []string{"0.2", "0.5"}},
		{0.5, 3, []string{"0.5", "1", "2"}},
		{1e12, 1e13, []string{"1e12", "2e12", "5e12", "1e13"}},
		{0, 1, nil},
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
	}
}
