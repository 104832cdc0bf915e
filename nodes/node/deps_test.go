package node_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the live node free of the offline pipeline: its
// imports (transitively) hold no log or table reader (parquet, CSV, MCAP,
// ROS bags), no test library and nothing of bagtools or trainer. The
// per-sample mapping comes from statemap, which conversion shares.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	forbidden := []string{
		"github.com/parquet-go/", "encoding/csv", "github.com/foxglove/mcap/",
		"testing", "github.com/stretchr/testify",
		"github.com/calisym/calisym/bagtools/", "github.com/calisym/calisym/trainer",
		"github.com/calisym/calisym/dataset", "github.com/spf13/",
	}
	var bad []string
	for _, d := range deps {
		for _, f := range forbidden {
			if d == strings.TrimSuffix(f, "/") || strings.HasPrefix(d, f) {
				bad = append(bad, d)
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("nodes/node depends on %s", strings.Join(bad, ", "))
	}
	for _, want := range []string{"github.com/calisym/calisym/statemap", "github.com/calisym/calisym/predictor"} {
		if !strings.Contains(" "+strings.Join(deps, " ")+" ", " "+want+" ") {
			t.Errorf("nodes/node does not depend on %s: the test no longer sees the node's imports", want)
		}
	}
	var external int
	for _, d := range deps {
		if first, _, _ := strings.Cut(d, "/"); strings.Contains(first, ".") {
			external++
		}
	}
	t.Logf("%d packages, %d outside the standard library", len(deps), external)
}
