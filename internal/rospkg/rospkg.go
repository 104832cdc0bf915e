// Package rospkg checks the ROS 2 package description of this repository:
// package.xml against the rules of REP 149 (package format 3), as its XML
// schema states them.
package rospkg

import (
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrInvalid wraps every violation CheckPackageXML reports.
var ErrInvalid = errors.New("rospkg: invalid package.xml")

// Element is one XML element of a package.xml.
type Element struct {
	// XMLName is the element's name.
	XMLName xml.Name
	// Attrs are its attributes.
	Attrs []xml.Attr `xml:",any,attr"`
	// Text is its character data.
	Text string `xml:",chardata"`
	// Children are its child elements, in order.
	Children []Element `xml:",any"`
}

// Attr returns the value of the named attribute and whether it is set.
func (e *Element) Attr(name string) (string, bool) {
	for _, a := range e.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// Package is a parsed package.xml.
type Package struct {
	// Root is the <package> element.
	Root Element
}

// Dependencies returns the text of every child element called kind
// ("depend", "exec_depend", …).
func (p *Package) Dependencies(kind string) []string {
	var out []string
	for _, c := range p.Root.Children {
		if c.XMLName.Local == kind {
			out = append(out, strings.TrimSpace(c.Text))
		}
	}
	return out
}

// The groups of REP 149's sequence, in order; dependency kinds may come in
// any order within their group.
var (
	dependencyKinds = []string{"build_depend", "build_export_depend", "buildtool_depend", "buildtool_export_depend",
		"exec_depend", "depend", "doc_depend", "test_depend", "conflict", "replace"}
	sequence = []struct {
		names    []string
		min, max int // max −1: unbounded
	}{
		{[]string{"name"}, 1, 1},
		{[]string{"version"}, 1, 1},
		{[]string{"description"}, 1, 1},
		{[]string{"maintainer"}, 1, -1},
		{[]string{"license"}, 1, -1},
		{[]string{"url"}, 0, -1},
		{[]string{"author"}, 0, -1},
		{dependencyKinds, 0, -1},
		{[]string{"group_depend"}, 0, -1},
		{[]string{"member_of_group"}, 0, -1},
		{[]string{"export"}, 0, 1},
	}
	namePattern      = regexp.MustCompile(`^[a-z](_?[a-z0-9]+)*$`)
	versionPattern   = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	emailPattern     = regexp.MustCompile(`^[-a-zA-Z0-9_%+]+(\.[-a-zA-Z0-9_%+]+)*@[-a-zA-Z0-9%]+(\.[-a-zA-Z0-9%]+)*\.[a-zA-Z]{2,}$`)
	dependencyAttrs  = []string{"version_lt", "version_lte", "version_eq", "version_gte", "version_gt", "condition"}
	urlTypes         = []string{"website", "bugtracker", "repository"}
	conditionPattern = regexp.MustCompile(`^[$A-Za-z0-9_\s<>!=()-]*$`)
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CheckPackageXML parses a package.xml and checks it against REP 149's
// format 3: the root <package format="3">, the elements in the schema's
// order and multiplicities, nothing else, the name and version patterns,
// maintainers with an e-mail address, dependency attributes and url types.
func CheckPackageXML(data []byte) (*Package, error) {
	var p Package
	if err := xml.Unmarshal(data, &p.Root); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	r := &p.Root
	if r.XMLName.Local != "package" {
		return nil, invalid("root element <%s>, want <package>", r.XMLName.Local)
	}
	if f, _ := r.Attr("format"); f != "3" {
		return nil, invalid("<package format=%q>, want format=\"3\"", f)
	}
	i := 0
	for _, g := range sequence {
		n := 0
		for i < len(r.Children) && slices.Contains(g.names, r.Children[i].XMLName.Local) {
			n++
			i++
		}
		if n < g.min || (g.max >= 0 && n > g.max) {
			return nil, invalid("%d <%s> elements where the schema wants %d to %d (in this place of the sequence)", n, strings.Join(g.names, "|"), g.min, g.max)
		}
	}
	if i < len(r.Children) {
		return nil, invalid("<%s> is not allowed here (element %d of <package>)", r.Children[i].XMLName.Local, i+1)
	}
	for _, c := range r.Children {
		text := strings.TrimSpace(c.Text)
		switch name := c.XMLName.Local; {
		case name == "name" && !namePattern.MatchString(text):
			return nil, invalid("name %q does not match %s", text, namePattern)
		case name == "version" && !versionPattern.MatchString(text):
			return nil, invalid("version %q is not major.minor.patch", text)
		case name == "description" && text == "":
			return nil, invalid("empty description")
		case name == "maintainer":
			if e, _ := c.Attr("email"); !emailPattern.MatchString(e) {
				return nil, invalid("maintainer %q has no valid email attribute", text)
			}
			if text == "" {
				return nil, invalid("maintainer without a name")
			}
		case name == "license" && text == "":
			return nil, invalid("empty license")
		case name == "url":
			if t, ok := c.Attr("type"); ok && !slices.Contains(urlTypes, t) {
				return nil, invalid("url type %q is not one of %v", t, urlTypes)
			}
		case slices.Contains(dependencyKinds, name):
			if text == "" {
				return nil, invalid("empty <%s>", name)
			}
			for _, a := range c.Attrs {
				if !slices.Contains(dependencyAttrs, a.Name.Local) {
					return nil, invalid("<%s> %s has attribute %s", name, text, a.Name.Local)
				}
				if a.Name.Local == "condition" && !conditionPattern.MatchString(a.Value) {
					return nil, invalid("<%s> %s: bad condition %q", name, text, a.Value)
				}
			}
		}
		if c.XMLName.Local != "export" && c.XMLName.Local != "description" && len(c.Children) > 0 {
			return nil, invalid("<%s> has child elements", c.XMLName.Local)
		}
	}
	return &p, nil
}

// BuildType returns the <export><build_type> of the package ("" if none).
func (p *Package) BuildType() string {
	for _, c := range p.Root.Children {
		if c.XMLName.Local != "export" {
			continue
		}
		for _, e := range c.Children {
			if e.XMLName.Local == "build_type" {
				return strings.TrimSpace(e.Text)
			}
		}
	}
	return ""
}
