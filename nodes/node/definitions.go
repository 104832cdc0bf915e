package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/msgs"
)

// definitionDelimiter separates the definitions of a ros2msg schema.
const definitionDelimiter = "================================================================================\n"

// Definitions resolves the complete ros2msg definition (the form rosbag2
// stores in an MCAP schema) of message types: the types msgs has Go types
// for, and .msg files under a directory laid out as ROS installs them,
// Dir/<package>/msg/<Type>.msg, for third-party types such as
// px4_msgs/msg/VehicleOdometry. Dependencies are looked up the same way.
type Definitions struct {
	// Dir is the directory of .msg files; empty means msgs' types only.
	Dir string
}

// primitives are the ros2msg primitive type names.
var primitives = []string{"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
	"int32", "uint32", "int64", "uint64", "string", "wstring"}

// Lookup returns the complete definition of rosType ("pkg/msg/Type" or
// "pkg/Type"). The error wraps msgs.ErrUnknownType when the type or one of
// its dependencies is found nowhere.
func (d Definitions) Lookup(rosType string) (string, error) {
	root := msgs.NormalizeType(rosType)
	if def, err := msgs.Definition(root); err == nil {
		return def, nil
	}
	var b strings.Builder
	seen := map[string]bool{root: true}
	var add func(name string, depth int) error
	add = func(name string, depth int) error {
		if depth > 32 {
			return fmt.Errorf("node: definition of %s nests too deeply: %w", rosType, msgs.ErrUnknownType)
		}
		text, err := d.own(name)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		b.WriteString(text)
		deps := dependencies(name, text)
		for _, dep := range deps {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			b.WriteString("\n" + definitionDelimiter + "MSG: " + dep + "\n")
			if err := add(dep, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(root, 0); err != nil {
		return "", err
	}
	return b.String(), nil
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
	full, err := msgs.Definition(name)
	if err != nil {
		where := "msgs has no Go type for it"
		if d.Dir != "" {
			where += " and " + filepath.Join(d.Dir, strings.Replace(name, "/", "/msg/", 1)+".msg") + " does not exist"
		}
		return "", fmt.Errorf("node: no definition of %s (%s): %w", name, where, msgs.ErrUnknownType)
	}
	// The first block of a complete definition is the type's own text.
	own, _, _ := strings.Cut(full, "\n"+definitionDelimiter)
	return own + "\n", nil
}

// dependencies returns the message types the fields of text (the .msg of
// type name, "pkg/Type") refer to, as "pkg/Type", sorted.
func dependencies(name, text string) []string {
	pkg, _, _ := strings.Cut(name, "/")
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		t := f[0]
		if i := strings.IndexAny(t, "[<"); i >= 0 {
			t = t[:i]
		}
		if slices.Contains(primitives, t) {
			continue
		}
		switch {
		case t == "Header":
			t = "std_msgs/Header"
		case !strings.Contains(t, "/"):
			t = pkg + "/" + t
		}
		out = append(out, msgs.NormalizeType(t))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
