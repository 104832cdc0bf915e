package trainer

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress renders a per-run progress bar with loss and throughput.
type progress struct {
	bar  *progressbar.ProgressBar
	w    io.Writer
	last time.Time
	name string
}

func newProgress(w io.Writer, name string, epochs, start int) *progress {
	p := &progress{w: w, name: name}
	if w == nil {
		return p
	}
	p.bar = progressbar.NewOptions(epochs,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
	_ = p.bar.Set(start)
	return p
}

func (p *progress) tick(epoch int, loss, rate float64) {
	if p.bar == nil || time.Since(p.last) < 250*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.bar.Describe(fmt.Sprintf("%s epoch %d loss %.3e %.0f tr/s", p.name, epoch+1, loss, rate))
}

func (p *progress) epochDone(es EpochStats) {
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
