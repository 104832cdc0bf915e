// Package dataset holds calisym's training data: episodes of physical states
// x = (q, p) and ports e = (u, f_c) sampled on one clock, the windows cut from
// them, and the on-disk format that bagtools writes and the trainer reads.
//
// On disk a dataset is a directory with meta.json, x.npy (all episodes'
// states concatenated, rows × 2n) and e.npy (rows × (n_u + n_c)). Windows are
// described by episode, length and stride, not stored, so overlapping windows
// cost nothing. NumPy reads the arrays with numpy.load.
package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/calisym/calisym/internal/atomicfile"
)

// FormatVersion is the dataset format version written by this package.
const FormatVersion = 1

// ErrDataset wraps every problem found in a dataset.
var ErrDataset = errors.New("dataset: invalid")

// Episode is one contiguous recording: Len samples of state and ports.
type Episode struct {
	Name string `json:"name"`
	// Len is the number of samples.
	Len int `json:"len"`
	// Offset is the first row of the episode inside x.npy and e.npy.
	Offset int `json:"offset"`
	// Tags carries per-episode facts such as the initial energy.
	Tags map[string]float64 `json:"tags,omitempty"`
	// X holds Len×2n states, row major.
	X []float64 `json:"-"`
	// E holds Len×(n_u+n_c) ports, row major.
	E []float64 `json:"-"`
}

// Meta describes a dataset.
type Meta struct {
	FormatVersion int `json:"format_version"`
	// N, NU, NC are the lift block sizes: configuration, control port, contact port.
	N  int `json:"n"`
	NU int `json:"n_u"`
	NC int `json:"n_c"`
	// Dt is the sampling period in seconds.
	Dt float64 `json:"dt"`
	// Coordinates names the n configuration coordinates; Ports the port values.
	Coordinates []string `json:"coordinates,omitempty"`
	Ports       []string `json:"ports,omitempty"`
	// WindowLen and Stride describe the training windows (in samples).
	WindowLen int `json:"window_len"`
	Stride    int `json:"stride"`
	// Split names the split ("train", "id", "ood", …).
	Split string `json:"split,omitempty"`
	// Source records provenance (logs, params file, simulator settings).
	Source map[string]string `json:"source,omitempty"`
	// Report carries conversion statistics.
	Report   map[string]any `json:"report,omitempty"`
	Episodes []Episode      `json:"episodes"`
}

// Dataset is a set of episodes with their description. Load reads its
// arrays into the episodes' X and E; Open leaves them on disk, to be read
// a part at a time (ReadRows, ReadSelected).
type Dataset struct {
	Meta
	// src holds the files of a dataset whose arrays stay on disk (Open);
	// nil when the arrays are in memory.
	src *arrays
}

// StateDim returns 2n.
func (d *Dataset) StateDim() int { return 2 * d.N }

// PortDim returns n_u + n_c.
func (d *Dataset) PortDim() int { return d.NU + d.NC }

// Validate checks shapes and finiteness, naming the episode and sample of
// the first problem.
func (d *Dataset) Validate() error {
	if d.N <= 0 || d.NU < 0 || d.NC < 0 {
		return fmt.Errorf("%w: block sizes n=%d n_u=%d n_c=%d", ErrDataset, d.N, d.NU, d.NC)
	}
	if !(d.Dt > 0) {
		return fmt.Errorf("%w: sampling period %v", ErrDataset, d.Dt)
	}
	if d.WindowLen < 2 || d.Stride < 1 {
		return fmt.Errorf("%w: window length %d and stride %d (need ≥ 2 and ≥ 1)", ErrDataset, d.WindowLen, d.Stride)
	}
	if d.src != nil {
		// the arrays' values are checked as they are read
		return d.src.checkEpisodes(d)
	}
	nx, ne := d.StateDim(), d.PortDim()
	for _, ep := range d.Episodes {
		if len(ep.X) != ep.Len*nx || len(ep.E) != ep.Len*ne {
			return fmt.Errorf("%w: episode %q has %d state and %d port values for %d samples of %d and %d", ErrDataset, ep.Name, len(ep.X), len(ep.E), ep.Len, nx, ne)
		}
		for i, v := range ep.X {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: episode %q sample %d state %d is %v", ErrDataset, ep.Name, i/nx, i%nx, v)
			}
		}
		for i, v := range ep.E {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: episode %q sample %d port %d is %v", ErrDataset, ep.Name, i/ne, i%ne, v)
			}
		}
	}
	return nil
}

// Save writes the dataset into directory dir (created if needed). Each
// file is written under a temporary name and renamed into place, and
// meta.json, which Load reads first, goes last: a previous meta.json is
// removed before the arrays are rewritten, so a Save that fails midway
// leaves a directory that Load refuses, never one that it takes for a
// complete dataset.
func (d *Dataset) Save(dir string) error {
	if err := d.LoadArrays(); err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := atomicfile.Remove(filepath.Join(dir, "meta.json")); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	d.FormatVersion = FormatVersion
	nx, ne := d.StateDim(), d.PortDim()
	var x, e []float64
	off := 0
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		ep.Offset = off
		off += ep.Len
		x = append(x, ep.X...)
		e = append(e, ep.E...)
	}
	if err := SaveNpy(filepath.Join(dir, "x.npy"), x, off, nx); err != nil {
		return err
	}
	if err := SaveNpy(filepath.Join(dir, "e.npy"), e, off, ne); err != nil {
		return err
	}
	js, err := json.MarshalIndent(d.Meta, "", "  ")
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "meta.json"), append(js, '\n')); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// Load reads a dataset directory written by Save (or by numpy, following the
// same layout), checking that arrays and description agree.
func Load(dir string) (*Dataset, error) {
	d, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if err := d.LoadArrays(); err != nil {
		return nil, err
	}
	return d, nil
}

// Window is a slice of one episode: samples [Start, Start+Len).
type Window struct {
	Episode int
	Start   int
	Len     int
}

// Windows returns the training windows: in every episode, windows of
// WindowLen samples starting every Stride samples.
func (d *Dataset) Windows() []Window {
	return d.WindowsOf(d.WindowLen, d.Stride)
}

// WindowsOf returns windows of the given length and stride.
func (d *Dataset) WindowsOf(length, stride int) []Window {
	var ws []Window
	for i, ep := range d.Episodes {
		for s := 0; s+length <= ep.Len; s += stride {
			ws = append(ws, Window{Episode: i, Start: s, Len: length})
		}
	}
	return ws
}

// Transition identifies the one-step transition from sample T to T+1 of an
// episode, with the number of training windows that contain it.
type Transition struct {
	Episode int
	T       int
	Weight  float64
}

// UniqueTransitions returns every transition covered by the training windows
// once, weighted by how many windows contain it, so that a loss over the
// unique transitions equals the loss over all windows.
func (d *Dataset) UniqueTransitions() []Transition {
	var out []Transition
	L, S := d.WindowLen, d.Stride
	for i, ep := range d.Episodes {
		counts := make([]int, max(ep.Len-1, 0))
		for s := 0; s+L <= ep.Len; s += S {
			for t := s; t < s+L-1; t++ {
				counts[t]++
			}
		}
		for t, c := range counts {
			if c > 0 {
				out = append(out, Transition{Episode: i, T: t, Weight: float64(c)})
			}
		}
	}
	return out
}
