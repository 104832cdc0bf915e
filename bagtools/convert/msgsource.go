package convert

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/statemap"
)

// ErrMessageType reports a topic whose messages the message-log source
// cannot decode: a schema encoding other than ros2msg and ros1msg, a
// message encoding other than cdr and ros1, or a definition that does not
// parse (for example one that uses a type it does not include).
var ErrMessageType = errors.New("convert: undecodable message type")

// ErrNoMessages reports a message path that no message of the log could
// be read through: its topic has no messages, or every message lacks the
// element the path asks for (a joint name, an index).
var ErrNoMessages = errors.New("convert: no message matches")

// MessageLogOptions configures a MessageSource.
type MessageLogOptions struct {
	// Paths are the message paths the source is opened for, each naming
	// its topic ("/joint_states.position[name==\"elbow\"]"). Opening checks
	// that every topic is in the log, that its message type is decodable
	// and that every path fits the type; Channels lists them. Read also
	// accepts other paths.
	Paths []string
	// Stamp chooses the clock: StampHeader (the default) stamps each value
	// with its message's header.stamp, StampLogTime with the time the
	// recorder logged the message. With StampHeader, messages of a type
	// without a header, and messages whose stamp is zero or unreadable,
	// are stamped with their log time; Warnings says how many.
	Stamp string
	// Limits bounds the sizes of records and chunks the log reader
	// accepts (see logio.ReaderOptions; Topics is ignored). The zero value
	// uses logio's defaults.
	Limits logio.ReaderOptions
	// Progress, when set, is called while Read streams the log with the
	// bytes read so far and the log's size, about every megabyte and once
	// at the end.
	Progress func(done, total int64)
}

// MessageSource is a Source over a message log: an MCAP file (ros2msg
// schemas, CDR messages) or a ROS 1 bag (ros1msg definitions, ROS 1
// serialization). Its channels are message paths in Foxglove's style,
// "/topic.field.subfield[index]" or "/joint_states.position[name==\"j1\"]",
// read straight from the serialized bytes by a rosmsg.Extractor.
//
// Times are seconds since the start of the log, the earliest log time of
// any of its messages, on the clock MessageLogOptions.Stamp selects. Every
// path of one topic shares the topic's time slice.
//
// Read streams the log: messages are read one at a time from the file and
// never kept, so the bytes held do not grow with the log. What Read
// returns does: one float64 per message of each requested path's topic,
// plus one time per message of the topic, O(samples × channels), which is
// what the rest of a conversion (alignment, zero-phase filtering,
// windowing) needs whole.
//
// A log that ends early (a recording cut off) yields every complete
// message before the damage, and Warnings says so.
type MessageSource struct {
	name     string
	open     func() (io.ReadSeekCloser, error)
	size     int64
	opts     MessageLogOptions
	byTopic  map[string][]*logio.Channel
	topics   []string // in the log, sorted
	warnings []string
}

// OpenMessageLog opens the MCAP file or ROS 1 bag at path (chosen by its
// magic bytes) as a MessageSource and checks opts.Paths against it. A
// topic the log lacks yields an error wrapping ErrMissingChannel that
// lists the log's topics and types; a type that cannot be decoded one
// wrapping ErrMessageType; a path that does not fit its type one wrapping
// ErrMissingChannel and rosmsg.ErrPath.
func OpenMessageLog(path string, opts MessageLogOptions) (*MessageSource, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("convert: %s is a directory, not a log file (for a rosbag2 folder give its .mcap file)", path)
	}
	open := func() (io.ReadSeekCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
		return f, nil
	}
	return newMessageSource(path, open, st.Size(), opts)
}

// NewMessageSource is OpenMessageLog over a log held in rs (for example in
// memory); name identifies it in errors. Every pass over the log seeks rs
// back to its start. Close does not close rs.
func NewMessageSource(name string, rs io.ReadSeeker, opts MessageLogOptions) (*MessageSource, error) {
	size, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("convert: %s: %w", name, err)
	}
	open := func() (io.ReadSeekCloser, error) {
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("convert: %s: %w", name, err)
		}
		return nopCloser{rs}, nil
	}
	return newMessageSource(name, open, size, opts)
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

func newMessageSource(name string, open func() (io.ReadSeekCloser, error), size int64, opts MessageLogOptions) (*MessageSource, error) {
	switch opts.Stamp {
	case "":
		opts.Stamp = StampHeader
	case StampHeader, StampLogTime:
	default:
		return nil, fmt.Errorf("convert: clock stamp %q is not %q or %q", opts.Stamp, StampHeader, StampLogTime)
	}
	opts.Paths = uniqueStrings(opts.Paths)
	s := &MessageSource{name: name, open: open, size: size, opts: opts}
	want := map[string]bool{}
	for _, p := range opts.Paths {
		topic, err := pathTopic(p)
		if err != nil {
			return nil, err
		}
		want[topic] = true
	}
	if err := s.discover(want); err != nil {
		return nil, err
	}
	// Compile every path against every channel of its topic now, so that
	// a bad spec fails before the log is streamed.
	byTopic := map[string][]string{}
	for _, p := range opts.Paths {
		topic, _ := pathTopic(p)
		byTopic[topic] = append(byTopic[topic], p)
	}
	for topic, exprs := range byTopic {
		for _, ch := range s.byTopic[topic] {
			if _, err := compileChannel(ch, exprs); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// pathTopic returns the topic a message path names; a path without one is
// an error, since a log has many topics.
func pathTopic(p string) (string, error) {
	topic, err := rosmsg.TopicOf(p)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMissingChannel, err)
	}
	if topic == "" {
		return "", fmt.Errorf("%w: message path %q names no topic (write it as \"/topic.field\")", ErrMissingChannel, p)
	}
	return topic, nil
}

// reader opens the log and a reader of it, choosing MCAP or ROS 1 bag by
// the magic bytes. The returned position reports how far the reader got.
func (s *MessageSource) reader() (logio.MessageReader, *positionReader, io.Closer, error) {
	f, err := s.open()
	if err != nil {
		return nil, nil, nil, err
	}
	pr := &positionReader{rs: f}
	var magic [len(logio.BagMagic)]byte
	n, err := io.ReadFull(pr, magic[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, nil, nil, fmt.Errorf("convert: %s: %w", s.name, err)
	}
	if _, err := pr.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("convert: %s: %w", s.name, err)
	}
	lim := s.opts.Limits
	lim.Topics = nil
	head := string(magic[:n])
	var r logio.MessageReader
	switch {
	case strings.HasPrefix(head, logio.MCAPMagic):
		r, err = logio.NewMCAPReader(pr, &lim)
	case head == logio.BagMagic:
		r, err = logio.NewBagReader(pr, &lim)
	default:
		err = fmt.Errorf("%w: %s starts with %q, not an MCAP file or a ROS 1 bag v2.0", logio.ErrUnknownFormat, s.name, head)
	}
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("convert: %w", err)
	}
	return r, pr, f, nil
}

// discover learns the log's channels: from its summary or index where it
// has one, otherwise by streaming until every wanted topic has been met
// (or the log ends). A wanted topic the log lacks is an error listing the
// topics it has.
func (s *MessageSource) discover(want map[string]bool) error {
	r, _, f, err := s.reader()
	if err != nil {
		return err
	}
	defer f.Close()
	defer r.Close()
	missing := func() []string {
		have := map[string]bool{}
		for _, c := range r.Channels() {
			have[c.Topic] = true
		}
		var out []string
		for t := range want {
			if !have[t] {
				out = append(out, t)
			}
		}
		slices.Sort(out)
		return out
	}
	for len(missing()) > 0 {
		_, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, logio.ErrTruncated) {
				return fmt.Errorf("convert: %w", err)
			}
			break
		}
	}
	s.byTopic = map[string][]*logio.Channel{}
	for _, c := range r.Channels() {
		if len(s.byTopic[c.Topic]) == 0 {
			s.topics = append(s.topics, c.Topic)
		}
		s.byTopic[c.Topic] = append(s.byTopic[c.Topic], c)
	}
	slices.Sort(s.topics)
	if m := missing(); len(m) > 0 {
		return fmt.Errorf("%w: %s has no topic %s; its topics: %s", ErrMissingChannel, s.name, strings.Join(quoteAll(m), ", "), s.topicList())
	}
	return nil
}

// topicList describes the log's topics for errors: "/a (pkg/msg/T), …".
func (s *MessageSource) topicList() string {
	if len(s.topics) == 0 {
		return "none"
	}
	out := make([]string, len(s.topics))
	for i, t := range s.topics {
		out[i] = fmt.Sprintf("%s (%s)", t, s.byTopic[t][0].Type)
	}
	return strings.Join(out, ", ")
}

// compileChannel compiles the paths, and the header stamp fields where the
// type has a header, against a channel's schema.
func compileChannel(ch *logio.Channel, exprs []string) (*rosmsg.Extractor, error) {
	what := fmt.Sprintf("topic %s (type %q, schema encoding %q, message encoding %q)", ch.Topic, ch.Type, ch.SchemaEncoding, ch.Encoding)
	d, err := rosmsg.DialectFor(ch.SchemaEncoding)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: only ros2msg (with cdr) and ros1msg (with ros1) are read: %w", ErrMessageType, what, err)
	}
	enc, err := rosmsg.EncodingFor(ch.Encoding)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMessageType, what, err)
	}
	if ch.Type == "" || len(ch.Schema) == 0 {
		return nil, fmt.Errorf("%w: %s: the log holds no definition of the type", ErrMessageType, what)
	}
	sc, err := rosmsg.ParseSchema(ch.Type, d, ch.Schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMessageType, what, err)
	}
	paths := make([]*rosmsg.MessagePath, len(exprs))
	for i, e := range exprs {
		p, err := rosmsg.CompilePath(sc, e)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMissingChannel, what, err)
		}
		if !p.Numeric() {
			return nil, fmt.Errorf("%w: %s: path %s leads to a string, message or array, not a number", ErrMissingChannel, what, e)
		}
		paths[i] = p
	}
	x, err := rosmsg.NewExtractor(sc, enc, paths...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMessageType, what, err)
	}
	return x, nil
}

// stampPaths returns the paths of the two integer fields of the root's
// header.stamp, or nil when the type has no std_msgs/Header named header.
func stampPaths(sc *rosmsg.Schema) []string {
	i := sc.Root.FieldIndex("header")
	if i < 0 {
		return nil
	}
	h := &sc.Root.Fields[i]
	if h.Msg == nil || h.Array != rosmsg.NotArray {
		return nil
	}
	j := h.Msg.FieldIndex("stamp")
	if j < 0 {
		return nil
	}
	st := &h.Msg.Fields[j]
	if st.Msg == nil || st.Array != rosmsg.NotArray || len(st.Msg.Fields) != 2 || st.Msg.Fields[0].Name != "sec" {
		return nil
	}
	return []string{".header.stamp.sec", ".header.stamp." + st.Msg.Fields[1].Name}
}

// Name returns the log's path.
func (s *MessageSource) Name() string { return s.name }

// Channels returns the message paths the source was opened for.
func (s *MessageSource) Channels() []string { return slices.Clone(s.opts.Paths) }

// Topics returns the log's topics, sorted.
func (s *MessageSource) Topics() []string { return slices.Clone(s.topics) }

// Warnings returns the problems met so far: a truncated log, messages
// that did not decode, stamps replaced by log times.
func (s *MessageSource) Warnings() []string { return slices.Clone(s.warnings) }

// Locate names sample k of a path: the (k+1)-th message on its topic that
// decoded, in the order of the log.
func (s *MessageSource) Locate(channel string, k int) string {
	topic, err := pathTopic(channel)
	if err != nil {
		return fmt.Sprintf("sample %d of %s", k+1, channel)
	}
	return fmt.Sprintf("message %d on %s", k+1, topic)
}

// Close releases the source; Read opens and closes the log itself.
func (s *MessageSource) Close() error { return nil }

// topicRead accumulates the samples of one topic during Read.
type topicRead struct {
	topic    string
	outIdx   []int       // index in Read's result of each path
	exprs    []string    // the paths
	times    []int64     // ns, on the chosen clock
	values   [][]float64 // per path
	matched  []int       // messages in which each path was read
	first    []byte      // the topic's first message, for error messages
	firstCh  *logio.Channel
	messages int
	noHeader int // messages of a type without a header, under StampHeader
	noStamp  int // messages whose header stamp is zero or unreadable
	bad      int // messages that did not decode
	badErr   error
}

// channelRead is one channel's extractor and where its values go.
type channelRead struct {
	tr    *topicRead
	x     *rosmsg.Extractor
	stamp bool
	buf   []float64
}

// Read streams the log once and returns the named paths in order. See
// MessageSource for the times and the memory this takes. A message that
// lacks what a path asks for (a joint absent from that message) gives NaN
// for that path; a message that does not decode is skipped and counted in
// Warnings. A path that no message could be read through is an error
// wrapping ErrNoMessages; for a name lookup such as
// position[name=="elbow"] it lists the names the topic's first message
// holds.
func (s *MessageSource) Read(names []string) ([]Series, error) {
	if len(names) == 0 {
		return nil, nil
	}
	topics := map[string]*topicRead{}
	var order []*topicRead
	for i, n := range names {
		topic, err := pathTopic(n)
		if err != nil {
			return nil, err
		}
		if len(s.byTopic[topic]) == 0 {
			return nil, fmt.Errorf("%w: %s has no topic %q (path %s); its topics: %s", ErrMissingChannel, s.name, topic, n, s.topicList())
		}
		tr := topics[topic]
		if tr == nil {
			tr = &topicRead{topic: topic}
			topics[topic] = tr
			order = append(order, tr)
		}
		tr.outIdx = append(tr.outIdx, i)
		tr.exprs = append(tr.exprs, n)
	}
	// Channels by ID (stable within the file; the Channel values of this
	// pass are not those of the pass that opened the source). A nil entry
	// is a channel of a topic not asked for.
	chans := map[uint32]*channelRead{}
	for _, topic := range s.topics {
		for _, ch := range s.byTopic[topic] {
			chans[ch.ID] = nil
		}
	}
	for _, tr := range order {
		tr.values = make([][]float64, len(tr.exprs))
		tr.matched = make([]int, len(tr.exprs))
		for _, ch := range s.byTopic[tr.topic] {
			cr, err := s.channelReader(ch, tr)
			if err != nil {
				return nil, err
			}
			chans[ch.ID] = cr
		}
	}

	r, pos, f, err := s.reader()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer r.Close()
	var (
		start    uint64 = math.MaxUint64
		total    int
		reported int64
	)
	header := s.opts.Stamp == StampHeader
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			if end := logio.MissingEnd(r); end != nil {
				s.warnings = append(s.warnings, fmt.Sprintf("kept all %d messages: %v", total, end))
			}
			break
		}
		if errors.Is(err, logio.ErrTruncated) {
			s.warnings = append(s.warnings, fmt.Sprintf("the log is truncated: kept the %d complete messages before the damage (%v)", total, err))
			break
		}
		if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
		total++
		start = min(start, m.LogTime)
		if p := s.opts.Progress; p != nil && pos.pos.Load()-reported >= 1<<20 {
			reported = pos.pos.Load()
			p(reported, s.size)
		}
		cr, known := chans[m.Channel.ID]
		if !known {
			// A channel opening did not meet (the log has no summary
			// and the channel comes later): decode it too if its
			// topic is asked for.
			if tr := topics[m.Channel.Topic]; tr != nil {
				if cr, err = s.channelReader(m.Channel, tr); err != nil {
					return nil, err
				}
			}
			chans[m.Channel.ID] = cr
		}
		if cr == nil {
			continue
		}
		cr.add(m, header)
	}
	if p := s.opts.Progress; p != nil {
		p(s.size, s.size) // done: the summary after the data is not read
	}
	out := make([]Series, len(names))
	for _, tr := range order {
		if err := s.checkRead(tr); err != nil {
			return nil, err
		}
		if tr.noHeader > 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("%s: %d of %d messages have no header: stamped with their log times", tr.topic, tr.noHeader, tr.messages))
		}
		if tr.noStamp > 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("%s: %d of %d messages have a zero or unreadable header stamp; their log times were used", tr.topic, tr.noStamp, tr.messages))
		}
		if tr.bad > 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("%s: skipped %d of %d messages that did not decode (first: %v)", tr.topic, tr.bad, tr.messages, tr.badErr))
		}
		t := make([]float64, len(tr.times))
		for k, ns := range tr.times {
			t[k] = float64(ns-int64(start)) / 1e9
		}
		tr.times = nil
		for j, i := range tr.outIdx {
			out[i] = Series{Name: names[i], Time: t, Values: tr.values[j]}
		}
	}
	return out, nil
}

// channelReader compiles a channel's extractor for the paths of tr.
func (s *MessageSource) channelReader(ch *logio.Channel, tr *topicRead) (*channelRead, error) {
	x, err := compileChannel(ch, tr.exprs)
	if err != nil {
		return nil, err
	}
	cr := &channelRead{tr: tr, x: x}
	if s.opts.Stamp == StampHeader {
		if sp := stampPaths(x.Schema()); sp != nil {
			if x, err = compileChannel(ch, append(slices.Clone(tr.exprs), sp...)); err != nil {
				return nil, err
			}
			cr.x, cr.stamp = x, true
		}
	}
	cr.buf = make([]float64, len(x.Paths()))
	return cr, nil
}

// add extracts one message's values and its time; a message that does not
// decode is counted and skipped.
func (cr *channelRead) add(m *logio.Message, header bool) {
	tr := cr.tr
	tr.messages++
	if tr.first == nil {
		tr.first = slices.Clone(m.Data)
		tr.firstCh = m.Channel
	}
	err := cr.x.Extract(m.Data, cr.buf)
	if err != nil && !errors.Is(err, rosmsg.ErrNoMatch) && !errors.Is(err, rosmsg.ErrIndexRange) {
		// The bytes do not decode: skip the message.
		tr.bad++
		if tr.badErr == nil {
			tr.badErr = err
		}
		return
	}
	ns := int64(m.LogTime)
	if cr.stamp {
		n := len(tr.exprs)
		sec, nsec := cr.buf[n], cr.buf[n+1]
		if math.IsNaN(sec) || math.IsNaN(nsec) || (sec == 0 && nsec == 0) {
			tr.noStamp++
		} else {
			ns = int64(sec)*1e9 + int64(nsec)
		}
	} else if header {
		tr.noHeader++
	}
	tr.times = append(tr.times, ns)
	for i := range tr.exprs {
		v := cr.buf[i]
		tr.values[i] = append(tr.values[i], v)
		if err == nil || !math.IsNaN(v) {
			tr.matched[i]++
		}
	}
}

// keyLookup matches a path ending in a name lookup: the message path up
// to the array's parent, and the key array's name.
var keyLookup = regexp.MustCompile(`^(.*)\.[A-Za-z_][A-Za-z0-9_]*\[\s*([A-Za-z_][A-Za-z0-9_]*)\s*==`)

// checkRead reports a path that no message of its topic could be read
// through.
func (s *MessageSource) checkRead(tr *topicRead) error {
	if tr.messages == 0 {
		return fmt.Errorf("%w: %s: topic %s has no messages", ErrNoMessages, s.name, tr.topic)
	}
	if tr.bad == tr.messages {
		return fmt.Errorf("%w: %s: none of the %d messages on %s decodes: %w", ErrNoMessages, s.name, tr.messages, tr.topic, tr.badErr)
	}
	for i, e := range tr.exprs {
		if tr.matched[i] > 0 {
			continue
		}
		msg := fmt.Sprintf("%s: path %s matches none of the %d messages on %s", s.name, e, tr.messages, tr.topic)
		if have := s.keysOf(tr, e); have != nil {
			return fmt.Errorf("%w: %s; its first message holds %d: %s", ErrNoMessages, msg, len(have), strings.Join(have, ", "))
		}
		if x, err := compileChannel(tr.firstCh, []string{e}); err == nil {
			if err := x.Extract(tr.first, []float64{0}); err != nil {
				return fmt.Errorf("%w: %s (first message: %w)", ErrNoMessages, msg, err)
			}
		}
		return fmt.Errorf("%w: %s", ErrNoMessages, msg)
	}
	return nil
}

// keysOf returns, for a path with a name lookup, the keys the topic's
// first message holds ("names present"), or nil.
func (s *MessageSource) keysOf(tr *topicRead, expr string) []string {
	m := keyLookup.FindStringSubmatch(expr)
	if m == nil || tr.firstCh == nil {
		return nil
	}
	d, err1 := rosmsg.DialectFor(tr.firstCh.SchemaEncoding)
	enc, err2 := rosmsg.EncodingFor(tr.firstCh.Encoding)
	if err1 != nil || err2 != nil {
		return nil
	}
	sc, err := rosmsg.ParseSchema(tr.firstCh.Type, d, tr.firstCh.Schema)
	if err != nil {
		return nil
	}
	p, err := rosmsg.CompilePath(sc, m[1]+"."+m[2])
	if err != nil {
		return nil
	}
	v, err := sc.Decode(enc, tr.first)
	if err != nil {
		return nil
	}
	val, err := p.Value(v)
	if err != nil {
		return nil
	}
	keys, ok := val.([]string)
	if !ok {
		return nil
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%q", k)
	}
	return out
}

// positionReader tracks the offset of a ReadSeeker, for progress. The
// MCAP reader's zstd decoder reads on goroutines of its own while the
// progress is read, so the offset is atomic.
type positionReader struct {
	rs  io.ReadSeeker
	pos atomic.Int64
}

// Read reads and advances the position.
func (p *positionReader) Read(b []byte) (int, error) {
	n, err := p.rs.Read(b)
	p.pos.Add(int64(n))
	return n, err
}

// Seek seeks and records the new position.
func (p *positionReader) Seek(off int64, whence int) (int64, error) {
	n, err := p.rs.Seek(off, whence)
	if err == nil {
		p.pos.Store(n)
	}
	return n, err
}

// IsMessageLog reports whether path names a message log by its extension
// (.mcap or .bag).
func IsMessageLog(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mcap", ".bag":
		return true
	}
	return false
}

// ChannelNames returns the names of the source channels the spec reads
// (columns or message paths), each once, in the order of the spec.
func (s *Spec) ChannelNames() []string { return statemap.NewPlan(&s.Spec).Names() }

// OpenSource is the default Opener: message logs (spec.Source.Format
// "mcap" or "bag", or the extensions .mcap and .bag) become a MessageSource
// for the spec's channels and clock stamp; CSV and parquet files a
// TableSource (OpenTableSource).
func OpenSource(path string, spec *Spec) (Source, error) {
	return openSource(path, spec, nil)
}

func openSource(path string, spec *Spec, progress func(done, total int64)) (Source, error) {
	switch spec.Source.Format {
	case "mcap", "bag":
	case "":
		if !IsMessageLog(path) {
			return OpenTableSource(path, spec)
		}
	default:
		return OpenTableSource(path, spec)
	}
	return OpenMessageLog(path, MessageLogOptions{Paths: spec.ChannelNames(), Stamp: spec.Clock.Stamp, Progress: progress})
}
