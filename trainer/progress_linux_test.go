package trainer

import (
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/tty/ttytest"
)

// TestProgressBarOnTerminal: on a terminal training draws its bar, redrawn
// in place with carriage returns, and prints no per-epoch lines.
func TestProgressBarOnTerminal(t *testing.T) {
	ptmx, pts := ttytest.Open(t)
	p := newProgress(pts, "GR", 2, 0)
	if p.bar == nil || p.lines {
		t.Fatal("no bar on a terminal")
	}
	read := make(chan string)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			b.Write(buf[:n])
			if err != nil { // EIO once the terminal side is closed
				break
			}
		}
		read <- b.String()
	}()
	for e := range 2 {
		p.epochDone(EpochStats{Epoch: e + 1, Loss: 0.5, Seconds: 1, Transitions: 10})
	}
	p.finish()
	pts.Close()
	got := <-read
	if !strings.Contains(got, "\r") || !strings.Contains(got, "GR epoch 1/2") {
		t.Errorf("the terminal got %q: want a bar redrawn with carriage returns", got)
	}
	if strings.Contains(got, "tr/s 1.0 s") {
		t.Errorf("per-epoch lines on a terminal: %q", got)
	}
}
