package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/calisym/calisym/nodes/node"
)

// ghostFlags are the flags of replay and node that place the predicted
// "ghost" robot the node draws on /tf beside the measured one (the
// params' node.tf, package nodes/tfview).
type ghostFlags struct {
	lookahead, prefix string
}

// add declares --ghost and --ghost-prefix.
func (g *ghostFlags) add(f *pflag.FlagSet) {
	f.StringVar(&g.lookahead, "ghost", "", "lookahead of the predicted ghost robot on /tf: a duration (0.5s, 250ms) or seconds, a whole number of model steps (default node.tf.ghost, else the horizon's end)")
	f.StringVar(&g.prefix, "ghost-prefix", "", "frame prefix of the ghost robot's frames (default node.tf.ghost_prefix, else ghost/)")
}

// apply sets the given flags in the params' node.tf and checks them (the
// lookahead against the model's step and horizon is checked when the node
// starts).
func (g *ghostFlags) apply(p *node.Params) error {
	tf := &p.Node.TF
	if g.lookahead != "" {
		s, err := parseSeconds(g.lookahead)
		if err != nil || !(s > 0) {
			return fmt.Errorf("--ghost %q: want a positive duration such as 0.5s or 250ms", g.lookahead)
		}
		tf.Ghost = s
	}
	if g.prefix != "" {
		tf.GhostPrefix = g.prefix
	}
	if err := tf.Check(); err != nil {
		return fmt.Errorf("--ghost: %w", err)
	}
	return nil
}

// parseSeconds reads a Go duration ("0.5s", "250ms") or a number of
// seconds ("0.5").
func parseSeconds(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return d.Seconds(), nil
}
