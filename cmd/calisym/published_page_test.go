package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/fixtures"
)

// TestPublishedPage checks that publishedPage holds, under demoHeading
// and benchHeading, a row of the results table and of the multi-horizon
// table for every model that demo and bench regenerate (every system of
// bench, and anymal_sim's --full configuration), so that `demo --check
// docs/benchmarks.md` and `bench --check docs/benchmarks.md` compare the
// tables the pages show. The wanted values are NaN, which no cell equals:
// the check must fail on the values, never with "no row for".
func TestPublishedPage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), publishedPage))
	if err != nil {
		t.Fatal(err)
	}
	nan := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.NaN()
		}
		return v
	}
	rows := func(header string, keys ...[]string) []publishedRow {
		var out []publishedRow
		for _, k := range keys {
			out = append(out, publishedRow{header: header, keys: k, want: nan(5)}, publishedRow{header: "horizon", keys: k, want: nan(5)})
		}
		return out
	}
	var bench [][]string
	for _, s := range experiment.RealSystemNames() {
		model := "CaLiSym-GR"
		if s == experiment.RealDoublePendulumHW {
			model = "CaLiSym-GRB"
		}
		bench = append(bench, []string{benchKey(s, false), model}, []string{benchKey(s, false), "MLP"})
	}
	bench = append(bench, []string{benchKey(experiment.AnymalSim, true), "CaLiSym-GR"}, []string{benchKey(experiment.AnymalSim, true), "MLP"})
	for _, c := range []struct {
		heading string
		rows    []publishedRow
	}{
		{demoHeading, rows("model", []string{"CaLiSym-GRB"}, []string{"MLP"})},
		{benchHeading, rows("system", bench...)},
	} {
		err := checkPublished(string(doc), c.heading, c.rows)
		if err == nil {
			t.Fatalf("%s %q: NaN matched every cell", publishedPage, c.heading)
		}
		if strings.Contains(err.Error(), "no row for") || strings.Contains(err.Error(), "no heading") {
			t.Errorf("%s %q: %v", publishedPage, c.heading, err)
		}
		if n := strings.Count(err.Error(), "reads"); n < 5*len(c.rows) {
			t.Errorf("%s %q: %d cells compared, want %d", publishedPage, c.heading, n, 5*len(c.rows))
		}
	}
}
