// Package tty tells whether output goes to a terminal, for the command
// line's progress bars: a bar redraws itself with carriage returns, which a
// log file or a CI console records as one endless line, so a writer that
// is not a terminal gets one line per step instead.
package tty

import (
	"io"

	"golang.org/x/term"
)

// fder is an output with a file descriptor (an *os.File).
type fder interface{ Fd() uintptr }

// IsTerminal reports whether w writes to a terminal: an *os.File (or any
// writer with a file descriptor) open on a TTY. A pipe, a regular file, a
// buffer or nil is not one.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(fder)
	if !ok || f == nil {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
