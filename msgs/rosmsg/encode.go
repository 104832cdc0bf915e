package rosmsg

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Encode serializes v, a message of the schema's root type with field
// values of the Go types Decode produces (see Struct): as little-endian
// XCDR1 with its encapsulation header for EncodingCDR, or in ROS 1
// serialization for EncodingROS1. Fixed-size arrays must have their exact
// length, bounded sequences and strings must respect their bounds.
func (s *Schema) Encode(enc Encoding, v *Struct) ([]byte, error) {
	return s.AppendEncode(nil, enc, v)
}

// AppendEncode is Encode appending to dst.
func (s *Schema) AppendEncode(dst []byte, enc Encoding, v *Struct) ([]byte, error) {
	e := encoder{ros1: enc == EncodingROS1}
	switch enc {
	case EncodingCDR:
		dst = append(dst, 0, cdrLE, 0, 0)
	case EncodingROS1:
	default:
		return dst, fmt.Errorf("rosmsg: encode %s: encoding %v: %w", s.Root.Name, enc, ErrUnsupported)
	}
	e.buf, e.origin = dst, len(dst)
	if err := e.message(s.Root, v); err != nil {
		return dst[:e.origin-headerSizeIf(enc)], fmt.Errorf("rosmsg: encode %s field %s: %w", s.Root.Name, err.path, err.err)
	}
	return e.buf, nil
}

func headerSizeIf(enc Encoding) int {
	if enc == EncodingCDR {
		return headerSize
	}
	return 0
}

// encodeErr is an encoding failure and the path of the field it is in.
type encodeErr struct {
	path string
	err  error
}

func valueErr(format string, args ...any) *encodeErr {
	return &encodeErr{err: fmt.Errorf("%w: "+format, append([]any{ErrValue}, args...)...)}
}

type encoder struct {
	buf    []byte
	origin int
	ros1   bool
}

func (e *encoder) align(a int) {
	if e.ros1 {
		return
	}
	for pad := -(len(e.buf) - e.origin) & (a - 1); pad > 0; pad-- {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) u32(v uint32) {
	e.align(4)
	e.buf = binary.LittleEndian.AppendUint32(e.buf, v)
}

func (e *encoder) message(d *MsgDef, v *Struct) *encodeErr {
	if v == nil {
		return valueErr("nil message")
	}
	if v.Def != nil && v.Def.Name != d.Name || len(v.Fields) != len(d.Fields) {
		return valueErr("got a %d-field message, want %s with %d fields", len(v.Fields), d.Name, len(d.Fields))
	}
	if len(d.Fields) == 0 && !e.ros1 {
		e.buf = append(e.buf, 0)
		return nil
	}
	for i := range d.Fields {
		f := &d.Fields[i]
		if err := e.field(f, v.Fields[i]); err != nil {
			err.path = "." + f.Name + err.path
			return err
		}
	}
	return nil
}

func (e *encoder) field(f *Field, v any) *encodeErr {
	if f.Array == NotArray {
		return e.single(f, v)
	}
	n, err := e.arrayLen(f, v)
	if err != nil {
		return err
	}
	switch f.Array {
	case BoundedSequence:
		if n > f.Len {
			return valueErr("%d elements, more than the bound %d", n, f.Len)
		}
		e.u32(uint32(n))
	case Sequence:
		e.u32(uint32(n))
	case FixedArray:
		if n != f.Len {
			return valueErr("%d elements, want exactly %d", n, f.Len)
		}
	}
	elemErr := func(i int, err *encodeErr) *encodeErr {
		err.path = "[" + strconv.Itoa(i) + "]" + err.path
		return err
	}
	switch a := v.(type) {
	case []*Struct:
		for i, m := range a {
			if err := e.message(f.Msg, m); err != nil {
				return elemErr(i, err)
			}
		}
	case []string:
		for i, s := range a {
			if err := e.str(f, s); err != nil {
				return elemErr(i, err)
			}
		}
	default:
		if n > 0 {
			e.align(f.Kind.align(8))
		}
		switch a := v.(type) {
		case []bool:
			for _, x := range a {
				e.buf = append(e.buf, boolByte(x))
			}
		case []int8:
			for _, x := range a {
				e.buf = append(e.buf, byte(x))
			}
		case []uint8:
			e.buf = append(e.buf, a...)
		case []int16:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint16(e.buf, uint16(x))
			}
		case []uint16:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint16(e.buf, x)
			}
		case []int32:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(x))
			}
		case []uint32:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint32(e.buf, x)
			}
		case []float32:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(x))
			}
		case []int64:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(x))
			}
		case []uint64:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint64(e.buf, x)
			}
		case []float64:
			for _, x := range a {
				e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(x))
			}
		}
	}
	return nil
}

// arrayLen checks that v is a slice of the Go type of f's elements and
// returns its length.
func (e *encoder) arrayLen(f *Field, v any) (int, *encodeErr) {
	n, ok := -1, false
	switch f.Kind {
	case KindMessage, KindTime, KindDuration:
		var a []*Struct
		a, ok = v.([]*Struct)
		n = len(a)
	case KindString:
		var a []string
		a, ok = v.([]string)
		n = len(a)
	case KindBool:
		n, ok = typedLen[bool](v)
	case KindInt8:
		n, ok = typedLen[int8](v)
	case KindUint8:
		n, ok = typedLen[uint8](v)
	case KindInt16:
		n, ok = typedLen[int16](v)
	case KindUint16:
		n, ok = typedLen[uint16](v)
	case KindInt32:
		n, ok = typedLen[int32](v)
	case KindUint32:
		n, ok = typedLen[uint32](v)
	case KindInt64:
		n, ok = typedLen[int64](v)
	case KindUint64:
		n, ok = typedLen[uint64](v)
	case KindFloat32:
		n, ok = typedLen[float32](v)
	case KindFloat64:
		n, ok = typedLen[float64](v)
	case KindWString:
		return 0, &encodeErr{err: fmt.Errorf("%w: wstring fields", ErrUnsupported)}
	}
	if !ok {
		return 0, valueErr("got %T for a %v array", v, f.Kind)
	}
	return n, nil
}

func typedLen[T any](v any) (int, bool) {
	a, ok := v.([]T)
	return len(a), ok
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func (e *encoder) str(f *Field, s string) *encodeErr {
	if f.StringBound > 0 && len(s) > f.StringBound {
		return valueErr("string of %d bytes, more than the bound %d", len(s), f.StringBound)
	}
	if e.ros1 {
		e.u32(uint32(len(s)))
		e.buf = append(e.buf, s...)
		return nil
	}
	e.u32(uint32(len(s) + 1))
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, 0)
	return nil
}

// single encodes a value that is not an array.
func (e *encoder) single(f *Field, v any) *encodeErr {
	wrong := func() *encodeErr { return valueErr("got %T for a %v field", v, f.Kind) }
	switch f.Kind {
	case KindMessage, KindTime, KindDuration:
		m, ok := v.(*Struct)
		if !ok {
			return wrong()
		}
		return e.message(f.Msg, m)
	case KindString:
		s, ok := v.(string)
		if !ok {
			return wrong()
		}
		return e.str(f, s)
	case KindWString:
		return &encodeErr{err: fmt.Errorf("%w: wstring fields", ErrUnsupported)}
	}
	e.align(f.Kind.align(8))
	switch x := v.(type) {
	case bool:
		if f.Kind == KindBool {
			e.buf = append(e.buf, boolByte(x))
			return nil
		}
	case int8:
		if f.Kind == KindInt8 {
			e.buf = append(e.buf, byte(x))
			return nil
		}
	case uint8:
		if f.Kind == KindUint8 {
			e.buf = append(e.buf, x)
			return nil
		}
	case int16:
		if f.Kind == KindInt16 {
			e.buf = binary.LittleEndian.AppendUint16(e.buf, uint16(x))
			return nil
		}
	case uint16:
		if f.Kind == KindUint16 {
			e.buf = binary.LittleEndian.AppendUint16(e.buf, x)
			return nil
		}
	case int32:
		if f.Kind == KindInt32 {
			e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(x))
			return nil
		}
	case uint32:
		if f.Kind == KindUint32 {
			e.buf = binary.LittleEndian.AppendUint32(e.buf, x)
			return nil
		}
	case float32:
		if f.Kind == KindFloat32 {
			e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(x))
			return nil
		}
	case int64:
		if f.Kind == KindInt64 {
			e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(x))
			return nil
		}
	case uint64:
		if f.Kind == KindUint64 {
			e.buf = binary.LittleEndian.AppendUint64(e.buf, x)
			return nil
		}
	case float64:
		if f.Kind == KindFloat64 {
			e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(x))
			return nil
		}
	}
	return wrong()
}
