package logio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/foxglove/mcap/go/mcap"
)

// MCAPReader streams the messages of an MCAP file in file order. It drives
// the lexer of github.com/foxglove/mcap/go/mcap in its streaming mode: chunks
// are decompressed incrementally, record by record, and the index is never
// needed, so files without a summary (for example from a recorder that did
// not finish) are read as well as complete ones. Chunk CRCs are not checked
// in this mode.
type MCAPReader struct {
	src      *countingReader
	lex      *mcap.Lexer
	opts     ReaderOptions
	filter   topicFilter
	header   *mcap.Header
	schemas  map[uint16]*mcap.Schema
	channels map[uint32]*Channel
	buf      []byte
	raw      mcap.Message
	msg      Message
	records  int64
	err      error
	closer   io.Closer
	footer   bool // the file ends with an intact footer record and magic
}

// NewMCAPReader returns a reader of the MCAP file in rs, which must be
// positioned at the file's magic. When the file has a summary section its
// channels are known at once (see Channels). opts may be nil for the
// defaults. Close does not close rs.
func NewMCAPReader(rs io.ReadSeeker, opts *ReaderOptions) (*MCAPReader, error) {
	o := readerOptions(opts)
	start, size, err := sizeOf(rs)
	if err != nil {
		return nil, fmt.Errorf("mcap: %w", err)
	}
	m := &MCAPReader{
		opts:     o,
		filter:   newTopicFilter(o.Topics),
		schemas:  make(map[uint16]*mcap.Schema),
		channels: make(map[uint32]*Channel),
	}
	// Best effort: a missing or damaged summary only means the channels
	// become known while streaming.
	m.readSummary(rs, start, size)
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("mcap: seek to start: %w", err)
	}
	m.src = &countingReader{r: bufio.NewReaderSize(rs, 64<<10), off: start}
	m.lex, err = mcap.NewLexer(m.src, &mcap.LexerOptions{MaxRecordSize: o.MaxRecordSize})
	if err != nil {
		if m.src.eof {
			return nil, fmt.Errorf("mcap: offset %d: file too short for the magic: %w: %w", start, ErrTruncated, err)
		}
		return nil, fmt.Errorf("mcap: offset %d: %w: %w", start, ErrUnknownFormat, err)
	}
	tok, rec, err := m.lexNext()
	if err != nil {
		return nil, m.wrap(err)
	}
	if tok != mcap.TokenHeader {
		return nil, fmt.Errorf("mcap: record 1 near offset %d is a %s, want the header: %w", m.src.off, tok, ErrCorrupt)
	}
	m.header, err = mcap.ParseHeader(rec)
	if err != nil {
		return nil, fmt.Errorf("mcap: header near offset %d: %w: %w", m.src.off, ErrCorrupt, err)
	}
	return m, nil
}

// Profile returns the profile named in the MCAP header, e.g. "ros2".
func (m *MCAPReader) Profile() string { return m.header.Profile }

// Channels returns the channels known so far that pass the topic filter, in
// ID order: all of them from the start where the file has a summary section,
// otherwise those met so far by Next.
func (m *MCAPReader) Channels() []*Channel { return sortedChannels(m.channels, m.filter) }

// Next returns the next message on a channel that passes the topic filter.
// See MessageReader.Next; Data is valid until the next call.
func (m *MCAPReader) Next() (*Message, error) {
	if m.err != nil {
		return nil, m.err
	}
	for {
		tok, rec, err := m.lexNext()
		if err != nil {
			m.err = m.wrap(err)
			return nil, m.err
		}
		m.records++
		if cap(rec) > cap(m.buf) {
			m.buf = rec[:0]
		}
		switch tok {
		case mcap.TokenSchema:
			s, err := mcap.ParseSchema(rec)
			if err != nil {
				return nil, m.fail("schema", err)
			}
			m.schemas[s.ID] = s
		case mcap.TokenChannel:
			c, err := mcap.ParseChannel(rec)
			if err != nil {
				return nil, m.fail("channel", err)
			}
			if _, ok := m.channels[uint32(c.ID)]; ok {
				continue
			}
			s := m.schemas[c.SchemaID]
			if s == nil && c.SchemaID != 0 {
				return nil, m.fail("channel", fmt.Errorf("channel %d (%s) refers to unknown schema %d", c.ID, c.Topic, c.SchemaID))
			}
			m.channels[uint32(c.ID)] = mcapChannel(c, s)
		case mcap.TokenMessage:
			if err := m.raw.PopulateFrom(rec, false); err != nil {
				return nil, m.fail("message", err)
			}
			c := m.channels[uint32(m.raw.ChannelID)]
			if c == nil {
				return nil, m.fail("message", fmt.Errorf("message on unknown channel %d", m.raw.ChannelID))
			}
			if !m.filter.pass(c.Topic) {
				continue
			}
			m.msg = Message{Channel: c, LogTime: m.raw.LogTime, Data: m.raw.Data}
			return &m.msg, nil
		case mcap.TokenDataEnd, mcap.TokenFooter:
			// The data section is complete; the summary that follows
			// holds no messages.
			m.err = io.EOF
			return nil, m.err
		}
	}
}

// MissingEnd returns, once Next has returned io.EOF, an error wrapping
// ErrNoFooter where the file's data section ended as it should (its
// data-end record) but the file has no footer after it, so that its
// summary could not be found; otherwise nil. See logio.MissingEnd.
func (m *MCAPReader) MissingEnd() error {
	if m.footer || !errors.Is(m.err, io.EOF) {
		return nil
	}
	return fmt.Errorf("mcap: the file ends without its footer (%w): every message of its complete data section was read, but its summary cannot be found (a recording or a copy that did not finish)", ErrNoFooter)
}

// Close releases the lexer's decoders and closes the file if the reader was
// made by Open.
func (m *MCAPReader) Close() error {
	if m.lex != nil {
		m.lex.Close()
	}
	if m.err == nil {
		m.err = errClosed
	}
	if m.closer != nil {
		c := m.closer
		m.closer = nil
		return c.Close()
	}
	return nil
}

// errClosed is returned by Next after Close.
var errClosed = errors.New("logio: reader is closed")

// lexNext calls the lexer, turning a panic on malformed input (the upstream
// lexer slices a fixed buffer with a length read from the chunk header) into
// an error.
func (m *MCAPReader) lexNext() (tok mcap.TokenType, rec []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			tok, rec, err = mcap.TokenError, nil, fmt.Errorf("%w: lexer rejected malformed record: %v", ErrCorrupt, p)
		}
	}()
	return m.lex.Next(m.buf)
}

// wrap turns a lexer error into one that says where it happened and wraps
// the matching sentinel.
func (m *MCAPReader) wrap(err error) error {
	where := fmt.Sprintf("mcap: record %d near offset %d", m.records+1, m.src.off)
	switch {
	case errors.Is(err, io.EOF):
		// Next stops at the data-end record, so the lexer only reaches
		// the end of the input when the file was cut short.
		return fmt.Errorf("mcap: file ends at offset %d before its data-end record: %w", m.src.off, ErrTruncated)
	case m.src.eof || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s: %w: %w", where, ErrTruncated, err)
	case errors.Is(err, mcap.ErrRecordTooLarge):
		return fmt.Errorf("%s: %w (limit %d bytes): %w", where, ErrTooLarge, m.opts.MaxRecordSize, err)
	case errors.Is(err, ErrCorrupt):
		return fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s: %w: %w", where, ErrCorrupt, err)
}

// fail records a parse error of a record and returns it.
func (m *MCAPReader) fail(what string, err error) error {
	m.err = fmt.Errorf("mcap: %s record %d near offset %d: %w: %w", what, m.records, m.src.off, ErrCorrupt, err)
	return m.err
}

// readSummary reads the schemas and channels of the summary section, if the
// file has an intact footer that points at one. It reports whether it did.
func (m *MCAPReader) readSummary(rs io.ReadSeeker, start, size int64) bool {
	const footerLen = 1 + 8 + 20 + 8 // opcode, length, footer, closing magic
	footerPos := size - footerLen
	if footerPos < start+int64(len(MCAPMagic)) {
		return false
	}
	var tail [footerLen]byte
	if _, err := rs.Seek(footerPos, io.SeekStart); err != nil {
		return false
	}
	if _, err := io.ReadFull(rs, tail[:]); err != nil {
		return false
	}
	if tail[0] != byte(mcap.OpFooter) || binary.LittleEndian.Uint64(tail[1:9]) != 20 || string(tail[29:]) != MCAPMagic {
		return false
	}
	m.footer = true
	footer, err := mcap.ParseFooter(tail[9:29])
	if err != nil || footer.SummaryStart == 0 {
		return false
	}
	sumStart := int64(footer.SummaryStart) + start
	if footer.SummaryStart > uint64(size) || sumStart < start+int64(len(MCAPMagic)) || sumStart >= footerPos {
		return false
	}
	if _, err := rs.Seek(sumStart, io.SeekStart); err != nil {
		return false
	}
	n := footerPos - sumStart
	lex, err := mcap.NewLexer(bufio.NewReader(io.LimitReader(rs, n)), &mcap.LexerOptions{
		SkipMagic:     true,
		EmitChunks:    true,
		MaxRecordSize: int(min(n, int64(m.opts.MaxRecordSize))),
	})
	if err != nil {
		return false
	}
	defer lex.Close()
	schemas := make(map[uint16]*mcap.Schema)
	var chans []*mcap.Channel
	var buf []byte
	for {
		tok, rec, err := func() (tok mcap.TokenType, rec []byte, err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("%v", p)
				}
			}()
			return lex.Next(buf)
		}()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		if cap(rec) > cap(buf) {
			buf = rec[:0]
		}
		switch tok {
		case mcap.TokenSchema:
			s, err := mcap.ParseSchema(rec)
			if err != nil {
				return false
			}
			schemas[s.ID] = s
		case mcap.TokenChannel:
			c, err := mcap.ParseChannel(rec)
			if err != nil {
				return false
			}
			chans = append(chans, c)
		}
	}
	for _, c := range chans {
		s := schemas[c.SchemaID]
		if s == nil && c.SchemaID != 0 {
			return false
		}
		m.channels[uint32(c.ID)] = mcapChannel(c, s)
	}
	for id, s := range schemas {
		m.schemas[id] = s
	}
	return true
}

// mcapChannel converts an MCAP channel and its schema (nil when it has none).
func mcapChannel(c *mcap.Channel, s *mcap.Schema) *Channel {
	ch := &Channel{
		ID:       uint32(c.ID),
		Topic:    c.Topic,
		Encoding: c.MessageEncoding,
		Metadata: c.Metadata,
	}
	if s != nil {
		ch.Type = s.Name
		ch.SchemaEncoding = s.Encoding
		ch.Schema = s.Data
	}
	return ch
}

// countingReader counts the bytes read through it and notes when its source
// runs dry, so that errors can name a file offset and tell a truncated file
// from a malformed one.
type countingReader struct {
	r   io.Reader
	off int64
	eof bool
}

// Read reads from the source, counting bytes and noting its end.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.off += int64(n)
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}
