package experiment

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
	"github.com/calisym/calisym/trainer/mlp"
)

// Saved is a model loaded from a file, ready to roll out.
type Saved struct {
	Path string
	// Kind is "gr", "grb" or "mlp".
	Kind string
	// StateDim and PortDim are the model's 2n and n_u + n_c.
	StateDim, PortDim int
	// Params is the number of trained parameters.
	Params int
	// Rollers makes independent rollers.
	Rollers trainer.RollerFactory
	// Model is set for a symplectic model.
	Model *predictor.Model
}

// Open opens a saved model: a calisym model file (.safetensors) or an MLP
// baseline (.json).
func Open(path string) (*Saved, error) {
	if strings.HasSuffix(path, ".json") {
		net, err := LoadMLP(path)
		if err != nil {
			return nil, err
		}
		c := net.Config()
		return &Saved{Path: path, Kind: "mlp", StateDim: c.StateDim, PortDim: c.PortDim, Params: net.NumParams(),
			Rollers: (&trainer.MLP{Net: net}).Rollers()}, nil
	}
	m, err := predictor.Load(path)
	if err != nil {
		return nil, err
	}
	return &Saved{Path: path, Kind: string(m.Arch.Kind), StateDim: m.Layout.StateDim(), PortDim: m.Layout.PortDim(),
		Params: m.NumParams(), Rollers: (&trainer.Symplectic{T: predictor.NewTrainable(m)}).Rollers(), Model: m}, nil
}

// CheckDataset reports a dataset whose dimensions do not match the model.
func (s *Saved) CheckDataset(ds *dataset.Dataset, dsPath string) error {
	if s.Model != nil {
		l := s.Model.Layout
		if l.N != ds.N || l.NU != ds.NU || l.NC != ds.NC {
			return fmt.Errorf("experiment: model %s has n=%d, n_u=%d, n_c=%d but dataset %s has n=%d, n_u=%d, n_c=%d",
				s.Path, l.N, l.NU, l.NC, dsPath, ds.N, ds.NU, ds.NC)
		}
		return nil
	}
	if s.StateDim != ds.StateDim() || s.PortDim != ds.PortDim() {
		return fmt.Errorf("experiment: model %s has state dimension %d and %d ports but dataset %s has %d and %d",
			s.Path, s.StateDim, s.PortDim, dsPath, ds.StateDim(), ds.PortDim())
	}
	return nil
}

// LoadMLP reads an MLP baseline saved by Run.
func LoadMLP(path string) (*mlp.MLP, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	var f struct {
		Config  json.RawMessage      `json:"config"`
		Weights map[string][]float64 `json:"weights"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("experiment: %s: not an MLP file: %w", path, err)
	}
	net, err := mlp.Load(f.Config, f.Weights)
	if err != nil {
		return nil, fmt.Errorf("experiment: %s: %w", path, err)
	}
	return net, nil
}
