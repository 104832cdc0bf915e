package predictor

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestPortMeanFromNames reads the port history's m from port names laid
// out as conversion writes them, and refuses names that hold a mean out
// of that layout.
func TestPortMeanFromNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		ports  []string
		nu, nc int
		want   int
		err    bool
	}{
		{"none", []string{"u1", "u2"}, 2, 0, 0, false},
		{"no names", nil, 3, 1, 0, false},
		{"control only", []string{"u1", "u2", "mean10(u1)", "mean10(u2)"}, 4, 0, 10, false},
		{"control and contact", []string{"u", "mean5(u)", "mean5(c1)", "mean5(c2)", "c1", "c2"}, 4, 2, 5, false},
		{"contact only", []string{"mean2(c)", "c"}, 1, 1, 2, false},
		{"means of other ports", []string{"u", "mean5(v)", "mean5(c)", "c"}, 3, 1, 0, true},
		{"two m", []string{"u", "mean5(u)", "mean4(c)", "c"}, 3, 1, 0, true},
		{"too few means", []string{"u", "v", "mean5(u)", "c"}, 3, 1, 0, true},
		{"wrong count", []string{"u"}, 2, 0, 0, true},
	} {
		got, err := PortMeanFromNames(c.ports, c.nu, c.nc)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: %d, %v; want %d, error %v", c.name, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, ErrModelFile) {
			t.Errorf("%s: error %v does not wrap ErrModelFile", c.name, err)
		}
	}
}

// TestPortMeanInFile: port_mean is written to the model file and read
// back; a file that records only the port names (written before
// port_mean was recorded) gets it from them; a file whose port_mean and
// names disagree is refused.
func TestPortMeanInFile(t *testing.T) {
	dir := t.TempDir()
	l := Layout{N: 1, NU: 3, NC: 1}
	names := []string{"u", "mean10(u)", "mean10(c)", "c"}
	save := func(meta Metadata) (*Model, error) {
		m, err := New(l, Arch{Kind: KindGR, Layers: 2, Width: 4, StepSize: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Meta = meta
		path := filepath.Join(dir, "m.safetensors")
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		return Load(path)
	}
	for _, c := range []struct {
		name string
		meta Metadata
		want PortHistory
		err  bool
	}{
		{"recorded", Metadata{Ports: names, PortMean: 10}, PortHistory{PortMean: 10, MeasuredControl: 1, Contact: 1}, false},
		{"names only (an older file)", Metadata{Ports: names}, PortHistory{PortMean: 10, MeasuredControl: 1, Contact: 1}, false},
		{"port_mean only", Metadata{PortMean: 3}, PortHistory{PortMean: 3, MeasuredControl: 1, Contact: 1}, false},
		{"none", Metadata{}, PortHistory{MeasuredControl: 3, Contact: 1}, false},
		{"disagreeing", Metadata{Ports: names, PortMean: 5}, PortHistory{}, true},
		{"beyond the bound", Metadata{PortMean: 1001}, PortHistory{}, true},
	} {
		m, err := save(c.meta)
		if c.err {
			if !errors.Is(err, ErrModelFile) {
				t.Errorf("%s: %v, want ErrModelFile", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ph, err := m.PortHistory()
		if err != nil || ph != c.want || m.Meta.PortMean != c.want.PortMean {
			t.Errorf("%s: %+v (meta %d), %v; want %+v", c.name, ph, m.Meta.PortMean, err, c.want)
		}
	}
}
