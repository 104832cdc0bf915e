package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/atomicfile"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer/mlp"
)

// ErrModelData reports a saved model that does not fit a dataset: other
// dimensions, or other coordinate or port names (another robot, or another
// state mapping of the same robot).
var ErrModelData = errors.New("trainer: model does not fit the dataset")

// ErrMLPChecksum reports an MLP file whose weights do not match the
// checksum it records: the file was changed or corrupted after it was
// written.
var ErrMLPChecksum = errors.New("trainer: MLP file checksum mismatch")

// SavedModel is a model loaded from a file, ready to roll out.
type SavedModel struct {
	// Path is the file the model was read from.
	Path string
	// Kind is "gr", "grb" or "mlp".
	Kind string
	// StateDim and PortDim are the model's 2n and n_u + n_c.
	StateDim, PortDim int
	// Params is the number of trained parameters.
	Params int
	// Coordinates and Ports name the model's configuration coordinates and
	// port values, as the training dataset named them (nil when the file
	// does not record them).
	Coordinates, Ports []string
	// Layout is the model's n, n_u and n_c (the ports' split into control
	// and contact values); zero for an MLP file that does not record it.
	Layout predictor.Layout
	// Dt is the sampling period in seconds (0 where not recorded).
	Dt float64
	// PortMean is the port history's m (0: none; predictor.PortHistory).
	PortMean int
	// ChecksumVerified reports that the file carried checksums and they
	// matched; a file written before checksums were added loads with it
	// false (see Warning).
	ChecksumVerified bool
	// Warning, when not empty, is a caution about the file for the user:
	// a file without checksums, whose weights could not be verified.
	Warning string
	// Rollers makes independent rollers.
	Rollers RollerFactory
	// Model is set for a symplectic model: the learned map alone.
	Model *predictor.Model
	// Prior, when set, is the physics prior of a composed model (Composed;
	// a symplectic file's provenance PriorKey, an MLP file's meta prior):
	// Rollers apply it before Model or Net at every step, and what runs
	// Model or Net alone must refuse the file (ErrPriorUnsupported).
	Prior *mechanics.PriorSpec
	// Net is set for an MLP baseline.
	Net *mlp.MLP
	// PortMap is how the ports of the model's training data were computed
	// from the logged channels (statemap.Spec.PortMap; a symplectic file's
	// provenance statemap.PortMapKey, an MLP file's meta port_map), ""
	// when the file does not record it (written before it was recorded,
	// or trained on a dataset that does not). Whatever feeds the model
	// ports must compute them the same way (CheckPortMap).
	PortMap string
}

// OpenModel opens a saved model: a calisym model file (safetensors) or an
// MLP baseline (JSON, see SaveMLP). The kind is read from the file's
// content, so an MLP written under another name opens too. Checksums are
// verified (predictor.ErrChecksum, ErrMLPChecksum); a file written before
// they existed opens with a Warning.
func OpenModel(path string) (*SavedModel, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trainer: opening model: %w", err)
	}
	if isJSON(raw) || strings.HasSuffix(path, ".json") {
		f, err := decodeMLP(raw, path)
		if err != nil {
			return nil, err
		}
		c := f.net.Config()
		sv := &SavedModel{Path: path, Kind: "mlp", StateDim: c.StateDim, PortDim: c.PortDim, Params: f.net.NumParams(),
			Coordinates: f.Coordinates, Ports: f.Ports, ChecksumVerified: f.verified,
			Rollers: (&MLP{Net: f.net}).Rollers(), Net: f.net}
		if mm := f.Meta; mm != nil {
			sv.Layout, sv.Dt, sv.PortMean, sv.PortMap = predictor.Layout{N: mm.N, NU: mm.NU, NC: mm.NC}, mm.Dt, mm.PortMean, mm.PortMap
			if mm.Prior != nil {
				// decodeMLP checked the spec and the dimensions
				prior, err := mm.Prior.New()
				if err != nil {
					return nil, fmt.Errorf("trainer: %s: meta prior: %w", path, err)
				}
				sv.Prior, sv.Rollers = mm.Prior, composeRollers(sv.Rollers, prior, c.PortDim)
			}
		}
		sv.setWarning()
		return sv, nil
	}
	m, err := predictor.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sv := &SavedModel{Path: path, Kind: string(m.Arch.Kind), StateDim: m.Layout.StateDim(), PortDim: m.Layout.PortDim(),
		Params: m.NumParams(), Coordinates: m.Meta.Coordinates, Ports: m.Meta.Ports, ChecksumVerified: m.ChecksumVerified(),
		Layout: m.Layout, Dt: m.Meta.Dt, PortMean: m.Meta.PortMean, PortMap: m.Meta.Provenance[statemap.PortMapKey],
		Rollers: planRollers(m), Model: m}
	ps, err := ModelPrior(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ps != nil {
		if err := ps.Fits(m.Layout.StateDim(), m.Layout.PortDim()); err != nil {
			return nil, fmt.Errorf("%s: provenance %s: %w", path, PriorKey, err)
		}
		prior, err := ps.New()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		sv.Prior, sv.Rollers = ps, ComposedRollers(m, prior)
	}
	sv.setWarning()
	return sv, nil
}

func (s *SavedModel) setWarning() {
	if !s.ChecksumVerified {
		s.Warning = fmt.Sprintf("model file %s carries no checksum (written before calisym added them): it loads, but its weights cannot be verified", s.Path)
	}
}

// isJSON reports whether a file starts like a JSON object. A safetensors
// file cannot: its first 8 bytes are the header length, and 8 printable
// bytes make a length beyond any file.
func isJSON(raw []byte) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// CheckDataset reports a dataset that does not fit the model: other
// dimensions, or, where both the model file and the dataset name them,
// other coordinates or ports, or, where both record it, ports computed
// another way (statemap.PortMapKey: another thrust map, channel scale,
// …). The errors wrap ErrModelData and name both.
func (s *SavedModel) CheckDataset(ds *dataset.Dataset, dsPath string) error {
	if s.Model != nil {
		l := s.Model.Layout
		if l.N != ds.N || l.NU != ds.NU || l.NC != ds.NC {
			return fmt.Errorf("%w: model %s has n=%d, n_u=%d, n_c=%d but dataset %s has n=%d, n_u=%d, n_c=%d%s",
				ErrModelData, s.Path, l.N, l.NU, l.NC, dsPath, ds.N, ds.NU, ds.NC, portHistoryHint(l, s.PortMean, ds))
		}
	} else if s.StateDim != ds.StateDim() || s.PortDim != ds.PortDim() {
		return fmt.Errorf("%w: model %s has state dimension %d and %d ports but dataset %s has %d and %d%s",
			ErrModelData, s.Path, s.StateDim, s.PortDim, dsPath, ds.StateDim(), ds.PortDim(), portHistoryHint(s.Layout, s.PortMean, ds))
	}
	for _, c := range []struct {
		what        string
		model, data []string
	}{{"coordinates", s.Coordinates, ds.Coordinates}, {"ports", s.Ports, ds.Ports}} {
		if len(c.model) > 0 && len(c.data) > 0 && !slices.Equal(c.model, c.data) {
			return fmt.Errorf("%w: model %s was trained on the %s %v but dataset %s has the %s %v (another robot, or another state mapping in the params file)",
				ErrModelData, s.Path, c.what, c.model, dsPath, c.what, c.data)
		}
	}
	if data := ds.Source[statemap.PortMapKey]; s.PortMap != "" && data != "" {
		if err := statemap.CheckPortMap(s.PortMap, data); err != nil {
			return fmt.Errorf("%w: model %s on dataset %s (\"params\" there: the params the dataset was converted with): %w", ErrModelData, s.Path, dsPath, err)
		}
	}
	return nil
}

// portHistoryHint explains a layout mismatch that the port history makes
// (convert.history.port_mean): where the model (layout l, port history m)
// and the dataset have the same state and the same measured ports but
// another port history, it returns ": convert.history.port_mean differs:
// …", with both values and the control ports that each side's history
// adds; otherwise "". The dataset's port history is read from its port
// names; a dataset without names is taken to have none.
func portHistoryHint(l predictor.Layout, m int, ds *dataset.Dataset) string {
	if l.N != ds.N || l.NC != ds.NC || l.NU == ds.NU {
		return ""
	}
	dm, err := predictor.PortMeanFromNames(ds.Ports, ds.NU, ds.NC)
	if err != nil || dm == m {
		return ""
	}
	// a history of m > 0 adds the means of every measured port (a
	// control and nc contact values) to the a measured controls:
	// n_u = 2a + nc
	measured := func(nu, m int) int {
		if m > 0 {
			return (nu - ds.NC) / 2
		}
		return nu
	}
	a := measured(l.NU, m)
	if measured(ds.NU, dm) != a {
		return ""
	}
	side := func(nu, m int) string {
		if m == 0 {
			return fmt.Sprintf("0 (no port history: n_u = %d measured control ports)", nu)
		}
		return fmt.Sprintf("%d (n_u = %d measured control ports + %d means of the ports over the %d samples before)", m, a, nu-a, m)
	}
	return fmt.Sprintf(": convert.history.port_mean differs, %s for the model against %s for the dataset: convert the data with the params the model was trained with (convert.history.port_mean: %d)",
		side(l.NU, m), side(ds.NU, dm), m)
}

// mlpFile is the JSON file of an MLP baseline: its configuration, the
// names of the coordinates and ports it was trained on, its named
// parameter and normalisation blocks (mlp.MLP.Export), its layout,
// sampling period and port history, and their checksum.
type mlpFile struct {
	Config      json.RawMessage      `json:"config"`
	Coordinates []string             `json:"coordinates,omitempty"`
	Ports       []string             `json:"ports,omitempty"`
	Weights     map[string][]float64 `json:"weights"`
	// Meta is absent in files written before it was recorded.
	Meta *MLPMeta `json:"meta,omitempty"`
	// SHA256 is mlpChecksum of the rest (absent in files written before
	// checksums were added).
	SHA256 string `json:"sha256,omitempty"`

	net      *mlp.MLP
	verified bool
}

// mlpChecksum is the hex SHA-256 of an MLP file's content: the config
// JSON (compacted, so that reformatting the file does not change it), the
// coordinate and port names (each followed by a NUL, each list
// by a second NUL), then every weight block in name order as its name, a
// NUL, its length and its values (uint64 little-endian, IEEE 754 bits),
// then, where the file has a meta object, "meta", a NUL, dt (IEEE 754
// bits) and n, n_u, n_c, port_mean (uint64 little-endian each), and,
// where the meta has a prior, "prior", a NUL and the prior's JSON
// (encoding/json of the mechanics.PriorSpec), and, where the meta has a
// port map, "port_map", a NUL and the port map. A file without meta hashes
// as before meta existed, a meta without a prior or port map as before
// they were recorded.
func mlpChecksum(f *mlpFile) string {
	h := sha256.New()
	var cfg bytes.Buffer
	if json.Compact(&cfg, f.Config) != nil {
		cfg.Reset()
		cfg.Write(f.Config)
	}
	h.Write(cfg.Bytes())
	h.Write([]byte{0})
	for _, names := range [][]string{f.Coordinates, f.Ports} {
		for _, n := range names {
			h.Write([]byte(n))
			h.Write([]byte{0})
		}
		h.Write([]byte{0})
	}
	keys := make([]string, 0, len(f.Weights))
	for k := range f.Weights {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b [8]byte
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(b[:], uint64(len(f.Weights[k])))
		h.Write(b[:])
		for _, v := range f.Weights[k] {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	if mm := f.Meta; mm != nil {
		h.Write([]byte("meta\x00"))
		for _, v := range []uint64{math.Float64bits(mm.Dt), uint64(mm.N), uint64(mm.NU), uint64(mm.NC), uint64(mm.PortMean)} {
			binary.LittleEndian.PutUint64(b[:], v)
			h.Write(b[:])
		}
		if mm.Prior != nil {
			h.Write([]byte("prior\x00"))
			js, err := json.Marshal(mm.Prior)
			if err != nil { // a PriorSpec is plain data: never
				js = []byte(fmt.Sprintf("%+v", *mm.Prior))
			}
			h.Write(js)
		}
		if mm.PortMap != "" {
			h.Write([]byte("port_map\x00"))
			h.Write([]byte(mm.PortMap))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SaveMLP writes an MLP baseline as JSON (its configuration, named weights
// and their SHA-256), the file LoadMLP and OpenModel read. It records no
// coordinate names: MLP.Save does.
func SaveMLP(path string, net *mlp.MLP) error {
	return saveMLP(path, net, nil, nil, nil)
}

// Save writes the baseline as SaveMLP does, with the names of the
// coordinates and ports of the dataset it was built for, which OpenModel
// checks against the datasets it is evaluated on.
func (m *MLP) Save(path string) error {
	return saveMLP(path, m.Net, m.Coordinates, m.Ports, m.Meta)
}

func saveMLP(path string, net *mlp.MLP, coords, ports []string, meta *MLPMeta) error {
	cfg, wts, err := net.Export()
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	f := mlpFile{Config: cfg, Coordinates: coords, Ports: ports, Weights: wts, Meta: meta}
	f.SHA256 = mlpChecksum(&f)
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("trainer: encoding %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// LoadMLP reads an MLP baseline written by SaveMLP, verifying its checksum
// (ErrMLPChecksum); a file written before checksums were added loads
// unverified. It returns the network alone, so it refuses an MLP behind a
// physics prior (ErrPriorUnsupported; OpenModel opens it).
func LoadMLP(path string) (*mlp.MLP, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	f, err := decodeMLP(raw, path)
	if err != nil {
		return nil, err
	}
	if f.Meta != nil && f.Meta.Prior != nil {
		return nil, fmt.Errorf("%w: %s: the network sits behind the %s prior (meta prior); open it with OpenModel", ErrPriorUnsupported, path, f.Meta.Prior.Kind)
	}
	return f.net, nil
}

func decodeMLP(raw []byte, path string) (*mlpFile, error) {
	var f mlpFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("trainer: %s: not an MLP file: %w", path, err)
	}
	if f.SHA256 != "" {
		if got := mlpChecksum(&f); got != f.SHA256 {
			return nil, fmt.Errorf("%w: %s: its content hashes to sha256 %s but the file records %s: the weights were changed or corrupted after the file was written; use an intact copy or retrain",
				ErrMLPChecksum, path, got[:16]+"…", f.SHA256[:min(16, len(f.SHA256))]+"…")
		}
		f.verified = true
	}
	net, err := mlp.Load(f.Config, f.Weights)
	if err != nil {
		return nil, fmt.Errorf("trainer: %s: %w", path, err)
	}
	if mm := f.Meta; mm != nil {
		c := net.Config()
		switch pm, err := predictor.PortMeanFromNames(f.Ports, mm.NU, mm.NC); {
		case mm.N < 1 || mm.NU < 0 || mm.NC < 0 || 2*mm.N != c.StateDim || mm.NU+mm.NC != c.PortDim:
			return nil, fmt.Errorf("trainer: %s: meta n=%d, n_u=%d, n_c=%d do not fit state dimension %d and %d ports", path, mm.N, mm.NU, mm.NC, c.StateDim, c.PortDim)
		case !(mm.Dt >= 0) || math.IsInf(mm.Dt, 0):
			return nil, fmt.Errorf("trainer: %s: meta dt %v: want a sampling period in seconds ≥ 0", path, mm.Dt)
		case err != nil:
			return nil, fmt.Errorf("trainer: %s: %w", path, err)
		case mm.PortMean < 0 || len(f.Ports) > 0 && pm != mm.PortMean:
			return nil, fmt.Errorf("trainer: %s: meta port_mean %d but the port names %v record %d", path, mm.PortMean, f.Ports, pm)
		}
		if ps := mm.Prior; ps != nil {
			if err := ps.Fits(2*mm.N, c.PortDim); err != nil {
				return nil, fmt.Errorf("trainer: %s: meta prior %s: %w", path, ps.Kind, err)
			}
			if _, err := ps.New(); err != nil {
				return nil, fmt.Errorf("trainer: %s: meta prior: %w", path, err)
			}
			if mm.Dt > 0 && math.Abs(mm.Dt-ps.Dt) > 1e-12*mm.Dt {
				return nil, fmt.Errorf("trainer: %s: meta prior %s steps dt = %g s but the model's sampling period (meta dt) is %g s", path, ps.Kind, ps.Dt, mm.Dt)
			}
		}
	}
	f.net = net
	return &f, nil
}
