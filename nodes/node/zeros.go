package node

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// zeroRefused lists the keys of the node section (paths below "node:",
// "[]" for every element of a list) whose unset value 0 stands for a
// default: an explicit 0 there would silently become that default (a
// decay of 0 held over the horizon, every: 0 predicting on each trigger),
// so it is refused. Keys where 0 means something of its own
// (history_tolerance, trigger.rate, tf.ghost) are not listed.
var zeroRefused = []struct{ key, want string }{
	{"horizon", "a number of steps of at least 1 (default 100)"},
	{"max_age", "a positive age in seconds (default 0.1)"},
	{"stale_periods", "at least 1 (default 3)"},
	{"preview_step", "a step in [1, horizon] (default: the horizon)"},
	{"diagnostics_period", "a positive period in seconds (default 1)"},
	{"queue", "at least 1 message (default 64)"},
	{"topics[].max_age", "a positive age in seconds (default: node.max_age)"},
	{"trigger.every", "at least 1 (default 1: on each trigger)"},
	{"ports.max_age", "a positive age in seconds (default: node.max_age)"},
	{"force_estimate.window", "1 … 10000 residuals (default 10)"},
	{"force_estimate.decay", "a factor in (0, 1] (default 0.9; for an estimate applied at the first step only, a tiny factor such as 1e-9)"},
	{"wrench_estimate.window", "blocks … 100000 residuals (default 400)"},
	{"wrench_estimate.gate", "a positive threshold (default 6; for no gating, a tiny one such as 1e-9)"},
	{"wrench_estimate.decay", "a factor in (0, 1] (default 1: held over the horizon; for the first step only, a tiny factor such as 1e-9)"},
	{"wrench_estimate.blocks", "2 … 1000 blocks (default 8)"},
	{"channels[].scale", "a nonzero factor (default 1)"},
}

// checkExplicitZeros refuses an explicit 0 (0, 0.0, -0, 0e0) at one of
// the zeroRefused keys of the node section of the params file raw:
// decoded into the Config, it could not be told from an absent key.
func checkExplicitZeros(raw []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return nil // the strict decoder reports it
	}
	sec := mapValue(doc.Content[0], ConfigKey)
	if sec == nil {
		return nil
	}
	for _, z := range zeroRefused {
		for _, hit := range lookup(sec, strings.Split(z.key, "."), "") {
			if isZero(hit.n) {
				return configError(hit.path, "%s given explicitly: want %s; omit the key for the default", hit.n.Value, z.want)
			}
		}
	}
	return nil
}

type found struct {
	path string
	n    *yaml.Node
}

// lookup returns the nodes at the key path keys below n ("name[]" names
// every element of the list at name), with their full paths.
func lookup(n *yaml.Node, keys []string, prefix string) []found {
	if len(keys) == 0 {
		return []found{{prefix, n}}
	}
	name, list := strings.CutSuffix(keys[0], "[]")
	v := mapValue(n, name)
	if v == nil {
		return nil
	}
	path := name
	if prefix != "" {
		path = prefix + "." + name
	}
	if !list {
		return lookup(v, keys[1:], path)
	}
	if v.Kind != yaml.SequenceNode {
		return nil
	}
	var out []found
	for i, e := range v.Content {
		out = append(out, lookup(e, keys[1:], fmt.Sprintf("%s[%d]", path, i))...)
	}
	return out
}

// mapValue returns the value of key in the mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// isZero reports whether n is a scalar number equal to 0.
func isZero(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return false
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if n.ShortTag() == "!!int" {
		v, err := strconv.ParseInt(s, 0, 64)
		return err == nil && v == 0
	}
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && v == 0
}
