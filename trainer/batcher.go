package trainer

import (
	"math/rand/v2"

	"github.com/calisym/calisym/dataset"
)

// transitionBatches gathers one-step transitions into Batches.
type transitionBatches struct {
	ds     *dataset.Dataset
	trans  []dataset.Transition
	nx, ne int
}

func newTransitionBatches(ds *dataset.Dataset) *transitionBatches {
	return &transitionBatches{ds: ds, trans: ds.UniqueTransitions(), nx: ds.StateDim(), ne: ds.PortDim()}
}

// order returns the transition indices shuffled by rng (nil: in order).
func (tb *transitionBatches) order(rng *rand.Rand) []int {
	idx := make([]int, len(tb.trans))
	for i := range idx {
		idx[i] = i
	}
	if rng != nil {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	}
	return idx
}

// fill writes the transitions idx into b (whose slices must have room).
func (tb *transitionBatches) fill(b *Batch, idx []int) {
	b.N = len(idx)
	nx, ne := tb.nx, tb.ne
	for r, i := range idx {
		tr := tb.trans[i]
		ep := &tb.ds.Episodes[tr.Episode]
		copy(b.X[r*nx:(r+1)*nx], ep.X[tr.T*nx:(tr.T+1)*nx])
		copy(b.XNext[r*nx:(r+1)*nx], ep.X[(tr.T+1)*nx:(tr.T+2)*nx])
		copy(b.E[r*ne:(r+1)*ne], ep.E[tr.T*ne:(tr.T+1)*ne])
		b.W[r] = tr.Weight
	}
}

// newBatch allocates a batch for up to n rows.
func newBatch(n, nx, ne int) Batch {
	return Batch{X: make([]float64, n*nx), E: make([]float64, n*ne), XNext: make([]float64, n*nx), W: make([]float64, n)}
}

// rows returns the sub-batch of rows [lo, hi).
func (b Batch) rows(lo, hi, nx, ne int) Batch {
	return Batch{N: hi - lo, X: b.X[lo*nx : hi*nx], E: b.E[lo*ne : hi*ne], XNext: b.XNext[lo*nx : hi*nx], W: b.W[lo:hi]}
}
