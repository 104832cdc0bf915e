package trainer

import (
	"math"
	"strings"
	"testing"
)

// TestProgressLines: to a writer that is not a terminal (a log) training
// reports one line per epoch, with no bar (no carriage return), and
// nothing more when it finishes.
func TestProgressLines(t *testing.T) {
	var out strings.Builder
	p := newProgress(&out, "GR", 3, 0)
	if p.bar != nil {
		t.Fatal("a bar drawn into a strings.Builder")
	}
	for e := range 3 {
		p.tick(e, 0.5, 100)
		val := math.NaN()
		if e == 2 {
			val = 0.25
		}
		p.epochDone(EpochStats{Epoch: e + 1, Loss: 0.5, ValLoss: val, Seconds: 2, Transitions: 1000})
	}
	p.finish()
	got := out.String()
	if strings.Contains(got, "\r") {
		t.Errorf("carriage returns in a log:\n%q", got)
	}
	want := "GR epoch 1/3 loss 5.000e-01 500 tr/s 2.0 s\n" +
		"GR epoch 2/3 loss 5.000e-01 500 tr/s 2.0 s\n" +
		"GR epoch 3/3 loss 5.000e-01 val 2.500e-01 500 tr/s 2.0 s\n"
	if got != want {
		t.Errorf("log\n%s\nwant\n%s", got, want)
	}
	var resumed strings.Builder
	q := newProgress(&resumed, "GR", 10, 8)
	q.epochDone(EpochStats{Epoch: 9, Loss: 1, ValLoss: math.NaN(), Seconds: 1, Transitions: 10})
	if got, want := resumed.String(), "GR epoch 9/10 (resumed after 8) loss 1.000e+00 10 tr/s 1.0 s\n"; got != want {
		t.Errorf("resumed: %q, want %q", got, want)
	}
}
