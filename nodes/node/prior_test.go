package node_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/nodes/node"
)

// TestNodeRefusesPriorModel: a composed model (a physics prior recorded
// in its provenance, trainer.Composed) is refused, naming the prior: the
// node would run the learned map without it. The same model without the
// record is served.
func TestNodeRefusesPriorModel(t *testing.T) {
	m := pendulumModel(t)
	if _, err := node.New(node.Options{Params: pendulumParams(t), Model: m, Now: func() int64 { return 0 }, Publisher: &memPub{}}); err != nil {
		t.Fatalf("the model without a prior: %v", err)
	}
	if m.Meta.Provenance == nil {
		m.Meta.Provenance = map[string]string{}
	}
	m.Meta.Provenance[mechanics.PriorProvenanceKey] = `{"kind":"pendulum_midpoint"}`
	_, err := node.New(node.Options{Params: pendulumParams(t), Model: m, Now: func() int64 { return 0 }, Publisher: &memPub{}})
	if !errors.Is(err, node.ErrModel) || !strings.Contains(err.Error(), "physics prior") {
		t.Errorf("a composed model: %v, want node.ErrModel naming the physics prior", err)
	}
}
