//go:build !unix

package node_test

import "time"

// processCPU returns 0: process CPU time is read on unix only.
func processCPU() time.Duration { return 0 }
