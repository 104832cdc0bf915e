package logio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/foxglove/mcap/go/mcap"
	"gopkg.in/yaml.v3"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// DefaultMCAPChunkSize is the chunk size a ROS2Writer uses by default:
// rosbag2's (768 KiB, uncompressed).
const DefaultMCAPChunkSize = 768 << 10

// ROS2WriterOptions configures a ROS2Writer: NewROS2Writer and CreateROS2
// take a *ROS2WriterOptions. A nil pointer, like the zero value, writes
// zstd-compressed chunks of DefaultMCAPChunkSize with CRCs, following the
// conventions of rosbag2 in ROS 2 Jazzy.
type ROS2WriterOptions struct {
	// Compression of the chunks: "zstd" (the default when empty), "lz4" or
	// "none".
	Compression string
	// ChunkSize is the target uncompressed size of a chunk in bytes (0 means
	// DefaultMCAPChunkSize).
	ChunkSize int64
	// SkipCRC leaves out the CRCs of chunks, data section and summary.
	SkipCRC bool
	// Library names the writer in the MCAP header after the MCAP library's
	// own name (default "calisym").
	Library string
	// Distro is the ROS 2 distribution whose rosbag2 conventions to follow
	// (default "jazzy"). Jazzy and later record QoS policies by name and
	// describe the bag in a "rosbag2" metadata record with the bag's
	// metadata (version 9); "humble" and "iron" record policies as numbers
	// and the metadata record holds only ROS_DISTRO, which tells newer
	// readers to parse numbers.
	Distro string
	// FileName is the file's name recorded in the bag metadata (default:
	// the base name of the path given to CreateROS2, otherwise none).
	FileName string
}

// TopicOptions configures one topic of a ROS2Writer: AddTopic and
// AddTypedTopic take a *TopicOptions. A nil pointer, like the zero value,
// offers DefaultQoS.
type TopicOptions struct {
	// QoS lists the profiles the topic's publishers offered (nil means one
	// DefaultQoS profile).
	QoS []QoSProfile
	// TypeHash is the topic's type description hash ("RIHS01_…"), written
	// as the channel's topic_type_hash where given.
	TypeHash string
}

// ROS2Writer writes an MCAP file the way rosbag2 records one, so that
// `ros2 bag play`, `ros2 bag info` and Foxglove open it: profile "ros2",
// one schema per message type with encoding "ros2msg" and the complete
// definition, one channel per topic with message encoding "cdr" and the
// offered_qos_profiles metadata, chunks with message indexes, and a summary
// with statistics, chunk indexes and the rosbag2 metadata record.
//
// A ROS2Writer is not safe for concurrent use. After an error every method
// returns that error; Close must still be called.
type ROS2Writer struct {
	w        *mcap.Writer
	opts     ROS2WriterOptions
	numeric  bool // pre-Jazzy QoS encoding
	schemas  map[string]schemaInfo
	topics   map[string]*ros2Topic
	order    []*ros2Topic
	scratch  []byte
	enc      msgs.Encoder // WriteMessage's, into scratch
	first    uint64
	last     uint64
	count    uint64
	closer   io.Closer
	closed   bool
	err      error
	nextChan uint16
}

type schemaInfo struct {
	id         uint16
	definition string
}

type ros2Topic struct {
	name    string
	rosType string
	channel uint16
	qos     string
	count   uint64
}

// NewROS2Writer starts an MCAP file on w following rosbag2's conventions;
// opts may be nil for the defaults. Close finishes the file; it does not
// close w.
func NewROS2Writer(w io.Writer, opts *ROS2WriterOptions) (*ROS2Writer, error) {
	var o ROS2WriterOptions
	if opts != nil {
		o = *opts
	}
	if o.Library == "" {
		o.Library = "calisym"
	}
	if o.Distro == "" {
		o.Distro = "jazzy"
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultMCAPChunkSize
	}
	var compression mcap.CompressionFormat
	switch o.Compression {
	case "", "zstd":
		o.Compression, compression = "zstd", mcap.CompressionZSTD
	case "lz4":
		compression = mcap.CompressionLZ4
	case "none":
		compression = mcap.CompressionNone
	default:
		return nil, fmt.Errorf("logio: mcap writer: compression %q: %w (want zstd, lz4 or none)", o.Compression, ErrUnsupported)
	}
	mw, err := mcap.NewWriter(w, &mcap.WriterOptions{
		IncludeCRC:  !o.SkipCRC,
		Chunked:     true,
		ChunkSize:   o.ChunkSize,
		Compression: compression,
	})
	if err != nil {
		return nil, fmt.Errorf("logio: mcap writer: %w", err)
	}
	r := &ROS2Writer{
		w:       mw,
		opts:    o,
		numeric: isPreJazzy(o.Distro),
		schemas: make(map[string]schemaInfo),
		topics:  make(map[string]*ros2Topic),
	}
	if err := mw.WriteHeader(&mcap.Header{Profile: "ros2", Library: o.Library}); err != nil {
		return nil, fmt.Errorf("logio: mcap writer: header: %w", err)
	}
	return r, nil
}

// CreateROS2 creates the file at path and starts an MCAP file in it as
// NewROS2Writer does (opts may be nil for the defaults); Close also closes
// the file. FileName defaults to the base name of path.
func CreateROS2(path string, opts *ROS2WriterOptions) (*ROS2Writer, error) {
	var o ROS2WriterOptions
	if opts != nil {
		o = *opts
	}
	if o.FileName == "" {
		o.FileName = filepath.Base(path)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("logio: %w", err)
	}
	w, err := NewROS2Writer(f, &o)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.closer = f
	return w, nil
}

// isPreJazzy reports whether a distribution's rosbag2 records QoS policies
// as numbers (bag metadata version 8 and older).
func isPreJazzy(distro string) bool {
	switch strings.ToLower(distro) {
	case "foxy", "galactic", "humble", "iron":
		return true
	}
	return false
}

// ros2TypeName returns the "pkg/msg/Type" form rosbag2 uses as the schema
// name.
func ros2TypeName(t string) string {
	if parts := strings.Split(t, "/"); len(parts) == 2 {
		return parts[0] + "/msg/" + parts[1]
	}
	return t
}

// AddTopic registers a topic of type rosType ("pkg/msg/Type") whose
// complete ros2msg definition is definition (as msgs.Definition returns, or
// as read from another log). Types are written once, whatever the number of
// topics that use them. Adding a topic twice with the same type is a no-op.
// opts may be nil for the defaults.
func (w *ROS2Writer) AddTopic(topic, rosType, definition string, opts *TopicOptions) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("logio: mcap writer: add topic %s: writer is closed", topic)
	}
	rosType = ros2TypeName(rosType)
	if topic == "" {
		return fmt.Errorf("logio: mcap writer: empty topic name")
	}
	if t := w.topics[topic]; t != nil {
		if t.rosType != rosType {
			return fmt.Errorf("logio: mcap writer: topic %s already has type %s, not %s", topic, t.rosType, rosType)
		}
		return nil
	}
	parsed, err := rosmsg.ParseSchema(rosType, rosmsg.ROS2Msg, []byte(definition))
	if err != nil {
		return fmt.Errorf("logio: mcap writer: topic %s: %w", topic, err)
	}
	if implied := parsed.Implied(); len(implied) > 0 {
		return fmt.Errorf("logio: mcap writer: topic %s: the definition of %s uses %s without including it: %w",
			topic, rosType, strings.Join(implied, ", "), rosmsg.ErrUnknownType)
	}
	var o TopicOptions
	if opts != nil {
		o = *opts
	}
	if o.QoS == nil {
		o.QoS = []QoSProfile{DefaultQoS()}
	}
	qos, err := FormatQoSProfiles(o.QoS, w.numeric)
	if err != nil {
		return fmt.Errorf("logio: mcap writer: topic %s: %w", topic, err)
	}
	s, ok := w.schemas[rosType]
	if !ok {
		s = schemaInfo{id: uint16(len(w.schemas) + 1), definition: definition}
		if err := w.w.WriteSchema(&mcap.Schema{ID: s.id, Name: rosType, Encoding: rosmsg.SchemaEncodingROS2Msg, Data: []byte(definition)}); err != nil {
			return w.fail(fmt.Errorf("schema %s: %w", rosType, err))
		}
		w.schemas[rosType] = s
	} else if s.definition != definition {
		return fmt.Errorf("logio: mcap writer: topic %s: type %s was added with another definition", topic, rosType)
	}
	if w.nextChan == 0xffff {
		return fmt.Errorf("logio: mcap writer: topic %s: too many topics", topic)
	}
	w.nextChan++
	meta := map[string]string{"offered_qos_profiles": qos}
	if o.TypeHash != "" {
		meta["topic_type_hash"] = o.TypeHash
	}
	t := &ros2Topic{name: topic, rosType: rosType, channel: w.nextChan, qos: qos}
	if err := w.w.WriteChannel(&mcap.Channel{ID: t.channel, SchemaID: s.id, Topic: topic, MessageEncoding: rosmsg.MessageEncodingCDR, Metadata: meta}); err != nil {
		return w.fail(fmt.Errorf("channel %s: %w", topic, err))
	}
	w.topics[topic] = t
	w.order = append(w.order, t)
	return nil
}

// AddTypedTopic registers a topic of the type of m (see AddTopic).
func (w *ROS2Writer) AddTypedTopic(topic string, m msgs.Message, opts *TopicOptions) error {
	return w.AddTopic(topic, m.ROSType(), m.ROSDefinition(), opts)
}

// Write writes one serialized CDR message (encapsulation header included)
// on a registered topic. logTime is when it was received (rosbag2's
// recv_timestamp), publishTime when it was sent, both in nanoseconds since
// the Unix epoch.
func (w *ROS2Writer) Write(topic string, logTime, publishTime uint64, payload []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("logio: mcap writer: write %s: writer is closed", topic)
	}
	t := w.topics[topic]
	if t == nil {
		return fmt.Errorf("logio: mcap writer: write to topic %s, which was not added", topic)
	}
	if err := w.w.WriteMessage(&mcap.Message{ChannelID: t.channel, Sequence: uint32(t.count), LogTime: logTime,
		PublishTime: publishTime, Data: payload}); err != nil {
		return w.fail(fmt.Errorf("message on %s: %w", topic, err))
	}
	t.count++
	if w.count == 0 || logTime < w.first {
		w.first = logTime
	}
	if w.count == 0 || logTime > w.last {
		w.last = logTime
	}
	w.count++
	return nil
}

// WriteMessage serializes m and writes it as Write does.
func (w *ROS2Writer) WriteMessage(topic string, logTime, publishTime uint64, m msgs.Message) error {
	w.scratch = w.enc.Append(w.scratch[:0], m)
	return w.Write(topic, logTime, publishTime, w.scratch)
}

// Close writes the rosbag2 metadata record and the summary, and finishes
// the file (closing it where the writer was made by CreateROS2).
func (w *ROS2Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	err := w.err
	if err == nil {
		err = w.finish()
	}
	if w.closer != nil {
		if cerr := w.closer.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("logio: mcap writer: %w", cerr)
		}
	}
	if w.err == nil {
		w.err = err
	}
	return err
}

func (w *ROS2Writer) finish() error {
	record := map[string]string{"ROS_DISTRO": w.opts.Distro}
	if !w.numeric {
		meta, err := w.bagMetadata()
		if err != nil {
			return w.fail(err)
		}
		record = map[string]string{"serialized_metadata": meta}
	}
	if err := w.w.WriteMetadata(&mcap.Metadata{Name: "rosbag2", Metadata: record}); err != nil {
		return w.fail(fmt.Errorf("metadata: %w", err))
	}
	if err := w.w.Close(); err != nil {
		return w.fail(err)
	}
	return nil
}

func (w *ROS2Writer) fail(err error) error {
	if w.err == nil {
		w.err = fmt.Errorf("logio: mcap writer: %w", err)
	}
	return w.err
}

// The rosbag2 bag metadata (version 9), as the MCAP storage plugin stores
// it in the "rosbag2" metadata record's serialized_metadata.
type (
	bagMetadata struct {
		Version           int                `yaml:"version"`
		StorageIdentifier string             `yaml:"storage_identifier"`
		Duration          bagDuration        `yaml:"duration"`
		StartingTime      bagTime            `yaml:"starting_time"`
		MessageCount      uint64             `yaml:"message_count"`
		Topics            []bagTopicWithInfo `yaml:"topics_with_message_count"`
		CompressionFormat string             `yaml:"compression_format"`
		CompressionMode   string             `yaml:"compression_mode"`
		RelativeFilePaths []string           `yaml:"relative_file_paths"`
		Files             []bagFile          `yaml:"files"`
		CustomData        map[string]string  `yaml:"custom_data"`
		ROSDistro         string             `yaml:"ros_distro"`
	}
	bagDuration struct {
		Nanoseconds uint64 `yaml:"nanoseconds"`
	}
	bagTime struct {
		NanosecondsSinceEpoch uint64 `yaml:"nanoseconds_since_epoch"`
	}
	bagTopicWithInfo struct {
		TopicMetadata bagTopic `yaml:"topic_metadata"`
		MessageCount  uint64   `yaml:"message_count"`
	}
	bagTopic struct {
		Name                string `yaml:"name"`
		Type                string `yaml:"type"`
		SerializationFormat string `yaml:"serialization_format"`
		OfferedQoSProfiles  string `yaml:"offered_qos_profiles"`
		TypeDescriptionHash string `yaml:"type_description_hash"`
	}
	bagFile struct {
		Path         string      `yaml:"path"`
		StartingTime bagTime     `yaml:"starting_time"`
		Duration     bagDuration `yaml:"duration"`
		MessageCount uint64      `yaml:"message_count"`
	}
)

// bagMetadata returns the YAML of the bag metadata.
func (w *ROS2Writer) bagMetadata() (string, error) {
	m := bagMetadata{
		Version:           9,
		StorageIdentifier: "mcap",
		Duration:          bagDuration{w.last - w.first},
		StartingTime:      bagTime{w.first},
		MessageCount:      w.count,
		RelativeFilePaths: []string{},
		Files:             []bagFile{},
		ROSDistro:         w.opts.Distro,
	}
	if w.opts.FileName != "" {
		m.RelativeFilePaths = []string{w.opts.FileName}
		m.Files = []bagFile{{Path: w.opts.FileName, StartingTime: m.StartingTime, Duration: m.Duration, MessageCount: w.count}}
	}
	topics := slices.Clone(w.order)
	slices.SortFunc(topics, func(a, b *ros2Topic) int { return strings.Compare(a.name, b.name) })
	for _, t := range topics {
		m.Topics = append(m.Topics, bagTopicWithInfo{
			TopicMetadata: bagTopic{Name: t.name, Type: t.rosType, SerializationFormat: rosmsg.MessageEncodingCDR, OfferedQoSProfiles: t.qos},
			MessageCount:  t.count,
		})
	}
	b, err := yaml.Marshal(&m)
	if err != nil {
		return "", fmt.Errorf("bag metadata: %w", err)
	}
	return string(b), nil
}
