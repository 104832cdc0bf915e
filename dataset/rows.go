package dataset

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// arrays locates the arrays of a dataset on disk: x.npy and e.npy, their
// shapes and where their data start.
type arrays struct {
	dir          string
	rows         int
	xPath, ePath string
	xData, eData int64 // byte offsets of the data
	xCols, eCols int
}

// Open reads the description of the dataset in dir (meta.json and the
// headers of x.npy and e.npy) and checks it as Load does, but leaves the
// arrays on disk: the episodes' X and E are nil until LoadArrays, and
// ReadRows and ReadSelected read samples from the files, checking them as
// they come. A process that trains on part of a dataset (one of several
// MPI processes) so holds only the samples it needs.
func Open(dir string) (*Dataset, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var d Dataset
	if err := json.Unmarshal(raw, &d.Meta); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrDataset, filepath.Join(dir, "meta.json"), err)
	}
	if d.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%w: %s: format version %d, this build reads %d", ErrDataset, dir, d.FormatVersion, FormatVersion)
	}
	a := &arrays{dir: dir, xPath: filepath.Join(dir, "x.npy"), ePath: filepath.Join(dir, "e.npy")}
	xr, xc, xoff, err := npyHeader(a.xPath)
	if err != nil {
		return nil, err
	}
	er, ec, eoff, err := npyHeader(a.ePath)
	if err != nil {
		return nil, err
	}
	if xc != d.StateDim() || (ec != d.PortDim() && !(d.PortDim() == 0 && ec == 1 && er == 0)) || xr != er {
		return nil, fmt.Errorf("%w: %s: x.npy is %d×%d and e.npy %d×%d, meta.json says 2n=%d ports=%d", ErrDataset, dir, xr, xc, er, ec, d.StateDim(), d.PortDim())
	}
	a.rows, a.xCols, a.eCols, a.xData, a.eData = xr, xc, d.PortDim(), xoff, eoff
	for _, ep := range d.Episodes {
		if ep.Offset < 0 || ep.Len < 0 || ep.Offset+ep.Len > xr {
			return nil, fmt.Errorf("%w: %s: episode %q rows [%d, %d) outside the %d rows of x.npy", ErrDataset, dir, ep.Name, ep.Offset, ep.Offset+ep.Len, xr)
		}
	}
	d.src = a
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &d, nil
}

// npyHeader reads the shape of the .npy file at path and where its data
// start, checking that the file holds them.
func npyHeader(path string) (rows, cols int, dataOffset int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("dataset: %w", err)
	}
	rows, cols, off, err := readNpyHeader(bufio.NewReader(f), int(st.Size()/8)+1)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	if want := int64(off) + 8*int64(rows)*int64(cols); st.Size() < want {
		return 0, 0, 0, fmt.Errorf("%s: %w: data truncated (%d bytes, want %d)", path, ErrNpy, st.Size(), want)
	}
	return rows, cols, int64(off), nil
}

// checkEpisodes checks the episodes of an opened dataset against its
// files: every episode inside the arrays' rows.
func (a *arrays) checkEpisodes(d *Dataset) error {
	for _, ep := range d.Episodes {
		if ep.X != nil || ep.E != nil {
			return fmt.Errorf("%w: episode %q has arrays, but the dataset's arrays are on disk", ErrDataset, ep.Name)
		}
		if ep.Offset < 0 || ep.Len < 0 || ep.Offset+ep.Len > a.rows {
			return fmt.Errorf("%w: episode %q rows [%d, %d) outside the %d rows of x.npy", ErrDataset, ep.Name, ep.Offset, ep.Offset+ep.Len, a.rows)
		}
	}
	return nil
}

// Loaded reports whether the dataset's arrays are in memory (the episodes'
// X and E), as Load leaves them; false after Open.
func (d *Dataset) Loaded() bool { return d.src == nil }

// LoadArrays reads the arrays of an opened dataset into the episodes' X
// and E, checking them as Load does; the dataset is then Loaded. It does
// nothing when the arrays are in memory.
func (d *Dataset) LoadArrays() error {
	a := d.src
	if a == nil {
		return nil
	}
	x, xr, xc, err := LoadNpy(a.xPath)
	if err != nil {
		return err
	}
	e, er, ec, err := LoadNpy(a.ePath)
	if err != nil {
		return err
	}
	if xr != a.rows || xc != a.xCols || er != a.rows || (ec != a.eCols && !(a.eCols == 0 && er == 0)) {
		return fmt.Errorf("%w: %s: the arrays changed since the dataset was opened (x.npy %d×%d, e.npy %d×%d)", ErrDataset, a.dir, xr, xc, er, ec)
	}
	nx, ne := d.StateDim(), d.PortDim()
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		ep.X = x[ep.Offset*nx : (ep.Offset+ep.Len)*nx]
		ep.E = e[ep.Offset*ne : (ep.Offset+ep.Len)*ne]
	}
	d.src = nil
	if err := d.Validate(); err != nil {
		return fmt.Errorf("%s: %w", a.dir, err)
	}
	return nil
}

// Samples returns the number of samples of all episodes.
func (d *Dataset) Samples() int {
	n := 0
	for _, ep := range d.Episodes {
		n += ep.Len
	}
	return n
}

// ReadRows copies samples [t0, t1) of episode ep into x ((t1−t0)·2n values)
// and e ((t1−t0)·(n_u+n_c)), from memory or from the files.
func (d *Dataset) ReadRows(ep, t0, t1 int, x, e []float64) error {
	if ep < 0 || ep >= len(d.Episodes) || t0 < 0 || t1 < t0 || t1 > d.Episodes[ep].Len {
		return fmt.Errorf("%w: samples [%d, %d) of episode %d", ErrDataset, t0, t1, ep)
	}
	sel := make([]bool, t1-t0)
	for i := range sel {
		sel[i] = true
	}
	r, err := d.newReader()
	if err != nil {
		return err
	}
	defer r.close()
	return r.read(ep, t0, sel, x, e)
}

// ReadSelected copies the selected samples into x and e, in order: sel
// has one entry per sample of the episodes, episode after episode
// (Samples entries), and x and e receive 2n and n_u+n_c values for each
// selected one. An opened dataset reads them from its files in runs of
// nearby samples and checks that they are finite.
func (d *Dataset) ReadSelected(sel []bool, x, e []float64) error {
	if len(sel) != d.Samples() {
		return fmt.Errorf("%w: %d samples selected among %d", ErrDataset, len(sel), d.Samples())
	}
	r, err := d.newReader()
	if err != nil {
		return err
	}
	defer r.close()
	nx, ne := d.StateDim(), d.PortDim()
	at := 0
	for i, ep := range d.Episodes {
		s := sel[at : at+ep.Len]
		at += ep.Len
		n := 0
		for _, v := range s {
			if v {
				n++
			}
		}
		if len(x) < n*nx || len(e) < n*ne {
			return fmt.Errorf("%w: room for %d states and %d ports, more samples selected", ErrDataset, len(x)/max(nx, 1), len(e)/max(ne, 1))
		}
		if err := r.read(i, 0, s, x, e); err != nil {
			return err
		}
		x, e = x[n*nx:], e[n*ne:]
	}
	return nil
}

// readChunk is the most samples one read covers.
const readChunk = 4096

// reader reads samples of a dataset: from memory, or from its open files
// through one buffer.
type reader struct {
	d      *Dataset
	xf, ef *os.File
	buf    []byte
}

func (d *Dataset) newReader() (*reader, error) {
	r := &reader{d: d}
	if d.src == nil {
		return r, nil
	}
	var err error
	if r.xf, err = os.Open(d.src.xPath); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	if d.PortDim() > 0 {
		if r.ef, err = os.Open(d.src.ePath); err != nil {
			r.xf.Close()
			return nil, fmt.Errorf("dataset: %w", err)
		}
	}
	r.buf = make([]byte, readChunk*8*max(d.StateDim(), d.PortDim()))
	return r, nil
}

func (r *reader) close() {
	if r.xf != nil {
		r.xf.Close()
	}
	if r.ef != nil {
		r.ef.Close()
	}
}

// read copies the selected samples t0+i (sel[i]) of episode ep into x
// and e.
func (r *reader) read(ep, t0 int, sel []bool, x, e []float64) error {
	d := r.d
	nx, ne := d.StateDim(), d.PortDim()
	episode := &d.Episodes[ep]
	if d.src == nil {
		k := 0
		for i, v := range sel {
			if v {
				t := t0 + i
				copy(x[k*nx:(k+1)*nx], episode.X[t*nx:(t+1)*nx])
				copy(e[k*ne:(k+1)*ne], episode.E[t*ne:(t+1)*ne])
				k++
			}
		}
		return nil
	}
	k := 0
	for c0 := 0; c0 < len(sel); c0 += readChunk {
		c1 := min(c0+readChunk, len(sel))
		// the span of the chunk's selected samples
		a, b := c1, c0
		for i := c0; i < c1; i++ {
			if sel[i] {
				a, b = min(a, i), i+1
			}
		}
		if a >= b {
			continue
		}
		row := int64(episode.Offset + t0 + a)
		for _, arr := range []struct {
			f    *os.File
			off  int64
			cols int
			dst  []float64
			what string
		}{{r.xf, d.src.xData, nx, x, "state"}, {r.ef, d.src.eData, ne, e, "port"}} {
			if arr.cols == 0 {
				continue
			}
			buf := r.buf[:(b-a)*arr.cols*8]
			if _, err := arr.f.ReadAt(buf, arr.off+row*int64(arr.cols)*8); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("dataset: %s: %w", arr.f.Name(), err)
			}
			j := k
			for i := a; i < b; i++ {
				if !sel[i] {
					continue
				}
				src := buf[(i-a)*arr.cols*8:]
				dst := arr.dst[j*arr.cols : (j+1)*arr.cols]
				for c := range dst {
					v := math.Float64frombits(binary.LittleEndian.Uint64(src[8*c:]))
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return fmt.Errorf("%w: %s: episode %q sample %d %s %d is %v", ErrDataset, d.src.dir, episode.Name, t0+i, arr.what, c, v)
					}
					dst[c] = v
				}
				j++
			}
		}
		for i := a; i < b; i++ {
			if sel[i] {
				k++
			}
		}
	}
	return nil
}
