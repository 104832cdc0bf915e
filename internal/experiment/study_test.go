package experiment

import (
	"fmt"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
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

// TestPortHistory: the added ports are the mean of every port over the m
// samples before, taken across the episodes that continue one another in
// a log, over fewer at the log's start, and the sample's own at its first.
func TestPortHistory(t *testing.T) {
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 1, NC: 1, Dt: 0.01, Ports: []string{"u", "f"}}}
	for _, a := range []int{0, 4} {
		ep := dataset.Episode{Name: fmt.Sprintf("log.mcap@%d", a), Len: 4}
		for j := range 4 {
			g := float64(a + j)
			ep.X = append(ep.X, 0, 0)
			ep.E = append(ep.E, g, 10*g)
		}
		ds.Episodes = append(ds.Episodes, ep)
	}
	d, err := PortHistory(2)(Datasets{Train: ds})
	if err != nil {
		t.Fatal(err)
	}
	h := d.Train
	if h.NU != 3 || h.NC != 1 || strings.Join(h.Ports, ",") != "u,mean2(u),mean2(f),f" {
		t.Fatalf("layout n_u %d, n_c %d, ports %v", h.NU, h.NC, h.Ports)
	}
	for _, c := range []struct {
		ep, row int
		want    []float64
	}{
		{0, 0, []float64{0, 0, 0, 0}},     // the log's first sample: its own ports
		{0, 1, []float64{1, 0, 0, 10}},    // one earlier sample
		{0, 2, []float64{2, 0.5, 5, 20}},  // the mean of samples 0 and 1
		{1, 1, []float64{5, 3.5, 35, 50}}, // samples 3 and 4, across the episodes
		{1, 0, []float64{4, 2.5, 25, 40}}, // the first sample of the second episode
	} {
		got := h.Episodes[c.ep].E[c.row*4 : (c.row+1)*4]
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("episode %d row %d: ports %v, want %v", c.ep, c.row, got, c.want)
				break
			}
		}
	}
	if len(ds.Episodes[0].E) != 8 || ds.NU != 1 {
		t.Error("PortHistory changed its input")
	}
}
