package trainer

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/calisym/calisym/internal/tty"
	"github.com/schollz/progressbar/v3"
)

// progress reports a run's progress: on a terminal a bar with loss and
// throughput, redrawn in place; to any other writer (a log file, a CI
// console, a pipe) one line per epoch, since a bar's carriage returns
// would make a log one endless line: the epoch, the training loss, the
// validation loss (where there is a validation set), the throughput, the
// epoch's seconds, the time elapsed since the run started and the ETA of
// its end at the pace so far.
type progress struct {
	bar   *progressbar.ProgressBar
	w     io.Writer
	lines bool // one line per epoch instead of a bar
	last  time.Time
	name  string
	// epochs is the run's length; start the epoch it resumed from (0: a
	// fresh run).
	epochs, start int
	// t0 is when this run started; now the clock (time.Now): the lines'
	// elapsed time and ETA.
	t0  time.Time
	now func() time.Time
}

// newProgress returns the bar of a run of epochs epochs, resumed after
// start of them (0: a fresh run). A resumed run's bar counts the epochs
// left, so that its time estimate comes from this run's pace alone (the
// bar would otherwise count the resumed epochs as done in no time, and
// predict too short a run); the description names the epoch of the whole
// run. The bar is drawn only when w is a terminal; other writers get one
// line per epoch.
func newProgress(w io.Writer, name string, epochs, start int) *progress {
	return newProgressMode(w, tty.IsTerminal(w), name, epochs, start)
}

// newProgressMode is newProgress with a bar (bar) or lines (!bar) on w.
func newProgressMode(w io.Writer, bar bool, name string, epochs, start int) *progress {
	p := &progress{w: w, name: name, epochs: epochs, start: start, now: time.Now}
	p.t0 = p.now()
	if w == nil {
		return p
	}
	if !bar {
		p.lines = true
		return p
	}
	p.bar = progressbar.NewOptions(epochs-start,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(p.describe(start, "")),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
	return p
}

// describe is the bar's description during epoch (0-based).
func (p *progress) describe(epoch int, stats string) string {
	s := fmt.Sprintf("%s epoch %d/%d", p.name, epoch+1, p.epochs)
	if p.start > 0 {
		s += fmt.Sprintf(" (resumed after %d)", p.start)
	}
	if stats != "" {
		s += " " + stats
	}
	return s
}

func (p *progress) tick(epoch int, loss, rate float64) {
	if p.bar == nil || time.Since(p.last) < 250*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.bar.Describe(p.describe(epoch, fmt.Sprintf("loss %.3e %.0f tr/s", loss, rate)))
}

func (p *progress) epochDone(es EpochStats) {
	if p.lines {
		// es.Epoch counts from 1.
		stats := fmt.Sprintf("loss %.3e", es.Loss)
		if !math.IsNaN(es.ValLoss) {
			stats += fmt.Sprintf(" val %.3e", es.ValLoss)
		}
		if es.Seconds > 0 {
			stats += fmt.Sprintf(" %.0f tr/s", float64(es.Transitions)/es.Seconds)
		}
		stats += fmt.Sprintf(" %.1f s", es.Seconds)
		// the time since this run started, and the epochs left at this
		// run's pace (a resumed run's earlier epochs do not count)
		elapsed := p.now().Sub(p.t0)
		eta := time.Duration(0)
		if done := es.Epoch - p.start; done > 0 {
			eta = elapsed / time.Duration(done) * time.Duration(max(p.epochs-es.Epoch, 0))
		}
		stats += fmt.Sprintf(", elapsed %s, ETA %s", elapsed.Round(time.Second), eta.Round(time.Second))
		fmt.Fprintln(p.w, p.describe(es.Epoch-1, stats))
		return
	}
	if p.bar == nil {
		return
	}
	_ = p.bar.Add(1)
}

func (p *progress) finish() {
	if p.bar == nil {
		return
	}
	_ = p.bar.Finish()
	fmt.Fprintln(p.w)
}
