package trainer

import (
	"math"
	"strings"
	"testing"
	"time"
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
	// each epoch takes 61 s of the clock: the elapsed time and the ETA at
	// that pace
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	p.t0, p.now = t0, func() time.Time { return clock }
	for e := range 3 {
		clock = clock.Add(61 * time.Second)
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
	want := "GR epoch 1/3 loss 5.000e-01 500 tr/s 2.0 s, elapsed 1m1s, ETA 2m2s\n" +
		"GR epoch 2/3 loss 5.000e-01 500 tr/s 2.0 s, elapsed 2m2s, ETA 1m1s\n" +
		"GR epoch 3/3 loss 5.000e-01 val 2.500e-01 500 tr/s 2.0 s, elapsed 3m3s, ETA 0s\n"
	if got != want {
		t.Errorf("log\n%s\nwant\n%s", got, want)
	}
	// a resumed run: its ETA from this run's epochs alone
	var resumed strings.Builder
	q := newProgress(&resumed, "GR", 10, 7)
	q.t0, q.now = t0, func() time.Time { return t0.Add(90 * time.Minute) }
	q.epochDone(EpochStats{Epoch: 9, Loss: 1, ValLoss: math.NaN(), Seconds: 1, Transitions: 10})
	if got, want := resumed.String(), "GR epoch 9/10 (resumed after 7) loss 1.000e+00 10 tr/s 1.0 s, elapsed 1h30m0s, ETA 45m0s\n"; got != want {
		t.Errorf("resumed: %q, want %q", got, want)
	}
}
