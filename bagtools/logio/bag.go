package logio

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/pierrec/lz4/v4"

	"github.com/calisym/calisym/msgs/rosmsg"
)

// ROS 1 bag v2.0 record op codes (http://wiki.ros.org/Bags/Format/2.0).
const (
	bagOpMessage    = 0x02
	bagOpBagHeader  = 0x03
	bagOpIndexData  = 0x04
	bagOpChunk      = 0x05
	bagOpChunkInfo  = 0x06
	bagOpConnection = 0x07
)

// maxBagHeaderLen caps the header of one bag record (its fields, not its
// data). Real headers are well under a kilobyte.
const maxBagHeaderLen = 1 << 20

// BagReader streams the messages of a ROS 1 bag (format version 2.0) in file
// order. It reads one chunk at a time: the chunk is decompressed (none, bz2
// or lz4) into a buffer that is reused for the next chunk, so memory is
// bounded by the largest chunk. Channels get Encoding
// rosmsg.MessageEncodingROS1 and SchemaEncoding rosmsg.SchemaEncodingROS1Msg,
// with the connection's message_definition as Schema.
type BagReader struct {
	scan     bagScanner
	opts     ReaderOptions
	filter   topicFilter
	indexPos int64 // absolute file offset of the index section; 0 when none
	channels map[uint32]*Channel

	chunk    []byte // decompression buffer, reused from chunk to chunk
	records  []byte // records of the current chunk (chunk, or the scanner's buffer when uncompressed)
	chunkPos int    // next record within records
	chunkOff int64  // file offset of the current chunk record
	chunkErr error  // error to report once the complete records of a damaged chunk are used up
	inChunk  bool
	chunks   int // chunks read so far
	lz4r     *lz4.Reader

	msg    Message
	err    error
	closer io.Closer
}

// NewBagReader returns a reader of the ROS 1 bag in rs, which must be
// positioned at the bag's magic (BagMagic). When the bag has an index its
// connections are known at once (see Channels). opts may be nil for the
// defaults. Close does not close rs.
func NewBagReader(rs io.ReadSeeker, opts *ReaderOptions) (*BagReader, error) {
	o := readerOptions(opts)
	start, size, err := sizeOf(rs)
	if err != nil {
		return nil, fmt.Errorf("bag: %w", err)
	}
	b := &BagReader{
		opts:     o,
		filter:   newTopicFilter(o.Topics),
		channels: make(map[uint32]*Channel),
	}
	b.scan = bagScanner{r: bufio.NewReaderSize(rs, 64<<10), off: start, end: size, opts: &b.opts}
	var magic [len(BagMagic)]byte
	if n, err := io.ReadFull(b.scan.r, magic[:]); err != nil {
		return nil, fmt.Errorf("bag: offset %d: file too short for the magic (%d bytes): %w: %w", start, n, ErrTruncated, err)
	}
	if string(magic[:]) != BagMagic {
		return nil, fmt.Errorf("bag: offset %d: magic is %q, want %q: %w", start, magic[:], BagMagic, ErrUnknownFormat)
	}
	b.scan.off += int64(len(magic))
	var h bagHeader
	off, _, err := b.scan.next(&h)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("bag: offset %d: no bag header record: %w", b.scan.off, ErrTruncated)
		}
		return nil, err
	}
	if h.op != bagOpBagHeader {
		return nil, fmt.Errorf("bag: record at offset %d has op 0x%02x, want the bag header (0x03): %w", off, h.op, ErrCorrupt)
	}
	if !h.has(fieldIndexPos) {
		return nil, fmt.Errorf("bag: bag header at offset %d has no index_pos field: %w", off, ErrCorrupt)
	}
	if h.indexPos != 0 && h.indexPos < uint64(b.scan.off-start) {
		return nil, fmt.Errorf("bag: bag header at offset %d: index_pos %d points before the first record: %w", off, h.indexPos, ErrCorrupt)
	}
	if h.indexPos > uint64(size) {
		b.indexPos = -1 // past the end: the bag was cut short
	} else if h.indexPos != 0 {
		b.indexPos = start + int64(h.indexPos)
		// Best effort: a damaged index only means connections become
		// known while streaming.
		b.readIndex(rs, size)
		if _, err := rs.Seek(b.scan.off, io.SeekStart); err != nil {
			return nil, fmt.Errorf("bag: seek back to offset %d: %w", b.scan.off, err)
		}
		b.scan.r.Reset(rs)
	}
	return b, nil
}

// readIndex reads the connection records of the index section.
func (b *BagReader) readIndex(rs io.ReadSeeker, size int64) {
	if _, err := rs.Seek(b.indexPos, io.SeekStart); err != nil {
		return
	}
	s := bagScanner{r: bufio.NewReader(rs), off: b.indexPos, end: size, opts: &b.opts}
	found := make(map[uint32]*Channel)
	for {
		var h bagHeader
		_, data, err := s.next(&h)
		if err == io.EOF {
			break
		}
		if err != nil {
			return
		}
		if h.op == bagOpConnection {
			c, err := parseConnection(&h, data)
			if err != nil {
				return
			}
			found[c.ID] = c
		}
	}
	for id, c := range found {
		b.channels[id] = c
	}
}

// Channels returns the connections known so far that pass the topic filter,
// in ID order: all of them from the start where the bag has an index,
// otherwise those met so far by Next.
func (b *BagReader) Channels() []*Channel { return sortedChannels(b.channels, b.filter) }

// Next returns the next message on a connection that passes the topic
// filter. See MessageReader.Next; Data is valid until the next call.
func (b *BagReader) Next() (*Message, error) {
	if b.err != nil {
		return nil, b.err
	}
	for {
		if b.inChunk {
			msg, err := b.nextInChunk()
			if err != nil {
				b.err = err
				return nil, err
			}
			if msg != nil {
				return msg, nil
			}
			continue
		}
		if b.indexPos > 0 && b.scan.off == b.indexPos {
			b.err = io.EOF // the index section holds no messages
			return nil, b.err
		}
		var h bagHeader
		off, data, err := b.scan.next(&h)
		switch {
		case err == io.EOF:
			switch {
			case b.indexPos == 0:
				err = fmt.Errorf("bag: ends at offset %d and has no index (index_pos 0: the recording was not closed): %w", off, ErrTruncated)
			case b.indexPos < 0:
				err = fmt.Errorf("bag: ends at offset %d before its index section: %w", off, ErrTruncated)
			}
			b.err = err
			return nil, err
		case err != nil && h.op == bagOpChunk && errors.Is(err, ErrTruncated) && data != nil:
			// Decode what arrived; report the damage after its
			// complete messages.
			if err := b.loadChunk(off, &h, data, err); err != nil {
				b.err = err
				return nil, err
			}
			continue
		case err != nil:
			b.err = err
			return nil, err
		}
		switch h.op {
		case bagOpChunk:
			if err := b.loadChunk(off, &h, data, nil); err != nil {
				b.err = err
				return nil, err
			}
		case bagOpConnection:
			if err := b.addConnection(off, &h, data); err != nil {
				b.err = err
				return nil, err
			}
		case bagOpMessage:
			msg, err := b.message(off, &h, data)
			if err != nil {
				b.err = err
				return nil, err
			}
			if msg != nil {
				return msg, nil
			}
		case bagOpBagHeader:
			b.err = fmt.Errorf("bag: second bag header record at offset %d: %w", off, ErrCorrupt)
			return nil, b.err
		}
		// Index data and chunk info records (and unknown ops) are skipped.
	}
}

// Close releases the reader and closes the file if the reader was made by
// Open.
func (b *BagReader) Close() error {
	if b.err == nil {
		b.err = errClosed
	}
	b.chunk, b.records = nil, nil
	if b.closer != nil {
		c := b.closer
		b.closer = nil
		return c.Close()
	}
	return nil
}

// loadChunk decompresses the records of the chunk record at file offset off.
// damage, when not nil, is the error that cut the chunk's data short.
func (b *BagReader) loadChunk(off int64, h *bagHeader, data []byte, damage error) error {
	b.chunks++
	where := fmt.Sprintf("bag: chunk %d at offset %d", b.chunks, off)
	if !h.has(fieldCompression) || !h.has(fieldSize) {
		return fmt.Errorf("%s: header lacks compression or size: %w", where, ErrCorrupt)
	}
	if uint64(h.size) > uint64(b.opts.MaxChunkSize) {
		return fmt.Errorf("%s: decompressed size %d exceeds the limit of %d bytes: %w", where, h.size, b.opts.MaxChunkSize, ErrTooLarge)
	}
	size := int(h.size)
	var (
		out []byte
		err error
	)
	switch string(h.compression) {
	case "none":
		out = data
		if damage == nil && len(data) != size {
			err = fmt.Errorf("holds %d bytes, header says %d: %w", len(data), size, ErrCorrupt)
		}
	case "bz2":
		out, err = readLimited(b.chunk, bzip2.NewReader(bytes.NewReader(data)), size)
	case "lz4":
		if b.lz4r == nil {
			b.lz4r = lz4.NewReader(bytes.NewReader(data))
		} else {
			b.lz4r.Reset(bytes.NewReader(data))
		}
		out, err = readLimited(b.chunk, b.lz4r, size)
	default:
		return fmt.Errorf("%s: compression %q (want none, bz2 or lz4): %w", where, h.compression, ErrUnsupported)
	}
	if string(h.compression) != "none" {
		b.chunk = out[:0]
		if err == nil && damage == nil && len(out) != size {
			err = fmt.Errorf("decompresses to %d bytes, header says %d: %w", len(out), size, ErrCorrupt)
		}
	}
	switch {
	case damage != nil:
		b.chunkErr = damage
	case err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge):
		b.chunkErr = fmt.Errorf("%s: %s decompression: %w: %w", where, h.compression, ErrCorrupt, err)
	case err != nil:
		b.chunkErr = fmt.Errorf("%s: %w", where, err)
	default:
		b.chunkErr = nil
	}
	// Uncompressed records alias the scanner's data buffer, which stays
	// untouched until the chunk is used up.
	b.records = out
	b.chunkOff = off
	b.chunkPos = 0
	b.inChunk = true
	return nil
}

// nextInChunk returns the next wanted message of the current chunk, nil when
// a record was consumed without yielding one, and leaves the chunk when its
// records are used up.
func (b *BagReader) nextInChunk() (*Message, error) {
	p := b.records
	if b.chunkPos >= len(p) {
		b.inChunk = false
		if b.chunkErr != nil {
			return nil, b.chunkErr
		}
		return nil, nil
	}
	var h bagHeader
	recPos := b.chunkPos
	data, n, err := parseBagRecord(p[recPos:], &h)
	if err != nil {
		if b.chunkErr != nil {
			return nil, b.chunkErr
		}
		return nil, fmt.Errorf("bag: chunk %d at offset %d, record at chunk offset %d: %w", b.chunks, b.chunkOff, recPos, err)
	}
	b.chunkPos += n
	where := fmt.Sprintf("chunk %d at offset %d, record at chunk offset %d", b.chunks, b.chunkOff, recPos)
	switch h.op {
	case bagOpConnection:
		return nil, b.addConnectionAt(where, &h, data)
	case bagOpMessage:
		return b.messageAt(where, &h, data)
	}
	return nil, nil
}

func (b *BagReader) addConnection(off int64, h *bagHeader, data []byte) error {
	return b.addConnectionAt(fmt.Sprintf("record at offset %d", off), h, data)
}

func (b *BagReader) addConnectionAt(where string, h *bagHeader, data []byte) error {
	if !h.has(fieldConn) {
		return fmt.Errorf("bag: connection %s has no conn field: %w", where, ErrCorrupt)
	}
	if _, ok := b.channels[h.conn]; ok {
		return nil
	}
	c, err := parseConnection(h, data)
	if err != nil {
		return fmt.Errorf("bag: connection %s: %w", where, err)
	}
	b.channels[c.ID] = c
	return nil
}

func (b *BagReader) message(off int64, h *bagHeader, data []byte) (*Message, error) {
	return b.messageAt(fmt.Sprintf("record at offset %d", off), h, data)
}

func (b *BagReader) messageAt(where string, h *bagHeader, data []byte) (*Message, error) {
	if !h.has(fieldConn) || !h.has(fieldTime) {
		return nil, fmt.Errorf("bag: message data %s lacks conn or time: %w", where, ErrCorrupt)
	}
	c := b.channels[h.conn]
	if c == nil {
		return nil, fmt.Errorf("bag: message data %s is on connection %d, which no connection record defines: %w", where, h.conn, ErrCorrupt)
	}
	if !b.filter.pass(c.Topic) {
		return nil, nil
	}
	b.msg = Message{Channel: c, LogTime: h.time, Data: data}
	return &b.msg, nil
}

// parseConnection builds a Channel from a connection record.
func parseConnection(h *bagHeader, data []byte) (*Channel, error) {
	if !h.has(fieldConn) || !h.has(fieldTopic) {
		return nil, fmt.Errorf("header lacks conn or topic: %w", ErrCorrupt)
	}
	c := &Channel{
		ID:             h.conn,
		Topic:          string(h.topic),
		Encoding:       rosmsg.MessageEncodingROS1,
		SchemaEncoding: rosmsg.SchemaEncodingROS1Msg,
	}
	err := eachField(data, func(name, value []byte) error {
		switch string(name) {
		case "topic":
			// The record header's topic is authoritative; the
			// connection header may name the original one.
		case "type":
			c.Type = string(value)
		case "message_definition":
			c.Schema = bytes.Clone(value)
		default:
			if c.Metadata == nil {
				c.Metadata = make(map[string]string)
			}
			c.Metadata[string(name)] = string(value)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("connection header: %w", err)
	}
	if c.Type == "" {
		return nil, fmt.Errorf("connection %d (%s) has no type: %w", c.ID, c.Topic, ErrCorrupt)
	}
	return c, nil
}

// readLimited reads r to its end into buf (reusing its capacity), growing it
// only as data arrives, and fails if r yields more than limit bytes.
func readLimited(buf []byte, r io.Reader, limit int) ([]byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			grow := max(cap(buf), 64<<10)
			if room := limit + 1 - len(buf); grow > room {
				grow = room
			}
			buf = slices.Grow(buf, grow)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return buf[:limit], fmt.Errorf("decompresses to more than the %d bytes the header says: %w", limit, ErrCorrupt)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Header fields of bag records, as bits of bagHeader.fields.
const (
	fieldOp = 1 << iota
	fieldConn
	fieldTime
	fieldCompression
	fieldSize
	fieldIndexPos
	fieldTopic
)

// bagHeader holds the fields of one record header that this reader uses.
// Byte-slice fields alias the buffer the header was parsed from.
type bagHeader struct {
	fields      uint
	op          byte
	conn        uint32
	time        uint64 // ns
	compression []byte
	size        uint32
	indexPos    uint64
	topic       []byte
}

func (h *bagHeader) has(f uint) bool { return h.fields&f != 0 }

// parseBagHeader parses the fields of a record header.
func parseBagHeader(p []byte, h *bagHeader) error {
	return eachField(p, func(name, v []byte) error {
		var want int
		switch string(name) {
		case "op":
			want = 1
		case "conn", "size":
			want = 4
		case "time", "index_pos":
			want = 8
		}
		if want != 0 && len(v) != want {
			return fmt.Errorf("field %q has %d bytes, want %d: %w", name, len(v), want, ErrCorrupt)
		}
		switch string(name) {
		case "op":
			h.op = v[0]
			h.fields |= fieldOp
		case "conn":
			h.conn = binary.LittleEndian.Uint32(v)
			h.fields |= fieldConn
		case "time":
			sec := uint64(binary.LittleEndian.Uint32(v))
			nsec := uint64(binary.LittleEndian.Uint32(v[4:]))
			h.time = sec*1e9 + nsec
			h.fields |= fieldTime
		case "compression":
			h.compression = v
			h.fields |= fieldCompression
		case "size":
			h.size = binary.LittleEndian.Uint32(v)
			h.fields |= fieldSize
		case "index_pos":
			h.indexPos = binary.LittleEndian.Uint64(v)
			h.fields |= fieldIndexPos
		case "topic":
			h.topic = v
			h.fields |= fieldTopic
		}
		return nil
	})
}

// eachField calls fn for every name=value field of a ROS header: a sequence
// of little-endian uint32 lengths, each followed by that many bytes holding
// name, '=', value.
func eachField(p []byte, fn func(name, value []byte) error) error {
	for pos := 0; pos < len(p); {
		if len(p)-pos < 4 {
			return fmt.Errorf("header offset %d: %d stray bytes where a field length should be: %w", pos, len(p)-pos, ErrCorrupt)
		}
		n := binary.LittleEndian.Uint32(p[pos:])
		if uint64(n) > uint64(len(p)-pos-4) {
			return fmt.Errorf("header offset %d: field length %d runs past the header end (%d bytes left): %w", pos, n, len(p)-pos-4, ErrCorrupt)
		}
		f := p[pos+4 : pos+4+int(n)]
		eq := bytes.IndexByte(f, '=')
		if eq < 0 {
			return fmt.Errorf("header offset %d: field %q has no '=': %w", pos, truncate(f), ErrCorrupt)
		}
		if err := fn(f[:eq], f[eq+1:]); err != nil {
			return fmt.Errorf("header offset %d: %w", pos, err)
		}
		pos += 4 + int(n)
	}
	return nil
}

// truncate shortens a byte string for an error message.
func truncate(p []byte) []byte {
	if len(p) > 32 {
		return p[:32]
	}
	return p
}

// parseBagRecord parses one record held whole in p (a chunk's records),
// returning its data and the number of bytes it spans.
func parseBagRecord(p []byte, h *bagHeader) (data []byte, n int, err error) {
	if len(p) < 4 {
		return nil, 0, fmt.Errorf("%d bytes left, too few for a record: %w", len(p), ErrCorrupt)
	}
	hl := binary.LittleEndian.Uint32(p)
	if uint64(hl) > uint64(len(p)-4) {
		return nil, 0, fmt.Errorf("header length %d runs past the chunk end (%d bytes left): %w", hl, len(p)-4, ErrCorrupt)
	}
	if err := parseBagHeader(p[4:4+hl], h); err != nil {
		return nil, 0, err
	}
	if !h.has(fieldOp) {
		return nil, 0, fmt.Errorf("record header has no op field: %w", ErrCorrupt)
	}
	rest := p[4+hl:]
	if len(rest) < 4 {
		return nil, 0, fmt.Errorf("record ends before its data length: %w", ErrCorrupt)
	}
	dl := binary.LittleEndian.Uint32(rest)
	if uint64(dl) > uint64(len(rest)-4) {
		return nil, 0, fmt.Errorf("data length %d runs past the chunk end (%d bytes left): %w", dl, len(rest)-4, ErrCorrupt)
	}
	return rest[4 : 4+dl], 4 + int(hl) + 4 + int(dl), nil
}

// bagScanner reads the top-level records of a bag from a buffered stream,
// checking every length against the bytes left in the file before it
// allocates.
type bagScanner struct {
	r    *bufio.Reader
	off  int64 // absolute offset of the next byte of r
	end  int64 // file size
	opts *ReaderOptions
	hdr  []byte
	data []byte
}

// next reads the record at the current offset into h and returns its offset
// and its data. The data of chunk, connection and message records is read
// into a buffer reused by the next call; that of other records is skipped
// and nil is returned. At the end of the file it returns io.EOF itself.
// When a chunk record's data is cut short by the end of the file, it
// returns the bytes that are there along with an error wrapping
// ErrTruncated.
func (s *bagScanner) next(h *bagHeader) (off int64, data []byte, err error) {
	off = s.off
	left := s.end - s.off
	if left == 0 {
		return off, nil, io.EOF
	}
	var lenBuf [4]byte
	if left < 4 {
		return off, nil, fmt.Errorf("bag: record at offset %d: %d bytes left, too few for a header length: %w", off, left, ErrTruncated)
	}
	if err := s.read(lenBuf[:]); err != nil {
		return off, nil, fmt.Errorf("bag: record at offset %d: header length: %w", off, err)
	}
	left -= 4
	hl := int64(binary.LittleEndian.Uint32(lenBuf[:]))
	if hl > left {
		return off, nil, fmt.Errorf("bag: record at offset %d: header length %d runs past the end of the file (%d bytes left): %w", off, hl, left, ErrTruncated)
	}
	if hl > maxBagHeaderLen {
		return off, nil, fmt.Errorf("bag: record at offset %d: header length %d exceeds the limit of %d bytes: %w", off, hl, maxBagHeaderLen, ErrTooLarge)
	}
	if int64(cap(s.hdr)) < hl {
		s.hdr = make([]byte, hl)
	}
	s.hdr = s.hdr[:hl]
	if err := s.read(s.hdr); err != nil {
		return off, nil, fmt.Errorf("bag: record at offset %d: header: %w", off, err)
	}
	left -= hl
	*h = bagHeader{}
	if err := parseBagHeader(s.hdr, h); err != nil {
		return off, nil, fmt.Errorf("bag: record at offset %d: %w", off, err)
	}
	if !h.has(fieldOp) {
		return off, nil, fmt.Errorf("bag: record at offset %d: header has no op field: %w", off, ErrCorrupt)
	}
	if left < 4 {
		return off, nil, fmt.Errorf("bag: record at offset %d (op 0x%02x): file ends before the data length: %w", off, h.op, ErrTruncated)
	}
	if err := s.read(lenBuf[:]); err != nil {
		return off, nil, fmt.Errorf("bag: record at offset %d: data length: %w", off, err)
	}
	left -= 4
	dl := int64(binary.LittleEndian.Uint32(lenBuf[:]))
	limit := int64(s.opts.MaxRecordSize)
	if h.op == bagOpChunk {
		limit = int64(s.opts.MaxChunkSize)
	}
	if dl > limit {
		return off, nil, fmt.Errorf("bag: record at offset %d (op 0x%02x): data length %d exceeds the limit of %d bytes: %w", off, h.op, dl, limit, ErrTooLarge)
	}
	var cut error
	if dl > left {
		cut = fmt.Errorf("bag: record at offset %d (op 0x%02x): data length %d runs past the end of the file (%d bytes left): %w", off, h.op, dl, left, ErrTruncated)
		if h.op != bagOpChunk {
			return off, nil, cut
		}
		dl = left
	}
	switch h.op {
	case bagOpChunk, bagOpConnection, bagOpMessage:
		if int64(cap(s.data)) < dl {
			s.data = make([]byte, dl)
		}
		s.data = s.data[:dl]
		if err := s.read(s.data); err != nil {
			return off, nil, fmt.Errorf("bag: record at offset %d (op 0x%02x): data: %w", off, h.op, err)
		}
		return off, s.data, cut
	}
	n, err := s.r.Discard(int(dl))
	s.off += int64(n)
	if err != nil {
		return off, nil, fmt.Errorf("bag: record at offset %d (op 0x%02x): skipping data: %w: %w", off, h.op, ErrTruncated, err)
	}
	return off, nil, nil
}

// read fills p from the stream; the caller has checked that the file holds
// enough bytes, so a short read means the file shrank or failed.
func (s *bagScanner) read(p []byte) error {
	n, err := io.ReadFull(s.r, p)
	s.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %w", ErrTruncated, err)
		}
		return err
	}
	return nil
}
