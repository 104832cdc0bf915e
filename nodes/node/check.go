package node

import (
	"fmt"

	"github.com/calisym/calisym/statemap"
)

// Check loads what New loads from the params, without a model, and fails
// where New would before it looks at the model: the mapping with its
// mechanics model (the URDF, refused as xacro; the params' joints looked
// up in it; a pendulum's parameters file), every input type's definition
// (node.definitions, then msgs' types and params/interfaces) with the
// message paths the mapping reads, and the robot description and frames
// (node.tf). dataRoot resolves the spec's relative files as New's
// Options.DataRoot does (default: the params file's directory).
func Check(p *Params, dataRoot string) error {
	if err := p.CheckTopics(); err != nil {
		return err
	}
	root := dataRoot
	if root == "" {
		root = p.Resolve(".")
	}
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
	if err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	n, nu, nc := smp.Layout()
	nd := &Node{cfg: p.Node, params: p, now: func() int64 { return 0 }, pub: discard{}, sampler: smp,
		h: p.Node.Horizon, n: n, ne: nu + nc, nm: smp.Measured(), dt: 1 / p.Rate, modelID: "check"}
	if err := nd.bind(nil, Definitions{Dir: p.DefinitionsDir()}); err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	if err := nd.advertise(); err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	nd.allocate()
	if err := nd.newView(root); err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	return nil
}

// discard is a Publisher that drops everything (Check's node publishes
// nothing).
type discard struct{}

func (discard) Advertise(string, TopicType) error   { return nil }
func (discard) Publish(string, int64, []byte) error { return nil }
