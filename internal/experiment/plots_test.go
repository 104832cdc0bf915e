package experiment

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/plot"
)

// history returns epochs 1…n whose rollout steps are k(epoch).
func history(n int, k func(epoch int) int) []trainer.EpochStats {
	var h []trainer.EpochStats
	for e := 1; e <= n; e++ {
		h = append(h, trainer.EpochStats{Epoch: e, Loss: 1 / float64(e), ValLoss: 2 / float64(e), K: k(e)})
	}
	return h
}

// TestTrainingTitle: the training-curve figure of a run that trains
// multi-step from some epoch does not call its losses one-step, and marks
// the epoch where its training loss changes meaning (as the Crazyflie's
// does from epoch 6); a one-step run's title says one-step.
func TestTrainingTitle(t *testing.T) {
	one := func(int) int { return 1 }
	ramp := func(e int) int {
		if e < 6 {
			return 1
		}
		return min(e-4, 8)
	}
	for _, tc := range []struct {
		name   string
		models []ModelReport
		marks  []float64
	}{
		{"one-step", []ModelReport{{Name: "CaLiSym-GR", History: history(20, one)}, {Name: "MLP", History: history(20, one)}}, nil},
		{"multi-step from epoch 6", []ModelReport{{Name: "CaLiSym-GR", History: history(20, ramp)}, {Name: "MLP", History: history(20, ramp)}}, []float64{5.5}},
		{"two switches", []ModelReport{{Name: "CaLiSym-GR", History: history(20, ramp)}, {Name: "MLP", History: history(20, func(e int) int { return 1 + e/10 })}}, []float64{5.5, 9.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, marks := trainingTitle("Crazyflie", tc.models)
			if len(marks) != len(tc.marks) {
				t.Fatalf("marks %+v, want at epochs %v", marks, tc.marks)
			}
			for i, m := range marks {
				if m.Epoch != tc.marks[i] || !strings.Contains(m.Label, "multi-step from epoch") {
					t.Errorf("mark %+v, want one at %g", m, tc.marks[i])
				}
			}
			if multi := len(tc.marks) > 0; multi == (title == "Crazyflie: one-step loss") || multi && !strings.Contains(title, "rollouts of up to 8 steps") {
				t.Errorf("title %q", title)
			}
		})
	}
}

// TestSeedSeries: a study curve is the mean over the seeds, with the
// least and the largest seed's value as its spread, which the study plot
// draws as error bars.
func TestSeedSeries(t *testing.T) {
	sm := seedModel{Name: "CaLiSym-GR", Kind: "gr", Seeds: 3, Vals: [][]float64{{1, 2, 6}, {0.5, 0.25, 0.75}}}
	s := seedSeries(sm, "default CaLiSym-GR", "default", false)
	want := struct{ mean, lo, hi []float64 }{[]float64{3, 0.5}, []float64{1, 0.25}, []float64{6, 0.75}}
	if !slices.Equal(s.Values, want.mean) || !slices.Equal(s.Lo, want.lo) || !slices.Equal(s.Hi, want.hi) {
		t.Errorf("mean %v [%v, %v], want %v [%v, %v]", s.Values, s.Lo, s.Hi, want.mean, want.lo, want.hi)
	}
	if err := plot.HorizonCurve(filepath.Join(t.TempDir(), "study.png"), "study", plot.MixedUnits, []int{5, 10}, []plot.Series{s}); err != nil {
		t.Fatal(err)
	}
}
