// Package logio reads robot logs as streams.
//
// Two kinds of log are read. Message logs (MCAP and ROS 1 bag v2.0) are
// sequences of timestamped, serialized messages on named channels; they are
// read through a [MessageReader] obtained from [Open], [NewMCAPReader] or
// [NewBagReader]. Column tables (CSV and parquet) are read row by row as
// float64 through a [Table] obtained from [OpenCSV] or [OpenParquet].
//
// [ROS2Writer] writes MCAP files the way rosbag2 records them (profile
// "ros2", CDR messages, ros2msg schemas, QoS metadata, indexes and
// statistics), so that `ros2 bag play` and Foxglove open what calisym
// records.
//
// Every constructor takes its options as one pointer to an options struct
// ([ReaderOptions], [CSVOptions], [ParquetOptions], [ROS2WriterOptions],
// [TopicOptions]); nil, like the zero value, means the defaults.
//
// Every reader streams: memory is bounded by the largest chunk, record or
// page of the input, never by the length of the log. Lengths read from the
// input are checked against the bytes that remain and against the limits in
// [ReaderOptions] before anything is allocated, so a malformed or hostile
// file yields an error, not an out-of-memory crash.
//
// Errors say where they happened (file offset, record, line or row) and wrap
// one of the sentinel errors of this package where one applies. A log that
// ends early (a recording cut off by a crash or a copy that did not finish)
// yields every complete message before the damage and then an error that
// wraps [ErrTruncated], so callers can warn and keep what they got:
//
//	r, err := logio.Open(path, nil)
//	if err != nil { ... }
//	defer r.Close()
//	for {
//		msg, err := r.Next()
//		if errors.Is(err, io.EOF) {
//			break
//		}
//		if errors.Is(err, logio.ErrTruncated) {
//			log.Printf("warning: %v", err)
//			break
//		}
//		if err != nil { ... }
//		use(msg.Channel.Topic, msg.LogTime, msg.Data)
//	}
package logio

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
)

// Sentinel errors wrapped by the errors this package returns.
var (
	// ErrTruncated reports a log that ends before its last record is
	// complete (or, for a ROS bag, before its index). Every complete message
	// before the damage has been returned by the time it is reported.
	ErrTruncated = errors.New("log is truncated")
	// ErrCorrupt reports bytes that do not follow the format: a bad field,
	// a length that runs past its record, a checksum that does not match.
	ErrCorrupt = errors.New("log is corrupt")
	// ErrTooLarge reports a record, chunk or header larger than the limits
	// set in ReaderOptions.
	ErrTooLarge = errors.New("record exceeds the size limit")
	// ErrNoFooter reports an MCAP file whose data section is complete,
	// every message read, but which ends without its footer (a copy or a
	// recording that stopped after the data section): its summary cannot
	// be found. MissingEnd returns it; Next does not.
	ErrNoFooter = errors.New("log has no footer")
	// ErrUnknownFormat reports a file whose magic bytes match no supported
	// message-log format.
	ErrUnknownFormat = errors.New("unknown log format")
	// ErrUnsupported reports a valid feature this package does not read,
	// such as an unknown chunk compression.
	ErrUnsupported = errors.New("unsupported log feature")
)

// Magic bytes that open the supported message-log formats.
const (
	// MCAPMagic opens (and closes) every MCAP file.
	MCAPMagic = "\x89MCAP0\r\n"
	// BagMagic opens every ROS 1 bag of format version 2.0.
	BagMagic = "#ROSBAG V2.0\n"
)

// Default limits used where ReaderOptions leaves a field zero.
const (
	// DefaultMaxRecordSize caps one record (for example one message).
	DefaultMaxRecordSize = 256 << 20
	// DefaultMaxChunkSize caps the decompressed size of one chunk.
	DefaultMaxChunkSize = 512 << 20
)

// Channel describes one stream of messages in a log: an MCAP channel or a
// ROS 1 bag connection.
type Channel struct {
	// ID identifies the channel within its log.
	ID uint32
	// Topic is the name the messages were published on, e.g. "/joint_states".
	Topic string
	// Type is the message type, e.g. "sensor_msgs/JointState" (ROS 1) or
	// "sensor_msgs/msg/JointState" (ROS 2); empty when the log has no schema.
	Type string
	// Encoding is the message encoding: rosmsg.MessageEncodingCDR or
	// rosmsg.MessageEncodingROS1 (or whatever an MCAP file declares).
	Encoding string
	// SchemaEncoding is the encoding of Schema: rosmsg.SchemaEncodingROS2Msg
	// or rosmsg.SchemaEncodingROS1Msg (or whatever an MCAP file declares).
	SchemaEncoding string
	// Schema is the message definition text.
	Schema []byte
	// Metadata holds the remaining key/value pairs the log attaches to the
	// channel: an MCAP channel's metadata (e.g. "offered_qos_profiles"), or a
	// ROS 1 connection header's fields other than topic, type and
	// message_definition (e.g. "md5sum", "callerid", "latching").
	Metadata map[string]string
}

// Message is one timestamped, serialized message.
type Message struct {
	// Channel is the channel the message belongs to. The pointer is shared by
	// all messages of the channel and stays valid after Close.
	Channel *Channel
	// LogTime is the time the message was recorded, in nanoseconds since the
	// Unix epoch.
	LogTime uint64
	// Data is the serialized message in Channel.Encoding.
	Data []byte
}

// MessageReader streams the messages of a log in file order (for logs written
// by recorders, that is log-time order within each chunk).
type MessageReader interface {
	// Channels returns the channels known so far that pass the topic filter.
	// Where the log has an index or summary, all of its channels are known
	// as soon as the reader is opened; otherwise channels are added as Next
	// meets them.
	Channels() []*Channel
	// Next returns the next message. It returns io.EOF at the end of the
	// log, and an error wrapping ErrTruncated where the log ends early.
	// After an error other than io.EOF, Next keeps returning that error.
	//
	// The returned Message and its Data are valid only until the next call
	// to Next: the reader reuses them. Copy what must be kept.
	Next() (*Message, error)
	// Close releases the reader (and closes the file where the reader was
	// made by Open).
	Close() error
}

// MissingEnd reports, once r's Next has returned io.EOF, a log whose
// messages were all read but whose closing records are missing (an MCAP
// file without its footer): an error wrapping ErrNoFooter that says so.
// It returns nil for a log read to its proper end, for a reader not yet
// at its end and for formats without such records.
func MissingEnd(r MessageReader) error {
	if e, ok := r.(interface{ MissingEnd() error }); ok {
		return e.MissingEnd()
	}
	return nil
}

// Messages returns an iterator over the messages of r, in order, for use in
// a range loop:
//
//	for m, err := range logio.Messages(r) {
//		if err != nil { ... }
//		use(m.Channel.Topic, m.LogTime, m.Data)
//	}
//
// It yields each message with a nil error and stops at io.EOF, which it does
// not yield. Any other error of Next (one wrapping ErrTruncated where the
// log ends early) is yielded once, with a nil message, and ends the
// iteration. The message and its Data are valid only until the next
// iteration, as with [MessageReader.Next]: copy what must be kept. Breaking
// out of the loop leaves r open where it stopped; closing r stays with the
// caller.
func Messages(r MessageReader) iter.Seq2[*Message, error] {
	return func(yield func(*Message, error) bool) {
		for {
			m, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(m, nil) {
				return
			}
		}
	}
}

// ReaderOptions configures a MessageReader: Open, NewMCAPReader,
// NewBagReader and Summarize take a *ReaderOptions. A nil pointer, like the
// zero value, reads every topic with the default limits.
type ReaderOptions struct {
	// Topics, when not empty, restricts Next and Channels to these topics.
	Topics []string
	// MaxRecordSize caps the size in bytes of one record (0 means
	// DefaultMaxRecordSize). A larger record yields an error wrapping
	// ErrTooLarge.
	MaxRecordSize int
	// MaxChunkSize caps the size in bytes of one ROS bag chunk, compressed
	// and decompressed (0 means DefaultMaxChunkSize). A larger chunk yields
	// an error wrapping ErrTooLarge. MCAP chunks are decompressed as a
	// stream, record by record, so for MCAP only MaxRecordSize applies.
	MaxChunkSize int
}

// readerOptions returns a copy of opts (the zero value when nil) with the
// defaults filled in.
func readerOptions(opts *ReaderOptions) ReaderOptions {
	var o ReaderOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = DefaultMaxRecordSize
	}
	if o.MaxChunkSize <= 0 {
		o.MaxChunkSize = DefaultMaxChunkSize
	}
	return o
}

// topicFilter reports whether a topic passes the filter; a nil filter passes
// every topic.
type topicFilter map[string]bool

func newTopicFilter(topics []string) topicFilter {
	if len(topics) == 0 {
		return nil
	}
	f := make(topicFilter, len(topics))
	for _, t := range topics {
		f[t] = true
	}
	return f
}

func (f topicFilter) pass(topic string) bool { return f == nil || f[topic] }

// Open opens the message log at path, choosing the reader from the file's
// magic bytes: MCAP (MCAPMagic) or ROS 1 bag v2.0 (BagMagic). opts may be
// nil for the defaults. Closing the reader closes the file.
func Open(path string, opts *ReaderOptions) (MessageReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("logio: open log: %w", err)
	}
	r, err := open(f, opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("logio: %s: %w", path, err)
	}
	return r, nil
}

func open(f *os.File, opts *ReaderOptions) (MessageReader, error) {
	var magic [len(BagMagic)]byte
	n, err := io.ReadFull(f, magic[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read magic: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek to start: %w", err)
	}
	head := string(magic[:n])
	switch {
	case len(head) >= len(MCAPMagic) && head[:len(MCAPMagic)] == MCAPMagic:
		r, err := NewMCAPReader(f, opts)
		if err != nil {
			return nil, err
		}
		r.closer = f
		return r, nil
	case head == BagMagic:
		r, err := NewBagReader(f, opts)
		if err != nil {
			return nil, err
		}
		r.closer = f
		return r, nil
	}
	return nil, fmt.Errorf("%w: file starts with %q, want MCAP (%q) or ROS bag v2.0 (%q)",
		ErrUnknownFormat, head, MCAPMagic, BagMagic)
}

// sizeOf returns the size of a seekable stream and leaves its position where
// it was.
func sizeOf(rs io.ReadSeeker) (pos, size int64, err error) {
	pos, err = rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, 0, err
	}
	size, err = rs.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, 0, err
	}
	if _, err = rs.Seek(pos, io.SeekStart); err != nil {
		return 0, 0, err
	}
	return pos, size, nil
}

// sortedChannels returns the channels of m that pass filter, in ID order.
func sortedChannels(m map[uint32]*Channel, filter topicFilter) []*Channel {
	out := make([]*Channel, 0, len(m))
	for _, c := range m {
		if filter.pass(c.Topic) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *Channel) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
