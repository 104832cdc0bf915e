package rosmsg

import (
	"fmt"
	"slices"
	"strings"
)

// definitionDelimiter separates the definitions of a ros2msg schema.
const definitionDelimiter = "================================================================================\n"

// CompleteDefinition concatenates the complete ros2msg definition of
// rosType the way rosbag2 stores it in an MCAP schema: the type's own .msg
// text, then each dependency not yet written, depth first in sorted order,
// after a line of 80 '=' and a line "MSG: pkg/Type". own returns the .msg
// text of one type, named "pkg/Type"; its errors are returned as they are.
// Nesting deeper than 32 levels is an error wrapping ErrUnknownType.
func CompleteDefinition(rosType string, own func(name string) (string, error)) (string, error) {
	root := NormalizeType(rosType)
	seen := map[string]bool{root: true}
	var b strings.Builder
	var add func(name string, depth int) error
	add = func(name string, depth int) error {
		if depth > 32 {
			return fmt.Errorf("rosmsg: definition of %s nests too deeply: %w", rosType, ErrUnknownType)
		}
		text, err := own(name)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		b.WriteString(text)
		for _, dep := range definitionDependencies(name, text) {
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

// definitionDependencies returns the message types the fields of text (the
// .msg of type name, "pkg/Type") refer to, as "pkg/Type", sorted: comments,
// constants and primitive fields are skipped, array and bound suffixes
// dropped, bare names qualified with the package of name (a bare Header is
// std_msgs/Header).
func definitionDependencies(name, text string) []string {
	pkg := packageOf(name)
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		t := f[0]
		if i := strings.IndexAny(t, "[<"); i >= 0 {
			t = t[:i]
		}
		if primitiveKind(t, ROS2Msg) != 0 {
			continue
		}
		switch {
		case t == "Header":
			t = "std_msgs/Header"
		case !strings.Contains(t, "/"):
			t = pkg + "/" + t
		}
		out = append(out, NormalizeType(t))
	}
	slices.Sort(out)
	return slices.Compact(out)
}
