package rosmsg

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MessagePath is a compiled message path: a way into the fields of one
// message type, in the style of Foxglove's message paths. It is compiled
// once against a Schema and is then safe for concurrent use.
//
// Syntax (the topic is optional; a path without one may omit the first
// dot):
//
//	/odom.pose.pose.position.x            a field of a field
//	/joint_states.position[3]             an array element (negative counts from the end)
//	/joint_states.position[name=="elbow"] the element at the index where the sibling
//	                                      array name holds "elbow" (calisym extension)
//	/tf.transforms[:]{child_frame_id=="base"}.transform.translation.x
//	                                      the first array element whose field matches
//	/diagnostics{header.frame_id=="x"}    the message itself, only if it matches
//	.header.stamp                         time and duration values read as seconds
//
// Literals are double- or single-quoted strings, numbers, true and false.
type MessagePath struct {
	expr  string
	topic string
	root  *MsgDef
	steps []step
	leaf  leafKind
	kind  Kind // the leaf's kind when it is a primitive value
}

type leafKind uint8

const (
	leafNumeric leafKind = iota + 1 // a number or bool
	leafTime                        // a time or duration message: seconds
	leafString                      // a string
	leafOther                       // a message or an array
)

type stepKind uint8

const (
	stepField  stepKind = iota + 1 // field of a message
	stepIndex                      // element of an array by position
	stepKey                        // element of an array by a sibling key array
	stepFilter                     // first element of a message array (or the message) that matches
)

type step struct {
	kind  stepKind
	def   *MsgDef // stepField: the message; stepKey: the message holding both arrays; stepFilter: the element type
	field int     // stepField: field index; stepKey: index of the key array in def
	arr   *Field  // stepIndex, stepKey, stepFilter: the array (nil for a filter on a single message)
	index int     // stepIndex
	lit   literal // stepKey, stepFilter
	chain []int   // stepFilter: field indices from the element to the compared value
	text  string  // source text, for errors
}

// literal is a constant in a path: a string, or a number (bools are 0 and 1).
type literal struct {
	str   string
	num   float64
	isStr bool
}

// String returns the literal as a path writes it.
func (l literal) String() string {
	if l.isStr {
		return strconv.Quote(l.str)
	}
	return strconv.FormatFloat(l.num, 'g', -1, 64)
}

// String returns the path as written.
func (p *MessagePath) String() string { return p.expr }

// Topic returns the topic the path names ("" when it names none).
func (p *MessagePath) Topic() string { return p.topic }

// Numeric reports whether the path leads to a number, a bool or a time,
// which Float64 and Extractor read.
func (p *MessagePath) Numeric() bool { return p.leaf == leafNumeric || p.leaf == leafTime }

// TopicOf returns the topic at the start of a message path, without a
// schema ("" when the path names none).
func TopicOf(expr string) (string, error) {
	topic, _, err := parsePath(expr)
	if err != nil {
		return "", fmt.Errorf("rosmsg: path %q: %w", expr, err)
	}
	return topic, nil
}

// JointPath returns the message path of one joint's value in a
// sensor_msgs/JointState topic: JointPath("/joint_states", "position",
// "elbow") is `/joint_states.position[name=="elbow"]`. Quotes and
// backslashes in the joint name are escaped.
func JointPath(topic, field, joint string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return topic + "." + field + `[name=="` + r.Replace(joint) + `"]`
}

// segment is one parsed element of a path.
type segment struct {
	kind  segKind
	name  string   // segField, segKey: a field name
	index int      // segIndex
	chain []string // segFilter
	lit   literal
	text  string
}

type segKind uint8

const (
	segField segKind = iota + 1
	segIndex
	segSlice
	segKey
	segFilter
)

// parsePath splits a path into its topic and segments.
func parsePath(expr string) (string, []segment, error) {
	s := strings.TrimSpace(expr)
	var topic string
	i := 0
	switch {
	case strings.HasPrefix(s, `"`):
		j := strings.IndexByte(s[1:], '"')
		if j < 0 {
			return "", nil, fmt.Errorf("%w: unterminated quoted topic", ErrPath)
		}
		topic, i = s[1:1+j], j+2
	case strings.HasPrefix(s, "/"):
		j := strings.IndexAny(s, ".[{")
		if j < 0 {
			j = len(s)
		}
		topic, i = s[:j], j
	}
	var segs []segment
	for first := true; i < len(s); first = false {
		start := i
		switch c := s[i]; {
		case c == '.' || first && (c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
			if c == '.' {
				i++
			}
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			if j == i {
				return "", nil, fmt.Errorf("%w: missing field name at offset %d", ErrPath, start)
			}
			segs = append(segs, segment{kind: segField, name: s[i:j], text: s[start:j]})
			i = j
		case c == '[':
			inner, next, err := scanTo(s, i+1, ']')
			if err != nil {
				return "", nil, err
			}
			seg, err := parseIndex(strings.TrimSpace(inner))
			if err != nil {
				return "", nil, fmt.Errorf("%w: %q: %v", ErrPath, s[i:next], err)
			}
			seg.text = s[i:next]
			segs = append(segs, seg)
			i = next
		case c == '{':
			inner, next, err := scanTo(s, i+1, '}')
			if err != nil {
				return "", nil, err
			}
			lhs, lit, err := parseComparison(inner)
			if err != nil {
				return "", nil, fmt.Errorf("%w: %q: %v", ErrPath, s[i:next], err)
			}
			chain := strings.Split(strings.TrimPrefix(lhs, "."), ".")
			for _, name := range chain {
				if !validIdent(name) {
					return "", nil, fmt.Errorf("%w: %q: bad field name %q", ErrPath, s[i:next], name)
				}
			}
			segs = append(segs, segment{kind: segFilter, chain: chain, lit: lit, text: s[i:next]})
			i = next
		default:
			return "", nil, fmt.Errorf("%w: unexpected %q at offset %d", ErrPath, c, i)
		}
	}
	return topic, segs, nil
}

// scanTo returns the text from i up to the closing byte (outside quotes)
// and the offset after it.
func scanTo(s string, i int, closing byte) (string, int, error) {
	quote := byte(0)
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case quote != 0 && c == '\\':
			j++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == closing:
			return s[i:j], j + 1, nil
		}
	}
	return "", 0, fmt.Errorf("%w: missing %q", ErrPath, closing)
}

// parseIndex parses the inside of [...]: an integer, ":" or name==literal.
func parseIndex(inner string) (segment, error) {
	if inner == ":" {
		return segment{kind: segSlice}, nil
	}
	if n, err := strconv.Atoi(inner); err == nil {
		return segment{kind: segIndex, index: n}, nil
	}
	lhs, lit, err := parseComparison(inner)
	if err != nil {
		return segment{}, fmt.Errorf("want an integer, \":\" or name==value")
	}
	if !validIdent(lhs) {
		return segment{}, fmt.Errorf("bad key array name %q", lhs)
	}
	return segment{kind: segKey, name: lhs, lit: lit}, nil
}

// parseComparison parses "lhs == literal".
func parseComparison(s string) (string, literal, error) {
	lhs, rhs, ok := strings.Cut(s, "==")
	if !ok {
		return "", literal{}, fmt.Errorf("want name==value")
	}
	lit, err := parseLiteral(strings.TrimSpace(rhs))
	return strings.TrimSpace(lhs), lit, err
}

// parseLiteral parses a quoted string, a number, true or false.
func parseLiteral(s string) (literal, error) {
	switch {
	case s == "true":
		return literal{num: 1}, nil
	case s == "false":
		return literal{num: 0}, nil
	case len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]:
		var b strings.Builder
		for i := 1; i < len(s)-1; i++ {
			if s[i] == '\\' && i+1 < len(s)-1 {
				i++
			} else if s[i] == s[0] {
				return literal{}, fmt.Errorf("bad string literal %s", s)
			}
			b.WriteByte(s[i])
		}
		return literal{str: b.String(), isStr: true}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return literal{}, fmt.Errorf("bad literal %q (want a quoted string, a number, true or false)", s)
	}
	return literal{num: f}, nil
}

func validIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return true
}

// pathCursor tracks the type a path has reached while compiling.
type pathCursor struct {
	msg    *MsgDef // a message value
	f      *Field  // else a field value: an array, a primitive, or (elem) one element of f
	elem   bool
	parent *MsgDef // the message holding f
}

// CompilePath compiles a message path (see MessagePath) against the schema
// of the messages it will read. The topic, if any, is recorded but not
// checked against anything.
func CompilePath(s *Schema, expr string) (*MessagePath, error) {
	topic, segs, err := parsePath(expr)
	if err != nil {
		return nil, fmt.Errorf("rosmsg: path %q: %w", expr, err)
	}
	p := &MessagePath{expr: expr, topic: topic, root: s.Root}
	fail := func(seg segment, format string, args ...any) error {
		return fmt.Errorf("rosmsg: path %q at %q: %w: %s", expr, seg.text, ErrPath, fmt.Sprintf(format, args...))
	}
	cur := pathCursor{msg: s.Root}
	for k := 0; k < len(segs); k++ {
		seg := segs[k]
		switch seg.kind {
		case segField:
			if cur.msg == nil {
				return nil, fail(seg, "%s is not a message", describe(cur))
			}
			i := cur.msg.FieldIndex(seg.name)
			if i < 0 {
				return nil, fail(seg, "%s has no field %q (it has %s)", cur.msg.Name, seg.name, fieldNames(cur.msg))
			}
			p.steps = append(p.steps, step{kind: stepField, def: cur.msg, field: i, text: seg.text})
			f := &cur.msg.Fields[i]
			if f.Array == NotArray && f.Msg != nil {
				cur = pathCursor{msg: f.Msg}
			} else {
				cur = pathCursor{f: f, parent: cur.msg}
			}
		case segIndex, segKey:
			if cur.f == nil || cur.f.Array == NotArray || cur.elem {
				return nil, fail(seg, "%s is not an array", describe(cur))
			}
			st := step{kind: stepIndex, arr: cur.f, index: seg.index, text: seg.text}
			if seg.kind == segKey {
				ki := cur.parent.FieldIndex(seg.name)
				if ki < 0 {
					return nil, fail(seg, "%s has no key array %q", cur.parent.Name, seg.name)
				}
				kf := &cur.parent.Fields[ki]
				if kf.Array == NotArray || (kf.Kind == KindString) != seg.lit.isStr || !kf.Kind.Numeric() && kf.Kind != KindString {
					return nil, fail(seg, "key %s must be an array of %s to compare with %v", seg.name, map[bool]string{true: "strings", false: "numbers"}[seg.lit.isStr], seg.lit)
				}
				st = step{kind: stepKey, def: cur.parent, field: ki, arr: cur.f, lit: seg.lit, text: seg.text}
			}
			p.steps = append(p.steps, st)
			cur = elementOf(cur.f)
		case segSlice:
			if k+1 >= len(segs) || segs[k+1].kind != segFilter {
				return nil, fail(seg, "[:] selects many values; follow it with a filter {field==value}")
			}
			if cur.f == nil || cur.f.Array == NotArray || cur.elem {
				return nil, fail(seg, "%s is not an array", describe(cur))
			}
		case segFilter:
			var st step
			switch {
			case cur.f != nil && cur.f.Array != NotArray && !cur.elem && cur.f.Kind == KindMessage:
				st = step{kind: stepFilter, def: cur.f.Msg, arr: cur.f}
			case cur.msg != nil:
				st = step{kind: stepFilter, def: cur.msg}
			default:
				return nil, fail(seg, "filters apply to messages and arrays of messages, not %s", describe(cur))
			}
			st.lit, st.text = seg.lit, seg.text
			d := st.def
			for j, name := range seg.chain {
				i := d.FieldIndex(name)
				if i < 0 {
					return nil, fail(seg, "%s has no field %q", d.Name, name)
				}
				st.chain = append(st.chain, i)
				f := &d.Fields[i]
				last := j == len(seg.chain)-1
				switch {
				case f.Array != NotArray:
					return nil, fail(seg, "filter field %s is an array", name)
				case !last && f.Kind != KindMessage:
					return nil, fail(seg, "filter field %s is not a message", name)
				case last && (f.Kind == KindString) != st.lit.isStr, last && !f.Kind.Numeric() && f.Kind != KindString:
					return nil, fail(seg, "filter field %s (%v) cannot be compared with %v", name, f.Kind, st.lit)
				}
				d = f.Msg
			}
			p.steps = append(p.steps, st)
			if st.arr != nil {
				cur = pathCursor{msg: st.def}
			}
		}
	}
	switch {
	case cur.msg != nil && isTimeLike(cur.msg):
		p.leaf = leafTime
	case cur.msg != nil || cur.f.Array != NotArray && !cur.elem:
		p.leaf = leafOther
	case cur.f.Kind == KindString || cur.f.Kind == KindWString:
		p.leaf = leafString
	default:
		p.leaf, p.kind = leafNumeric, cur.f.Kind
	}
	return p, nil
}

// elementOf returns the cursor of one element of an array field.
func elementOf(f *Field) pathCursor {
	if f.Msg != nil {
		return pathCursor{msg: f.Msg}
	}
	return pathCursor{f: f, elem: true}
}

func describe(c pathCursor) string {
	switch {
	case c.msg != nil:
		return "message " + c.msg.Name
	case c.elem:
		return "element of " + c.f.Name
	case c.f.Array != NotArray:
		return "array " + c.f.Name
	}
	return c.f.Kind.String() + " field " + c.f.Name
}

func fieldNames(d *MsgDef) string {
	names := make([]string, len(d.Fields))
	for i := range d.Fields {
		names[i] = d.Fields[i].Name
	}
	if len(names) == 0 {
		return "no fields"
	}
	return strings.Join(names, ", ")
}

// isTimeLike reports whether a message is a time or duration: two integer
// fields sec and nsec (ROS 1) or sec and nanosec (builtin_interfaces).
func isTimeLike(d *MsgDef) bool {
	if len(d.Fields) != 2 || d.Fields[0].Name != "sec" || d.Fields[1].Name != "nsec" && d.Fields[1].Name != "nanosec" {
		return false
	}
	for _, f := range d.Fields {
		if f.Array != NotArray || f.Kind != KindInt32 && f.Kind != KindUint32 {
			return false
		}
	}
	return true
}

// Value evaluates the path on a decoded message of the schema's root type
// and returns the value it leads to (see Struct for the Go types).
func (p *MessagePath) Value(m *Struct) (any, error) {
	v, err := p.eval(m)
	if err != nil {
		return nil, fmt.Errorf("rosmsg: path %s: %w", p.expr, err)
	}
	return v, nil
}

// Float64 evaluates the path on a decoded message and converts the value to
// float64: numbers as they are, bools as 0 or 1, times and durations as
// seconds. Errors wrap ErrIndexRange or ErrNoMatch where the message lacks
// what the path asks for, and ErrPath for a path to a non-numeric value.
func (p *MessagePath) Float64(m *Struct) (float64, error) {
	if !p.Numeric() {
		return 0, fmt.Errorf("rosmsg: path %s: %w: it leads to a string, message or array, not a number", p.expr, ErrPath)
	}
	v, err := p.eval(m)
	if err != nil {
		return 0, fmt.Errorf("rosmsg: path %s: %w", p.expr, err)
	}
	if s, ok := v.(*Struct); ok && p.leaf == leafTime && len(s.Fields) == 2 {
		sec, ok1 := toFloat(s.Fields[0])
		nsec, ok2 := toFloat(s.Fields[1])
		if ok1 && ok2 {
			return sec + nsec*1e-9, nil
		}
	} else if f, ok := toFloat(v); ok {
		return f, nil
	}
	return 0, fmt.Errorf("rosmsg: path %s: %w: got %T", p.expr, ErrValue, v)
}

// eval walks the steps on decoded values.
func (p *MessagePath) eval(m *Struct) (any, error) {
	if m == nil || m.Def == nil || m.Def.Name != p.root.Name || len(m.Fields) != len(m.Def.Fields) {
		return nil, fmt.Errorf("%w: the message is not a %s", ErrPath, p.root.Name)
	}
	var cur any = m
	var parent *Struct
	for i := range p.steps {
		st := &p.steps[i]
		switch st.kind {
		case stepField:
			s, ok := cur.(*Struct)
			if !ok || len(s.Fields) != len(st.def.Fields) {
				return nil, fmt.Errorf("%w: %s: the value is not a %s", ErrPath, st.text, st.def.Name)
			}
			parent, cur = s, s.Fields[st.field]
		case stepIndex, stepKey:
			n := valueLen(cur)
			idx := st.index
			if st.kind == stepKey {
				if parent == nil || st.field >= len(parent.Fields) {
					return nil, fmt.Errorf("%w: %s: the value is not a %s", ErrPath, st.text, st.def.Name)
				}
				keys := parent.Fields[st.field]
				idx = -1
				for j, kn := 0, valueLen(keys); j < kn; j++ {
					if st.lit.matches(valueAt(keys, j)) {
						idx = j
						break
					}
				}
				if idx < 0 {
					return nil, fmt.Errorf("%w: %s: %s holds no %v", ErrNoMatch, st.text, st.def.Fields[st.field].Name, st.lit)
				}
			} else if idx < 0 {
				idx += n
			}
			if idx < 0 || idx >= n {
				return nil, fmt.Errorf("%w: %s: index %d of %s, which has %d elements", ErrIndexRange, st.text, idx, st.arr.Name, n)
			}
			cur = valueAt(cur, idx)
		case stepFilter:
			if st.arr == nil {
				if s, ok := cur.(*Struct); !ok || !st.matches(s) {
					return nil, fmt.Errorf("%w: %s", ErrNoMatch, st.text)
				}
				continue
			}
			found := false
			elems, _ := cur.([]*Struct)
			for _, e := range elems {
				if st.matches(e) {
					cur, found = e, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("%w: %s: no element of %s matches", ErrNoMatch, st.text, st.arr.Name)
			}
		}
	}
	return cur, nil
}

// matches evaluates a filter on one decoded message.
func (st *step) matches(s *Struct) bool {
	var v any = s
	for _, i := range st.chain {
		m, ok := v.(*Struct)
		if !ok || i >= len(m.Fields) {
			return false
		}
		v = m.Fields[i]
	}
	return st.lit.matches(v)
}

// matches compares a decoded primitive value with the literal.
func (l literal) matches(v any) bool {
	if l.isStr {
		s, ok := v.(string)
		return ok && s == l.str
	}
	f, ok := toFloat(v)
	return ok && f == l.num
}

// toFloat converts a decoded numeric or bool value to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint8:
		return float64(x), true
	case int16:
		return float64(x), true
	case uint16:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return math.NaN(), false
}

// valueLen returns the length of a decoded array (0 for anything else).
func valueLen(v any) int {
	switch a := v.(type) {
	case []float64:
		return len(a)
	case []string:
		return len(a)
	case []*Struct:
		return len(a)
	case []bool:
		return len(a)
	case []int8:
		return len(a)
	case []uint8:
		return len(a)
	case []int16:
		return len(a)
	case []uint16:
		return len(a)
	case []int32:
		return len(a)
	case []uint32:
		return len(a)
	case []int64:
		return len(a)
	case []uint64:
		return len(a)
	case []float32:
		return len(a)
	}
	return 0
}

// valueAt returns element i of a decoded array (i must be in range).
func valueAt(v any, i int) any {
	switch a := v.(type) {
	case []float64:
		return a[i]
	case []string:
		return a[i]
	case []*Struct:
		return a[i]
	case []bool:
		return a[i]
	case []int8:
		return a[i]
	case []uint8:
		return a[i]
	case []int16:
		return a[i]
	case []uint16:
		return a[i]
	case []int32:
		return a[i]
	case []uint32:
		return a[i]
	case []int64:
		return a[i]
	case []uint64:
		return a[i]
	case []float32:
		return a[i]
	}
	return nil
}
