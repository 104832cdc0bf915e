package node_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/nodes/node"
)

// TestLearnedForecastFiles: with forecast learned the node reads the
// forecaster beside the model file by default (MODEL.forecaster.json);
// where there is none it holds the ports and says so in its model
// warning (the start-up log, /diagnostics), as without a model path or a
// forecaster named; a corrupt forecaster and one of another model file
// are errors that name it.
func TestLearnedForecastFiles(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "pendulum.safetensors")
	p := pendulumParams(t)
	p.Node.Ports = node.PortsConfig{Forecast: node.ForecastLearned, MaxAge: 0.2}
	if err := p.Node.Check(p.Spec); err != nil {
		t.Fatal(err)
	}
	newNode := func(sha, path string) (*node.Node, error) {
		return node.New(node.Options{Params: p, Model: pendulumModel(t), ModelSHA256: sha, ModelPath: path, Now: func() int64 { return t0 }, Publisher: &memPub{}})
	}
	nd, err := newNode("abc", modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if w := nd.ModelWarning(); !strings.Contains(w, "pendulum.forecaster.json") || !strings.Contains(w, "holds the latest ports") {
		t.Errorf("no forecaster: warning %q", w)
	}
	if nd, err := newNode("abc", ""); err != nil || !strings.Contains(nd.ModelWarning(), "no forecaster file") {
		t.Errorf("learned without a model path or a forecaster: %v", err)
	}
	bad := node.DefaultForecaster(modelPath)
	if err := os.WriteFile(bad, []byte(`{"format": "calisym-forecaster"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := newNode("abc", modelPath); !errors.Is(err, forecast.ErrFile) || !strings.Contains(err.Error(), bad) {
		t.Errorf("corrupt forecaster: %v", err)
	}
	// a valid forecaster of another model file
	f := &forecast.File{Binding: forecast.Binding{ModelSHA256: "other", N: 2, NU: 2, NC: 0, Dt: 1 / p.Rate}, Policy: forecast.NewLearned(2, 2, 0, 1,
		make([]float64, forecast.Inputs(2, 2)), ones(forecast.Inputs(2, 2)), make([]float64, 2), ones(2))}
	if err := f.Save(bad); err != nil {
		t.Fatal(err)
	}
	if _, err := newNode("abc", modelPath); !errors.Is(err, forecast.ErrFile) || !strings.Contains(err.Error(), "model file") {
		t.Errorf("forecaster of another model: %v", err)
	}
}

func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
