// Package rowpool runs a batch of rows in contiguous blocks on persistent
// worker goroutines, the pool that the batch rollers of a SympNet
// (predictor.BatchRoller) and of the MLP baseline (mlp.BatchRoller) share.
// The calling goroutine is worker 0; the others live until Close, so a
// batch allocates nothing.
package rowpool

import "sync"

// Pool splits batches of up to a capacity of rows over its workers. It is
// not safe for concurrent use.
type Pool struct {
	run     func(worker, first, rows int)
	workers int
	per     int // rows a worker holds room for
	jobs    []chan span
	wg      sync.WaitGroup
	closed  bool
}

// span is one block of rows.
type span struct{ first, rows int }

// New returns a pool of max(1, min(workers, maxRows)) workers for batches
// of up to maxRows rows. Run calls run(worker, first, rows) for each
// block, worker 0 on the calling goroutine and worker i ≥ 1 on a goroutine
// of its own: the block is rows first … first+rows−1, at most PerWorker
// rows. run must not block on the pool.
func New(maxRows, workers int, run func(worker, first, rows int)) *Pool {
	maxRows = max(maxRows, 0)
	workers = max(1, min(workers, maxRows))
	p := &Pool{run: run, workers: workers, per: (maxRows + workers - 1) / workers}
	for i := 1; i < workers; i++ {
		ch := make(chan span)
		p.jobs = append(p.jobs, ch)
		go func() {
			for s := range ch {
				run(i, s.first, s.rows)
				p.wg.Done()
			}
		}()
	}
	return p
}

// Workers returns the number of workers.
func (p *Pool) Workers() int { return p.workers }

// PerWorker returns the most rows one worker runs in one batch, the room
// each worker's buffers need.
func (p *Pool) PerWorker() int { return p.per }

// Closed reports whether Close was called.
func (p *Pool) Closed() bool { return p.closed }

// Run runs rows rows (at most the pool's capacity) and returns when every
// block is done. The rows are spread over the workers in blocks of a
// multiple of four rows (the height of the kernels' register tiles) where
// the capacity allows, the first block on the calling goroutine. It
// allocates nothing.
func (p *Pool) Run(rows int) {
	per := (rows + p.workers - 1) / p.workers
	per = min((per+3)&^3, p.per)
	start := min(per, rows)
	for _, ch := range p.jobs {
		if start >= rows {
			break
		}
		cnt := min(per, rows-start)
		p.wg.Add(1)
		ch <- span{first: start, rows: cnt}
		start += cnt
	}
	p.run(0, 0, min(per, rows))
	p.wg.Wait()
}

// Close stops the worker goroutines. The pool must not run afterwards.
func (p *Pool) Close() {
	if p.closed {
		return
	}
	p.closed = true
	for _, ch := range p.jobs {
		close(ch)
	}
}
