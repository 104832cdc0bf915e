package experiment

import (
	"strings"
	"testing"

	"github.com/calisym/calisym/trainer"
)

// TestStudyMarkdownWithoutGroups: a benchmark without evaluation groups
// (the Crazyflie, the pendulum) reports each variant's ID-test and OOD
// error at the headline horizon, mean [min, max] over the seeds.
func TestStudyMarkdownWithoutGroups(t *testing.T) {
	run := func(variant string, seed uint64, id, ood float64) StudyRun {
		return StudyRun{Variant: variant, Seed: seed, Report: &Report{Models: []ModelReport{
			{Name: "CaLiSym-GR", Kind: "gr", ID: trainer.EvalResult{MSE: id}, OOD: trainer.EvalResult{MSE: ood}},
			{Name: "MLP", Kind: "mlp", ID: trainer.EvalResult{MSE: 2 * id}, OOD: trainer.EvalResult{MSE: 2 * ood}},
		}}}
	}
	runs := []StudyRun{run("onestep", 1, 1, 4), run("onestep", 2, 3, 8), run("longhorizon", 1, 0.5, 0.25)}
	md := StudyMarkdown(runs, []Variant{{Name: "onestep", About: "a"}, {Name: "longhorizon", About: "b"}})
	for _, want := range []string{
		"| variant | model | seeds | ID AR MSE | OOD AR MSE |",
		"| onestep | CaLiSym-GR | 2 | 2 [1, 3] | 6 [4, 8] |",
		"| onestep | MLP | 2 | 4 [2, 6] | 12 [8, 16] |",
		"| longhorizon | CaLiSym-GR | 1 | 0.5 | 0.25 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("study.md lacks %q:\n%s", want, md)
		}
	}
}
