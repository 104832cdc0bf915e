package trainer

import (
	"fmt"
	"math"
	"sort"

	"github.com/calisym/calisym/dataset"
)

// rowStore serves a dataset's samples to the shards that gather batches.
// A loaded dataset serves them from its episodes' arrays. An opened one
// (dataset.Open: the arrays on disk) is cut into one contiguous range of
// the samples per process (the episodes concatenated, process r of N
// owning the samples [r·T/N, (r+1)·T/N) of T): a process reads its range
// once, plus the reach samples after it that the spans starting in it
// need (the overlap at the range's edge), and holds each of them once,
// however many windows, transitions or sequences share it. Before each
// optimiser step every process sends the samples of the batch's spans
// that start in its range, and receives the others' (gather, one
// Allgather), so that a shard reads every row it needs. One of N
// processes holds about 1/N of the samples, whatever the windows'
// overlap and the shuffle; one alone holds them all.
type rowStore struct {
	ds     *dataset.Dataset
	nx, ne int
	// base is the first sample of each episode in the concatenation of
	// the episodes (nil: the dataset is loaded).
	base []int
	// reach is the most samples after its first that a span needs (1: a
	// transition; K: a K-step sequence); raise it before the first read.
	reach int
	comm  Comm
	// bounds[r] is the first sample of process r's range (N+1 entries);
	// this process holds the samples [lo, hi) in x and e.
	bounds []int
	lo, hi int
	x, e   []float64
	held   bool
	// the samples of the current batch's spans, as gathered: view[g] is
	// the row of sample g in recv (−1: not gathered); set lists those set
	view       []int32
	set        []int
	send, recv []float64
	spans      []sampleSpan
}

// sampleSpan is the samples [t0, t1) of episode ep.
type sampleSpan struct{ ep, t0, t1 int }

func newRowStore(ds *dataset.Dataset) *rowStore {
	rs := &rowStore{ds: ds, nx: ds.StateDim(), ne: ds.PortDim(), reach: 1}
	if !ds.Loaded() {
		n := 0
		for _, ep := range ds.Episodes {
			rs.base = append(rs.base, n)
			n += ep.Len
		}
	}
	return rs
}

// partial reports whether the store holds some samples only (the dataset
// is not loaded).
func (rs *rowStore) partial() bool { return !rs.ds.Loaded() }

// row returns the row of sample t of episode ep in buf (as gathered for
// the batch, or this process's own) and its width.
func (rs *rowStore) row(ep, t int) (buf []float64, k, width int, state bool) {
	g := rs.base[ep] + t
	if rs.view != nil {
		if v := rs.view[g]; v >= 0 {
			return rs.recv, int(v), rs.nx + rs.ne, true
		}
	}
	if g >= rs.lo && g < rs.hi && rs.held {
		return nil, g - rs.lo, 0, false
	}
	panic(fmt.Sprintf("trainer: sample %d of episode %d is neither held nor gathered by this process", t, ep))
}

// state returns the state of sample t of episode ep (2n values).
func (rs *rowStore) state(ep, t int) []float64 {
	if rs.base == nil {
		return rs.ds.Episodes[ep].X[t*rs.nx : (t+1)*rs.nx]
	}
	buf, k, w, gathered := rs.row(ep, t)
	if gathered {
		return buf[k*w : k*w+rs.nx]
	}
	return rs.x[k*rs.nx : (k+1)*rs.nx]
}

// port returns the ports of sample t of episode ep (n_u + n_c values).
func (rs *rowStore) port(ep, t int) []float64 {
	if rs.base == nil {
		return rs.ds.Episodes[ep].E[t*rs.ne : (t+1)*rs.ne]
	}
	buf, k, w, gathered := rs.row(ep, t)
	if gathered {
		return buf[k*w+rs.nx : (k+1)*w]
	}
	return rs.e[k*rs.ne : (k+1)*rs.ne]
}

// hold makes the store hold this process's range of the samples (of
// comm's processes; nil: one process, every sample) with reach samples
// after it, reading them from the dataset's files once; a later call
// reads again only for a larger reach or another comm. A loaded dataset
// holds everything.
func (rs *rowStore) hold(comm Comm, reach int) error {
	if !rs.partial() {
		return nil
	}
	reach = max(reach, rs.reach)
	if rs.held && rs.comm == comm && rs.reach >= reach {
		return nil
	}
	total := rs.ds.Samples()
	if total > math.MaxInt32 {
		return fmt.Errorf("trainer: %d samples: reading part of a dataset handles at most %d", total, math.MaxInt32)
	}
	rank, size := 0, 1
	if comm != nil {
		rank, size = comm.Rank(), comm.Size()
	}
	rs.bounds = rs.bounds[:0]
	for r := range size + 1 {
		rs.bounds = append(rs.bounds, r*total/size)
	}
	lo, hi := rs.bounds[rank], rs.bounds[rank+1]
	if hi > lo {
		// the spans that start in [lo, hi) end in the episode of hi − 1
		ep := sort.SearchInts(rs.base, hi) - 1
		hi = min(hi+reach, rs.base[ep]+rs.ds.Episodes[ep].Len)
	}
	sel := make([]bool, total)
	for g := lo; g < hi; g++ {
		sel[g] = true
	}
	n := hi - lo
	rs.x, rs.e, rs.held = nil, nil, false
	x, e := make([]float64, n*rs.nx), make([]float64, n*rs.ne)
	if err := rs.ds.ReadSelected(sel, x, e); err != nil {
		return fmt.Errorf("trainer: reading this process's samples: %w", err)
	}
	rs.x, rs.e, rs.lo, rs.hi, rs.comm, rs.reach, rs.held = x, e, lo, hi, comm, reach, true
	if size > 1 && rs.view == nil {
		rs.view = make([]int32, total)
		for i := range rs.view {
			rs.view[i] = -1
		}
	}
	return nil
}

// exchanges reports whether the samples of a batch come from several
// processes (gather exchanges them).
func (rs *rowStore) exchanges() bool {
	return rs.partial() && rs.comm != nil && rs.comm.Size() > 1
}

// owner returns the process whose range holds sample g.
func (rs *rowStore) owner(g int) int {
	return sort.SearchInts(rs.bounds[1:], g+1)
}

// gather makes the samples of the spans that mark adds (the samples
// [t0, t1) of episode ep, t1 − t0 ≤ reach + 1) readable by state and
// port until the next gather: every process calls it with the same spans,
// sends those that start in its range and receives the others'. The
// store must hold (hold). Over one process, or on a loaded dataset, it
// does nothing.
func (rs *rowStore) gather(mark func(add func(ep, t0, t1 int))) error {
	if !rs.exchanges() {
		return nil
	}
	if !rs.held {
		return fmt.Errorf("trainer: gathering the samples of a batch before this process holds its own")
	}
	for _, g := range rs.set {
		rs.view[g] = -1
	}
	rs.set, rs.spans = rs.set[:0], rs.spans[:0]
	mark(func(ep, t0, t1 int) { rs.spans = append(rs.spans, sampleSpan{ep, t0, t1}) })
	size, rank := rs.comm.Size(), rs.comm.Rank()
	width := rs.nx + rs.ne
	counts := make([]int, size)
	rs.send = rs.send[:0]
	for _, sp := range rs.spans {
		if sp.t1-sp.t0 > rs.reach+1 {
			return fmt.Errorf("trainer: a span of %d samples, this process holds %d after a sample", sp.t1-sp.t0, rs.reach)
		}
		r := rs.owner(rs.base[sp.ep] + sp.t0)
		counts[r] += (sp.t1 - sp.t0) * width
		if r != rank {
			continue
		}
		for t := sp.t0; t < sp.t1; t++ {
			k := rs.base[sp.ep] + t - rs.lo
			rs.send = append(rs.send, rs.x[k*rs.nx:(k+1)*rs.nx]...)
			rs.send = append(rs.send, rs.e[k*rs.ne:(k+1)*rs.ne]...)
		}
	}
	// where each process's part starts in recv
	at := make([]int, size)
	total := 0
	for r, c := range counts {
		at[r] = total / width
		total += c
	}
	if cap(rs.recv) < total {
		rs.recv = make([]float64, total)
	}
	rs.recv = rs.recv[:total]
	if err := rs.comm.Allgather(rs.send, counts, rs.recv); err != nil {
		return fmt.Errorf("trainer: exchanging the samples of a batch: %w", err)
	}
	for _, sp := range rs.spans {
		g0 := rs.base[sp.ep] + sp.t0
		r := rs.owner(g0)
		for t := range sp.t1 - sp.t0 {
			if rs.view[g0+t] < 0 {
				rs.view[g0+t] = int32(at[r] + t)
				rs.set = append(rs.set, g0+t)
			}
		}
		at[r] += sp.t1 - sp.t0
	}
	return nil
}

// scanChunk is the most samples a scanner reads at once.
const scanChunk = 8192

// scanner reads a dataset's episodes a run of samples at a time, through
// buffers it keeps.
type scanner struct {
	ds   *dataset.Dataset
	x, e []float64
}

// episode calls f with the states and ports of episode ep, in runs of
// consecutive samples from the first (all of them at once when the
// dataset is loaded; read from the files, a run at a time, otherwise).
func (sc *scanner) episode(ep int, f func(x, e []float64)) error {
	ds := sc.ds
	e := &ds.Episodes[ep]
	if ds.Loaded() {
		f(e.X, e.E)
		return nil
	}
	nx, ne := ds.StateDim(), ds.PortDim()
	if sc.x == nil {
		sc.x, sc.e = make([]float64, scanChunk*nx), make([]float64, scanChunk*ne)
	}
	for t0 := 0; t0 < e.Len; t0 += scanChunk {
		t1 := min(t0+scanChunk, e.Len)
		x, p := sc.x[:(t1-t0)*nx], sc.e[:(t1-t0)*ne]
		if err := ds.ReadRows(ep, t0, t1, x, p); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
		f(x, p)
	}
	return nil
}
