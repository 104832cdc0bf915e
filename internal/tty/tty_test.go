package tty

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestNotTerminal: a file, a pipe, a buffer and nil are not terminals.
func TestNotTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
	}{{"file", f}, {"pipe", w}, {"buffer", &bytes.Buffer{}}, {"nil", nil}} {
		if IsTerminal(c.w) {
			t.Errorf("%s is a terminal", c.name)
		}
	}
}
