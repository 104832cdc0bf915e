package trainer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"
)

// TestMLPPortMap builds the MLP on a dataset that records its port map
// (source statemap.PortMapKey) and requires the saved file to carry it
// (SavedModel.PortMap, checksum verified) and the checksum to cover it:
// the same file with another port map is refused. CheckDataset refuses a
// dataset whose ports were computed otherwise and accepts its own.
func TestMLPPortMap(t *testing.T) {
	spec := statemap.Spec{Control: statemap.ControlSpec{Kind: statemap.ControlDirect, PortSpec: statemap.PortSpec{Channels: []statemap.Channel{{Name: "tau"}}}}}
	pm := spec.PortMap()
	ds := toyDataset(t, 1, 30, 1, 0, 5)
	ds.Source = map[string]string{statemap.PortMapKey: pm}
	net, err := NewMLP(ds, []int{3}, LossWeights{Q: 1, P: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "mlp.json")
	if err := net.Save(good); err != nil {
		t.Fatal(err)
	}
	sv, err := OpenModel(good)
	if err != nil || sv.PortMap != pm || !sv.ChecksumVerified {
		t.Fatalf("OpenModel: %v, port map %q (verified %v), want %q", err, sv.PortMap, sv.ChecksumVerified, pm)
	}
	if err := sv.CheckDataset(ds, "own"); err != nil {
		t.Errorf("its own dataset: %v", err)
	}
	scaled := spec
	scaled.Control.Channels = []statemap.Channel{{Name: "tau", Unit: "mN*m"}}
	other := *ds
	other.Source = map[string]string{statemap.PortMapKey: scaled.PortMap()}
	if err := sv.CheckDataset(&other, "other"); !errors.Is(err, ErrModelData) || !errors.Is(err, statemap.ErrPortMap) || !strings.Contains(err.Error(), "params give tau (unit mN*m)") || !strings.Contains(err.Error(), `("params" there: the params the dataset was converted with)`) {
		t.Errorf("a dataset with the torque in mN·m: %v", err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(raw, []byte(`\"name\":\"tau\"`), []byte(`\"name\":\"tau2\"`), 1)
	if bytes.Equal(edited, raw) {
		t.Fatalf("no port map channel in %s", raw)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenModel(bad); !errors.Is(err, ErrMLPChecksum) {
		t.Errorf("a changed port map: %v, want ErrMLPChecksum", err)
	}
}
