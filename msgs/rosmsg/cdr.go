package rosmsg

import (
	"encoding/binary"
	"fmt"
	"math"
)

// CDRWriter appends a message in little-endian XCDR1, the CDR that ROS 2
// middlewares write: NewCDRWriter writes the encapsulation header, and each
// method aligns its value naturally relative to the end of that header. The
// typed messages of package msgs (github.com/calisym/calisym/msgs) encode
// themselves through it.
type CDRWriter struct {
	buf    []byte
	origin int
}

// NewCDRWriter returns a writer that appends to dst, starting with the
// encapsulation header of little-endian CDR.
func NewCDRWriter(dst []byte) *CDRWriter {
	w := &CDRWriter{}
	w.Reset(dst)
	return w
}

// Reset makes w append to dst, starting with the encapsulation header, as
// a new writer: a writer kept and reset encodes without allocating beyond
// dst's growth.
func (w *CDRWriter) Reset(dst []byte) {
	w.buf = append(dst, 0, cdrLE, 0, 0)
	w.origin = len(w.buf)
}

// Bytes returns dst with the message appended.
func (w *CDRWriter) Bytes() []byte { return w.buf }

func (w *CDRWriter) align(a int) {
	for pad := -(len(w.buf) - w.origin) & (a - 1); pad > 0; pad-- {
		w.buf = append(w.buf, 0)
	}
}

// Bool appends a bool as one byte.
func (w *CDRWriter) Bool(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	w.buf = append(w.buf, b)
}

// Uint8 appends a uint8 (also byte and char).
func (w *CDRWriter) Uint8(v uint8) { w.buf = append(w.buf, v) }

// Int8 appends an int8.
func (w *CDRWriter) Int8(v int8) { w.buf = append(w.buf, byte(v)) }

// Uint16 appends a uint16.
func (w *CDRWriter) Uint16(v uint16) {
	w.align(2)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, v)
}

// Int16 appends an int16.
func (w *CDRWriter) Int16(v int16) { w.Uint16(uint16(v)) }

// Uint32 appends a uint32.
func (w *CDRWriter) Uint32(v uint32) {
	w.align(4)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
}

// Int32 appends an int32.
func (w *CDRWriter) Int32(v int32) { w.Uint32(uint32(v)) }

// Uint64 appends a uint64.
func (w *CDRWriter) Uint64(v uint64) {
	w.align(8)
	w.buf = binary.LittleEndian.AppendUint64(w.buf, v)
}

// Int64 appends an int64.
func (w *CDRWriter) Int64(v int64) { w.Uint64(uint64(v)) }

// Float32 appends a float32.
func (w *CDRWriter) Float32(v float32) { w.Uint32(math.Float32bits(v)) }

// Float64 appends a float64.
func (w *CDRWriter) Float64(v float64) { w.Uint64(math.Float64bits(v)) }

// String appends a string: its length including a terminating NUL, the
// bytes, and the NUL.
func (w *CDRWriter) String(s string) {
	w.Uint32(uint32(len(s) + 1))
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, 0)
}

// SequenceLength appends the element count that precedes a sequence.
func (w *CDRWriter) SequenceLength(n int) { w.Uint32(uint32(n)) }

// Float64s appends a float64 sequence: its count, then the values.
func (w *CDRWriter) Float64s(v []float64) {
	w.SequenceLength(len(v))
	w.Float64Array(v)
}

// Float64Array appends the values of a fixed-size float64 array (no count).
func (w *CDRWriter) Float64Array(v []float64) {
	if len(v) == 0 {
		return // an empty array is not aligned
	}
	w.align(8)
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(x))
	}
}

// Strings appends a string sequence: its count, then the strings.
func (w *CDRWriter) Strings(v []string) {
	w.SequenceLength(len(v))
	for _, s := range v {
		w.String(s)
	}
}

// Uint8s appends a uint8 sequence: its count, then the bytes.
func (w *CDRWriter) Uint8s(v []uint8) {
	w.SequenceLength(len(v))
	w.buf = append(w.buf, v...)
}

// CDRReader reads a CDR message (XCDR1 or plain XCDR2, either byte order)
// field by field, the counterpart of CDRWriter. Errors are sticky: after the
// first failure every method returns a zero value and Err reports the
// failure, so a typed decoder reads all its fields and checks Err once.
type CDRReader struct {
	w   wire
	buf []byte
	off int
	err *DecodeError
}

// NewCDRReader returns a reader of the message in data, which starts with
// the encapsulation header.
func NewCDRReader(data []byte) (*CDRReader, error) {
	body, w, err := parseWire(EncodingCDR, data)
	if err != nil {
		return nil, err
	}
	return &CDRReader{w: w, buf: body}, nil
}

// Err returns the first failure, or nil. It is a *DecodeError whose Field
// is empty (see msgs.Unmarshal, which names the field).
func (r *CDRReader) Err() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

// Offset returns the offset of the next byte to read in the serialized
// data, header included.
func (r *CDRReader) Offset() int { return r.w.base + r.off }

// next aligns to a and returns the next n bytes, or nil after a failure.
func (r *CDRReader) next(a, n int) []byte {
	if r.err != nil {
		return nil
	}
	off := alignUp(r.off, a)
	if n > len(r.buf)-off {
		r.err = &DecodeError{Offset: r.w.base + min(off, len(r.buf)),
			Err: fmt.Errorf("%w: need %d bytes, %d left", ErrTruncated, n, max(len(r.buf)-off, 0))}
		return nil
	}
	r.off = off + n
	return r.buf[off:r.off]
}

// Bool reads a bool.
func (r *CDRReader) Bool() bool { return r.Uint8() != 0 }

// Uint8 reads a uint8.
func (r *CDRReader) Uint8() uint8 {
	if b := r.next(1, 1); b != nil {
		return b[0]
	}
	return 0
}

// Int8 reads an int8.
func (r *CDRReader) Int8() int8 { return int8(r.Uint8()) }

// Uint16 reads a uint16.
func (r *CDRReader) Uint16() uint16 {
	if b := r.next(2, 2); b != nil {
		return r.w.u16(b)
	}
	return 0
}

// Int16 reads an int16.
func (r *CDRReader) Int16() int16 { return int16(r.Uint16()) }

// Uint32 reads a uint32.
func (r *CDRReader) Uint32() uint32 {
	if b := r.next(4, 4); b != nil {
		return r.w.u32(b)
	}
	return 0
}

// Int32 reads an int32.
func (r *CDRReader) Int32() int32 { return int32(r.Uint32()) }

// Uint64 reads a uint64.
func (r *CDRReader) Uint64() uint64 {
	if b := r.next(r.w.maxAlign, 8); b != nil {
		return r.w.u64(b)
	}
	return 0
}

// Int64 reads an int64.
func (r *CDRReader) Int64() int64 { return int64(r.Uint64()) }

// Float32 reads a float32.
func (r *CDRReader) Float32() float32 { return math.Float32frombits(r.Uint32()) }

// Float64 reads a float64.
func (r *CDRReader) Float64() float64 { return math.Float64frombits(r.Uint64()) }

// String reads a string.
func (r *CDRReader) String() string {
	n := r.Uint32()
	b := r.next(1, int(n))
	if len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return string(b)
}

// SequenceLength reads the count of a sequence whose elements take at least
// minElemSize bytes each; a count the remaining data cannot hold is an
// error (and 0 is returned), so the caller may allocate count elements.
func (r *CDRReader) SequenceLength(minElemSize int) int {
	n := int(r.Uint32())
	if r.err != nil {
		return 0
	}
	left := len(r.buf) - r.off
	if minElemSize < 1 {
		minElemSize = 1
	}
	if n > left/minElemSize {
		r.err = &DecodeError{Offset: r.Offset(),
			Err: fmt.Errorf("%w: %d elements of at least %d bytes each, %d bytes left", ErrTruncated, n, minElemSize, left)}
		return 0
	}
	return n
}

// Float64s reads a float64 sequence.
func (r *CDRReader) Float64s() []float64 {
	n := r.SequenceLength(8)
	if n == 0 {
		return nil
	}
	v := make([]float64, n)
	r.Float64Array(v)
	return v
}

// Float64Array reads the values of a fixed-size float64 array into v.
func (r *CDRReader) Float64Array(v []float64) {
	if len(v) == 0 {
		return
	}
	b := r.next(r.w.maxAlign, 8*len(v))
	if b == nil {
		clear(v)
		return
	}
	for i := range v {
		v[i] = math.Float64frombits(r.w.u64(b[8*i:]))
	}
}

// Strings reads a string sequence.
func (r *CDRReader) Strings() []string {
	n := r.SequenceLength(4)
	if n == 0 {
		return nil
	}
	v := make([]string, n)
	for i := range v {
		v[i] = r.String()
	}
	return v
}

// Uint8s reads a uint8 sequence.
func (r *CDRReader) Uint8s() []uint8 {
	n := r.SequenceLength(1)
	if n == 0 {
		return nil
	}
	return append([]uint8(nil), r.next(1, n)...)
}
