package predictor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func encodeModel(t testing.TB, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestModelFileRoundTrip(t *testing.T) {
	for _, name := range PresetNames() {
		m := testModel(t, name, 1, 51)
		m.Meta = Metadata{Name: name, Provenance: map[string]string{"dataset": "x.npz"}, Metrics: map[string]float64{"ood_ar_mse": 1.25}, Dt: 0.01}
		path := filepath.Join(t.TempDir(), name+".safetensors")
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range m.theta {
			if math.Float64bits(got.theta[i]) != math.Float64bits(m.theta[i]) {
				t.Fatalf("%s: parameter %d not bit-exact", name, i)
			}
		}
		for k := range m.Norm.Mu {
			if math.Float64bits(got.Norm.Mu[k]) != math.Float64bits(m.Norm.Mu[k]) || math.Float64bits(got.Norm.Scale[k]) != math.Float64bits(m.Norm.Scale[k]) {
				t.Fatalf("%s: normalisation %d not bit-exact", name, k)
			}
		}
		if got.Layout != m.Layout || got.Arch != m.Arch || got.Meta.Metrics["ood_ar_mse"] != 1.25 || got.Meta.Provenance["dataset"] != "x.npz" {
			t.Fatalf("%s: description changed: %+v %+v", name, got.Layout, got.Arch)
		}
		// Re-encoding gives the same bytes.
		raw, _ := os.ReadFile(path)
		if !bytes.Equal(encodeModel(t, got), raw) {
			t.Fatalf("%s: re-encoding differs", name)
		}
	}
}

func TestModelFileErrors(t *testing.T) {
	m := testModel(t, "pendulum", 1, 52)
	good := encodeModel(t, m)
	hl := binary.LittleEndian.Uint64(good[:8])
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"truncated header", good[:20], "header length"},
		{"truncated data", good[:len(good)-8], "truncated"},
		{"bad version", bytes.Replace(good, []byte(`"format_version":"1"`), []byte(`"format_version":"9"`), 1), "version"},
		{"not calisym", bytes.Replace(good, []byte(`"format":"calisym"`), []byte(`"format":"other!!"`), 1), "format"},
		{"dimension mismatch", bytes.Replace(good, []byte(`\"layers\":12`), []byte(`\"layers\":13`), 1), "mismatch"},
		{"garbage", append(append([]byte{}, good[:8]...), bytes.Repeat([]byte{'x'}, int(hl)+100)...), "JSON"},
	}
	for _, c := range cases {
		_, err := Decode(c.data)
		if err == nil || !errors.Is(err, ErrModelFile) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.safetensors")); err == nil {
		t.Error("missing file loaded")
	}
}

func FuzzDecodeModel(f *testing.F) {
	m := testModel(f, "pendulum", 1, 53)
	good := encodeModel(f, m)
	f.Add(good)
	f.Add(good[:100])
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode and decode to the same parameters.
		var buf bytes.Buffer
		if err := m.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		m2, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if len(m2.theta) != len(m.theta) {
			t.Fatal("parameter count changed")
		}
	})
}
