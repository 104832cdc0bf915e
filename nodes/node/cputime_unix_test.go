//go:build unix

package node_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used so far (user and
// system), or 0 where it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
