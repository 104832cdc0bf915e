package trainer

import (
	"fmt"
	"sync"
	"time"
)

// ShardRows is the most rows of one shard. A batch size B gives
// ⌈B/ShardRows⌉ shards (Shards), and a batch of N ≤ B rows is cut into
// that many of ⌈N/S⌉ consecutive rows: how a batch is cut depends on the
// batch size alone, never on the number of goroutines or processes that
// compute it. Smaller shards would let more workers share a batch, but
// every shard's backward pass has a fixed cost (the quadruped's: the
// gradient of its 316,008 parameters through the layers' A = I + S₁S₂,
// B = S₁ + S₁S₂S₃ + S₃, about a quarter of a 32-row shard's time), so 128
// rows keep it small; batch 2048 has 16 shards.
const ShardRows = 128

// Shards returns the number of shards of a batch of batchSize rows and the
// most rows one shard holds.
func Shards(batchSize int) (shards, rows int) {
	batchSize = max(batchSize, 1)
	shards = (batchSize + ShardRows - 1) / ShardRows
	return shards, (batchSize + shards - 1) / shards
}

// Comm connects the processes of a data-parallel run (MPI ranks): process
// Rank of Size computes the shards [Rank·S/Size, (Rank+1)·S/Size) of every
// batch of S shards and exchanges partial sums with Allgather. Every
// process must call Allgather the same number of times with the same
// counts. The package mpi (built with -tags mpi) implements it over Open
// MPI.
type Comm interface {
	// Rank returns this process's number, 0 ≤ Rank < Size.
	Rank() int
	// Size returns the number of processes.
	Size() int
	// Allgather writes into recv the concatenation, in rank order, of every
	// process's send; counts[i] is the length process i sends (counts[Rank]
	// = len(send)), and recv holds their sum.
	Allgather(send []float64, counts []int, recv []float64) error
}

// span is a node of the reduction tree: the shards [lo, hi).
//
// The tree over the S shards of a batch is fixed: a node of more than one
// shard splits after the largest power of two smaller than its size, so
// [0, 6) is [0, 4) + [4, 6). A node's sum is its left child's plus its
// right child's, element by element; a leaf is one shard's gradient, loss
// and weight. Whoever computes a node, the result has the same bits.
type span struct{ lo, hi int }

func (n span) leaf() bool { return n.hi-n.lo == 1 }

func (n span) split() (span, span) {
	m := 1
	for 2*m < n.hi-n.lo {
		m *= 2
	}
	return span{n.lo, n.lo + m}, span{n.lo + m, n.hi}
}

// depth returns the height of the subtree under n.
func (n span) depth() int {
	d := 0
	for m := 1; m < n.hi-n.lo; m *= 2 {
		d++
	}
	return d
}

// cover returns, left to right, the nodes under n that lie inside [lo, hi)
// and whose parents do not: the sums a computation of the shards [lo, hi)
// hands on.
func cover(n span, lo, hi int) []span {
	if lo >= hi || n.hi <= lo || n.lo >= hi {
		return nil
	}
	if lo <= n.lo && n.hi <= hi {
		return []span{n}
	}
	l, r := n.split()
	return append(cover(l, lo, hi), cover(r, lo, hi)...)
}

// part returns the i-th of k contiguous, near-equal parts of [lo, hi).
func part(lo, hi, i, k int) (int, int) {
	n := hi - lo
	return lo + i*n/k, lo + (i+1)*n/k
}

// shardFill writes the rows of shard s of the current batch into b (b.N
// of them) and returns the buffer that receives their predictions (nil:
// none).
type shardFill func(s int, b *Batch) []float64

// pool computes batches shard by shard on goroutines (and, with a Comm, on
// several processes) and reduces the shards' gradients, losses and
// weights by the reduction tree, so the result does not depend on how the
// work is split. A sum is a vector of np+2 values: the gradient, the loss
// Σ w ℓ and the weight Σ w.
type pool struct {
	batch        int // the batch size
	shards, rows int
	np           int
	comm         Comm
	lo, hi       int // this process's shards
	workers      []*shardWorker
	// have maps every node a worker hands on to its sum.
	have map[span][]float64
	// procs lists every process's cover (with a Comm).
	procs      [][]span
	send, recv []float64
	gathered   map[span][]float64
	scratch    [][][]float64 // per combining goroutine, per depth
	out        []float64
	// ph, if set, receives the times of the training steps' phases
	ph *Phases
}

// shardWorker computes the shards of one goroutine.
type shardWorker struct {
	w     Worker
	b     Batch
	nodes []span
	sums  [][]float64 // the sums of nodes
	tmp   [][]float64 // per depth
}

// reduceChunk is the number of values one combining step handles.
const reduceChunk = 4096

// newPool makes the pool of batches of batchSize rows, each row a
// transition (steps ≤ 1) or a sequence of steps rollout steps (Batch.K).
func newPool(l Learner, workers, batchSize, steps, nx, ne int, comm Comm) (*pool, error) {
	workers = max(1, workers)
	shards, rows := Shards(batchSize)
	root := span{0, shards}
	p := &pool{batch: max(batchSize, 1), shards: shards, rows: rows, np: l.NumParams(), comm: comm, lo: 0, hi: shards, have: map[span][]float64{}}
	if comm != nil {
		if comm.Size() < 1 || comm.Rank() < 0 || comm.Rank() >= comm.Size() {
			return nil, fmt.Errorf("trainer: process %d of %d", comm.Rank(), comm.Size())
		}
		p.lo, p.hi = part(0, shards, comm.Rank(), comm.Size())
		total := 0
		for r := range comm.Size() {
			lo, hi := part(0, shards, r, comm.Size())
			c := cover(root, lo, hi)
			p.procs = append(p.procs, c)
			total += len(c)
		}
		p.send = make([]float64, len(p.procs[comm.Rank()])*(p.np+2))
		p.recv = make([]float64, total*(p.np+2))
		p.gathered = map[span][]float64{}
	}
	width := p.np + 2
	// a worker without a shard would only hold memory
	workers = max(1, min(workers, p.hi-p.lo))
	for i := range workers {
		lo, hi := part(p.lo, p.hi, i, workers)
		sw := &shardWorker{w: l.NewWorker(rows), b: newSeqBatch(rows, steps, nx, ne), nodes: cover(root, lo, hi)}
		d := 0
		for _, n := range sw.nodes {
			buf := make([]float64, width)
			sw.sums = append(sw.sums, buf)
			p.have[n] = buf
			d = max(d, n.depth())
		}
		for range d {
			sw.tmp = append(sw.tmp, make([]float64, width))
		}
		p.workers = append(p.workers, sw)
	}
	p.scratch = make([][][]float64, workers)
	for i := range p.scratch {
		for range root.depth() + 1 {
			p.scratch[i] = append(p.scratch[i], make([]float64, reduceChunk))
		}
	}
	p.out = make([]float64, width)
	return p, nil
}

// run computes one batch: every shard of this process through fill, then
// the tree's root. It returns Σ w ℓ and Σ w over the batch and writes
// Σ w ∇ℓ into grad (unless lossOnly, which reduces only the losses and
// weights; grad may then be nil).
func (p *pool) run(fill shardFill, grad []float64, lossOnly bool) (loss, weight float64, err error) {
	from := 0
	if lossOnly {
		from = p.np
	}
	ph := p.ph
	if lossOnly {
		ph = nil // the validation pass is timed as a whole
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, sw := range p.workers {
		if len(sw.nodes) == 0 {
			continue
		}
		wg.Go(func() {
			for i, n := range sw.nodes {
				sw.eval(n, sw.sums[i], 0, from, fill)
			}
		})
	}
	wg.Wait()
	if ph != nil && p.comm == nil {
		t1 := time.Now()
		ph.Shards += t1.Sub(t0)
		t0 = t1
	}
	root := span{0, p.shards}
	have, base := p.have, 0
	if p.comm != nil {
		// this process's nodes, then everyone's
		width := p.np + 2 - from
		mine := p.procs[p.comm.Rank()]
		send := p.send[:len(mine)*width]
		p.combine(func(k int) (span, []float64) { return mine[k], send[k*width : (k+1)*width] }, len(mine), p.have, 0, from)
		if ph != nil {
			t1 := time.Now()
			ph.Shards += t1.Sub(t0)
			t0 = t1
		}
		counts := make([]int, len(p.procs))
		total := 0
		for r, c := range p.procs {
			counts[r] = len(c) * width
			total += counts[r]
		}
		recv := p.recv[:total]
		if err := p.comm.Allgather(send, counts, recv); err != nil {
			return 0, 0, fmt.Errorf("trainer: exchanging the shards' sums: %w", err)
		}
		if ph != nil {
			t1 := time.Now()
			ph.Exchange += t1.Sub(t0)
			t0 = t1
		}
		clear(p.gathered)
		k := 0
		for _, c := range p.procs {
			for _, n := range c {
				p.gathered[n] = recv[k*width : (k+1)*width] // values from onwards
				k++
			}
		}
		have, base = p.gathered, from
	}
	p.combine(func(int) (span, []float64) { return root, p.out[from:] }, 1, have, base, from)
	if ph != nil {
		ph.Reduce += time.Since(t0)
	}
	if !lossOnly {
		copy(grad, p.out[:p.np])
	}
	return p.out[p.np], p.out[p.np+1], nil
}

// combine evaluates nodes (node k and its destination, which receives the
// values from onwards) from the sums in have, whose slices start at value
// base, on every worker goroutine, each a share of the values.
func (p *pool) combine(node func(k int) (span, []float64), count int, have map[span][]float64, base, from int) {
	width := p.np + 2 - from
	chunks := (width + reduceChunk - 1) / reduceChunk
	g := min(len(p.workers), chunks*count)
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for j := w; j < chunks*count; j += g {
				n, dst := node(j / chunks)
				c0 := (j % chunks) * reduceChunk
				c1 := min(c0+reduceChunk, width)
				evalChunk(n, have, base, from+c0, from+c1, dst[c0:c1], p.scratch[w], 0)
			}
		})
	}
	wg.Wait()
}

// evalChunk writes the values [c0, c1) of node n's sum into dst.
func evalChunk(n span, have map[span][]float64, base, c0, c1 int, dst []float64, scratch [][]float64, depth int) {
	if s, ok := have[n]; ok {
		copy(dst, s[c0-base:c1-base])
		return
	}
	l, r := n.split()
	evalChunk(l, have, base, c0, c1, dst, scratch, depth+1)
	t := scratch[depth][:c1-c0]
	evalChunk(r, have, base, c0, c1, t, scratch, depth+1)
	for i := range dst {
		dst[i] += t[i]
	}
}

// eval writes node n's sum into dst (its values from onwards are summed;
// the others hold scratch).
func (sw *shardWorker) eval(n span, dst []float64, depth, from int, fill shardFill) {
	np := len(dst) - 2
	if n.leaf() {
		clear(dst[:np])
		pred := fill(n.lo, &sw.b)
		var w float64
		for _, v := range sw.b.W[:sw.b.N] {
			w += v
		}
		dst[np] = sw.w.LossGrad(sw.b, dst[:np], pred)
		dst[np+1] = w
		return
	}
	l, r := n.split()
	sw.eval(l, dst, depth+1, from, fill)
	t := sw.tmp[depth]
	sw.eval(r, t, depth+1, from, fill)
	for i := from; i < len(dst); i++ {
		dst[i] += t[i]
	}
}
