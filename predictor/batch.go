package predictor

import "github.com/calisym/calisym/internal/rowpool"

// BatchRoller rolls out many trajectories at once (a planner scoring
// candidate port sequences). Rows are split into contiguous blocks, one per
// worker; each block advances with matrix–matrix kernels. Worker goroutines
// persist for the roller's lifetime, so a rollout allocates nothing. Close
// releases them. A BatchRoller is not safe for concurrent use.
type BatchRoller struct {
	p       *Plan
	maxRows int
	ws      []*workspace
	pool    *rowpool.Pool
	cur     batchJob // the rollout in progress, which the workers read
}

type batchJob struct {
	horizon        int
	x0, ports, out []float64
}

// NewBatchRoller returns a roller for batches of up to maxRows trajectories
// using the given number of workers (at least 1; the calling goroutine is one
// of them).
func (p *Plan) NewBatchRoller(maxRows, workers int) *BatchRoller {
	b := &BatchRoller{p: p, maxRows: maxRows}
	n2, ne := 2*p.Layout.N, p.Layout.PortDim()
	b.pool = rowpool.New(maxRows, workers, func(worker, first, rows int) {
		j := &b.cur
		h := j.horizon
		p.rollRows(b.ws[worker], rows, h, j.x0[first*n2:], j.ports[first*h*ne:], j.out[first*h*n2:])
	})
	for range b.pool.Workers() {
		b.ws = append(b.ws, p.newWorkspace(b.pool.PerWorker()))
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
	b.cur = batchJob{horizon: horizon, x0: x0, ports: ports, out: out}
	b.pool.Run(rows)
	b.cur = batchJob{}
	return nil
}

// Close stops the worker goroutines. The roller must not be used afterwards.
func (b *BatchRoller) Close() { b.pool.Close() }
