package dataset

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func sample(nEp, length int) *Dataset {
	d := &Dataset{Meta: Meta{N: 2, NU: 2, Dt: 0.01, WindowLen: 10, Stride: 3}}
	for i := range nEp {
		ep := Episode{Name: "ep" + string(rune('a'+i)), Len: length, X: make([]float64, length*4), E: make([]float64, length*2)}
		for k := range ep.X {
			ep.X[k] = math.Sin(float64(k+i)) * 3
		}
		for k := range ep.E {
			ep.E[k] = math.Cos(float64(k * (i + 1)))
		}
		d.Episodes = append(d.Episodes, ep)
	}
	return d
}

func TestSaveLoadRoundTrip(t *testing.T) {
	d := sample(3, 57)
	dir := t.TempDir()
	if err := d.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, ep := range d.Episodes {
		g := got.Episodes[i]
		if g.Name != ep.Name || g.Len != ep.Len {
			t.Fatalf("episode %d header changed", i)
		}
		for k := range ep.X {
			if math.Float64bits(g.X[k]) != math.Float64bits(ep.X[k]) {
				t.Fatalf("episode %d state %d not bit-exact", i, k)
			}
		}
		for k := range ep.E {
			if math.Float64bits(g.E[k]) != math.Float64bits(ep.E[k]) {
				t.Fatalf("episode %d port %d not bit-exact", i, k)
			}
		}
	}
	// NumPy can read what we write, when python3 has numpy.
	if exec.Command("python3", "-c", "import numpy").Run() == nil {
		out, err := exec.Command("python3", "-c", "import numpy,sys; a=numpy.load(sys.argv[1]); print(a.shape, repr(a[1,2]))", filepath.Join(dir, "x.npy")).CombinedOutput()
		if err != nil {
			t.Fatalf("numpy: %v: %s", err, out)
		}
		if !strings.HasPrefix(string(out), "(171, 4)") {
			t.Errorf("numpy sees %s", out)
		}
	}
}

func TestUniqueTransitionsMatchWindows(t *testing.T) {
	d := sample(2, 47)
	counts := map[[2]int]float64{}
	for _, w := range d.Windows() {
		for k := w.Start; k < w.Start+w.Len-1; k++ {
			counts[[2]int{w.Episode, k}]++
		}
	}
	ut := d.UniqueTransitions()
	if len(ut) != len(counts) {
		t.Fatalf("%d unique transitions, windows cover %d", len(ut), len(counts))
	}
	total := 0.0
	for _, tr := range ut {
		if counts[[2]int{tr.Episode, tr.T}] != tr.Weight {
			t.Fatalf("transition %+v weight, windows count %v", tr, counts[[2]int{tr.Episode, tr.T}])
		}
		total += tr.Weight
	}
	if want := float64(len(d.Windows()) * (d.WindowLen - 1)); total != want {
		t.Errorf("total weight %v, want %v", total, want)
	}
}

func TestBadDatasets(t *testing.T) {
	d := sample(1, 20)
	d.Episodes[0].X[9] = math.NaN()
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), `episode "epa" sample 2 state 1 is NaN`) {
		t.Errorf("NaN: %v", err)
	}
	dir := t.TempDir()
	good := sample(1, 20)
	if err := good.Save(dir); err != nil {
		t.Fatal(err)
	}
	// Truncated array.
	raw, _ := os.ReadFile(filepath.Join(dir, "x.npy"))
	os.WriteFile(filepath.Join(dir, "x.npy"), raw[:len(raw)-5], 0o644)
	if _, err := Load(dir); err == nil || !errors.Is(err, ErrNpy) || !strings.Contains(err.Error(), "x.npy") {
		t.Errorf("truncated: %v", err)
	}
	// Wrong dtype.
	var buf bytes.Buffer
	WriteNpy(&buf, []float64{1, 2}, 1, 2)
	bad := bytes.Replace(buf.Bytes(), []byte("<f8"), []byte("<f4"), 1)
	if _, _, _, err := ReadNpy(bytes.NewReader(bad), 10); err == nil {
		t.Error("float32 accepted")
	}
	// Declared shape above the limit.
	huge := bytes.Replace(buf.Bytes(), []byte("(1, 2)"), []byte("(9999999999, 2)"), 1)
	if _, _, _, err := ReadNpy(bytes.NewReader(huge), 1000); err == nil {
		t.Error("huge shape accepted")
	}
	if _, err := Load(filepath.Join(dir, "nope")); err == nil {
		t.Error("missing directory loaded")
	}
}

func FuzzReadNpy(f *testing.F) {
	var buf bytes.Buffer
	WriteNpy(&buf, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		d, r, c, err := ReadNpy(bytes.NewReader(data), 1<<16)
		if err == nil && len(d) != r*c {
			t.Fatalf("%d values for shape %d×%d", len(d), r, c)
		}
	})
}

// TestSaveFailedMidway rewrites a dataset directory with a Save that
// fails after x.npy (e.npy cannot be replaced): the directory keeps no
// meta.json, so Load does not take the mix of new and old arrays for a
// complete dataset, and no temporary file is left behind.
func TestSaveFailedMidway(t *testing.T) {
	dir := t.TempDir()
	if err := sample(3, 57).Save(dir); err != nil {
		t.Fatal(err)
	}
	e := filepath.Join(dir, "e.npy")
	if err := os.Remove(e); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e, "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sample(2, 40).Save(dir); err == nil {
		t.Fatal("Save over a directory named e.npy succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); !os.IsNotExist(err) {
		t.Errorf("a failed Save left meta.json (%v)", err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("Load took the directory of a failed Save for a dataset")
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range es {
		if f.Name() != "x.npy" && f.Name() != "e.npy" {
			t.Errorf("a failed Save left %s", f.Name())
		}
	}
}
