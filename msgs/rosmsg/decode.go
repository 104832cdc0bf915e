package rosmsg

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Encoding is a serialization of messages.
type Encoding uint8

const (
	// EncodingCDR is OMG CDR as ROS 2 middlewares write it (MCAP message
	// encoding "cdr"): a 4-byte encapsulation header, then the fields with
	// natural alignment relative to the end of the header.
	EncodingCDR Encoding = iota + 1
	// EncodingROS1 is ROS 1 serialization (MCAP message encoding "ros1"):
	// little endian, no alignment, strings and sequences prefixed with a
	// uint32 count, time and duration as two 32-bit integers.
	EncodingROS1
)

// String returns the MCAP message encoding name of the encoding
// (MessageEncodingCDR, MessageEncodingROS1).
func (e Encoding) String() string {
	switch e {
	case EncodingCDR:
		return MessageEncodingCDR
	case EncodingROS1:
		return MessageEncodingROS1
	}
	return "Encoding(" + strconv.Itoa(int(e)) + ")"
}

// EncodingFor returns the encoding of an MCAP message encoding name
// (MessageEncodingCDR or MessageEncodingROS1).
func EncodingFor(messageEncoding string) (Encoding, error) {
	switch messageEncoding {
	case MessageEncodingCDR:
		return EncodingCDR, nil
	case MessageEncodingROS1:
		return EncodingROS1, nil
	}
	return 0, fmt.Errorf("rosmsg: message encoding %q: %w (want %s or %s)", messageEncoding, ErrUnsupported, MessageEncodingCDR, MessageEncodingROS1)
}

// DecodeError reports serialized data that could not be decoded: which
// field failed, where, and why. Err wraps one of ErrTruncated, ErrInvalid
// and ErrUnsupported.
type DecodeError struct {
	// Type is the message type being decoded.
	Type string
	// Field is the field that failed as a message path, e.g.
	// ".position[3]"; empty for the encapsulation header.
	Field string
	// Offset is the byte offset in the serialized data where it failed.
	Offset int
	// Err says what was wrong.
	Err error
}

// Error describes the failure.
func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("rosmsg: decode ")
	b.WriteString(e.Type)
	if e.Field != "" {
		b.WriteString(" field ")
		b.WriteString(e.Field)
	}
	b.WriteString(" at byte ")
	b.WriteString(strconv.Itoa(e.Offset))
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// CDR encapsulation kinds (second byte of the encapsulation header).
const (
	cdrBE      = 0x00
	cdrLE      = 0x01
	plCDRBE    = 0x02
	plCDRLE    = 0x03
	cdr2BE     = 0x06
	cdr2LE     = 0x07
	dCDR2BE    = 0x08
	pl2CDRLE   = 0x0b
	headerSize = 4
)

// wire describes how a message body is laid out.
type wire struct {
	big      bool
	ros1     bool
	maxAlign int // CDR: 8 (XCDR1) or 4 (XCDR2); ROS 1: 1
	xcdr2    int // index into MsgDef.sizeCDR
	base     int // offset of the body in the serialized data
}

// parseWire reads the encapsulation header of CDR data and returns the body.
func parseWire(enc Encoding, data []byte) ([]byte, wire, *DecodeError) {
	switch enc {
	case EncodingROS1:
		return data, wire{ros1: true, maxAlign: 1}, nil
	case EncodingCDR:
	default:
		return nil, wire{}, &DecodeError{Err: fmt.Errorf("%w: encoding %v", ErrUnsupported, enc)}
	}
	if len(data) < headerSize {
		return nil, wire{}, &DecodeError{Err: fmt.Errorf("%w: %d bytes, too short for the 4-byte encapsulation header", ErrTruncated, len(data))}
	}
	w := wire{base: headerSize, maxAlign: 8}
	kind := data[1]
	switch {
	case data[0] != 0:
		return nil, w, &DecodeError{Err: fmt.Errorf("%w: encapsulation header % x", ErrInvalid, data[:headerSize])}
	case kind == cdrBE || kind == cdrLE:
		w.big = kind == cdrBE
	case kind == cdr2BE || kind == cdr2LE:
		w.big, w.maxAlign, w.xcdr2 = kind == cdr2BE, 4, 1
	case kind == plCDRBE || kind == plCDRLE || kind >= dCDR2BE && kind <= pl2CDRLE:
		return nil, w, &DecodeError{Err: fmt.Errorf("%w: encapsulation kind 0x%02x (parameter-list or delimited CDR)", ErrUnsupported, kind)}
	default:
		return nil, w, &DecodeError{Err: fmt.Errorf("%w: unknown encapsulation kind 0x%02x", ErrInvalid, kind)}
	}
	return data[headerSize:], w, nil
}

func (w *wire) u16(b []byte) uint16 {
	if w.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (w *wire) u32(b []byte) uint32 {
	if w.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (w *wire) u64(b []byte) uint64 {
	if w.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// Decode decodes one serialized message of the schema's root type.
// Trailing bytes after the message are ignored (CDR writers pad payloads).
// Errors are *DecodeError.
func (s *Schema) Decode(enc Encoding, data []byte) (*Struct, error) {
	body, w, derr := parseWire(enc, data)
	if derr == nil {
		r := decoder{wire: w, buf: body}
		var v *Struct
		if v, derr = r.message(s.Root); derr == nil {
			return v, nil
		}
	}
	derr.Type = s.Root.Name
	return nil, derr
}

// decoder decodes a message body into Go values.
type decoder struct {
	wire
	buf []byte
	off int
}

// fail returns an error at the current offset.
func (r *decoder) fail(err error, format string, args ...any) *DecodeError {
	return &DecodeError{Offset: r.base + min(r.off, len(r.buf)), Err: fmt.Errorf("%w: "+format, append([]any{err}, args...)...)}
}

// need aligns the offset to a and checks that n bytes follow.
func (r *decoder) need(a, n int) *DecodeError {
	if !r.ros1 {
		r.off = alignUp(r.off, a)
	}
	if n > len(r.buf)-r.off {
		return r.fail(ErrTruncated, "need %d bytes, %d left", n, max(len(r.buf)-r.off, 0))
	}
	return nil
}

// count reads a sequence or string length.
func (r *decoder) count() (int, *DecodeError) {
	if err := r.need(4, 4); err != nil {
		return 0, err
	}
	n := r.u32(r.buf[r.off:])
	r.off += 4
	return int(n), nil
}

func (r *decoder) message(d *MsgDef) (*Struct, *DecodeError) {
	if len(d.Fields) == 0 {
		if !r.ros1 { // the placeholder byte of an empty CDR struct
			if err := r.need(1, 1); err != nil {
				return nil, err
			}
			r.off++
		}
		return &Struct{Def: d}, nil
	}
	s := &Struct{Def: d, Fields: make([]any, len(d.Fields))}
	for i := range d.Fields {
		f := &d.Fields[i]
		v, err := r.field(f)
		if err != nil {
			err.Field = "." + f.Name + err.Field
			return nil, err
		}
		s.Fields[i] = v
	}
	return s, nil
}

func (r *decoder) field(f *Field) (any, *DecodeError) {
	if f.Array == NotArray {
		return r.single(f)
	}
	n := f.Len
	if f.Array != FixedArray {
		var err *DecodeError
		if n, err = r.count(); err != nil {
			return nil, err
		}
	}
	if err := r.checkCount(f, n); err != nil {
		return nil, err
	}
	if f.Kind == KindMessage || f.Kind == KindTime || f.Kind == KindDuration {
		out := make([]*Struct, n)
		for i := range out {
			v, err := r.message(f.Msg)
			if err != nil {
				err.Field = "[" + strconv.Itoa(i) + "]" + err.Field
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	if f.Kind == KindString || f.Kind == KindWString {
		out := make([]string, n)
		for i := range out {
			v, err := r.str(f.Kind)
			if err != nil {
				err.Field = "[" + strconv.Itoa(i) + "]" + err.Field
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	size := f.Kind.size()
	if n > 0 {
		if err := r.need(f.Kind.align(r.maxAlign), n*size); err != nil {
			return nil, err
		}
	}
	b := r.buf[r.off : r.off+n*size]
	r.off += n * size
	switch f.Kind {
	case KindBool:
		out := make([]bool, n)
		for i := range out {
			out[i] = b[i] != 0
		}
		return out, nil
	case KindInt8:
		out := make([]int8, n)
		for i := range out {
			out[i] = int8(b[i])
		}
		return out, nil
	case KindUint8:
		return append([]uint8(nil), b...), nil
	case KindInt16:
		return primSlice(n, func(i int) int16 { return int16(r.u16(b[2*i:])) }), nil
	case KindUint16:
		return primSlice(n, func(i int) uint16 { return r.u16(b[2*i:]) }), nil
	case KindInt32:
		return primSlice(n, func(i int) int32 { return int32(r.u32(b[4*i:])) }), nil
	case KindUint32:
		return primSlice(n, func(i int) uint32 { return r.u32(b[4*i:]) }), nil
	case KindFloat32:
		return primSlice(n, func(i int) float32 { return math.Float32frombits(r.u32(b[4*i:])) }), nil
	case KindInt64:
		return primSlice(n, func(i int) int64 { return int64(r.u64(b[8*i:])) }), nil
	case KindUint64:
		return primSlice(n, func(i int) uint64 { return r.u64(b[8*i:]) }), nil
	case KindFloat64:
		return primSlice(n, func(i int) float64 { return math.Float64frombits(r.u64(b[8*i:])) }), nil
	}
	return nil, r.fail(ErrUnsupported, "field kind %v", f.Kind)
}

func primSlice[T any](n int, at func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = at(i)
	}
	return out
}

// checkCount rejects an element count the remaining data cannot hold, before
// anything is allocated for it.
func (r *decoder) checkCount(f *Field, n int) *DecodeError {
	var elem int
	switch f.Kind {
	case KindMessage, KindTime, KindDuration:
		elem = f.Msg.minCDR
		if r.ros1 {
			elem = f.Msg.minROS1
		}
	case KindString, KindWString:
		elem = 4
	default:
		elem = f.Kind.size()
	}
	left := max(len(r.buf)-r.off, 0)
	if elem == 0 {
		// Elements that take no bytes (empty ROS 1 messages): bound the
		// count by a constant instead.
		if n > 1<<16 {
			return r.fail(ErrInvalid, "%d empty elements", n)
		}
		return nil
	}
	if n > left/elem {
		return r.fail(ErrTruncated, "%d elements of at least %d bytes each, %d bytes left", n, elem, left)
	}
	return nil
}

// single decodes one value that is not an array.
func (r *decoder) single(f *Field) (any, *DecodeError) {
	switch f.Kind {
	case KindMessage, KindTime, KindDuration:
		return r.message(f.Msg)
	case KindString, KindWString:
		return r.str(f.Kind)
	}
	size := f.Kind.size()
	if err := r.need(f.Kind.align(r.maxAlign), size); err != nil {
		return nil, err
	}
	b := r.buf[r.off:]
	r.off += size
	switch f.Kind {
	case KindBool:
		return b[0] != 0, nil
	case KindInt8:
		return int8(b[0]), nil
	case KindUint8:
		return b[0], nil
	case KindInt16:
		return int16(r.u16(b)), nil
	case KindUint16:
		return r.u16(b), nil
	case KindInt32:
		return int32(r.u32(b)), nil
	case KindUint32:
		return r.u32(b), nil
	case KindFloat32:
		return math.Float32frombits(r.u32(b)), nil
	case KindInt64:
		return int64(r.u64(b)), nil
	case KindUint64:
		return r.u64(b), nil
	case KindFloat64:
		return math.Float64frombits(r.u64(b)), nil
	}
	return nil, r.fail(ErrUnsupported, "field kind %v", f.Kind)
}

// str decodes a string: a uint32 length, then the bytes (in CDR the length
// counts a terminating NUL, which is dropped).
func (r *decoder) str(k Kind) (string, *DecodeError) {
	if k == KindWString {
		return "", r.fail(ErrUnsupported, "wstring fields (their CDR form is middleware-specific)")
	}
	n, err := r.count()
	if err != nil {
		return "", err
	}
	if n > len(r.buf)-r.off {
		return "", r.fail(ErrTruncated, "string of %d bytes, %d left", n, len(r.buf)-r.off)
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	if !r.ros1 && n > 0 && b[n-1] == 0 {
		b = b[:n-1]
	}
	return string(b), nil
}
