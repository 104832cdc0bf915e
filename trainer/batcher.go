package trainer

import (
	"math/rand/v2"

	"github.com/calisym/calisym/dataset"
)

// schedule deals n items (transitions or windows) to the shards of the
// batches of an epoch. The items are cut into S contiguous partitions,
// partition s holding items [s·n/S, (s+1)·n/S); every epoch each partition
// is shuffled on its own (or left in order), and batch b takes rows
// [b·R, (b+1)·R) of every partition's order into its shard s. A batch so
// holds up to S·R = the batch size rows, every item is used once an epoch,
// and which items a shard holds depends on the data, the batch size, the
// seed and the epoch alone. A process keeps the orders of its own shards
// [lo, hi) only.
type schedule struct {
	n, shards, rows int
	lo, hi          int
	idx             [][]int // per own shard: its partition's items, this epoch
	rng             []*rand.Rand
}

func newSchedule(n int, p *pool) *schedule {
	sc := &schedule{n: n, shards: p.shards, rows: p.rows, lo: p.lo, hi: p.hi}
	for s := p.lo; s < p.hi; s++ {
		a, b := sc.partition(s)
		sc.idx = append(sc.idx, make([]int, b-a))
		sc.rng = append(sc.rng, nil)
	}
	sc.order(0, -1)
	return sc
}

// partition returns the items of partition s.
func (sc *schedule) partition(s int) (int, int) {
	return s * sc.n / sc.shards, (s + 1) * sc.n / sc.shards
}

// batches returns the number of batches of an epoch.
func (sc *schedule) batches() int {
	most := (sc.n + sc.shards - 1) / sc.shards
	return (most + sc.rows - 1) / sc.rows
}

// batchRows returns the number of rows of batch b, over all shards.
func (sc *schedule) batchRows(b int) int {
	total := 0
	for s := range sc.shards {
		lo, hi := sc.partition(s)
		total += max(0, min(hi-lo-b*sc.rows, sc.rows))
	}
	return total
}

// order resets own shard s's order to its partition's items, shuffled by
// the stream of (seed, epoch, s) if epoch ≥ 0, and keeps that stream for
// the shard's other draws this epoch.
func (sc *schedule) order(seed uint64, epoch int) {
	for s := sc.lo; s < sc.hi; s++ {
		sc.orderShard(seed, epoch, s)
	}
}

func (sc *schedule) orderShard(seed uint64, epoch, s int) {
	lo, _ := sc.partition(s)
	idx := sc.idx[s-sc.lo]
	for i := range idx {
		idx[i] = lo + i
	}
	if epoch < 0 {
		return
	}
	rng := rand.New(rand.NewPCG(seed, uint64(epoch)<<32|uint64(s)))
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	sc.rng[s-sc.lo] = rng
}

// items returns the items of own shard s in batch b.
func (sc *schedule) items(b, s int) []int {
	idx := sc.idx[s-sc.lo]
	return idx[min(b*sc.rows, len(idx)):min((b+1)*sc.rows, len(idx))]
}

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

// transitionEpoch runs one epoch of teacher forcing on unique transitions:
// one step per batch, each shard gathering its own rows (on the goroutine
// that computes it; the first batch also shuffles the shard's partition).
// epoch < 0 leaves the partitions in order.
func (tb *transitionBatches) epoch(sc *schedule, seed uint64, epoch int, step func(fill shardFill, rows int) error) error {
	for b := range sc.batches() {
		fill := func(s int, bt *Batch) []float64 {
			if b == 0 {
				sc.orderShard(seed, epoch, s)
			}
			tb.fill(bt, sc.items(b, s))
			return nil
		}
		if err := step(fill, sc.batchRows(b)); err != nil {
			return err
		}
	}
	return nil
}

// newBatch allocates a batch for up to n rows.
func newBatch(n, nx, ne int) Batch {
	return Batch{X: make([]float64, n*nx), E: make([]float64, n*ne), XNext: make([]float64, n*nx), W: make([]float64, n)}
}
