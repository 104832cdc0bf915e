package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// TestPredictorTable checks the predictor table of docs/performance.md
// against what its documented command, `calisym inspect --preset NAME
// --json`, measures: parameters, FLOPs per step, fused FLOPs and ε_J max
// (the residual over seeded random lifted states is the same on every
// kernel set), as printed to two significant digits.
func TestPredictorTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (pendulum|quadrotor|quadruped) \([^)]*\) \| (\d+) \| ([\d,]+) \([^)]*\) \| ([\d,]+) \([^)]*\) \| ([\d,]+) \| ([0-9.e+-]+) \|$`)
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) != 3 {
		t.Fatalf("docs/performance.md: %d rows of the predictor table, want pendulum, quadrotor and quadruped", len(rows))
	}
	num := func(s string) string { return strings.ReplaceAll(s, ",", "") }
	for _, r := range rows {
		stdout, _, err := runCLI(t, "inspect", "--preset", r[1], "--json")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Lifted int     `json:"lifted_dim"`
			Params int     `json:"params"`
			FLOPs  int     `json:"flops_per_step"`
			Fused  int     `json:"flops_per_step_fused"`
			EpsJ   float64 `json:"symplectic_residual_max"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		measured := []string{fmt.Sprint(got.Lifted), fmt.Sprint(got.Params), fmt.Sprint(got.FLOPs), fmt.Sprint(got.Fused), fmt.Sprintf("%.1e", got.EpsJ)}
		printed := []string{r[2], num(r[3]), num(r[4]), num(r[5]), r[6]}
		for i, what := range []string{"lifted dim", "params", "FLOPs/step", "fused FLOPs", "ε_J max"} {
			if measured[i] != printed[i] {
				t.Errorf("%s: %s printed %s, measured %s", r[1], what, printed[i], measured[i])
			}
		}
	}
}
