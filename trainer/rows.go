package trainer

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/dataset"
)

// rowStore serves a dataset's samples to the shards that gather batches.
// A loaded dataset serves them from its episodes' arrays. An opened one
// (dataset.Open: the arrays on disk) serves those this process holds:
// before an epoch, hold reads the samples of this process's shards of
// every batch of the epoch (which the epoch's shuffle decides) and drops
// the others, so that one of N processes holds about 1/N of the samples
// an epoch reaches.
type rowStore struct {
	ds     *dataset.Dataset
	nx, ne int
	// base is the first sample of each episode in the concatenation of
	// the episodes.
	base []int
	// slot maps a sample of the concatenation to its row in x and e (−1:
	// not held); sel marks the samples to hold.
	slot []int32
	sel  []bool
	x, e []float64
	// key names what the rows are held for; valid when some are.
	key   [2]uint64
	valid bool
}

func newRowStore(ds *dataset.Dataset) *rowStore {
	rs := &rowStore{ds: ds, nx: ds.StateDim(), ne: ds.PortDim()}
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

// row returns the row of sample t of episode ep in x and e.
func (rs *rowStore) row(ep, t int) int {
	k := rs.slot[rs.base[ep]+t]
	if k < 0 {
		panic(fmt.Sprintf("trainer: sample %d of episode %d is not held by this process", t, ep))
	}
	return int(k)
}

// state returns the state of sample t of episode ep (2n values).
func (rs *rowStore) state(ep, t int) []float64 {
	if rs.base == nil {
		return rs.ds.Episodes[ep].X[t*rs.nx : (t+1)*rs.nx]
	}
	k := rs.row(ep, t)
	return rs.x[k*rs.nx : (k+1)*rs.nx]
}

// port returns the ports of sample t of episode ep (n_u + n_c values).
func (rs *rowStore) port(ep, t int) []float64 {
	if rs.base == nil {
		return rs.ds.Episodes[ep].E[t*rs.ne : (t+1)*rs.ne]
	}
	k := rs.row(ep, t)
	return rs.e[k*rs.ne : (k+1)*rs.ne]
}

// hold makes the store hold the samples that mark adds (the samples
// [t0, t1) of episode ep for every call of add) and no others, reading
// them from the dataset's files; key names the selection, and a store
// that holds key's already reads nothing. A loaded dataset holds
// everything.
func (rs *rowStore) hold(key [2]uint64, mark func(add func(ep, t0, t1 int))) error {
	if !rs.partial() || (rs.valid && rs.key == key) {
		return nil
	}
	total := rs.ds.Samples()
	if total > math.MaxInt32 {
		return fmt.Errorf("trainer: %d samples: reading part of a dataset handles at most %d", total, math.MaxInt32)
	}
	if rs.sel == nil {
		rs.sel, rs.slot = make([]bool, total), make([]int32, total)
	}
	clear(rs.sel)
	mark(func(ep, t0, t1 int) {
		b := rs.base[ep]
		for t := t0; t < t1; t++ {
			rs.sel[b+t] = true
		}
	})
	n := 0
	for i, v := range rs.sel {
		rs.slot[i] = -1
		if v {
			rs.slot[i] = int32(n)
			n++
		}
	}
	// the previous epoch's rows go first, so that the two are not held
	// at once
	rs.valid = false
	if cap(rs.x) < n*rs.nx || cap(rs.e) < n*rs.ne {
		// with room for the next epochs' selections, a little larger
		rs.x, rs.e = nil, nil
		m := n + n/16
		rs.x, rs.e = make([]float64, n*rs.nx, m*rs.nx), make([]float64, n*rs.ne, m*rs.ne)
	}
	rs.x, rs.e = rs.x[:n*rs.nx], rs.e[:n*rs.ne]
	if err := rs.ds.ReadSelected(rs.sel, rs.x, rs.e); err != nil {
		return fmt.Errorf("trainer: reading this process's samples: %w", err)
	}
	rs.key, rs.valid = key, true
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
