// Package cputime reads the CPU time the process has used, which the
// benchmarks report beside wall-clock time (on a shared machine the wall
// clock includes the wait for a core).
package cputime
