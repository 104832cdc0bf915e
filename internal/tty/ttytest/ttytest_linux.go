// Package ttytest opens pseudo-terminals for tests of what a program
// writes to a terminal (Linux).
package ttytest

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal pair, closed when the test ends: pts is the
// terminal a program writes to, ptmx its controlling side, from which what
// was written can be read.
func Open(tb testing.TB) (ptmx, pts *os.File) {
	tb.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		tb.Fatalf("open /dev/ptmx: %v", err)
	}
	tb.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		tb.Fatalf("pseudo-terminal number: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatalf("open the pseudo-terminal: %v", err)
	}
	tb.Cleanup(func() { pts.Close() })
	return ptmx, pts
}
