package experiment

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/dataset"
)

// TestRunFailedLeavesNoStaleReport runs the pendulum smoke spec into a
// directory holding an earlier run's report and stops it at the first
// training: the failed run leaves no report that would describe models it
// did not write.
func TestRunFailedLeavesNoStaleReport(t *testing.T) {
	_, spec, err := PendulumPreset("smoke")
	if err != nil {
		t.Fatal(err)
	}
	d := &dataset.Dataset{Meta: dataset.Meta{N: 2, NU: 2, Dt: 0.01, WindowLen: 10, Stride: 5}}
	ep := dataset.Episode{Name: "a", Len: 40, X: make([]float64, 160), E: make([]float64, 80)}
	for k := range ep.X {
		ep.X[k] = math.Sin(float64(k))
	}
	d.Episodes = []dataset.Episode{ep}
	dir := t.TempDir()
	for _, f := range []string{"report.json", "report.md"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("an earlier run"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, spec, Datasets{Train: d, ID: d, OOD: d}, dir, nil); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	for _, f := range []string{"report.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("the failed run left the earlier %s (%v)", f, err)
		}
	}
}
