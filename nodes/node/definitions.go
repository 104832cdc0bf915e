package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/params"
)

// Definitions resolves the complete ros2msg definition (the form rosbag2
// stores in an MCAP schema) of message types: the types msgs has Go types
// for, and .msg files under a directory laid out as ROS installs them,
// Dir/<package>/msg/<Type>.msg, for third-party types such as
// px4_msgs/msg/VehicleOdometry, then the repository's params/interfaces
// (embedded, package params), so that a params file copied out of the
// repository, whose node.definitions names a directory that is not beside
// the copy, still finds the types the repository's params files use.
// Dependencies are looked up the same way.
type Definitions struct {
	// Dir is the directory of .msg files; empty means msgs' types only.
	Dir string
}

// Lookup returns the complete definition of rosType ("pkg/msg/Type" or
// "pkg/Type"). The error wraps rosmsg.ErrUnknownType when the type or one of
// its dependencies is found nowhere.
func (d Definitions) Lookup(rosType string) (string, error) {
	root := rosmsg.NormalizeType(rosType)
	if def, err := msgs.Definition(root); err == nil {
		return def, nil
	}
	return rosmsg.CompleteDefinition(root, d.own)
}

// own returns the .msg text of one type ("pkg/Type"), without its
// dependencies.
func (d Definitions) own(name string) (string, error) {
	if d.Dir != "" {
		pkg, typ, ok := strings.Cut(name, "/")
		if ok {
			raw, err := os.ReadFile(filepath.Join(d.Dir, pkg, "msg", typ+".msg"))
			if err == nil {
				return string(raw), nil
			}
			if !errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("node: definition of %s: %w", name, err)
			}
		}
	}
	if own, ok := msgs.OwnDefinition(name); ok {
		return own, nil
	}
	if pkg, typ, ok := strings.Cut(name, "/"); ok {
		raw, err := fs.ReadFile(params.Interfaces(), pkg+"/msg/"+typ+".msg")
		if err == nil {
			return string(raw), nil
		}
	}
	where := "msgs has no Go type for it, nor params/interfaces"
	if d.Dir != "" {
		where += " and " + filepath.Join(d.Dir, strings.Replace(name, "/", "/msg/", 1)+".msg") + " does not exist"
	}
	return "", fmt.Errorf("node: no definition of %s (%s): %w", name, where, rosmsg.ErrUnknownType)
}
