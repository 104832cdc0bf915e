package mlp

import (
	"fmt"

	"github.com/calisym/calisym/internal/rowpool"
)

// BatchRoller rolls out many trajectories of the MLP at once, as
// predictor.BatchRoller does for a SympNet (a planner scoring candidate
// port sequences, or the Go side of a speed comparison): rows are split
// into contiguous blocks, one per worker, and each block advances with
// the batched forward pass (matrix–matrix kernels; every row has the bits
// Rollout gives it). Worker goroutines persist for the roller's lifetime,
// so a rollout allocates nothing. Close releases them. A BatchRoller is
// not safe for concurrent use.
type BatchRoller struct {
	m       *MLP
	maxRows int
	ws      []*batchBlock
	pool    *rowpool.Pool
	cur     batchJob // the rollout in progress, which the workers read
}

// batchBlock is one worker's workspace and buffers: the current states,
// one step's ports and the predictions of a block of rows.
type batchBlock struct {
	ws         *Workspace
	x, e, pred []float64
}

type batchJob struct {
	rows, horizon  int
	x0, ports, out []float64
}

// NewBatchRoller returns a roller for batches of up to maxRows
// trajectories using the given number of workers (at least 1; the calling
// goroutine is one of them).
func (m *MLP) NewBatchRoller(maxRows, workers int) *BatchRoller {
	maxRows = max(maxRows, 1)
	b := &BatchRoller{m: m, maxRows: maxRows}
	nx, ne := m.cfg.StateDim, m.cfg.PortDim
	b.pool = rowpool.New(maxRows, workers, func(worker, first, rows int) {
		j := &b.cur
		h := j.horizon
		m.rollRows(b.ws[worker], batchJob{rows: rows, horizon: h,
			x0: j.x0[first*nx:], ports: j.ports[first*h*ne:], out: j.out[first*h*nx:]})
	})
	per := b.pool.PerWorker()
	for range b.pool.Workers() {
		b.ws = append(b.ws, &batchBlock{ws: m.NewWorkspace(per), x: make([]float64, per*nx), e: make([]float64, per*ne),
			pred: make([]float64, per*nx)})
	}
	return b
}

// Rollout predicts rows trajectories autoregressively: x0 is rows×StateDim,
// ports is rows×horizon×PortDim (trajectory-major) and out receives
// rows×horizon×StateDim, row r of each the trajectory that Rollout gives
// from x0 row r under its ports.
func (b *BatchRoller) Rollout(x0, ports []float64, rows, horizon int, out []float64) error {
	nx, ne := b.m.cfg.StateDim, b.m.cfg.PortDim
	switch {
	case b.pool.Closed():
		return fmt.Errorf("mlp: batch rollout on a closed roller")
	case horizon < 0 || rows < 0:
		return fmt.Errorf("mlp: batch rollout of %d rows over horizon %d", rows, horizon)
	case rows > b.maxRows:
		return fmt.Errorf("mlp: batch of %d exceeds the roller's capacity %d", rows, b.maxRows)
	case len(x0) < rows*nx || len(ports) < rows*horizon*ne || len(out) < rows*horizon*nx:
		return fmt.Errorf("mlp: batch rollout of %d rows over horizon %d with len(x0)=%d, len(ports)=%d, len(out)=%d (state %d, ports %d)",
			rows, horizon, len(x0), len(ports), len(out), nx, ne)
	}
	b.cur = batchJob{horizon: horizon, x0: x0, ports: ports, out: out}
	b.pool.Run(rows)
	b.cur = batchJob{}
	return nil
}

// Close stops the worker goroutines. The roller must not be used afterwards.
func (b *BatchRoller) Close() { b.pool.Close() }

// rollRows rolls out one block of rows with the batched forward pass.
func (m *MLP) rollRows(blk *batchBlock, j batchJob) {
	nx, ne := m.cfg.StateDim, m.cfg.PortDim
	rows, h := j.rows, j.horizon
	if rows == 0 {
		return
	}
	x, e, pred := blk.x[:rows*nx], blk.e[:rows*ne], blk.pred[:rows*nx]
	copy(x, j.x0[:rows*nx])
	for k := range h {
		for r := range rows {
			copy(e[r*ne:(r+1)*ne], j.ports[(r*h+k)*ne:(r*h+k+1)*ne])
		}
		m.Forward(blk.ws, x, e, rows, pred)
		for r := range rows {
			copy(j.out[(r*h+k)*nx:(r*h+k+1)*nx], pred[r*nx:(r+1)*nx])
		}
		x, pred = pred, x
	}
}
