package rosmsg

import (
	"fmt"
	"math"
)

// Extractor reads the values of several numeric message paths straight from
// serialized messages, without decoding them: it walks the bytes once per
// message, skipping every field no path asks for (fixed-size fields and
// arrays of numbers in constant time), and allocates nothing for a message
// it reads without error.
// It is the fast path for converting large logs; its results equal those of
// MessagePath.Float64 on the decoded message.
//
// An Extractor keeps scratch state between calls and must not be used by
// several goroutines at once; make one per goroutine (they are cheap).
type Extractor struct {
	schema *Schema
	enc    Encoding
	paths  []*MessagePath

	// per message
	w    wire
	buf  []byte
	memo []memoEntry // field offsets of the messages met so far
	used int
}

// memoEntry records where the fields of one message instance begin:
// offs[i] is the offset of field i, computed up to len(offs)-1.
type memoEntry struct {
	def   *MsgDef
	start int
	offs  []int
}

// ExtractError reports a path that could not be read from a message.
type ExtractError struct {
	// Path is the message path as written.
	Path string
	// Index is the position of the path in the Extractor's list.
	Index int
	// Err wraps ErrIndexRange or ErrNoMatch when the message lacks what
	// the path asks for, or ErrTruncated / ErrInvalid for bad data.
	Err error
}

// Error describes the failure.
func (e *ExtractError) Error() string { return "rosmsg: path " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ExtractError) Unwrap() error { return e.Err }

// NewExtractor returns an Extractor of the given paths, compiled against s,
// for messages serialized in enc. Every path must be numeric (see
// MessagePath.Numeric).
func NewExtractor(s *Schema, enc Encoding, paths ...*MessagePath) (*Extractor, error) {
	if enc != EncodingCDR && enc != EncodingROS1 {
		return nil, fmt.Errorf("rosmsg: extractor: encoding %v: %w", enc, ErrUnsupported)
	}
	for _, p := range paths {
		if p.root != s.Root {
			return nil, fmt.Errorf("rosmsg: extractor: path %s: %w: it was compiled against another schema", p.expr, ErrPath)
		}
		if !p.Numeric() {
			return nil, fmt.Errorf("rosmsg: extractor: path %s: %w: it leads to a string, message or array, not a number", p.expr, ErrPath)
		}
	}
	return &Extractor{schema: s, enc: enc, paths: append([]*MessagePath(nil), paths...)}, nil
}

// CompileExtractor is the one call a conversion pipeline or a live node
// makes per channel of a log: it parses the channel's schema (type name,
// schema encoding "ros2msg" or "ros1msg", definition text), compiles the
// message paths against it, and returns their Extractor for the channel's
// message encoding ("cdr" or "ros1").
func CompileExtractor(typeName, schemaEncoding string, schema []byte, messageEncoding string, exprs ...string) (*Extractor, error) {
	d, err := DialectFor(schemaEncoding)
	if err != nil {
		return nil, err
	}
	enc, err := EncodingFor(messageEncoding)
	if err != nil {
		return nil, err
	}
	s, err := ParseSchema(typeName, d, schema)
	if err != nil {
		return nil, err
	}
	paths := make([]*MessagePath, len(exprs))
	for i, e := range exprs {
		if paths[i], err = CompilePath(s, e); err != nil {
			return nil, err
		}
	}
	return NewExtractor(s, enc, paths...)
}

// Schema returns the schema the extractor reads.
func (x *Extractor) Schema() *Schema { return x.schema }

// Paths returns the paths, in the order of the values Extract writes.
func (x *Extractor) Paths() []*MessagePath { return append([]*MessagePath(nil), x.paths...) }

// Extract reads every path from one serialized message into dst (which
// must hold len(Paths()) values). A path the message lacks gets NaN, and
// the first such failure is returned as an *ExtractError after all paths
// have been read; bad data yields a *DecodeError.
func (x *Extractor) Extract(data []byte, dst []float64) error {
	if len(dst) < len(x.paths) {
		return fmt.Errorf("rosmsg: extract: %w: dst holds %d values, want %d", ErrValue, len(dst), len(x.paths))
	}
	body, w, derr := parseWire(x.enc, data)
	if derr != nil {
		derr.Type = x.schema.Root.Name
		return derr
	}
	x.w, x.buf, x.used = w, body, 0
	var first error
	for i, p := range x.paths {
		v, err := x.eval(p)
		if err != nil {
			dst[i] = math.NaN()
			if first == nil {
				first = &ExtractError{Path: p.expr, Index: i, Err: err}
			}
			continue
		}
		dst[i] = v
	}
	x.buf = nil
	return first
}

// cursor is where a path has got to in the bytes: a message at off, or the
// value of field f (an array or a primitive; with elem, one element of f)
// at off, held by the message pdef at poff.
type cursor struct {
	msg  *MsgDef
	f    *Field
	elem bool
	off  int
	pdef *MsgDef
	poff int
}

func (x *Extractor) eval(p *MessagePath) (float64, error) {
	cur := cursor{msg: p.root}
	for i := range p.steps {
		st := &p.steps[i]
		switch st.kind {
		case stepField:
			off, err := x.fieldOffset(cur.msg, cur.off, st.field)
			if err != nil {
				return 0, err
			}
			f := &cur.msg.Fields[st.field]
			if f.Array == NotArray && f.Msg != nil {
				cur = cursor{msg: f.Msg, off: off}
			} else {
				cur = cursor{f: f, off: off, pdef: cur.msg, poff: cur.off}
			}
		case stepIndex, stepKey:
			n, start, err := x.arrayStart(cur.f, cur.off)
			if err != nil {
				return 0, err
			}
			idx := st.index
			if st.kind == stepKey {
				if idx, err = x.findKey(st, cur); err != nil {
					return 0, err
				}
			} else if idx < 0 {
				idx += n
			}
			if idx < 0 || idx >= n {
				return 0, fmt.Errorf("%w: %s: index %d of %s, which has %d elements", ErrIndexRange, st.text, idx, st.arr.Name, n)
			}
			off, err := x.elementOffset(cur.f, start, idx)
			if err != nil {
				return 0, err
			}
			if cur.f.Msg != nil {
				cur = cursor{msg: cur.f.Msg, off: off}
			} else {
				cur = cursor{f: cur.f, elem: true, off: off}
			}
		case stepFilter:
			if st.arr == nil {
				ok, _, err := x.filterMatches(st, cur.off)
				if err != nil {
					return 0, err
				}
				if !ok {
					return 0, fmt.Errorf("%w: %s", ErrNoMatch, st.text)
				}
				continue
			}
			n, off, err := x.arrayStart(cur.f, cur.off)
			if err == nil {
				err = x.checkCount(cur.f, off, n)
			}
			if err != nil {
				return 0, err
			}
			found := false
			for j := 0; j < n && !found; j++ {
				ok, end, err := x.filterMatches(st, off)
				if err != nil {
					return 0, err
				}
				if ok {
					cur, found = cursor{msg: st.def, off: off}, true
				}
				off = end
			}
			if !found {
				return 0, fmt.Errorf("%w: %s: no element of %s matches", ErrNoMatch, st.text, st.arr.Name)
			}
		}
	}
	if cur.msg != nil { // a time or duration
		off := cur.off
		if !x.w.ros1 {
			off = alignUp(off, 4)
		}
		if 8 > len(x.buf)-off {
			return 0, x.fail(ErrTruncated, off, "need 8 bytes for a time")
		}
		sec := x.num(cur.msg.Fields[0].Kind, off)
		nsec := x.num(cur.msg.Fields[1].Kind, off+4)
		return sec + nsec*1e-9, nil
	}
	return x.scalar(cur.f.Kind, cur.off)
}

// filterMatches evaluates a filter on the message (of type st.def) at off
// and returns the message's end offset too.
func (x *Extractor) filterMatches(st *step, off int) (bool, int, error) {
	d, o := st.def, off
	var f *Field
	for _, i := range st.chain {
		var err error
		if o, err = x.walkTo(d, o, i); err != nil {
			return false, 0, err
		}
		f = &d.Fields[i]
		d = f.Msg
	}
	var ok bool
	if f.Kind == KindString {
		s, _, err := x.str(o)
		if err != nil {
			return false, 0, err
		}
		ok = st.lit.isStr && string(s) == st.lit.str
	} else {
		v, err := x.scalar(f.Kind, o)
		if err != nil {
			return false, 0, err
		}
		ok = !st.lit.isStr && v == st.lit.num
	}
	end := 0
	if st.arr != nil {
		var err error
		if end, err = x.skipMsg(st.def, off); err != nil {
			return false, 0, err
		}
	}
	return ok, end, nil
}

// findKey returns the index of the first element of the key array that
// equals the step's literal.
func (x *Extractor) findKey(st *step, cur cursor) (int, error) {
	kf := &st.def.Fields[st.field]
	koff, err := x.fieldOffset(st.def, cur.poff, st.field)
	if err != nil {
		return 0, err
	}
	n, off, err := x.arrayStart(kf, koff)
	if err != nil {
		return 0, err
	}
	if kf.Kind == KindString {
		for j := 0; j < n; j++ {
			s, end, err := x.str(off)
			if err != nil {
				return 0, err
			}
			if string(s) == st.lit.str {
				return j, nil
			}
			off = end
		}
	} else if n > 0 {
		size := kf.Kind.size()
		off = x.align(off, kf.Kind.align(x.w.maxAlign))
		if n > (len(x.buf)-off)/size {
			return 0, x.fail(ErrTruncated, off, "%d elements of %d bytes", n, size)
		}
		for j := 0; j < n; j++ {
			if x.num(kf.Kind, off+j*size) == st.lit.num {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: %s: %s holds no %v", ErrNoMatch, st.text, kf.Name, st.lit)
}

func (x *Extractor) fail(err error, off int, format string, args ...any) *DecodeError {
	return &DecodeError{Type: x.schema.Root.Name, Offset: x.w.base + min(max(off, 0), len(x.buf)),
		Err: fmt.Errorf("%w: "+format, append([]any{err}, args...)...)}
}

func (x *Extractor) align(off, a int) int {
	if x.w.ros1 {
		return off
	}
	return alignUp(off, a)
}

// fieldOffset returns where field i of the message d at start begins,
// remembering the offsets of its fields for the other paths.
func (x *Extractor) fieldOffset(d *MsgDef, start, i int) (int, error) {
	var e *memoEntry
	for j := range x.memo[:x.used] {
		if x.memo[j].def == d && x.memo[j].start == start {
			e = &x.memo[j]
			break
		}
	}
	if e == nil {
		if x.used == len(x.memo) {
			x.memo = append(x.memo, memoEntry{})
		}
		e = &x.memo[x.used]
		x.used++
		e.def, e.start, e.offs = d, start, append(e.offs[:0], start)
	}
	for len(e.offs) <= i {
		k := len(e.offs) - 1
		end, err := x.skipField(&d.Fields[k], e.offs[k])
		if err != nil {
			return 0, err
		}
		e.offs = append(e.offs, end)
	}
	return e.offs[i], nil
}

// walkTo returns where field i of the message d at start begins, without
// remembering anything.
func (x *Extractor) walkTo(d *MsgDef, start, i int) (int, error) {
	off := start
	for k := 0; k < i; k++ {
		var err error
		if off, err = x.skipField(&d.Fields[k], off); err != nil {
			return 0, err
		}
	}
	return off, nil
}

// count reads a sequence or string length at off.
func (x *Extractor) count(off int) (int, int, error) {
	off = x.align(off, 4)
	if 4 > len(x.buf)-off {
		return 0, 0, x.fail(ErrTruncated, off, "need 4 bytes for a length")
	}
	return int(x.w.u32(x.buf[off:])), off + 4, nil
}

// arrayStart returns the element count of an array field at off and where
// its elements begin.
func (x *Extractor) arrayStart(f *Field, off int) (int, int, error) {
	if f.Array == FixedArray {
		return f.Len, off, nil
	}
	return x.count(off)
}

// elemMin returns the smallest size of one element of f.
func (x *Extractor) elemMin(f *Field) int {
	switch {
	case f.Kind == KindString || f.Kind == KindWString:
		return 4
	case f.Msg == nil:
		return f.Kind.size()
	case x.w.ros1:
		return f.Msg.minROS1
	}
	return f.Msg.minCDR
}

// checkCount rejects n elements of f that cannot fit in the bytes left.
func (x *Extractor) checkCount(f *Field, off, n int) error {
	if m := x.elemMin(f); m > 0 && n > (len(x.buf)-off)/m || m == 0 && n > 1<<16 || n < 0 {
		return x.fail(ErrTruncated, off, "%d elements of at least %d bytes each, %d bytes left", n, m, len(x.buf)-off)
	}
	return nil
}

// elementOffset returns where element idx (< count) of the array f whose
// elements begin at start is.
func (x *Extractor) elementOffset(f *Field, start, idx int) (int, error) {
	if f.Msg == nil && f.Kind != KindString && f.Kind != KindWString {
		off := x.align(start, f.Kind.align(x.w.maxAlign)) + idx*f.Kind.size()
		if f.Kind.size() > len(x.buf)-off {
			return 0, x.fail(ErrTruncated, off, "element %d of %s", idx, f.Name)
		}
		return off, nil
	}
	return x.skipElems(f, start, idx)
}

// skipField returns the offset after field f at off.
func (x *Extractor) skipField(f *Field, off int) (int, error) {
	switch f.Array {
	case NotArray:
		return x.skipElems(f, off, 1)
	case FixedArray:
		return x.skipElems(f, off, f.Len)
	}
	n, off, err := x.count(off)
	if err != nil {
		return 0, err
	}
	return x.skipElems(f, off, n)
}

// skipElems returns the offset after n consecutive values of f's element
// type at off.
func (x *Extractor) skipElems(f *Field, off, n int) (int, error) {
	if n == 0 {
		return off, nil
	}
	if err := x.checkCount(f, off, n); err != nil {
		return 0, err
	}
	switch {
	case f.Msg != nil:
		d := f.Msg
		if d.fixed {
			if x.w.ros1 {
				return off + n*d.minROS1, nil
			}
			end := advanceFixed(d, off, n, x.w.xcdr2)
			if end > len(x.buf) {
				return 0, x.fail(ErrTruncated, off, "%d values of %s", n, d.Name)
			}
			return end, nil
		}
		for j := 0; j < n; j++ {
			var err error
			if off, err = x.skipMsg(d, off); err != nil {
				return 0, err
			}
		}
		return off, nil
	case f.Kind == KindString || f.Kind == KindWString:
		for j := 0; j < n; j++ {
			_, end, err := x.str(off)
			if err != nil {
				return 0, err
			}
			off = end
		}
		return off, nil
	}
	off = x.align(off, f.Kind.align(x.w.maxAlign))
	size := n * f.Kind.size()
	if size > len(x.buf)-off {
		return 0, x.fail(ErrTruncated, off, "need %d bytes for %s", size, f.Name)
	}
	return off + size, nil
}

// skipMsg returns the offset after the message d at off.
func (x *Extractor) skipMsg(d *MsgDef, off int) (int, error) {
	if d.fixed {
		size := d.minROS1
		if !x.w.ros1 {
			size = d.sizeCDR[x.w.xcdr2][off&7]
		}
		if size > len(x.buf)-off {
			return 0, x.fail(ErrTruncated, off, "need %d bytes for %s", size, d.Name)
		}
		return off + size, nil
	}
	for i := range d.Fields {
		var err error
		if off, err = x.skipField(&d.Fields[i], off); err != nil {
			return 0, err
		}
	}
	return off, nil
}

// str returns the bytes of the string at off (without a CDR NUL) and the
// offset after it.
func (x *Extractor) str(off int) ([]byte, int, error) {
	n, off, err := x.count(off)
	if err != nil {
		return nil, 0, err
	}
	if n > len(x.buf)-off {
		return nil, 0, x.fail(ErrTruncated, off, "string of %d bytes", n)
	}
	b := x.buf[off : off+n]
	if !x.w.ros1 && n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	return b, off + n, nil
}

// scalar reads a primitive value at off (aligning first) as float64.
func (x *Extractor) scalar(k Kind, off int) (float64, error) {
	off = x.align(off, k.align(x.w.maxAlign))
	if k.size() > len(x.buf)-off {
		return 0, x.fail(ErrTruncated, off, "need %d bytes for a %v", k.size(), k)
	}
	return x.num(k, off), nil
}

// num reads a primitive value at an aligned, checked offset.
func (x *Extractor) num(k Kind, off int) float64 {
	b := x.buf[off:]
	switch k {
	case KindBool:
		if b[0] != 0 {
			return 1
		}
		return 0
	case KindInt8:
		return float64(int8(b[0]))
	case KindUint8:
		return float64(b[0])
	case KindInt16:
		return float64(int16(x.w.u16(b)))
	case KindUint16:
		return float64(x.w.u16(b))
	case KindInt32:
		return float64(int32(x.w.u32(b)))
	case KindUint32:
		return float64(x.w.u32(b))
	case KindFloat32:
		return float64(math.Float32frombits(x.w.u32(b)))
	case KindInt64:
		return float64(int64(x.w.u64(b)))
	case KindUint64:
		return float64(x.w.u64(b))
	case KindFloat64:
		return math.Float64frombits(x.w.u64(b))
	}
	return math.NaN()
}
