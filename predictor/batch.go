package predictor

import "sync"

// BatchRoller rolls out many trajectories at once (a planner scoring
// candidate port sequences). Rows are split into contiguous blocks, one per
// worker; each block advances with matrix–matrix kernels. Worker goroutines
// persist for the roller's lifetime, so a rollout allocates nothing. Close
// releases them. A BatchRoller is not safe for concurrent use.
type BatchRoller struct {
	p       *Plan
	maxRows int
	ws      []*workspace
	jobs    []chan batchJob
	wg      sync.WaitGroup
	closed  bool
}

type batchJob struct {
	rows, horizon  int
	x0, ports, out []float64
}

// NewBatchRoller returns a roller for batches of up to maxRows trajectories
// using the given number of workers (at least 1; the calling goroutine is one
// of them).
func (p *Plan) NewBatchRoller(maxRows, workers int) *BatchRoller {
	workers = max(1, min(workers, maxRows))
	b := &BatchRoller{p: p, maxRows: maxRows}
	per := (maxRows + workers - 1) / workers
	for i := range workers {
		b.ws = append(b.ws, p.newWorkspace(per))
		if i == 0 {
			continue
		}
		ch := make(chan batchJob)
		b.jobs = append(b.jobs, ch)
		go func(w *workspace) {
			for j := range ch {
				p.rollRows(w, j.rows, j.horizon, j.x0, j.ports, j.out)
				b.wg.Done()
			}
		}(b.ws[i])
	}
	return b
}

// Rollout runs Algorithm 1 for rows trajectories: x0 is rows×2n, ports is
// rows×horizon×(n_u+n_c) (trajectory-major) and out receives rows×horizon×2n.
func (b *BatchRoller) Rollout(x0, ports []float64, rows, horizon int, out []float64) error {
	if err := b.p.checkRollout(rows, horizon, x0, ports, out); err != nil {
		return err
	}
	if rows > b.maxRows {
		return errBatchTooLarge(rows, b.maxRows)
	}
	n2, ne := 2*b.p.Layout.N, b.p.Layout.PortDim()
	// Spread the rows over the workers in blocks of a multiple of four rows
	// (the height of the kernels' register tiles) where the capacity allows.
	per := (rows + len(b.ws) - 1) / len(b.ws)
	per = min((per+3)&^3, b.ws[0].rows)
	start := per
	for _, ch := range b.jobs {
		if start >= rows {
			break
		}
		cnt := min(per, rows-start)
		b.wg.Add(1)
		ch <- batchJob{rows: cnt, horizon: horizon,
			x0:    x0[start*n2 : (start+cnt)*n2],
			ports: ports[start*horizon*ne : (start+cnt)*horizon*ne],
			out:   out[start*horizon*n2 : (start+cnt)*horizon*n2]}
		start += cnt
	}
	b.p.rollRows(b.ws[0], min(per, rows), horizon, x0, ports, out)
	b.wg.Wait()
	return nil
}

// Close stops the worker goroutines. The roller must not be used afterwards.
func (b *BatchRoller) Close() {
	if b.closed {
		return
	}
	b.closed = true
	for _, ch := range b.jobs {
		close(ch)
	}
}
