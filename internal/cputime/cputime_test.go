//go:build unix

package cputime

import "testing"

// TestProcessGrows checks that busy work adds CPU time.
func TestProcessGrows(t *testing.T) {
	c0 := Process()
	x := 1.0
	for i := range 20_000_000 {
		x = x*1.0000001 + float64(i&1)
	}
	if d := Process() - c0; d <= 0 {
		t.Fatalf("CPU time grew by %v over busy work (x = %g)", d, x)
	}
}
