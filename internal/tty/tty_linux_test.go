package tty

import (
	"testing"

	"github.com/calisym/calisym/internal/tty/ttytest"
)

// TestTerminal: a pseudo-terminal is a terminal.
func TestTerminal(t *testing.T) {
	_, pts := ttytest.Open(t)
	if !IsTerminal(pts) {
		t.Error("a pseudo-terminal is not a terminal")
	}
}
