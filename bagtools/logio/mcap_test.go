package logio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/calisym/calisym/msgs/rosmsg"
)

// testMCAP writes n messages on three channels (two topics) with the given
// writer options; close=false leaves the file without data end, summary and
// footer, like a recorder that crashed.
func testMCAP(t testing.TB, n int, opts *mcap.WriterOptions, close bool) ([]byte, []got) {
	t.Helper()
	var buf bytes.Buffer
	w, err := mcap.NewWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(w.WriteHeader(&mcap.Header{Profile: "ros2", Library: "logio test"}))
	check(w.WriteSchema(&mcap.Schema{ID: 1, Name: "sensor_msgs/msg/JointState", Encoding: rosmsg.SchemaEncodingROS2Msg, Data: []byte("std_msgs/Header header\nstring[] name\n")}))
	check(w.WriteSchema(&mcap.Schema{ID: 2, Name: "nav_msgs/msg/Odometry", Encoding: rosmsg.SchemaEncodingROS2Msg, Data: []byte("std_msgs/Header header\n")}))
	topics := map[uint16]string{0: "/joint_states", 1: "/odom", 2: "/odom"}
	check(w.WriteChannel(&mcap.Channel{ID: 0, SchemaID: 1, Topic: topics[0], MessageEncoding: rosmsg.MessageEncodingCDR, Metadata: map[string]string{"offered_qos_profiles": ""}}))
	check(w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 2, Topic: topics[1], MessageEncoding: rosmsg.MessageEncodingCDR}))
	check(w.WriteChannel(&mcap.Channel{ID: 2, SchemaID: 2, Topic: topics[2], MessageEncoding: rosmsg.MessageEncodingCDR}))
	var want []got
	for i := 0; i < n; i++ {
		id := uint16(i % 3)
		data := bytes.Repeat([]byte{byte(i), byte(i >> 8), 0xa5}, 1+i%7)
		tm := uint64(1_700_000_000_000_000_000 + i*1_000_000)
		check(w.WriteMessage(&mcap.Message{ChannelID: id, Sequence: uint32(i), LogTime: tm, PublishTime: tm, Data: data}))
		want = append(want, got{uint32(id), topics[id], tm, data})
	}
	if close {
		check(w.Close())
	} else if opts.Chunked {
		// Flush the open chunk without writing the summary, as a
		// recorder that crashed after a chunk was written would.
		t.Fatal("unclosed chunked files are made by cutting a closed one")
	}
	return buf.Bytes(), want
}

func TestMCAPReader(t *testing.T) {
	tests := []struct {
		name   string
		opts   mcap.WriterOptions
		close  bool
		topics []string
		want   error
	}{
		{name: "unchunked", opts: mcap.WriterOptions{}, close: true},
		{name: "chunked none", opts: mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionNone}, close: true},
		{name: "chunked lz4", opts: mcap.WriterOptions{Chunked: true, ChunkSize: 700, Compression: mcap.CompressionLZ4}, close: true},
		{name: "chunked zstd", opts: mcap.WriterOptions{Chunked: true, ChunkSize: 900, Compression: mcap.CompressionZSTD, IncludeCRC: true}, close: true},
		{name: "no index", opts: mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionZSTD, SkipChunkIndex: true, SkipMessageIndexing: true, SkipStatistics: true, SkipSummaryOffsets: true, SkipRepeatedChannelInfos: true, SkipRepeatedSchemas: true}, close: true},
		{name: "topic filter", opts: mcap.WriterOptions{Chunked: true, ChunkSize: 512, Compression: mcap.CompressionLZ4}, close: true, topics: []string{"/odom"}},
		{name: "unclosed", opts: mcap.WriterOptions{}, close: false, want: ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, want := testMCAP(t, 50, &tt.opts, tt.close)
			r, err := NewMCAPReader(bytes.NewReader(data), &ReaderOptions{Topics: tt.topics})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Profile() != "ros2" {
				t.Errorf("profile %q", r.Profile())
			}
			if tt.topics != nil {
				want = filterTopic(want, tt.topics[0])
			}
			ms, err := drain(t, r)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("end error %v, want %v", err, tt.want)
			}
			sameMessages(t, ms, want)
			chans := r.Channels()
			if n := map[bool]int{true: 2, false: 3}[tt.topics != nil]; len(chans) != n {
				t.Fatalf("%d channels, want %d", len(chans), n)
			}
			c := chans[0]
			if c.Encoding != rosmsg.MessageEncodingCDR || c.SchemaEncoding != rosmsg.SchemaEncodingROS2Msg || !strings.HasPrefix(c.Type, "sensor_msgs/msg/") && !strings.HasPrefix(c.Type, "nav_msgs/msg/") || len(c.Schema) == 0 {
				t.Errorf("channel %+v", c)
			}
		})
	}
}

func TestMCAPChannelsFromSummary(t *testing.T) {
	data, _ := testMCAP(t, 10, &mcap.WriterOptions{Chunked: true, ChunkSize: 256, Compression: mcap.CompressionZSTD}, true)
	r, err := NewMCAPReader(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Channels()); n != 3 {
		t.Fatalf("%d channels before reading, want 3 from the summary", n)
	}
	m, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if m.Channel != r.Channels()[0] {
		t.Errorf("message channel is not the pointer Channels returned")
	}
}

func TestMCAPTruncated(t *testing.T) {
	for _, opts := range []mcap.WriterOptions{
		{},
		{Chunked: true, ChunkSize: 300, Compression: mcap.CompressionNone},
		{Chunked: true, ChunkSize: 300, Compression: mcap.CompressionLZ4},
		{Chunked: true, ChunkSize: 300, Compression: mcap.CompressionZSTD},
	} {
		t.Run(string(opts.Compression)+map[bool]string{true: "chunked", false: "unchunked"}[opts.Chunked], func(t *testing.T) {
			data, full := testMCAP(t, 60, &opts, true)
			dataEnd := bytes.LastIndex(data, []byte{byte(mcap.OpDataEnd), 4, 0, 0, 0, 0, 0, 0, 0})
			prev := 0
			for cut := len(MCAPMagic); cut < len(data); cut += 11 {
				r, err := NewMCAPReader(bytes.NewReader(data[:cut]), nil)
				if err != nil {
					if !errors.Is(err, ErrTruncated) {
						t.Fatalf("cut %d: open error %v, want ErrTruncated", cut, err)
					}
					continue
				}
				ms, err := drain(t, r)
				sameMessages(t, ms, full[:len(ms)])
				if cut <= dataEnd && !errors.Is(err, ErrTruncated) {
					t.Fatalf("cut %d (data end at %d): end error %v, want ErrTruncated", cut, dataEnd, err)
				}
				if cut > dataEnd+13 && err != nil {
					t.Fatalf("cut %d after the data end: %v", cut, err)
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

func TestMCAPErrors(t *testing.T) {
	valid, _ := testMCAP(t, 5, &mcap.WriterOptions{}, true)
	hdrEnd := len(MCAPMagic) + 9 + int(valid[len(MCAPMagic)+1])
	with := func(records ...[]byte) []byte {
		out := bytes.Clone(valid[:hdrEnd])
		for _, r := range records {
			out = append(out, r...)
		}
		return out
	}
	rec := func(op mcap.OpCode, body []byte) []byte {
		out := []byte{byte(op)}
		out = append(out, u64(uint64(len(body)))...)
		return append(out, body...)
	}
	badChunk := append(append(make([]byte, 28), u32(100)...), bytes.Repeat([]byte{'x'}, 120)...)
	tests := []struct {
		name   string
		data   []byte
		opts   *ReaderOptions
		open   bool
		want   error
		substr string
	}{
		{name: "empty", data: nil, open: true, want: ErrTruncated},
		{name: "bad magic", data: []byte("\x89MCAP1\r\nxxxxxxxxxxxxx"), open: true, want: ErrUnknownFormat},
		{name: "no header", data: append([]byte(MCAPMagic), rec(mcap.OpDataEnd, make([]byte, 4))...), open: true, want: ErrCorrupt, substr: "want the header"},
		{name: "unknown channel", data: with(rec(mcap.OpMessage, make([]byte, 30))), want: ErrCorrupt, substr: "unknown channel"},
		{name: "channel with unknown schema", data: with(rec(mcap.OpChannel, append([]byte{1, 0, 9, 0}, make([]byte, 12)...))), want: ErrCorrupt, substr: "unknown schema 9"},
		{name: "short message", data: with(rec(mcap.OpMessage, make([]byte, 5))), want: ErrCorrupt, substr: "message record"},
		{name: "record too large", data: valid, opts: &ReaderOptions{MaxRecordSize: 8}, open: true, want: ErrTooLarge},
		{name: "chunk compression length", data: with(rec(mcap.OpChunk, badChunk)), want: ErrCorrupt, substr: "near offset"},
		{name: "zero opcode", data: with(rec(0, nil)), want: ErrCorrupt, substr: "record 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewMCAPReader(bytes.NewReader(tt.data), tt.opts)
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

func TestOpenDispatch(t *testing.T) {
	dir := t.TempDir()
	mc, _ := testMCAP(t, 7, &mcap.WriterOptions{Chunked: true, Compression: mcap.CompressionLZ4}, true)
	tb := smallBag(7)
	files := map[string][]byte{"a.mcap": mc, "b.bag": tb.encode(t), "c.txt": []byte("hello, world\n"), "d.empty": nil}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		file string
		want error
		n    int
	}{
		{"a.mcap", nil, 7},
		{"b.bag", nil, 7},
		{"c.txt", ErrUnknownFormat, 0},
		{"d.empty", ErrUnknownFormat, 0},
		{"missing.bag", os.ErrNotExist, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Open(filepath.Join(dir, tt.file), nil)
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("error %v, want %v", err, tt.want)
				}
				if !strings.Contains(err.Error(), tt.file) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ms, err := drain(t, r)
			if err != nil || len(ms) != tt.n {
				t.Fatalf("%d messages, error %v; want %d", len(ms), err, tt.n)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Next(); err == nil {
				t.Error("Next after Close succeeded")
			}
		})
	}
}

func FuzzMCAPReader(f *testing.F) {
	for _, opts := range []mcap.WriterOptions{
		{},
		{Chunked: true, ChunkSize: 200, Compression: mcap.CompressionNone},
		{Chunked: true, ChunkSize: 200, Compression: mcap.CompressionLZ4},
		{Chunked: true, ChunkSize: 200, Compression: mcap.CompressionZSTD},
	} {
		data, _ := testMCAP(f, 6, &opts, true)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewMCAPReader(bytes.NewReader(data), &ReaderOptions{MaxRecordSize: 1 << 20})
		if err != nil {
			return
		}
		defer r.Close()
		for i := 0; ; i++ {
			m, err := r.Next()
			if err != nil {
				break
			}
			if m.Channel == nil {
				t.Fatal("message without channel")
			}
		}
		_ = r.Channels()
	})
}
