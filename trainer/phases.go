package trainer

import (
	"fmt"
	"strings"
	"time"
)

// Phases is where the epochs of a run spent their wall time, on this
// process (Config.Phases): what more workers or processes share (the
// shards) and what every process repeats whatever their number (the
// exchanges, the tree's root, the optimiser step, the per-epoch passes).
// The phases do not overlap, and Other is the rest, so that they sum to
// Total.
type Phases struct {
	// Steps counts the optimiser steps.
	Steps int
	// Shards is the forward and backward passes of this process's shards
	// (their rows gathered) and the sums of its subtrees.
	Shards time.Duration
	// Samples is receiving each batch's samples from the processes that
	// hold them (a dataset opened with its arrays on disk, several
	// processes).
	Samples time.Duration
	// Exchange is the Allgather of the subtrees' sums (several processes).
	Exchange time.Duration
	// Reduce is the tree above the subtrees' sums, up to its root.
	Reduce time.Duration
	// Optimizer is the gradient's scaling and clipping, the optimiser's
	// update (Muon's Newton–Schulz included) and SetParams.
	Optimizer time.Duration
	// Stop is the agreement, before each batch, whether to stop there.
	Stop time.Duration
	// Validation is the validation loss after each epoch.
	Validation time.Duration
	// Selection is the validation AR MSE's rollouts (SelectHorizon).
	Selection time.Duration
	// Checkpoint is writing checkpoints.
	Checkpoint time.Duration
	// Other is the rest: reading this process's samples, the shuffles,
	// the progress bar.
	Other time.Duration
	// Total is the epochs' wall time.
	Total time.Duration
}

// phase is one of Phases' durations with its name.
type phase struct {
	name string
	d    time.Duration
}

// list returns the phases, Other last (Total not included).
func (p *Phases) list() []phase {
	return []phase{{"shards", p.Shards}, {"samples", p.Samples}, {"exchange", p.Exchange}, {"reduce", p.Reduce},
		{"optimizer", p.Optimizer}, {"stop", p.Stop}, {"validation", p.Validation}, {"selection", p.Selection},
		{"checkpoint", p.Checkpoint}, {"other", p.Other}}
}

// String reports the phases per optimiser step, in milliseconds, and their
// shares of the total, then the serial fraction (SerialFraction) and the
// speedups Amdahl's law gives for it at 2 and 16 processes.
func (p *Phases) String() string {
	steps := max(p.Steps, 1)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / float64(steps) }
	var b strings.Builder
	fmt.Fprintf(&b, "%d steps, %.2f ms a step:", p.Steps, ms(p.Total))
	for _, ph := range p.list() {
		fmt.Fprintf(&b, " %s %.2f ms (%.1f%%)", ph.name, ms(ph.d), 100*ph.d.Seconds()/max(p.Total.Seconds(), 1e-12))
	}
	f := p.SerialFraction()
	amdahl := func(n float64) float64 { return 1 / (f + (1-f)/n) }
	fmt.Fprintf(&b, "; serial fraction f = %.1f%% (reduce, optimizer, selection, checkpoint and other, of the total without the exchanges): Amdahl's law gives %.2f× at 2 processes, %.2f× at 16", 100*f, amdahl(2), amdahl(16))
	return b.String()
}

// SerialFraction is the share of the run that more processes do not
// shrink, as docs/training.md computes it from the phases: the tree's
// root (Reduce), the optimiser step, the selection, the checkpoints and
// the rest (Other), which every process repeats, over the total without
// the exchanges (Samples, Exchange, Stop), which exist only with several
// processes and grow with them. The shards and the validation loss are
// shared out. 0 for a run with no time.
func (p *Phases) SerialFraction() float64 {
	base := p.Total - p.Samples - p.Exchange - p.Stop
	if base <= 0 {
		return 0
	}
	return (p.Reduce + p.Optimizer + p.Selection + p.Checkpoint + p.Other).Seconds() / base.Seconds()
}

// finish sets Other to the part of Total the phases do not cover.
func (p *Phases) finish() {
	if p == nil {
		return
	}
	var sum time.Duration
	for _, ph := range p.list()[:len(p.list())-1] {
		sum += ph.d
	}
	p.Other = p.Total - sum
}
