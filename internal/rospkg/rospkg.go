// Package rospkg checks the ROS 2 package description of this repository:
// package.xml against the rules of REP 149 (package format 3), as its XML
// schema states them.
//
// The rules are those of the official schema, package_format3.xsd and the
// package_common.xsd it includes, from github.com/ros-infrastructure/rep
// (directory xsd/, served at http://download.ros.org/schema/). The schema is
// not copied here; each rule below names the declaration it implements.
package rospkg

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
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
// Only unqualified attributes (in no namespace, as the schema declares them)
// count: a namespace declaration xmlns:email or an attribute x:email is not
// the attribute email.
func (e *Element) Attr(name string) (string, bool) {
	for _, a := range e.Attrs {
		if a.Name.Space == "" && a.Name.Local == name {
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

// particle is one element declaration of the <package> sequence, or its
// choice group of dependency elements, with its occurrence bounds.
type particle struct {
	names    []string
	min, max int // max −1: unbounded
}

// sequence returns the content model of <package> in package_format3.xsd:
// an xs:sequence of these particles, in this order. The dependency
// elements form an xs:choice with minOccurs 0 and maxOccurs unbounded, so
// they may come in any order and number between <author> and
// <group_depend>.
func sequence() []particle {
	return []particle{
		{[]string{"name"}, 1, 1},
		{[]string{"version"}, 1, 1},
		{[]string{"description"}, 1, 1},
		{[]string{"maintainer"}, 1, -1},
		{[]string{"license"}, 1, -1},
		{[]string{"url"}, 0, -1},
		{[]string{"author"}, 0, -1},
		{dependencyKinds(), 0, -1},
		{[]string{"group_depend"}, 0, -1},
		{[]string{"member_of_group"}, 0, -1},
		{[]string{"export"}, 0, 1},
	}
}

// dependencyKinds returns the elements of package_format3.xsd's dependency
// choice, all of DependencyType.
func dependencyKinds() []string {
	return []string{"build_depend", "build_export_depend", "buildtool_depend", "buildtool_export_depend",
		"exec_depend", "depend", "doc_depend", "test_depend", "conflict", "replace"}
}

// The schema's patterns. An XSD pattern matches the whole (whitespace
// normalised) value, hence the anchors; XSD's \s is [ \t\n\r] and its '.'
// is [^\n\r], spelt out below.
var (
	// <name>: xs:token restricted to [a-zA-Z]([_-]?[0-9a-zA-Z]+)*
	// (package_format3.xsd; REP 149 allows dashes and, for legacy
	// packages, capitals).
	namePattern = regexp.MustCompile(`^[a-zA-Z]([_-]?[0-9a-zA-Z]+)*$`)
	// VersionType (package_common.xsd): (0|[1-9][0-9]*)(.(0|[1-9][0-9]*)){2}.
	// The schema's '.' is not escaped, so it stands for any character but
	// a line break: "1.2.3" and also "1-2-3".
	versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)([^\n\r](0|[1-9][0-9]*)){2}$`)
	// VersionLimitType (package_common.xsd): X, X.Y or X.Y.Z, the same
	// unescaped '.'.
	versionLimitPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)([^\n\r](0|[1-9][0-9]*)){0,2}$`)
	// EmailType (package_common.xsd).
	emailPattern = regexp.MustCompile(`^[-a-zA-Z0-9_%+]+(\.[-a-zA-Z0-9_%+]+)*@[-a-zA-Z0-9%]+(\.[-a-zA-Z0-9%]+)*\.[a-zA-Z]{2,}$`)
	// The condition attribute of DependencyType (package_format3.xsd),
	// which admits quoted literals.
	dependencyConditionPattern = regexp.MustCompile(`^[$A-Za-z0-9_ \t\n\r"'<>!=()-]*$`)
	// The condition attribute of ConditionalType (package_format3.xsd:
	// group_depend, member_of_group), which does not admit quotes.
	groupConditionPattern = regexp.MustCompile(`^[$A-Za-z0-9_ \t\n\r<>!=()-]*$`)
)

// xsiNamespace is the XML Schema instance namespace, whose
// schemaLocation and noNamespaceSchemaLocation attributes a validator
// accepts on any element.
const xsiNamespace = "http://www.w3.org/2001/XMLSchema-instance"

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// collapse applies XSD's whiteSpace="collapse" (xs:token and the types
// derived from it): tabs and line breaks become spaces, runs of spaces one
// space, and leading and trailing spaces go.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, isXMLSpace), " ")
}

func isXMLSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// blank reports whether s is XML white space only, the only character data
// an element-only content model (not mixed) allows.
func blank(s string) bool { return strings.TrimFunc(s, isXMLSpace) == "" }

// checkAttrs rejects every attribute of e that its type does not declare:
// allowed are the named unqualified attributes, namespace declarations,
// and xsi:schemaLocation and xsi:noNamespaceSchemaLocation. None of the
// schema's types has an xs:anyAttribute.
func checkAttrs(e *Element, allowed ...string) error {
	for _, a := range e.Attrs {
		switch {
		case a.Name.Space == "xmlns", a.Name.Space == "" && a.Name.Local == "xmlns":
		case a.Name.Space == xsiNamespace && (a.Name.Local == "schemaLocation" || a.Name.Local == "noNamespaceSchemaLocation"):
		case a.Name.Space == "" && slices.Contains(allowed, a.Name.Local):
		case a.Name.Space != "":
			return invalid("<%s> has attribute {%s}%s, which the schema does not declare", e.XMLName.Local, a.Name.Space, a.Name.Local)
		default:
			return invalid("<%s> has attribute %s, which the schema does not declare (allowed: %v)", e.XMLName.Local, a.Name.Local, allowed)
		}
	}
	return nil
}

// checkPattern checks the optional attribute name of e, collapsed, against
// pattern.
func checkPattern(e *Element, name string, pattern *regexp.Regexp) error {
	if v, ok := e.Attr(name); ok && !pattern.MatchString(collapse(v)) {
		return invalid("<%s> %q: %s=%q does not match %s", e.XMLName.Local, collapse(e.Text), name, v, pattern)
	}
	return nil
}

// CheckPackageXML parses a package.xml and validates it as
// package_format3.xsd (REP 149) does: one root <package format="3">, its
// children in the schema's sequence and multiplicities and nothing else,
// each with the attributes its type declares and values matching the
// type's patterns, simple content where the type is simple, free content in
// <description> and <export>, and no text between elements.
func CheckPackageXML(data []byte) (*Package, error) {
	var p Package
	if err := decodeDocument(data, &p.Root); err != nil {
		return nil, err
	}
	r := &p.Root
	// The schema has no target namespace: its one global element is
	// <package> in no namespace.
	if r.XMLName.Local != "package" || r.XMLName.Space != "" {
		return nil, invalid("root element <%s> (namespace %q), want <package> in no namespace", r.XMLName.Local, r.XMLName.Space)
	}
	// <xs:attribute name="format" fixed="3" use="required"/>
	switch f, ok := r.Attr("format"); {
	case !ok:
		return nil, invalid("<package> has no format attribute, want format=\"3\"")
	case f != "3":
		return nil, invalid("<package format=%q>, want format=\"3\"", f)
	}
	if err := checkAttrs(r, "format"); err != nil {
		return nil, err
	}
	if !blank(r.Text) {
		return nil, invalid("text %q directly in <package>", collapse(r.Text))
	}
	if err := checkSequence(r.Children); err != nil {
		return nil, err
	}
	for i := range r.Children {
		if err := checkChild(&r.Children[i]); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// decodeDocument parses data as one well-formed XML document into root:
// before the root element only a prolog (declaration, processing
// instructions, comments, a DOCTYPE, white space), after it only
// processing instructions, comments and white space.
func decodeDocument(data []byte, root *Element) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return invalid("no root element")
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := d.DecodeElement(root, &t); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalid, err)
			}
			return checkEpilog(d)
		case xml.CharData:
			if !blank(string(t)) {
				return invalid("text %q before the root element", collapse(string(t)))
			}
		case xml.EndElement:
			return invalid("end tag </%s> before the root element", t.Name.Local)
		}
	}
}

func checkEpilog(d *xml.Decoder) error {
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return invalid("second root element <%s>", t.Name.Local)
		case xml.CharData:
			if !blank(string(t)) {
				return invalid("text %q after the root element", collapse(string(t)))
			}
		case xml.Directive:
			return invalid("<!%s> after the root element", t)
		}
	}
}

// checkSequence checks the children of <package> against sequence(): every
// child one of its particles, in the particles' order, each particle as
// often as its bounds allow.
func checkSequence(children []Element) error {
	seq := sequence()
	counts := make([]int, len(seq))
	pos := 0
	for i := range children {
		c := &children[i]
		if c.XMLName.Space != "" {
			return invalid("<%s> in namespace %q: the schema's elements are in no namespace", c.XMLName.Local, c.XMLName.Space)
		}
		p := slices.IndexFunc(seq, func(q particle) bool { return slices.Contains(q.names, c.XMLName.Local) })
		switch {
		case p < 0:
			return invalid("<%s> is not an element of package format 3 (element %d of <package>)", c.XMLName.Local, i+1)
		case p < pos:
			return invalid("<%s> (element %d of <package>) after <%s>: out of the schema's order", c.XMLName.Local, i+1, strings.Join(seq[pos].names, "|"))
		}
		for ; pos < p; pos++ {
			if counts[pos] < seq[pos].min {
				return invalid("no <%s> before <%s>", strings.Join(seq[pos].names, "|"), c.XMLName.Local)
			}
		}
		counts[p]++
		if seq[p].max >= 0 && counts[p] > seq[p].max {
			return invalid("more than %d <%s>", seq[p].max, c.XMLName.Local)
		}
	}
	for ; pos < len(seq); pos++ {
		if counts[pos] < seq[pos].min {
			return invalid("no <%s>", strings.Join(seq[pos].names, "|"))
		}
	}
	return nil
}

// checkChild checks one child of <package> against its type in
// package_format3.xsd and package_common.xsd. Types with simple content
// (all but DescriptionType and ExportType) admit no child elements; none
// of the types bounds the length of its text, so empty values are valid
// wherever the type has no pattern.
func checkChild(c *Element) error {
	name := c.XMLName.Local
	text := collapse(c.Text)
	switch name {
	case "description":
		// DescriptionType: mixed content, xs:any processContents="skip",
		// no attributes.
		return checkAttrs(c)
	case "export":
		// ExportType: a sequence of xs:any processContents="skip" (any
		// elements, <build_type condition="…"> among them, with any
		// content), not mixed, no attributes.
		if err := checkAttrs(c); err != nil {
			return err
		}
		if !blank(c.Text) {
			return invalid("text %q directly in <export>", text)
		}
		return nil
	}
	if len(c.Children) > 0 {
		return invalid("<%s> has child element <%s>; its type has simple content", name, c.Children[0].XMLName.Local)
	}
	switch name {
	case "name":
		// An anonymous xs:token type with a pattern; no attributes.
		if err := checkAttrs(c); err != nil {
			return err
		}
		if !namePattern.MatchString(text) {
			return invalid("name %q does not match %s", text, namePattern)
		}
	case "version":
		// VersionType, a simple type: no attributes. (The schema defines
		// VersionWithOptionalCompatibilityType but does not use it, so
		// REP 149's compatibility attribute does not validate.)
		if err := checkAttrs(c); err != nil {
			return err
		}
		if !versionPattern.MatchString(text) {
			return invalid("version %q does not match %s", text, versionPattern)
		}
	case "maintainer", "author":
		// PersonWithEmailType (email required) and
		// PersonWithOptionalEmailType.
		if err := checkAttrs(c, "email"); err != nil {
			return err
		}
		if _, ok := c.Attr("email"); !ok && name == "maintainer" {
			return invalid("maintainer %q has no email attribute", text)
		}
		return checkPattern(c, "email", emailPattern)
	case "license":
		// LicenseType: optional file (xs:token).
		return checkAttrs(c, "file")
	case "url":
		// UrlType: xs:anyURI content (whose lexical space XSD leaves
		// effectively unchecked), optional type from UrlTypeEnum.
		if err := checkAttrs(c, "type"); err != nil {
			return err
		}
		if t, ok := c.Attr("type"); ok {
			if v := collapse(t); v != "website" && v != "bugtracker" && v != "repository" {
				return invalid("url type %q is not website, bugtracker or repository", t)
			}
		}
	case "group_depend", "member_of_group":
		// ConditionalType: optional condition.
		if err := checkAttrs(c, "condition"); err != nil {
			return err
		}
		return checkPattern(c, "condition", groupConditionPattern)
	default:
		// DependencyType: optional version_lt, version_lte, version_eq,
		// version_gte, version_gt (VersionLimitType) and condition.
		limits := []string{"version_lt", "version_lte", "version_eq", "version_gte", "version_gt"}
		if err := checkAttrs(c, append(limits, "condition")...); err != nil {
			return err
		}
		for _, l := range limits {
			if err := checkPattern(c, l, versionLimitPattern); err != nil {
				return err
			}
		}
		return checkPattern(c, "condition", dependencyConditionPattern)
	}
	return nil
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
