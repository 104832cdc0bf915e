package main

import (
	"fmt"
	"math"
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

// apply sets the given flags in the params' node.tf and checks them: the
// lookahead must be a whole number of model steps (1/convert.resample.rate)
// between one step and the horizon. (That the robot has frames to draw is
// checked when the node starts: a ghost for a robot without any is an
// error there.)
func (g *ghostFlags) apply(p *node.Params) error {
	tf := &p.Node.TF
	if g.lookahead != "" {
		s, err := parseSeconds(g.lookahead)
		if err != nil || !(s > 0) {
			return fmt.Errorf("--ghost %q: want a positive duration such as 0.5s or 250ms", g.lookahead)
		}
		if dt, h := 1/p.Rate, p.Node.Horizon; p.Rate > 0 {
			k := math.Round(s / dt)
			if math.Abs(k*dt-s) > 1e-9*s || k < 1 || int(k) > h {
				return fmt.Errorf("--ghost %q: a lookahead of %g s is not a whole number of model steps (dt = %g s) between 1 and the horizon's %d (%g s)",
					g.lookahead, s, dt, h, float64(h)*dt)
			}
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
