// Package asmgen holds nothing itself: its sub-packages are the avo programs
// that generate the kernel package's amd64 assembly (run go generate in the
// kernel package). It is a module of its own so that avo stays out of
// calisym's dependencies.
package asmgen
