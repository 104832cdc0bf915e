package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// Training progress of train and bench (--progress, --quiet): on a
// terminal a bar redrawn in place, to a log one line per epoch with the
// epoch, the loss, the validation loss, the time elapsed and the ETA
// (trainer's progress), or nothing.
const (
	progressAuto  = "auto"  // a bar on a terminal, lines otherwise
	progressPlain = "plain" // lines, on a terminal too
	progressNone  = "none"
)

// progressFlags are the flags that choose the training progress.
type progressFlags struct {
	quiet bool
	mode  string
}

func (p *progressFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&p.quiet, "quiet", false, "no progress bar: one plain line per epoch (epoch, loss, val loss, elapsed, ETA), as --progress plain")
	f.StringVar(&p.mode, "progress", progressAuto, "training progress: auto (a bar on a terminal, one plain line per epoch in a log), plain (one line per epoch with the epoch, loss, val loss, elapsed time and ETA, no carriage return) or none")
}

// writer returns the writer of the training progress to w: w itself
// (auto), w hidden from the terminal test so that training writes lines
// (plain, --quiet), or nil (none).
func (p *progressFlags) writer(w io.Writer) (io.Writer, error) {
	mode := p.mode
	switch {
	case mode != progressAuto && mode != progressPlain && mode != progressNone:
		return nil, fmt.Errorf("--progress %q: want auto, plain or none", mode)
	case p.quiet && mode == progressNone:
		return nil, fmt.Errorf("--quiet is --progress plain (one line per epoch): give one of them, --progress none for no progress")
	case p.quiet:
		mode = progressPlain
	}
	switch mode {
	case progressNone:
		return nil, nil
	case progressPlain:
		return plainWriter{w}, nil
	}
	return w, nil
}

// plainWriter is a writer that is not a terminal whatever it writes to
// (it has no file descriptor): the trainer's progress writes it lines.
type plainWriter struct{ io.Writer }
