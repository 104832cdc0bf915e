package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
)

// TestRemoveCheckpoints requires a finished system's checkpoints to go,
// and their directory with them unless it holds other files; a directory
// that does not exist is no error.
func TestRemoveCheckpoints(t *testing.T) {
	models := []experiment.ModelSpec{{Name: "CaLiSym-GR"}, {Name: "MLP"}}
	for _, c := range []struct {
		name    string
		files   []string // created in the directory
		dirGone bool
	}{
		{"only checkpoints", []string{"calisym-gr.ckpt", "mlp.ckpt"}, true},
		{"one model's", []string{"mlp.ckpt"}, true},
		{"another file", []string{"calisym-gr.ckpt", "notes.txt"}, false},
		{"no directory", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "checkpoints")
			for _, f := range c.files {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := removeCheckpoints(dir, models); err != nil {
				t.Fatal(err)
			}
			for _, m := range models {
				if _, err := os.Stat(experiment.CheckpointFile(dir, m.Name)); !os.IsNotExist(err) {
					t.Errorf("%s's checkpoint left: %v", m.Name, err)
				}
			}
			if _, err := os.Stat(dir); os.IsNotExist(err) != c.dirGone {
				t.Errorf("directory gone %v, want %v", os.IsNotExist(err), c.dirGone)
			}
		})
	}
}
