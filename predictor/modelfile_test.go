package predictor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
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
		{"dimension mismatch", withoutChecksums(t, bytes.Replace(good, []byte(`\"layers\":12`), []byte(`\"layers\":13`), 1)), "dimension mismatch"},
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

// withoutChecksums rewrites a model file as an earlier calisym wrote it:
// the same header without the checksum entries, the same tensor bytes.
func withoutChecksums(t testing.TB, file []byte) []byte {
	t.Helper()
	hl := binary.LittleEndian.Uint64(file[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+hl], &header); err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	if err := json.Unmarshal(header["__metadata__"], &meta); err != nil {
		t.Fatal(err)
	}
	delete(meta, metaTensorsSHA256)
	delete(meta, metaModelSHA256)
	raw, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	header["__metadata__"] = raw
	hj, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hj)))
	return append(append(out, hj...), file[8+hl:]...)
}

// dataSection returns the tensor bytes of a model file.
func dataSection(file []byte) []byte { return file[8+binary.LittleEndian.Uint64(file[:8]):] }

// TestModelFileChecksum flips one byte of a saved model's weights, and one
// digit of its description, and requires Load to refuse the file naming the
// checksum; the intact file loads verified.
func TestModelFileChecksum(t *testing.T) {
	m := testModel(t, "pendulum", 1, 54)
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Load(path); err != nil || !got.ChecksumVerified() {
		t.Fatalf("intact file: err %v, verified %v", err, got != nil && got.ChecksumVerified())
	}
	data := dataSection(good)
	flipped := slices.Clone(good)
	flipped[len(good)-len(data)+8*1000+6] ^= 0x10 // one exponent bit of θ[1000]
	desc := bytes.Replace(good, []byte(`\"step_size\":1`), []byte(`\"step_size\":3`), 1)
	if bytes.Equal(desc, good) {
		t.Fatal("the description has no step size 1 to change")
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"weight byte", flipped, "tensor data"},
		{"description digit", desc, "model description"},
	} {
		bad := filepath.Join(t.TempDir(), "bad.safetensors")
		if err := os.WriteFile(bad, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(bad)
		if !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrModelFile) {
			t.Fatalf("%s: error %v, want ErrChecksum", c.name, err)
		}
		for _, w := range []string{bad, "checksum", "sha256", c.want} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}

// TestModelFileWithoutChecksum loads a file written before checksums were
// added (testdata, saved by that version): it loads, unverified, and saving
// it again adds the checksums to the header without changing one tensor
// byte.
func TestModelFileWithoutChecksum(t *testing.T) {
	const old = "testdata/v1_no_checksum.safetensors"
	raw, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("sha256")) {
		t.Fatal("the fixture carries a checksum")
	}
	m, err := Load(old)
	if err != nil {
		t.Fatalf("a file without checksums: %v", err)
	}
	if m.ChecksumVerified() || m.Meta.Name != "written before checksums" || !slices.Equal(m.Meta.Coordinates, []string{"q1"}) {
		t.Errorf("verified %v, meta %+v", m.ChecksumVerified(), m.Meta)
	}
	resaved := encodeModel(t, m)
	if !bytes.Equal(dataSection(resaved), dataSection(raw)) {
		t.Error("the tensor bytes changed on re-saving")
	}
	if !bytes.Equal(withoutChecksums(t, resaved), raw) {
		t.Error("re-saving changed more than the checksum entries of the header")
	}
	m2, err := Decode(resaved)
	if err != nil || !m2.ChecksumVerified() {
		t.Errorf("the re-saved file: %v, verified %v", err, m2 != nil && m2.ChecksumVerified())
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
