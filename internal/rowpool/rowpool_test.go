package rowpool

import (
	"sync/atomic"
	"testing"
)

// TestPoolCoversEveryRowOnce runs batches of several sizes on pools of one
// to three workers and requires that every row is run exactly once, by a
// block no larger than PerWorker, and that a batch allocates nothing.
func TestPoolCoversEveryRowOnce(t *testing.T) {
	for _, c := range []struct{ maxRows, workers int }{{1, 1}, {16, 2}, {37, 3}, {5, 8}, {256, 2}} {
		counts := make([]atomic.Int32, c.maxRows)
		var tooBig atomic.Bool
		var p *Pool
		p = New(c.maxRows, c.workers, func(worker, first, rows int) {
			if rows > p.PerWorker() {
				tooBig.Store(true)
			}
			for r := first; r < first+rows; r++ {
				counts[r].Add(1)
			}
		})
		if want := max(1, min(c.workers, c.maxRows)); p.Workers() != want {
			t.Errorf("%+v: %d workers, want %d", c, p.Workers(), want)
		}
		for _, rows := range []int{0, 1, c.maxRows / 2, c.maxRows} {
			for i := range counts {
				counts[i].Store(0)
			}
			p.Run(rows)
			for i := range counts {
				want := int32(0)
				if i < rows {
					want = 1
				}
				if got := counts[i].Load(); got != want {
					t.Fatalf("%+v, batch of %d: row %d ran %d times, want %d", c, rows, i, got, want)
				}
			}
		}
		if tooBig.Load() {
			t.Errorf("%+v: a block exceeded PerWorker %d", c, p.PerWorker())
		}
		if a := testing.AllocsPerRun(10, func() { p.Run(c.maxRows) }); a != 0 {
			t.Errorf("%+v: a batch allocates %v times", c, a)
		}
		p.Close()
		p.Close()
		if !p.Closed() {
			t.Errorf("%+v: not closed after Close", c)
		}
	}
}
