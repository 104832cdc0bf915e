package dataset

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOpenReadsRows opens a saved dataset without its arrays and reads
// samples from the files: every selection, whole episodes and single
// samples give the bits Load gives.
func TestOpenReadsRows(t *testing.T) {
	d := sample(3, 5000) // episodes longer than one read chunk
	d.Episodes[1].Len = 37
	d.Episodes[1].X, d.Episodes[1].E = d.Episodes[1].X[:37*4], d.Episodes[1].E[:37*2]
	dir := t.TempDir()
	if err := d.Save(dir); err != nil {
		t.Fatal(err)
	}
	full, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if lazy.Loaded() || !full.Loaded() {
		t.Fatalf("Loaded: Open %v, Load %v", lazy.Loaded(), full.Loaded())
	}
	if lazy.Episodes[0].X != nil || lazy.Samples() != 10037 {
		t.Fatalf("Open read the arrays or miscounted the samples (%d)", lazy.Samples())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name    string
		density float64
	}{{"none", 0}, {"sparse", 0.001}, {"tenth", 0.1}, {"half", 0.5}, {"all", 1}} {
		t.Run(c.name, func(t *testing.T) {
			sel := make([]bool, lazy.Samples())
			n := 0
			for i := range sel {
				if sel[i] = rng.Float64() < c.density; sel[i] {
					n++
				}
			}
			var got, want [2][]float64
			for k, ds := range []*Dataset{lazy, full} {
				x, e := make([]float64, n*4), make([]float64, n*2)
				if err := ds.ReadSelected(sel, x, e); err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					got = [2][]float64{x, e}
				} else {
					want = [2][]float64{x, e}
				}
			}
			// the selection straight from the arrays
			var wx, we []float64
			at := 0
			for _, ep := range full.Episodes {
				for s := range ep.Len {
					if sel[at+s] {
						wx = append(wx, ep.X[s*4:(s+1)*4]...)
						we = append(we, ep.E[s*2:(s+1)*2]...)
					}
				}
				at += ep.Len
			}
			for k, w := range [][]float64{wx, we} {
				if !slices.Equal(got[k], w) || !slices.Equal(want[k], w) {
					t.Fatalf("array %d of the %d selected samples differs", k, n)
				}
			}
		})
	}
	x, e := make([]float64, 3*4), make([]float64, 3*2)
	if err := lazy.ReadRows(2, 4095, 4098, x, e); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x, full.Episodes[2].X[4095*4:4098*4]) || !slices.Equal(e, full.Episodes[2].E[4095*2:4098*2]) {
		t.Fatal("ReadRows across a chunk boundary differs from the arrays")
	}
	if err := lazy.ReadRows(1, 30, 38, x, e); !errors.Is(err, ErrDataset) {
		t.Fatalf("rows past the episode's end: %v", err)
	}
	if err := lazy.LoadArrays(); err != nil || !lazy.Loaded() || !slices.Equal(lazy.Episodes[2].X, full.Episodes[2].X) {
		t.Fatalf("LoadArrays: %v", err)
	}
}

// TestOpenBadFiles: Open refuses what Load refuses, and reading a sample
// that is not finite names it.
func TestOpenBadFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, dir string)
		open  string // the error of Open ("" none)
		read  string // the error of reading every sample
	}{
		{"truncated", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "x.npy")
			st, _ := os.Stat(p)
			if err := os.Truncate(p, st.Size()-8); err != nil {
				t.Fatal(err)
			}
		}, "data truncated", ""},
		{"nan", func(t *testing.T, dir string) {
			d := sample(2, 40)
			d.Episodes[1].X[7*4+3] = math.Inf(1)
			// Save refuses it: write the arrays as they are
			var x []float64
			for _, ep := range d.Episodes {
				x = append(x, ep.X...)
			}
			if err := SaveNpy(filepath.Join(dir, "x.npy"), x, 80, 4); err != nil {
				t.Fatal(err)
			}
		}, "", `episode "epb" sample 7 state 3 is +Inf`},
		{"shape", func(t *testing.T, dir string) {
			if err := SaveNpy(filepath.Join(dir, "e.npy"), make([]float64, 80*3), 80, 3); err != nil {
				t.Fatal(err)
			}
		}, "e.npy 80×3", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := sample(2, 40).Save(dir); err != nil {
				t.Fatal(err)
			}
			c.spoil(t, dir)
			d, err := Open(dir)
			if c.open != "" {
				if err == nil || !strings.Contains(err.Error(), c.open) {
					t.Fatalf("Open: %v, want %q", err, c.open)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sel := make([]bool, d.Samples())
			for i := range sel {
				sel[i] = true
			}
			err = d.ReadSelected(sel, make([]float64, 80*4), make([]float64, 80*2))
			if err == nil || !strings.Contains(err.Error(), c.read) || !errors.Is(err, ErrDataset) {
				t.Fatalf("ReadSelected: %v, want %q", err, c.read)
			}
		})
	}
}
