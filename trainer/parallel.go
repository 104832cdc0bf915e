package trainer

import (
	"sync"
)

// pool evaluates batches split across workers, each with its own gradient
// buffer, and sums the results.
type pool struct {
	workers []Worker
	grads   [][]float64
	losses  []float64
	nx, ne  int
}

func newPool(l Learner, workers, capacity, nx, ne int) *pool {
	workers = max(1, workers)
	per := (capacity + workers - 1) / workers
	p := &pool{nx: nx, ne: ne, losses: make([]float64, workers)}
	for range workers {
		p.workers = append(p.workers, l.NewWorker(per))
		p.grads = append(p.grads, make([]float64, l.NumParams()))
	}
	return p
}

// lossGrad returns Σ w ℓ over b and writes its gradient into grad
// (overwriting); pred, if non-nil, receives the one-step predictions.
func (p *pool) lossGrad(b Batch, grad, pred []float64) float64 {
	k := len(p.workers)
	per := (b.N + k - 1) / k
	var wg sync.WaitGroup
	for i := range k {
		lo, hi := i*per, min((i+1)*per, b.N)
		clear(p.grads[i])
		p.losses[i] = 0
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pr []float64
			if pred != nil {
				pr = pred[lo*p.nx : hi*p.nx]
			}
			p.losses[i] = p.workers[i].LossGrad(b.rows(lo, hi, p.nx, p.ne), p.grads[i], pr)
		}()
	}
	wg.Wait()
	copy(grad, p.grads[0])
	total := p.losses[0]
	for i := 1; i < k; i++ {
		for j, g := range p.grads[i] {
			grad[j] += g
		}
		total += p.losses[i]
	}
	return total
}
