package forecast

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"
)

// TestLoopHoldWithHistory: the hold policy in the loop writes, at every
// step, the held measured ports and their means over the samples before
// the prediction and the held steps since (statemap.PortHistory fed by
// hand), and leaves the past history it was started from unchanged.
func TestLoopHoldWithHistory(t *testing.T) {
	const nu, nc, m, H = 2, 1, 3, 6
	past, err := statemap.NewPortHistory(m, nu, nc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		past.Push([]float64{float64(i), 10 * float64(i), -float64(i)})
	}
	ref, _ := statemap.NewPortHistory(m, nu, nc)
	ref.CopyFrom(past)
	scratch, _ := statemap.NewPortHistory(m, nu, nc)
	l, err := NewLoop(Hold{}, nu+nc, H, scratch)
	if err != nil {
		t.Fatal(err)
	}
	m0 := []float64{7, 8, 9}
	x := []float64{0, 0}
	l.Start(x, m0, past)
	row, want := make([]float64, 2*(nu+nc)), make([]float64, 2*(nu+nc))
	for k := range H {
		if err := l.PortsAt(k, x, row); err != nil {
			t.Fatal(err)
		}
		ref.Ports(m0, want)
		ref.Push(m0)
		for j := range row {
			if row[j] != want[j] {
				t.Fatalf("step %d port %d: %v, want %v", k, j, row[j], want[j])
			}
		}
	}
	if past.Held() != m {
		t.Errorf("the past history holds %d samples after the loop, want %d (unchanged)", past.Held(), m)
	}
	for k := range H {
		if got := l.Measured()[k*(nu+nc) : (k+1)*(nu+nc)]; got[0] != 7 || got[2] != 9 {
			t.Errorf("measured ports of step %d: %v, want %v", k, got, m0)
		}
	}
	if err := l.PortsAt(H, x, row); err == nil {
		t.Error("a step past the horizon was accepted")
	}
}

// linearPolicy is a Learned policy that computes m_k = A x_k exactly: no
// random features and weights set by hand.
func linearPolicy(t *testing.T, n, nm int, a [][]float64) *Learned {
	ni := Inputs(n, nm)
	one := func(v float64, k int) []float64 {
		s := make([]float64, k)
		for i := range s {
			s[i] = v
		}
		return s
	}
	l := NewLearned(n, nm, 4, 1, one(0, ni), one(1, ni), one(0, nm), one(1, nm))
	w := make([]float64, nm*l.Cols())
	for i := range nm {
		for j := range 2 * n {
			w[i*l.Cols()+1+j] = a[i][j]
		}
	}
	if err := l.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLearnedPolicy: Next applies the features to (x_k, x_0, m_0), not to
// the previous step's ports, and a clone predicts the same.
func TestLearnedPolicy(t *testing.T) {
	l := linearPolicy(t, 1, 2, [][]float64{{2, 0}, {0, -1}})
	l.Begin([]float64{5, 5}, []float64{100, 100})
	out := make([]float64, 2)
	l.Next(1, []float64{1.5, 3}, []float64{-7, -7}, out)
	if out[0] != 3 || out[1] != -3 {
		t.Errorf("ports %v, want [3 -3]", out)
	}
	c := l.Clone()
	c.Begin([]float64{5, 5}, []float64{100, 100})
	out2 := make([]float64, 2)
	c.Next(1, []float64{1.5, 3}, nil, out2)
	if out2[0] != out[0] || out2[1] != out[1] {
		t.Errorf("clone %v, original %v", out2, out)
	}
	if a := testing.AllocsPerRun(50, func() { l.Next(2, []float64{1, 2}, nil, out) }); a > 1 {
		// the argument slice literal may allocate; Next itself must not
		t.Errorf("%v allocations per step", a)
	}
}

func testFile(t *testing.T) *File {
	l := linearPolicy(t, 2, 2, [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}})
	return &File{Binding: Binding{ModelSHA256: strings.Repeat("ab", 32), PortMap: `{"control":"direct"}`, Coordinates: []string{"a", "b"},
		Ports: []string{"u", "mean2(u)", "mean2(f)", "f"}, N: 2, NU: 3, NC: 1, Dt: 0.01, PortMean: 2}, Policy: l}
}

// TestFileRoundTrip: a saved file loads with the same policy and binding;
// a changed byte, another format, a policy of the wrong size, a value that
// is not finite and a file that is not JSON are refused with ErrFile.
func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.forecaster.json")
	f := testFile(t)
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Binding.Diff(f.Binding) != "" || len(g.Policy.W) != len(f.Policy.W) {
		t.Fatalf("loaded %+v, saved %+v", g.Binding, f.Binding)
	}
	for i := range f.Policy.W {
		if g.Policy.W[i] != f.Policy.W[i] {
			t.Fatalf("weight %d: %v loaded, %v saved", i, g.Policy.W[i], f.Policy.W[i])
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(fn func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"changed weight", edit(func(m map[string]any) { m["policy"].(map[string]any)["w"].([]any)[1] = 0.5 }), "changed or corrupted"},
		{"other model", edit(func(m map[string]any) { m["binding"].(map[string]any)["model_sha256"] = "00" }), "changed or corrupted"},
		{"format", edit(func(m map[string]any) { m["format"] = "onnx" }), "format"},
		{"version", edit(func(m map[string]any) { m["version"] = 2 }), "version"},
		{"short weights", resign(t, edit(func(m map[string]any) {
			p := m["policy"].(map[string]any)
			p["w"] = p["w"].([]any)[:3]
		})), "weights"},
		{"policy of another layout", resign(t, edit(func(m map[string]any) { m["binding"].(map[string]any)["n"] = 3 })), "a policy of n = 2"},
		{"not json", []byte("{\"format\":"), "not a forecaster file"},
		{"empty", nil, "not a forecaster file"},
		{"unknown key", edit(func(m map[string]any) { m["extra"] = 1 }), "not a forecaster file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(tc.data))
			if !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrFile saying %q", err, tc.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, ErrFile) {
		t.Errorf("missing file: %v", err)
	}
}

// resign gives an edited file a valid checksum, so that the checks after
// it are reached.
func resign(t *testing.T, b []byte) []byte {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	f.SHA256 = ""
	body, err := json.Marshal(&f)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	f.SHA256 = hex.EncodeToString(sum[:])
	out, err := json.Marshal(&f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBindingRefusals: a forecaster is refused, naming what differs, for
// another model file, port map, layout, step, port history, coordinates
// or ports.
func TestBindingRefusals(t *testing.T) {
	f := testFile(t)
	if err := f.Check(f.Binding); err != nil {
		t.Fatalf("its own binding: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(b *Binding)
		want string
	}{
		{"model", func(b *Binding) { b.ModelSHA256 = strings.Repeat("cd", 32) }, "model file"},
		{"port map", func(b *Binding) { b.PortMap = `{"control":"quadrotor"}` }, "port map"},
		{"layout", func(b *Binding) { b.NC = 2 }, "layout"},
		{"step", func(b *Binding) { b.Dt = 0.0025 }, "step"},
		{"port history", func(b *Binding) { b.PortMean = 5 }, "port history"},
		{"coordinates", func(b *Binding) { b.Coordinates = []string{"b", "a"} }, "coordinates"},
		{"ports", func(b *Binding) { b.Ports = []string{"u", "mean2(u)", "mean2(f)", "g"} }, "ports"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := f.Binding
			b.Coordinates, b.Ports = append([]string(nil), b.Coordinates...), append([]string(nil), b.Ports...)
			tc.edit(&b)
			err := f.Check(b)
			if !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrFile naming %q", err, tc.want)
			}
		})
	}
}

// TestMeasureFunc: the measured ports of a layout with a port history are
// its measured control values and its contact values, around the means.
func TestMeasureFunc(t *testing.T) {
	b := Binding{N: 1, NU: 5, NC: 1, PortMean: 4} // a = 2: u1 u2 | 3 means | f
	if got := b.MeasuredPorts(); got != 3 {
		t.Fatalf("%d measured ports, want 3", got)
	}
	m := make([]float64, 3)
	MeasureFunc(b)([]float64{1, 2, 10, 20, 30, 3}, m)
	if m[0] != 1 || m[1] != 2 || m[2] != 3 {
		t.Errorf("measured %v, want [1 2 3]", m)
	}
	plain := Binding{N: 1, NU: 2, NC: 1}
	m = make([]float64, 3)
	MeasureFunc(plain)([]float64{4, 5, 6}, m)
	if m[0] != 4 || m[2] != 6 {
		t.Errorf("measured %v, want [4 5 6]", m)
	}
}

// TestFeaturesFinite: the random features of a fitted-size policy stay in
// (−1, 1) and the policy's output is finite for large states.
func TestFeaturesFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, nm := 3, 2
	ni := Inputs(n, nm)
	mean, scale := make([]float64, ni), make([]float64, ni)
	for i := range scale {
		scale[i] = 1
	}
	l := NewLearned(n, nm, 64, 7, mean, scale, []float64{0, 0}, []float64{1, 1})
	w := make([]float64, nm*l.Cols())
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	if err := l.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	z, phi := make([]float64, ni), make([]float64, l.Cols())
	for i := range z {
		z[i] = 1e6 * rng.NormFloat64()
	}
	l.Featurize(z, phi)
	for _, v := range phi[1+ni:] {
		if !(math.Abs(v) <= 1) {
			t.Fatalf("random feature %v", v)
		}
	}
}
