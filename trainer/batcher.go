package trainer

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/calisym/calisym/dataset"
)

// schedule deals n items (transitions or windows) to the shards of the
// batches of an epoch. Every epoch the items are shuffled by the stream of
// (seed, epoch) (or left in order); batch b is the items [b·B, (b+1)·B) of
// that order (B the batch size), and a batch of N rows is cut into the
// batch size's S shards (Shards) of ⌈N/S⌉ consecutive rows, the last
// shorter. Which items a shard holds so depends on the data, the batch
// size, the seed and the epoch alone. With one or two shards (a batch of
// at most 2·ShardRows) this is how two workers split a batch before the
// shards existed, and the results are those of --workers 2 then.
type schedule struct {
	n, batch, shards int
	// comm joins the processes that share the batches (nil: one)
	comm Comm
	// ph, if set, receives the time spent gathering samples
	ph  *Phases
	mu  sync.Mutex
	idx []int
	// ordered is the (seed, epoch) idx is in (epoch −1: in order).
	ordered [2]uint64
	valid   bool
	// rng is the epoch's stream after the shuffle, for the draws of
	// scheduled sampling.
	rng *rand.Rand
}

func newSchedule(n int, p *pool) *schedule {
	return &schedule{n: n, batch: p.batch, shards: p.shards, comm: p.comm, ph: p.ph, idx: make([]int, n)}
}

// batches returns the number of batches of an epoch.
func (sc *schedule) batches() int { return (sc.n + sc.batch - 1) / sc.batch }

// batchRows returns the number of rows of batch b, over all shards.
func (sc *schedule) batchRows(b int) int { return max(0, min(sc.batch, sc.n-b*sc.batch)) }

// shardRows returns the rows [lo, hi) of shard s within batch b.
func (sc *schedule) shardRows(b, s int) (int, int) {
	n := sc.batchRows(b)
	per := (n + sc.shards - 1) / sc.shards
	return min(s*per, n), min((s+1)*per, n)
}

// orderShard puts the items in the order of (seed, epoch), shuffled by
// the stream of (seed, epoch) if epoch ≥ 0, unless they are in it. The
// shards of an epoch's first batch call it (from any goroutine); the first
// call shuffles.
func (sc *schedule) orderShard(seed uint64, epoch, _ int) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	key := [2]uint64{seed, uint64(epoch)}
	if epoch < 0 {
		key[0] = 0
	}
	if sc.valid && sc.ordered == key {
		return
	}
	for i := range sc.idx {
		sc.idx[i] = i
	}
	sc.rng = nil
	if epoch >= 0 {
		sc.rng = rand.New(rand.NewPCG(seed, uint64(epoch)))
		sc.rng.Shuffle(len(sc.idx), func(i, j int) { sc.idx[i], sc.idx[j] = sc.idx[j], sc.idx[i] })
	}
	sc.ordered, sc.valid = key, true
}

// items returns the items of shard s in batch b.
func (sc *schedule) items(b, s int) []int {
	lo, hi := sc.shardRows(b, s)
	return sc.idx[b*sc.batch+lo : b*sc.batch+hi]
}

// gather makes rs gather the samples of batch b's items (every shard's),
// each item's the samples span names (rowStore.gather).
func (sc *schedule) gather(rs *rowStore, b int, span func(item int) (ep, t0, t1 int)) error {
	t0 := time.Now()
	err := rs.gather(func(add func(ep, t0, t1 int)) {
		for s := range sc.shards {
			for _, i := range sc.items(b, s) {
				add(span(i))
			}
		}
	})
	if sc.ph != nil && rs.exchanges() {
		sc.ph.Samples += time.Since(t0)
	}
	return err
}

// transitionBatches gathers one-step transitions into Batches.
type transitionBatches struct {
	ds     *dataset.Dataset
	rows   *rowStore
	trans  []dataset.Transition
	nx, ne int
}

func newTransitionBatches(ds *dataset.Dataset) *transitionBatches {
	return &transitionBatches{ds: ds, rows: newRowStore(ds), trans: ds.UniqueTransitions(), nx: ds.StateDim(), ne: ds.PortDim()}
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
		copy(b.X[r*nx:(r+1)*nx], tb.rows.state(tr.Episode, tr.T))
		copy(b.XNext[r*nx:(r+1)*nx], tb.rows.state(tr.Episode, tr.T+1))
		copy(b.E[r*ne:(r+1)*ne], tb.rows.port(tr.Episode, tr.T))
		b.W[r] = tr.Weight
	}
}

// transitionEpoch runs one epoch of teacher forcing on unique transitions:
// one step per batch, each shard gathering its own rows (on the goroutine
// that computes it; the first batch also shuffles the shard's partition).
// epoch < 0 leaves the partitions in order. A dataset whose arrays are on
// disk reads this process's samples (rowStore) and gathers each batch's.
func (tb *transitionBatches) epoch(sc *schedule, seed uint64, epoch int, step func(fill shardFill, rows int) error) error {
	span := func(i int) (int, int, int) {
		tr := tb.trans[i]
		return tr.Episode, tr.T, tr.T + 2
	}
	return sc.pass(tb.rows, 1, seed, epoch, span, tb.fill, 1, step)
}

// pass runs one epoch over the schedule's items: rs holds this process's
// samples (with reach samples after each, rowStore.hold) and gathers,
// before each batch, the samples [t0, t1) of episode ep that span names
// for every item of the batch; the batch's shards are then gathered by
// fill on the goroutine that computes them (the first batch also shuffles
// each shard's partition) and the batch goes to step with perItem
// transitions an item.
func (sc *schedule) pass(rs *rowStore, reach int, seed uint64, epoch int, span func(item int) (ep, t0, t1 int),
	fill func(b *Batch, items []int), perItem int, step func(fill shardFill, rows int) error) error {
	if err := rs.hold(sc.comm, reach); err != nil {
		return err
	}
	// the order also when the first batches are passed over (a run
	// resumed within the epoch): the shards of the first batch would
	// otherwise put the items in it
	sc.orderShard(seed, epoch, 0)
	for b := range sc.batches() {
		if err := sc.gather(rs, b, span); err != nil {
			return err
		}
		shard := func(s int, bt *Batch) []float64 {
			if b == 0 {
				sc.orderShard(seed, epoch, s)
			}
			fill(bt, sc.items(b, s))
			return nil
		}
		if err := step(shard, sc.batchRows(b)*perItem); err != nil {
			return err
		}
	}
	return nil
}

// newSeqBatch allocates a batch for up to n sequences of k steps (k ≤ 1:
// n one-step transitions, as newBatch).
func newSeqBatch(n, k, nx, ne int) Batch {
	if k <= 1 {
		return newBatch(n, nx, ne)
	}
	return Batch{K: k, X: make([]float64, n*nx), E: make([]float64, n*k*ne), XNext: make([]float64, n*k*nx), W: make([]float64, n)}
}

// newBatch allocates a batch for up to n rows.
func newBatch(n, nx, ne int) Batch {
	return Batch{X: make([]float64, n*nx), E: make([]float64, n*ne), XNext: make([]float64, n*nx), W: make([]float64, n)}
}
