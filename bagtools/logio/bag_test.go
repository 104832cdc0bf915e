package logio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// got is a message as a test keeps it: copied out of the reader's buffers.
type got struct {
	conn  uint32
	topic string
	time  uint64
	data  []byte
}

// drain reads r to its end and returns the messages and the error that
// ended the stream (nil for io.EOF).
func drain(t testing.TB, r MessageReader) ([]got, error) {
	t.Helper()
	var out []got
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			if _, err2 := r.Next(); err2 != err {
				t.Errorf("Next after error %v returned %v, want the same error", err, err2)
			}
			return out, err
		}
		out = append(out, got{m.Channel.ID, m.Channel.Topic, m.LogTime, bytes.Clone(m.Data)})
	}
}

func wantMessages(tb testBag) []got {
	topics := map[uint32]string{}
	for _, c := range tb.channels {
		topics[c.ID] = c.Topic
	}
	out := make([]got, len(tb.msgs))
	for i, m := range tb.msgs {
		out[i] = got{m.conn, topics[m.conn], m.time, m.data}
	}
	return out
}

func sameMessages(t *testing.T, got, want []got) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.conn != w.conn || g.topic != w.topic || g.time != w.time || !bytes.Equal(g.data, w.data) {
			t.Fatalf("message %d = {%d %s %d %x}, want {%d %s %d %x}", i, g.conn, g.topic, g.time, g.data, w.conn, w.topic, w.time, w.data)
		}
	}
}

func filterTopic(ms []got, topic string) []got {
	var out []got
	for _, m := range ms {
		if m.topic == topic {
			out = append(out, m)
		}
	}
	return out
}

func TestBagReader(t *testing.T) {
	tests := []struct {
		name        string
		compression string
		perChunk    int
		noIndex     bool
		topics      []string
	}{
		{name: "none", compression: "none", perChunk: 3},
		{name: "none one chunk", compression: "none"},
		{name: "lz4", compression: "lz4", perChunk: 4},
		{name: "bz2", compression: "bz2", perChunk: 5},
		{name: "topic filter", compression: "lz4", perChunk: 2, topics: []string{"/odom"}},
		{name: "unindexed", compression: "none", perChunk: 3, noIndex: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := smallBag(23)
			tb.compression, tb.perChunk, tb.noIndex = tt.compression, tt.perChunk, tt.noIndex
			data := tb.encode(t)
			r, err := NewBagReader(bytes.NewReader(data), &ReaderOptions{Topics: tt.topics})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			wantChans := 3
			if tt.topics != nil {
				wantChans = 2
			}
			if tt.noIndex {
				wantChans = 0 // known only as the chunks are read
			}
			if n := len(r.Channels()); n != wantChans {
				t.Errorf("Channels() before reading: %d, want %d", n, wantChans)
			}
			ms, err := drain(t, r)
			want := wantMessages(tb)
			if tt.topics != nil {
				want = filterTopic(want, tt.topics[0])
			}
			sameMessages(t, ms, want)
			if tt.noIndex {
				if !errors.Is(err, ErrTruncated) {
					t.Errorf("unindexed bag: end error %v, want ErrTruncated", err)
				}
			} else if err != nil {
				t.Errorf("end error: %v", err)
			}
			chans := r.Channels()
			if len(chans) != max(wantChans, 2) && tt.topics != nil || tt.topics == nil && len(chans) != 3 {
				t.Errorf("Channels() after reading: %d", len(chans))
			}
			for _, c := range chans {
				if c.Encoding != rosmsg.MessageEncodingROS1 || c.SchemaEncoding != rosmsg.SchemaEncodingROS1Msg || c.Type == "" || len(c.Schema) == 0 || c.Metadata["md5sum"] == "" {
					t.Errorf("channel %+v lacks fields", c)
				}
			}
		})
	}
}

// TestBagTestdataBZ2 reads a bag with bz2 chunks kept in testdata, so that
// bz2 is covered where the bzip2 command is absent. Regenerate it with
// LOGIO_UPDATE_TESTDATA=1.
func TestBagTestdataBZ2(t *testing.T) {
	tb := smallBag(23)
	tb.compression, tb.perChunk = "bz2", 5
	path := filepath.Join("testdata", "small_bz2.bag")
	if os.Getenv("LOGIO_UPDATE_TESTDATA") == "1" {
		if err := os.WriteFile(path, tb.encode(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ms, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, ms, wantMessages(tb))
}

func TestBagTruncated(t *testing.T) {
	for _, compression := range []string{"none", "lz4"} {
		t.Run(compression, func(t *testing.T) {
			tb := smallBag(40)
			tb.compression, tb.perChunk = compression, 7
			data := tb.encode(t)
			full := wantMessages(tb)
			at := bytes.Index(data, []byte("index_pos=")) + len("index_pos=")
			indexPos := int(binary.LittleEndian.Uint64(data[at:]))
			prev := 0
			for cut := len(BagMagic) + 4096; cut < len(data); cut += 13 {
				r, err := NewBagReader(bytes.NewReader(data[:cut]), nil)
				if err != nil {
					t.Fatalf("cut %d: open: %v", cut, err)
				}
				ms, err := drain(t, r)
				sameMessages(t, ms, full[:len(ms)])
				if cut < indexPos && !errors.Is(err, ErrTruncated) {
					t.Fatalf("cut %d of %d: end error %v, want ErrTruncated", cut, len(data), err)
				}
				if cut >= indexPos && err != nil {
					t.Fatalf("cut %d in the index section (at %d): %v", cut, indexPos, err)
				}
				if err != nil && !strings.Contains(err.Error(), "offset") {
					t.Errorf("cut %d: error %q does not say where", cut, err)
				}
				if len(ms) < prev {
					t.Fatalf("cut %d: %d messages, fewer than %d at a shorter cut", cut, len(ms), prev)
				}
				prev = len(ms)
			}
			if prev != len(full) {
				t.Errorf("longest cut gave %d messages, want %d", prev, len(full))
			}
		})
	}
}

// TestBagTruncatedKeepsChunkPrefix checks that the complete messages of a
// chunk cut in its middle are returned.
func TestBagTruncatedKeepsChunkPrefix(t *testing.T) {
	tb := smallBag(10)
	tb.perChunk = 0 // one uncompressed chunk
	data := tb.encode(t)
	// Cut just after the record of message 6 (its data is unique).
	m := tb.msgs[6]
	end := bytes.Index(data, m.data) + len(m.data)
	r, err := NewBagReader(bytes.NewReader(data[:end+3]), nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := drain(t, r)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("end error %v, want ErrTruncated", err)
	}
	sameMessages(t, ms, wantMessages(tb)[:7])
}

func TestBagErrors(t *testing.T) {
	good := smallBag(6)
	good.perChunk = 0
	valid := good.encode(t)
	chunkAt := len(BagMagic) + 4096
	bagWith := func(records ...[]byte) []byte {
		out := bytes.Clone(valid[:chunkAt])
		// index_pos 0: the bag ends after these records
		copy(out[bytes.Index(out, []byte("index_pos="))+10:], make([]byte, 8))
		for _, r := range records {
			out = append(out, r...)
		}
		return out
	}
	c := good.channels[0]
	conn := connectionRecord(nil, c)
	msg := func(conn uint32) []byte {
		return appendRecord(nil, []byte{1, 2}, "op", byte(bagOpMessage), "conn", u32(conn), "time", rosTime(5))
	}
	tests := []struct {
		name   string
		data   []byte
		opts   *ReaderOptions
		open   bool // the error comes from NewBagReader
		want   error
		substr string
	}{
		{name: "empty", data: nil, open: true, want: ErrTruncated},
		{name: "bad magic", data: []byte("#ROSBAG V1.2\nxxxxxxxx"), open: true, want: ErrUnknownFormat, substr: "magic"},
		{name: "no bag header", data: append([]byte(BagMagic), conn...), open: true, want: ErrCorrupt, substr: "want the bag header"},
		{name: "header length past end", data: append([]byte(BagMagic), 0xff, 0xff, 0, 0, 1), open: true, want: ErrTruncated, substr: "offset 13"},
		{name: "field length past header", data: append([]byte(BagMagic), appendRecord(nil, nil, "op", byte(3))[:4]...), open: true, want: ErrTruncated},
		{name: "unknown connection", data: bagWith(msg(9)), want: ErrCorrupt, substr: "connection 9"},
		{name: "top-level message", data: bagWith(conn, msg(0)), want: ErrTruncated},
		{name: "unknown compression", data: bagWith(appendRecord(nil, []byte("x"), "op", byte(bagOpChunk), "compression", "zstd", "size", u32(1))), want: ErrUnsupported, substr: "zstd"},
		{name: "chunk size mismatch", data: bagWith(appendRecord(nil, []byte("xy"), "op", byte(bagOpChunk), "compression", "none", "size", u32(3))), want: ErrCorrupt, substr: "header says 3"},
		{name: "chunk too large", data: valid, opts: &ReaderOptions{MaxChunkSize: 16}, want: ErrTooLarge, substr: "limit"},
		{name: "bad lz4", data: bagWith(appendRecord(nil, []byte("not lz4 at all"), "op", byte(bagOpChunk), "compression", "lz4", "size", u32(30))), want: ErrCorrupt, substr: "lz4"},
		{name: "bad bz2", data: bagWith(appendRecord(nil, []byte("BZh9garbage"), "op", byte(bagOpChunk), "compression", "bz2", "size", u32(30))), want: ErrCorrupt, substr: "bz2"},
		{name: "record without op", data: bagWith(appendRecord(nil, nil, "conn", u32(1))), want: ErrCorrupt, substr: "no op"},
		{name: "field without =", data: bagWith([]byte{8, 0, 0, 0, 4, 0, 0, 0, 'o', 'p', 'x', 'y', 0, 0, 0, 0}), want: ErrCorrupt, substr: "no '='"},
		{name: "bad time width", data: bagWith(conn, appendRecord(nil, nil, "op", byte(bagOpMessage), "conn", u32(0), "time", u32(5))), want: ErrCorrupt, substr: `"time" has 4 bytes`},
		{name: "connection without type", data: bagWith(appendRecord(nil, appendFields(nil, "md5sum", "x"), "op", byte(bagOpConnection), "conn", u32(3), "topic", "/a")), want: ErrCorrupt, substr: "no type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewBagReader(bytes.NewReader(tt.data), tt.opts)
			if !tt.open {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				_, err = drain(t, r)
			} else if err == nil {
				t.Fatal("open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("error %q lacks %q", err, tt.substr)
			}
		})
	}
}

func TestBagFixture(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := r.(*BagReader)
	topics := map[string]string{}
	for _, c := range b.Channels() {
		topics[c.Topic] = c.Type
	}
	if topics["/joint_states"] != "sensor_msgs/JointState" || topics["/base_odometry/odom"] != "nav_msgs/Odometry" {
		t.Fatalf("channels from the index: %v", topics)
	}
	counts := map[string]int{}
	type key struct {
		chunk int
		topic string
	}
	last := map[key]uint64{}
	var first, end uint64
	for {
		m, err := b.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		counts[m.Channel.Topic]++
		k := key{b.chunks, m.Channel.Topic}
		if m.LogTime < last[k] {
			t.Fatalf("%s: log time %d decreases within chunk %d", k.topic, m.LogTime, k.chunk)
		}
		last[k] = m.LogTime
		if first == 0 || m.LogTime < first {
			first = m.LogTime
		}
		end = max(end, m.LogTime)
		if len(m.Data) == 0 {
			t.Fatalf("empty message on %s", m.Channel.Topic)
		}
	}
	if counts["/joint_states"] != 1325 || counts["/base_odometry/odom"] != 1229 {
		t.Errorf("counts %v, want /joint_states 1325 and /base_odometry/odom 1229", counts)
	}
	if b.chunks < 2 {
		t.Errorf("read %d chunks, want several", b.chunks)
	}
	if span := float64(end-first) / 1e9; span < 13.3 || span > 13.5 {
		t.Errorf("time span %.3f s, want about 13.4 s", span)
	}
}

// TestBagFixtureRecompressed rewrites the real bag (bz2 chunks) with other
// chunk compressions through the test writer and checks that every variant
// reads identically.
func TestBagFixtureRecompressed(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	tb := testBag{channels: r.Channels(), perChunk: 600}
	r.Close()
	for _, m := range orig {
		tb.msgs = append(tb.msgs, testMessage{m.conn, m.time, m.data})
	}
	for _, compression := range []string{"none", "lz4", "bz2"} {
		t.Run(compression, func(t *testing.T) {
			tb := tb
			tb.compression = compression
			data := tb.encode(t)
			r, err := NewBagReader(bytes.NewReader(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := drain(t, r)
			if err != nil {
				t.Fatal(err)
			}
			sameMessages(t, ms, orig)
			if got := len(r.Channels()); got != len(tb.channels) {
				t.Errorf("%d channels, want %d", got, len(tb.channels))
			}
		})
	}
}

func FuzzBagReader(f *testing.F) {
	for _, compression := range []string{"none", "lz4"} {
		tb := smallBag(9)
		tb.compression = compression
		f.Add(tb.encode(f))
	}
	if p, err := os.ReadFile(filepath.Join("testdata", "small_bz2.bag")); err == nil {
		f.Add(p)
	}
	if p, err := os.ReadFile(filepath.Join(fixtures.DataDir(), "bags", "pr1012_sensors.bag")); err == nil {
		f.Add(p[:min(len(p), 24<<10)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewBagReader(bytes.NewReader(data), &ReaderOptions{MaxRecordSize: 1 << 20, MaxChunkSize: 4 << 20})
		if err != nil {
			if !strings.Contains(err.Error(), "bag: ") {
				t.Fatalf("error %q does not name the format", err)
			}
			return
		}
		defer r.Close()
		for i := 0; ; i++ {
			m, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "offset") {
					t.Fatalf("error %q does not say where", err)
				}
				break
			}
			if m.Channel == nil {
				t.Fatal("message without channel")
			}
			if i > len(data) {
				t.Fatalf("%d messages from %d bytes", i, len(data))
			}
		}
		_ = r.Channels()
	})
}

func ExampleOpen() {
	r, err := Open(filepath.Join(fixtures.DataDir(), "bags", "pr1012_sensors.bag"), &ReaderOptions{Topics: []string{"/joint_states"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if err != nil {
			if errors.Is(err, ErrTruncated) {
				fmt.Println("warning:", err)
			}
			break
		}
		n++
	}
	fmt.Println(n, "joint states")
}
