package main

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
)

const checkDoc = `# Tool

## Results

| system | model | OOD AR MSE | ID AR MSE | horizon | params | FLOPs/step | train s |
|---|---|---:|---:|---:|---:|---:|---:|
| ` + "`quad`" + ` (a quadrotor) | CaLiSym-GR | 0.007154 | 0.007268 | 100 | 23,688 | 76,416 | 26 |
| | MLP | **0.00465** | 0.004966 | 100 | 20,492 | 41,032 | 29 |
| ` + "`pend`" + ` | CaLiSym-GRB | 0.9149 | 0.0617 | 200 | 4,524 | 7,412 | 1 |
| ` + "`pend --full`" + ` (the paper's configuration) | CaLiSym-GRB | 0.5 | 0.05 | 200 | 4,524 | 7,412 | 9 |

| horizon | model | 5 | 10 |
|---|---|---:|---:|
| ` + "`quad`" + ` | CaLiSym-GR | 2.315e-05 | 6.463e-05 |
| | MLP | 1.261e-05 | 3.494e-05 |

` + "```sh" + `
# a shell comment, not a heading
` + "```" + `

### Log

| run | model | OOD |
|---|---|---:|
| ` + "`quad`" + ` | MLP | 99 |

## Other

| system | model | OOD AR MSE | ID AR MSE | horizon | params | FLOPs/step |
|---|---|---:|---:|---:|---:|---:|
| ` + "`pend`" + ` | MLP | 1 | 1 | 1 | 1 | 1 |
`

func TestCheckPublished(t *testing.T) {
	quadGR := []float64{0.0071539, 0.0072681, 100, 23688, 76416}
	quadMLP := []float64{0.0046496, 0.004966, 100, 20492, 41032}
	for _, c := range []struct {
		name    string
		heading string
		rows    []publishedRow
		errs    []string // substrings of the error; none: no error
	}{
		{"all reproduce", "## Results", []publishedRow{
			{header: "system", keys: []string{"quad", "CaLiSym-GR"}, want: quadGR},
			{header: "system", keys: []string{"quad", "MLP"}, want: quadMLP},
			{header: "system", keys: []string{"pend", "CaLiSym-GRB"}, want: []float64{0.91491, 0.06170, 200, 4524, 7412}},
			{header: "horizon", keys: []string{"quad", "CaLiSym-GR"}, want: []float64{2.3154e-05, 6.4628e-05}},
			{header: "horizon", keys: []string{"quad", "MLP"}, want: []float64{1.2613e-05, 3.4942e-05}},
		}, nil},
		{"full configuration beside the modest", "## Results", []publishedRow{
			{header: "system", keys: []string{benchKey("pend", false), "CaLiSym-GRB"}, want: []float64{0.91491, 0.06170, 200, 4524, 7412}},
			{header: "system", keys: []string{benchKey("pend", true), "CaLiSym-GRB"}, want: []float64{0.5, 0.05, 200, 4524, 7412}},
		}, nil},
		{"full run against the modest row", "## Results", []publishedRow{
			{header: "system", keys: []string{benchKey("pend", true), "CaLiSym-GRB"}, want: []float64{0.91491, 0.06170, 200, 4524, 7412}},
		}, []string{"pend --full/CaLiSym-GRB: column 3 reads \"0.5\""}},
		{"fifth digit differs only", "## Results", []publishedRow{
			{header: "system", keys: []string{"quad", "MLP"}, want: []float64{0.00465049, 0.0049664, 100, 20492, 41032}},
		}, nil},
		{"value differs", "## Results", []publishedRow{
			{header: "system", keys: []string{"quad", "MLP"}, want: []float64{0.004651, 0.004966, 100, 20492, 41032}},
		}, []string{"quad/MLP: column 3 reads \"0.00465\", the run gives 0.004651"}},
		{"integer differs", "## Results", []publishedRow{
			{header: "system", keys: []string{"quad", "CaLiSym-GR"}, want: []float64{0.007154, 0.007268, 100, 23689, 76416}},
		}, []string{"column 6 reads \"23688\""}},
		{"missing row", "## Results", []publishedRow{
			{header: "system", keys: []string{"pend", "MLP"}, want: []float64{1, 1, 1, 1, 1}},
		}, []string{"no row for pend/MLP"}},
		{"other table's header not matched", "## Results", []publishedRow{
			{header: "horizon", keys: []string{"pend", "CaLiSym-GRB"}, want: []float64{0.9149}},
		}, []string{"no row for pend/CaLiSym-GRB"}},
		{"section ends at the next heading", "## Other", []publishedRow{
			{header: "system", keys: []string{"quad", "MLP"}, want: quadMLP},
		}, []string{"no row for quad/MLP", `section "## Other"`}},
		{"not a number", "## Results", []publishedRow{
			{header: "run", keys: []string{"quad", "MLP"}, want: []float64{98}},
		}, []string{"column 3 reads \"99\""}},
		{"no such heading", "## Missing", nil, []string{`no heading "## Missing"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkPublished(checkDoc, c.heading, c.rows)
			if len(c.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, errPublished) {
				t.Fatalf("error %v, want errPublished", err)
			}
			for _, want := range c.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestPublishedRows(t *testing.T) {
	rep := &experiment.Report{Models: []experiment.ModelReport{{
		Name: "MLP", OODARMSE: 0.5, IDARMSE: 0.25, Horizon: 100, Params: 10, FLOPsPerStep: 20,
		MultiHorizon: []experiment.HorizonRow{{Horizon: 5, OODMSE: 0.1}, {Horizon: 10, OODMSE: 0.2}},
	}}}
	rows := publishedRows("quad", rep)
	if len(rows) != 2 || rows[0].header != "system" || rows[1].header != "horizon" ||
		strings.Join(rows[0].keys, "/") != "quad/MLP" || len(rows[0].want) != 5 || rows[1].want[1] != 0.2 {
		t.Fatalf("rows %+v", rows)
	}
	if rows := publishedRows("", rep); rows[0].header != "model" || len(rows[0].keys) != 1 {
		t.Fatalf("demo rows %+v", rows)
	}
	// Diverged models never reproduce a printed number.
	if sameToPrinted(0.5, math.Inf(1)) || sameToPrinted(0.5, math.NaN()) {
		t.Error("a diverged value matched 0.5")
	}
}
