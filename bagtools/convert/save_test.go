package convert

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/dataset"
)

// TestSaveFailedMidway rewrites a conversion's output directory with a
// Save that fails in a split: the report.json of the previous conversion,
// which says the directory holds a complete conversion, is gone.
func TestSaveFailedMidway(t *testing.T) {
	ds := func(n int) *dataset.Dataset {
		// a conversion's split: its meta carries the conversion report,
		// so the second Save rewrites it rather than refusing a foreign
		// dataset folder before it changes anything
		d := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 1, Dt: 0.01, WindowLen: 2, Stride: 1, Report: map[string]any{"windows": n}}}
		d.Episodes = []dataset.Episode{{Name: "a", Len: n, X: make([]float64, 2*n), E: make([]float64, n)}}
		return d
	}
	dir := t.TempDir()
	res := &Result{Splits: map[string]*dataset.Dataset{"id": ds(5)}, Report: &Report{}}
	if _, err := res.Save(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	if _, err := os.Stat(report); err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(dir, "id", "e.npy")
	if err := os.Remove(blocked); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(blocked, "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	res.Splits["id"] = ds(7)
	if _, err := res.Save(context.Background(), dir); err == nil {
		t.Fatal("Save over a directory named id/e.npy succeeded")
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("a failed Save left the previous report.json (%v)", err)
	}
}
