package main

import (
	"fmt"
	"math"
	"strconv"
)

// floatIn reports a flag value outside [lo, hi] (or not a number): the
// error names the flag, its range and the value. An infinite bound leaves
// that side open.
func floatIn(flag string, v, lo, hi float64) error {
	if !math.IsNaN(v) && v >= lo && v <= hi && !math.IsInf(v, 0) {
		return nil
	}
	var want string
	switch {
	case math.IsInf(hi, 1):
		want = "a number of at least " + fmtNum(lo)
	case math.IsInf(lo, -1):
		want = "a number of at most " + fmtNum(hi)
	default:
		want = "a number from " + fmtNum(lo) + " to " + fmtNum(hi)
	}
	return fmt.Errorf("--%s %v: want %s", flag, v, want)
}

// floatAbove reports a flag value that is not a finite number above lo.
func floatAbove(flag string, v, lo float64) error {
	if v > lo && !math.IsInf(v, 0) {
		return nil
	}
	return fmt.Errorf("--%s %v: want a finite number above %s", flag, v, fmtNum(lo))
}

// intIn reports an integer flag value outside [lo, hi] (hi < lo: no upper
// bound); why, if not empty, says where the bound comes from.
func intIn(flag string, v, lo, hi int, why string) error {
	if v >= lo && (hi < lo || v <= hi) {
		return nil
	}
	want := fmt.Sprintf("at least %d", lo)
	if hi >= lo {
		want = fmt.Sprintf("from %d to %d", lo, hi)
	}
	if why != "" {
		want += " (" + why + ")"
	}
	return fmt.Errorf("--%s %d: want %s", flag, v, want)
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
