package trainer

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer/mlp"
)

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
	// Rollers makes independent rollers.
	Rollers RollerFactory
	// Model is set for a symplectic model.
	Model *predictor.Model
}

// OpenModel opens a saved model: a calisym model file (.safetensors) or an
// MLP baseline (.json, see SaveMLP).
func OpenModel(path string) (*SavedModel, error) {
	if strings.HasSuffix(path, ".json") {
		net, err := LoadMLP(path)
		if err != nil {
			return nil, err
		}
		c := net.Config()
		return &SavedModel{Path: path, Kind: "mlp", StateDim: c.StateDim, PortDim: c.PortDim, Params: net.NumParams(),
			Rollers: (&MLP{Net: net}).Rollers()}, nil
	}
	m, err := predictor.Load(path)
	if err != nil {
		return nil, err
	}
	return &SavedModel{Path: path, Kind: string(m.Arch.Kind), StateDim: m.Layout.StateDim(), PortDim: m.Layout.PortDim(),
		Params: m.NumParams(), Rollers: planRollers(m), Model: m}, nil
}

// CheckDataset reports a dataset whose dimensions do not match the model.
func (s *SavedModel) CheckDataset(ds *dataset.Dataset, dsPath string) error {
	if s.Model != nil {
		l := s.Model.Layout
		if l.N != ds.N || l.NU != ds.NU || l.NC != ds.NC {
			return fmt.Errorf("trainer: model %s has n=%d, n_u=%d, n_c=%d but dataset %s has n=%d, n_u=%d, n_c=%d",
				s.Path, l.N, l.NU, l.NC, dsPath, ds.N, ds.NU, ds.NC)
		}
		return nil
	}
	if s.StateDim != ds.StateDim() || s.PortDim != ds.PortDim() {
		return fmt.Errorf("trainer: model %s has state dimension %d and %d ports but dataset %s has %d and %d",
			s.Path, s.StateDim, s.PortDim, dsPath, ds.StateDim(), ds.PortDim())
	}
	return nil
}

// mlpFile is the JSON file of an MLP baseline: its configuration and its
// named parameter and normalisation blocks (mlp.MLP.Export).
type mlpFile struct {
	Config  json.RawMessage      `json:"config"`
	Weights map[string][]float64 `json:"weights"`
}

// SaveMLP writes an MLP baseline as JSON (its configuration and named
// weights), the file LoadMLP and OpenModel read.
func SaveMLP(path string, net *mlp.MLP) error {
	cfg, wts, err := net.Export()
	if err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	b, err := json.Marshal(mlpFile{Config: cfg, Weights: wts})
	if err != nil {
		return fmt.Errorf("trainer: encoding %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// LoadMLP reads an MLP baseline written by SaveMLP.
func LoadMLP(path string) (*mlp.MLP, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	var f mlpFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("trainer: %s: not an MLP file: %w", path, err)
	}
	net, err := mlp.Load(f.Config, f.Weights)
	if err != nil {
		return nil, fmt.Errorf("trainer: %s: %w", path, err)
	}
	return net, nil
}
