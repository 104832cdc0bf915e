package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/predictor"
)

// TestParseWrench: eval's and bench's --wrench: window and gate, with
// decay and blocks optional; bad values are refused naming what is wrong,
// its range and the value.
func TestParseWrench(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want predictor.WrenchEstimate
	}{
		{"400,3", predictor.WrenchEstimate{Window: 400, Gate: 3, Decay: 1, Blocks: 8}},
		{"200, 2.5, 0.99", predictor.WrenchEstimate{Window: 200, Gate: 2.5, Decay: 0.99, Blocks: 8}},
		{"100,3,1,4", predictor.WrenchEstimate{Window: 100, Gate: 3, Decay: 1, Blocks: 4}},
	} {
		got, err := parseWrench(tc.in)
		if err != nil || *got != tc.want {
			t.Errorf("%q: %+v (%v), want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"400", "want window,gate[,decay[,blocks]]"},
		{"400,3,1,8,2", "want window,gate[,decay[,blocks]]"},
		{"many,3", "window"},
		{"400,x", "gate"},
		{"0,3", "not 0"},
		{"400,0", "not 0"},
		{"4,3", "window 4: want 8 (the blocks) … 100000 residuals"},
		{"400,-1", "gate -1: want"},
		{"400,3,1.5", "decay 1.5: want a factor in [0, 1]"},
		{"400,3,0", "decay 0: want a factor in (0, 1]"},
		{"400,3,1,1", "blocks 1: want 2 … 1000 blocks"},
	} {
		if _, err := parseWrench(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

// TestBenchWrenchFlag: bench --wrench without a study, and a bad value,
// are refused naming the flag (eval's --wrench: TestEvalHoldAndNames).
func TestBenchWrenchFlag(t *testing.T) {
	if _, _, err := runCLI(t, "bench", "--wrench", "400,3"); err == nil || !strings.Contains(err.Error(), "--wrench evaluates a study's saved models") {
		t.Errorf("bench --wrench without --variants: %v", err)
	}
	if _, _, err := runCLI(t, "bench", "--variants", "default", "--wrench", "400"); err == nil || !strings.Contains(err.Error(), "bench: --wrench") {
		t.Errorf("bench --wrench 400: %v", err)
	}
	// A robot without a floating base is refused from its params, before
	// anything is converted or trained (an empty data root).
	params := filepath.Join(fixtures.Root(), "params")
	for _, s := range []string{"double_pendulum_hw", "all"} {
		_, _, err := runCLI(t, "bench", "--system", s, "--variants", "default", "--wrench", "400,3", "--params", params, "--data", t.TempDir(), "--out", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "--wrench: double_pendulum_hw has no floating base") {
			t.Errorf("bench --system %s --wrench: %v, want a refusal before training", s, err)
		}
	}
}

// TestParseOffsets: bench's --force and --wrench take several settings
// separated by ';', forces first, each in the order given; a bad one is
// refused naming its flag.
func TestParseOffsets(t *testing.T) {
	got, err := parseOffsets("10,0.9; 32,1", "400,3;600,4,0.99")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].Force == nil || got[0].Force.Window != 10 || got[1].Force == nil || got[1].Force.Window != 32 ||
		got[2].Wrench == nil || got[2].Wrench.Window != 400 || got[3].Wrench == nil || got[3].Wrench.Gate != 4 || got[3].Wrench.Decay != 0.99 {
		t.Errorf("parseOffsets: %+v", got)
	}
	if got, err := parseOffsets("", ""); err != nil || len(got) != 0 {
		t.Errorf("no offsets: %+v, %v", got, err)
	}
	for _, tc := range []struct{ force, wrench, want string }{
		{"10,0.9;", "", "--force"},
		{"", "400,3;400", "--wrench"},
		{"10", "", "--force"},
	} {
		if _, err := parseOffsets(tc.force, tc.wrench); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: %v, want an error naming %s", tc.force, tc.wrench, err, tc.want)
		}
	}
}

// TestSplitList: list flags split at commas outside parentheses, so that
// bench plot's --only-variants takes the offset-free variants' names.
func TestSplitList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a, b,,c", []string{"a", "b", "c"}},
		{"default,default+force(10,0.9),default+wrench(400,6,1,8)", []string{"default", "default+force(10,0.9)", "default+wrench(400,6,1,8)"}},
		{"x(1,2)),y", []string{"x(1,2))", "y"}},
	} {
		if got := splitList(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
