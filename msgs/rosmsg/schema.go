package rosmsg

import (
	"fmt"
	"strconv"
	"strings"
)

// Dialect is the language a message definition is written in.
type Dialect uint8

const (
	// ROS2Msg is the .msg language of ROS 2, stored by rosbag2 under the
	// MCAP schema encoding "ros2msg": default values, bounded strings and
	// sequences, byte as an unsigned octet, builtin_interfaces/Time.
	ROS2Msg Dialect = iota + 1
	// ROS1Msg is the .msg language of ROS 1, a bag connection's
	// message_definition (MCAP schema encoding "ros1msg"): time and duration
	// primitives, byte as int8, bare Header meaning std_msgs/Header.
	ROS1Msg
)

// String returns the schema encoding name of the dialect
// (SchemaEncodingROS2Msg, SchemaEncodingROS1Msg).
func (d Dialect) String() string {
	switch d {
	case ROS2Msg:
		return SchemaEncodingROS2Msg
	case ROS1Msg:
		return SchemaEncodingROS1Msg
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// DialectFor returns the dialect of an MCAP schema encoding
// (SchemaEncodingROS2Msg or SchemaEncodingROS1Msg).
func DialectFor(schemaEncoding string) (Dialect, error) {
	switch schemaEncoding {
	case SchemaEncodingROS2Msg:
		return ROS2Msg, nil
	case SchemaEncodingROS1Msg:
		return ROS1Msg, nil
	}
	return 0, fmt.Errorf("rosmsg: schema encoding %q: %w (want %s or %s)", schemaEncoding, ErrUnsupported, SchemaEncodingROS2Msg, SchemaEncodingROS1Msg)
}

// Kind is the type of a field's values (of its elements, for an array).
type Kind uint8

// The kinds of field.
const (
	KindBool Kind = iota + 1
	KindInt8
	KindUint8
	KindInt16
	KindUint16
	KindInt32
	KindUint32
	KindInt64
	KindUint64
	KindFloat32
	KindFloat64
	KindString
	KindWString
	// KindTime is the ROS 1 time primitive: uint32 sec, uint32 nsec.
	KindTime
	// KindDuration is the ROS 1 duration primitive: int32 sec, int32 nsec.
	KindDuration
	// KindMessage is a nested message; Field.Msg holds its definition.
	KindMessage
)

var kindNames = [...]string{
	KindBool: "bool", KindInt8: "int8", KindUint8: "uint8", KindInt16: "int16", KindUint16: "uint16",
	KindInt32: "int32", KindUint32: "uint32", KindInt64: "int64", KindUint64: "uint64",
	KindFloat32: "float32", KindFloat64: "float64", KindString: "string", KindWString: "wstring",
	KindTime: "time", KindDuration: "duration", KindMessage: "message",
}

// String returns the .msg name of the kind ("float64", "time", "message").
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Numeric reports whether values of the kind convert to float64: the
// integer and floating-point kinds and bool.
func (k Kind) Numeric() bool { return k >= KindBool && k <= KindFloat64 }

// size returns the serialized size of one primitive value (0 for strings
// and messages).
func (k Kind) size() int {
	switch k {
	case KindBool, KindInt8, KindUint8:
		return 1
	case KindInt16, KindUint16:
		return 2
	case KindInt32, KindUint32, KindFloat32:
		return 4
	case KindInt64, KindUint64, KindFloat64, KindTime, KindDuration:
		return 8
	}
	return 0
}

// align returns the CDR alignment of one primitive value when 8-byte
// values align to maxAlign (8 in XCDR1, 4 in XCDR2).
func (k Kind) align(maxAlign int) int {
	switch k {
	case KindTime, KindDuration, KindString, KindWString:
		return 4
	}
	return min(k.size(), maxAlign)
}

// ArrayKind says whether and how a field is an array.
type ArrayKind uint8

// The kinds of array.
const (
	// NotArray is a single value.
	NotArray ArrayKind = iota
	// FixedArray is T[N]: exactly Len values, serialized without a count.
	FixedArray
	// BoundedSequence is T[<=N]: at most Len values, serialized with a count.
	BoundedSequence
	// Sequence is T[]: any number of values, serialized with a count.
	Sequence
)

// Field is one field of a message definition.
type Field struct {
	// Name is the field name.
	Name string
	// Kind is the type of the field's values.
	Kind Kind
	// Type is the type as written, without array suffix or string bound,
	// e.g. "float64", "Header" or "geometry_msgs/Point".
	Type string
	// Msg is the definition of a KindMessage field (and the two-field
	// pseudo definitions "time" and "duration" for KindTime and
	// KindDuration); nil otherwise.
	Msg *MsgDef
	// Array says whether the field is an array.
	Array ArrayKind
	// Len is the length of a FixedArray or the bound of a BoundedSequence.
	Len int
	// StringBound is N in string<=N (0 when unbounded).
	StringBound int
	// Default is the ROS 2 default value as written, without a trailing
	// comment ("" when none).
	Default string
}

// Constant is a constant declared in a message definition.
type Constant struct {
	// Name is the constant's name.
	Name string
	// Kind is its type.
	Kind Kind
	// Value is the value as written; for ROS 1 string constants, everything
	// after '=' (trimmed), for quoted ROS 2 strings the text between quotes.
	Value string
}

// MsgDef is the definition of one message type.
type MsgDef struct {
	// Name is the type's name in the form "pkg/Type" (see NormalizeType);
	// the root of a schema has the name it was parsed with.
	Name string
	// Fields are the fields in declaration order.
	Fields []Field
	// Constants are the constants in declaration order.
	Constants []Constant

	// Layout, computed once the schema is resolved.
	minCDR, minROS1 int       // smallest serialized size (saturated at maxSize)
	fixed           bool      // no strings or sequences anywhere inside
	sizeCDR         [2][8]int // fixed: size by [XCDR2][start offset mod 8]
}

// FieldIndex returns the index in Fields of the field called name, or -1.
func (d *MsgDef) FieldIndex(name string) int {
	for i := range d.Fields {
		if d.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// Schema is a parsed, resolved message definition: the root type and every
// type it uses. A Schema is immutable and safe for concurrent use.
type Schema struct {
	// Root is the definition of the top-level type.
	Root *MsgDef
	// Dialect is the language the definition was written in.
	Dialect Dialect

	types       map[string]*MsgDef
	order       []*MsgDef // types in definition order, builtins last
	implied     []string  // types the text left out and the parser supplied
	timeDef     *MsgDef   // pseudo definition of the ROS 1 time primitive
	durationDef *MsgDef   // pseudo definition of the ROS 1 duration primitive
}

// Type returns the definition of a type used by the schema ("pkg/Type" or
// "pkg/msg/Type"), or nil.
func (s *Schema) Type(name string) *MsgDef { return s.types[NormalizeType(name)] }

// Types returns the definitions of the schema, root first.
func (s *Schema) Types() []*MsgDef { return append([]*MsgDef(nil), s.order...) }

// Implied returns the types the definition text used without defining
// them, which ParseSchema supplied (std_msgs/Header,
// builtin_interfaces/Time or Duration). A definition to be stored in a log
// should have none: other readers do not supply them.
func (s *Schema) Implied() []string { return append([]string(nil), s.implied...) }

// Limits of the definitions ParseSchema accepts.
const (
	// MaxFixedArrayLen is the largest N accepted in T[N].
	MaxFixedArrayLen = 1 << 24
	// maxSize caps the smallest serialized size of a type; larger types
	// cannot appear in a log and are rejected.
	maxSize = 1 << 31
)

// NormalizeType returns the "pkg/Type" form of a ROS type name: the "msg"
// namespace of ROS 2 names is dropped ("sensor_msgs/msg/JointState" becomes
// "sensor_msgs/JointState"); other names are returned unchanged.
func NormalizeType(name string) string {
	if pkg, rest, ok := strings.Cut(name, "/msg/"); ok && !strings.Contains(rest, "/") && !strings.Contains(pkg, "/") {
		return pkg + "/" + rest
	}
	return name
}

// ParseSchema parses the complete message definition text of the type name
// (e.g. "sensor_msgs/msg/JointState") written in dialect d: the type's own
// definition followed by its dependencies, each introduced by a line of '='
// and a line "MSG: pkg/Type", as rosbag2 stores ros2msg schemas and ROS 1
// stores a connection's message_definition. Types the text omits but ROS
// implies (std_msgs/Header, builtin_interfaces/Time and Duration) are
// supplied. Recursive definitions are rejected.
func ParseSchema(name string, d Dialect, text []byte) (*Schema, error) {
	if d != ROS2Msg && d != ROS1Msg {
		return nil, fmt.Errorf("rosmsg: parse %s: dialect %v: %w", name, d, ErrUnsupported)
	}
	s := &Schema{
		Dialect: d,
		types:   make(map[string]*MsgDef),
		timeDef: &MsgDef{Name: "time", Fields: []Field{
			{Name: "sec", Kind: KindUint32, Type: "uint32"}, {Name: "nsec", Kind: KindUint32, Type: "uint32"}}},
		durationDef: &MsgDef{Name: "duration", Fields: []Field{
			{Name: "sec", Kind: KindInt32, Type: "int32"}, {Name: "nsec", Kind: KindInt32, Type: "int32"}}},
	}
	defs, err := parseBlocks(NormalizeType(name), d, string(text))
	if err != nil {
		return nil, fmt.Errorf("rosmsg: parse %s: %w", name, err)
	}
	s.Root = defs[0]
	for _, def := range defs {
		if _, dup := s.types[def.Name]; dup {
			continue // a repeated dependency (some converters write them twice): keep the first
		}
		s.types[def.Name] = def
		s.order = append(s.order, def)
	}
	for i := 0; i < len(s.order); i++ { // s.order grows as builtins are added
		if err := s.resolve(s.order[i]); err != nil {
			return nil, fmt.Errorf("rosmsg: parse %s: %w", name, err)
		}
	}
	state := make(map[*MsgDef]uint8, len(s.order)+2)
	all := append([]*MsgDef{s.timeDef, s.durationDef}, s.order...)
	for _, def := range all {
		if err := layout(def, state); err != nil {
			return nil, fmt.Errorf("rosmsg: parse %s: %w", name, err)
		}
	}
	return s, nil
}

// parseBlocks splits the text into definitions and parses each line.
func parseBlocks(root string, d Dialect, text string) ([]*MsgDef, error) {
	cur := &MsgDef{Name: root}
	defs := []*MsgDef{cur}
	named := true
	for no, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#':
			continue
		case len(t) >= 2 && strings.Trim(t, "=") == "":
			if !named {
				return nil, fmt.Errorf("%w: line %d: separator without a MSG: line before it", ErrSyntax, no+1)
			}
			cur = &MsgDef{}
			defs = append(defs, cur)
			named = false
			continue
		case strings.HasPrefix(t, "MSG:"):
			fields := strings.Fields(t[len("MSG:"):])
			if len(fields) == 0 || named {
				return nil, fmt.Errorf("%w: line %d: misplaced %q", ErrSyntax, no+1, t)
			}
			if !validTypeName(fields[0]) {
				return nil, fmt.Errorf("%w: line %d: bad type name %q", ErrSyntax, no+1, fields[0])
			}
			cur.Name = NormalizeType(fields[0])
			named = true
			continue
		}
		if !named {
			return nil, fmt.Errorf("%w: line %d: definition after a separator has no MSG: line", ErrSyntax, no+1)
		}
		if err := parseLine(cur, d, t); err != nil {
			return nil, fmt.Errorf("%w: line %d: %q: %s", ErrSyntax, no+1, t, err)
		}
	}
	if !named {
		// A trailing separator with nothing after it.
		if len(cur.Fields) > 0 || len(cur.Constants) > 0 {
			return nil, fmt.Errorf("%w: last definition has no MSG: line", ErrSyntax)
		}
		defs = defs[:len(defs)-1]
	}
	return defs, nil
}

// parseLine parses one field or constant declaration (trimmed, not a
// comment) into def.
func parseLine(def *MsgDef, d Dialect, t string) error {
	i := strings.IndexAny(t, " \t")
	if i < 0 {
		return fmt.Errorf("no field name")
	}
	f, err := parseType(t[:i], d)
	if err != nil {
		return err
	}
	rest := strings.TrimLeft(t[i:], " \t")
	n := 0
	for n < len(rest) && isIdent(rest[n]) {
		n++
	}
	f.Name = rest[:n]
	if f.Name == "" || f.Name[0] >= '0' && f.Name[0] <= '9' {
		return fmt.Errorf("bad field name")
	}
	for i := range def.Fields {
		if def.Fields[i].Name == f.Name {
			return fmt.Errorf("field %s declared twice", f.Name)
		}
	}
	for i := range def.Constants {
		if def.Constants[i].Name == f.Name {
			return fmt.Errorf("constant %s declared twice", f.Name)
		}
	}
	after := strings.TrimLeft(rest[n:], " \t")
	switch {
	case after == "" || after[0] == '#':
		def.Fields = append(def.Fields, f)
	case after[0] == '=':
		if f.Array != NotArray || f.Kind == KindMessage || f.Kind == KindTime || f.Kind == KindDuration {
			return fmt.Errorf("constant of type %s must be a primitive", f.Type)
		}
		val := strings.TrimSpace(after[1:])
		if f.Kind != KindString && f.Kind != KindWString || d == ROS2Msg {
			if val, err = literalText(val); err != nil {
				return err
			}
		}
		if val == "" && f.Kind != KindString && f.Kind != KindWString {
			return fmt.Errorf("constant %s has no value", f.Name)
		}
		def.Constants = append(def.Constants, Constant{Name: f.Name, Kind: f.Kind, Value: val})
	default:
		if d == ROS1Msg {
			return fmt.Errorf("unexpected %q after the field name", after)
		}
		if f.Kind == KindMessage {
			return fmt.Errorf("field of type %s cannot have a default value", f.Type)
		}
		val, err := literalText(after)
		if err != nil {
			return err
		}
		f.Default = val
		def.Fields = append(def.Fields, f)
	}
	return nil
}

// literalText returns a constant or default value without its trailing
// comment; a quoted string is returned without its quotes.
func literalText(s string) (string, error) {
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case q:
				tail := strings.TrimSpace(s[i+1:])
				if tail != "" && tail[0] != '#' {
					return "", fmt.Errorf("unexpected %q after the quoted value", tail)
				}
				return s[1:i], nil
			}
		}
		return "", fmt.Errorf("unterminated quoted value")
	}
	inQuote := byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote != 0 && c == '\\':
			i++
		case inQuote != 0 && c == inQuote:
			inQuote = 0
		case inQuote == 0 && (c == '"' || c == '\''):
			inQuote = c
		case inQuote == 0 && c == '#':
			return strings.TrimSpace(s[:i]), nil
		}
	}
	return strings.TrimSpace(s), nil
}

// parseType parses a field type such as "float64[36]", "string<=8[<=4]" or
// "geometry_msgs/Point[]".
func parseType(t string, d Dialect) (Field, error) {
	var f Field
	base := t
	if strings.HasSuffix(base, "]") {
		j := strings.LastIndexByte(base, '[')
		if j <= 0 {
			return f, fmt.Errorf("bad array type %q", t)
		}
		inner := base[j+1 : len(base)-1]
		base = base[:j]
		switch {
		case inner == "":
			f.Array = Sequence
		case strings.HasPrefix(inner, "<="):
			n, err := parseCount(inner[2:], maxSize)
			if err != nil {
				return f, err
			}
			f.Array, f.Len = BoundedSequence, n
		default:
			n, err := parseCount(inner, MaxFixedArrayLen)
			if err != nil {
				return f, err
			}
			f.Array, f.Len = FixedArray, n
		}
	}
	if i := strings.Index(base, "<="); i >= 0 {
		n, err := parseCount(base[i+2:], maxSize)
		if err != nil {
			return f, err
		}
		base = base[:i]
		if base != "string" && base != "wstring" {
			return f, fmt.Errorf("only strings can have a bound, not %q", base)
		}
		f.StringBound = n
	}
	f.Type = base
	if f.Kind = primitiveKind(base, d); f.Kind == 0 {
		if !validTypeName(base) {
			return f, fmt.Errorf("bad type name %q", base)
		}
		f.Kind = KindMessage
	}
	return f, nil
}

// parseCount parses an array length or bound no larger than limit.
func parseCount(s string, limit int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > limit {
		return 0, fmt.Errorf("bad array length or bound %q (want 0 to %d)", s, limit)
	}
	return n, nil
}

// primitiveKind returns the kind of a primitive type name, or 0.
func primitiveKind(t string, d Dialect) Kind {
	switch t {
	case "bool":
		return KindBool
	case "int8":
		return KindInt8
	case "uint8", "char":
		return KindUint8
	case "byte":
		if d == ROS1Msg {
			return KindInt8 // deprecated ROS 1 alias of int8
		}
		return KindUint8 // ROS 2 octet
	case "int16":
		return KindInt16
	case "uint16":
		return KindUint16
	case "int32":
		return KindInt32
	case "uint32":
		return KindUint32
	case "int64":
		return KindInt64
	case "uint64":
		return KindUint64
	case "float32":
		return KindFloat32
	case "float64":
		return KindFloat64
	case "string":
		return KindString
	case "wstring":
		if d == ROS2Msg {
			return KindWString
		}
	case "time":
		if d == ROS1Msg {
			return KindTime
		}
	case "duration":
		if d == ROS1Msg {
			return KindDuration
		}
	}
	return 0
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validTypeName reports whether t is a plausible message type name: one to
// three identifiers separated by '/'.
func validTypeName(t string) bool {
	parts := strings.Split(t, "/")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] >= '0' && p[0] <= '9' {
			return false
		}
		for i := 0; i < len(p); i++ {
			if !isIdent(p[i]) {
				return false
			}
		}
	}
	return true
}

// packageOf returns the package of a "pkg/Type" name ("" for a bare name).
func packageOf(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

// builtinText returns the definition ROS implies for a type a log's
// definition may leave out.
func builtinText(name string, d Dialect) (string, bool) {
	switch {
	case name == "std_msgs/Header" && d == ROS1Msg:
		return "uint32 seq\ntime stamp\nstring frame_id\n", true
	case name == "std_msgs/Header":
		return "builtin_interfaces/Time stamp\nstring frame_id\n", true
	case name == "builtin_interfaces/Time", name == "builtin_interfaces/Duration":
		return "int32 sec\nuint32 nanosec\n", true
	}
	return "", false
}

// resolve links each field of def to its type's definition, adding implied
// builtin definitions to the schema as needed.
func (s *Schema) resolve(def *MsgDef) error {
	for i := range def.Fields {
		f := &def.Fields[i]
		switch f.Kind {
		case KindTime:
			f.Msg = s.timeDef
		case KindDuration:
			f.Msg = s.durationDef
		case KindMessage:
			m, err := s.lookup(f.Type, packageOf(def.Name))
			if err != nil {
				return fmt.Errorf("%s.%s: %w", def.Name, f.Name, err)
			}
			f.Msg = m
		}
	}
	return nil
}

// lookup finds the definition a field type refers to from package pkg.
func (s *Schema) lookup(ref, pkg string) (*MsgDef, error) {
	var candidates []string
	switch {
	case strings.Contains(ref, "/"):
		candidates = []string{NormalizeType(ref)}
	case ref == "Header" && s.Dialect == ROS1Msg:
		candidates = []string{"std_msgs/Header"}
	case ref == "Header":
		candidates = []string{pkg + "/Header", "std_msgs/Header"}
	case pkg != "":
		candidates = []string{pkg + "/" + ref}
	}
	for _, c := range candidates {
		if m := s.types[c]; m != nil {
			return m, nil
		}
	}
	if !strings.Contains(ref, "/") {
		// A bare name from a type without a package (or a definition that
		// names a type of another package without qualifying it): accept a
		// unique type of that name.
		var found *MsgDef
		for name, m := range s.types {
			if name == ref || strings.HasSuffix(name, "/"+ref) {
				if found != nil {
					return nil, fmt.Errorf("%w: %q is ambiguous", ErrUnknownType, ref)
				}
				found = m
			}
		}
		if found != nil {
			return found, nil
		}
	}
	for _, c := range candidates {
		if text, ok := builtinText(c, s.Dialect); ok {
			defs, err := parseBlocks(c, s.Dialect, text)
			if err != nil {
				return nil, err
			}
			s.types[c] = defs[0]
			s.order = append(s.order, defs[0])
			s.implied = append(s.implied, c)
			return defs[0], nil
		}
	}
	return nil, fmt.Errorf("%w: %q is not in the definition", ErrUnknownType, ref)
}

// layout rejects recursive types and computes the sizes the decoders use to
// bound allocations and skip fields. state marks definitions in progress (1)
// and done (2).
func layout(d *MsgDef, state map[*MsgDef]uint8) error {
	switch state[d] {
	case 1:
		return fmt.Errorf("%w: %s contains itself", ErrUnknownType, d.Name)
	case 2:
		return nil
	}
	state[d] = 1
	d.fixed = true
	for i := range d.Fields {
		f := &d.Fields[i]
		if f.Msg != nil {
			if err := layout(f.Msg, state); err != nil {
				return err
			}
		}
		switch {
		case f.Array == Sequence || f.Array == BoundedSequence || f.Kind == KindString || f.Kind == KindWString:
			d.fixed = false
		case f.Kind == KindMessage && !f.Msg.fixed:
			d.fixed = false
		}
		d.minCDR = satAdd(d.minCDR, fieldMin(f, false))
		d.minROS1 = satAdd(d.minROS1, fieldMin(f, true))
	}
	if len(d.Fields) == 0 {
		d.minCDR = 1 // CDR writes one placeholder byte for an empty struct
	}
	if d.minCDR >= maxSize || d.minROS1 >= maxSize {
		return fmt.Errorf("%w: %s is larger than %d bytes", ErrUnknownType, d.Name, maxSize)
	}
	if d.fixed {
		for x, maxAlign := range [2]int{8, 4} {
			for phase := range 8 {
				end := walkFixed(d, phase, x, maxAlign)
				d.sizeCDR[x][phase] = end - phase
			}
		}
	}
	state[d] = 2
	return nil
}

// fieldMin returns the smallest serialized size of a field.
func fieldMin(f *Field, ros1 bool) int {
	var elem int
	switch f.Kind {
	case KindString, KindWString:
		elem = 4
	case KindMessage:
		elem = f.Msg.minCDR
		if ros1 {
			elem = f.Msg.minROS1
		}
	default:
		elem = f.Kind.size()
	}
	switch f.Array {
	case NotArray:
		return elem
	case FixedArray:
		return satMul(elem, f.Len)
	}
	return 4
}

// walkFixed returns the CDR end offset of a fixed-layout definition that
// starts at offset off (relative to the alignment origin).
func walkFixed(d *MsgDef, off, x, maxAlign int) int {
	if len(d.Fields) == 0 {
		return off + 1
	}
	for i := range d.Fields {
		f := &d.Fields[i]
		n := 1
		if f.Array == FixedArray {
			n = f.Len
		}
		if f.Kind == KindMessage {
			off = advanceFixed(f.Msg, off, n, x)
		} else if n > 0 {
			off = satAdd(alignUp(off, f.Kind.align(maxAlign)), satMul(n, f.Kind.size()))
		}
	}
	return off
}

// advanceFixed returns the offset after n consecutive values of a
// fixed-layout definition starting at off. The start phase (offset mod 8)
// repeats after at most 8 values, so long arrays are skipped in whole
// cycles.
func advanceFixed(d *MsgDef, off, n, x int) int {
	var seenAt, seenOff [8]int
	for i := range seenAt {
		seenAt[i] = -1
	}
	for i := 0; i < n; i++ {
		ph := off & 7
		if seenAt[ph] >= 0 {
			cycle, bytes := i-seenAt[ph], off-seenOff[ph]
			full := (n - i) / cycle
			off = satAdd(off, satMul(full, bytes))
			for i += full * cycle; i < n; i++ {
				off = satAdd(off, d.sizeCDR[x][off&7])
			}
			return off
		}
		seenAt[ph], seenOff[ph] = i, off
		off = satAdd(off, d.sizeCDR[x][ph])
	}
	return off
}

// alignUp rounds off up to a multiple of a (a power of two).
func alignUp(off, a int) int { return (off + a - 1) &^ (a - 1) }

// satAdd and satMul add and multiply non-negative sizes, saturating at
// 1<<40 so that absurd definitions cannot overflow.
func satAdd(a, b int) int {
	const limit = 1 << 40
	if a >= limit || b >= limit || a+b >= limit {
		return limit
	}
	return a + b
}

func satMul(a, b int) int {
	const limit = 1 << 40
	if a == 0 || b == 0 {
		return 0
	}
	if a >= limit/b {
		return limit
	}
	return a * b
}
