package logio

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"sort"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// testBag describes a ROS 1 bag v2.0 for testBag.encode, a test-only writer
// that lays records out as rosbag does: magic, a 4096-byte bag header,
// chunks each followed by its index data records, then the index section
// (connection records and chunk info records).
type testBag struct {
	channels    []*Channel    // connections; Metadata["md5sum"] is written
	msgs        []testMessage // in file order
	compression string        // "none", "bz2" or "lz4"
	perChunk    int           // messages per chunk (0: all in one chunk)
	noIndex     bool          // write index_pos 0 and no index section, like an unclosed recording
}

type testMessage struct {
	conn uint32
	time uint64 // ns
	data []byte
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func rosTime(ns uint64) []byte {
	return append(u32(uint32(ns/1e9)), u32(uint32(ns%1e9))...)
}

// appendFields appends name=value fields in the ROS header layout.
func appendFields(p []byte, kv ...any) []byte {
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		var val []byte
		switch v := kv[i+1].(type) {
		case string:
			val = []byte(v)
		case []byte:
			val = v
		case byte:
			val = []byte{v}
		}
		p = binary.LittleEndian.AppendUint32(p, uint32(len(name)+1+len(val)))
		p = append(p, name...)
		p = append(p, '=')
		p = append(p, val...)
	}
	return p
}

// appendRecord appends a record with the given header fields and data.
func appendRecord(p []byte, data []byte, kv ...any) []byte {
	h := appendFields(nil, kv...)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(h)))
	p = append(p, h...)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(data)))
	return append(p, data...)
}

func connectionRecord(p []byte, c *Channel) []byte {
	data := appendFields(nil,
		"topic", c.Topic,
		"type", c.Type,
		"md5sum", c.Metadata["md5sum"],
		"message_definition", string(c.Schema))
	return appendRecord(p, data, "op", byte(bagOpConnection), "conn", u32(c.ID), "topic", c.Topic)
}

func compressChunk(t testing.TB, compression string, raw []byte) []byte {
	t.Helper()
	switch compression {
	case "none":
		return raw
	case "lz4":
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		if _, err := w.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	case "bz2":
		// The standard library has no bzip2 compressor; use the bzip2
		// command where the system has it.
		path, err := exec.LookPath("bzip2")
		if err != nil {
			t.Skip("bzip2 command not found; bz2 chunks cannot be written")
		}
		cmd := exec.Command(path, "-c", "-1")
		cmd.Stdin = bytes.NewReader(raw)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bzip2: %v", err)
		}
		return out
	}
	t.Fatalf("unknown compression %q", compression)
	return nil
}

// encode returns the bag's bytes.
func (tb testBag) encode(t testing.TB) []byte {
	t.Helper()
	chans := make(map[uint32]*Channel)
	for _, c := range tb.channels {
		chans[c.ID] = c
	}
	const headerRecordLen = 4096
	bodyStart := len(BagMagic) + headerRecordLen
	var body []byte
	type chunkInfo struct {
		pos        uint64
		start, end uint64
		counts     map[uint32]uint32
	}
	var infos []chunkInfo
	written := make(map[uint32]bool)
	per := tb.perChunk
	if per <= 0 {
		per = len(tb.msgs)
	}
	for lo := 0; lo < len(tb.msgs); lo += per {
		hi := min(lo+per, len(tb.msgs))
		var raw []byte
		info := chunkInfo{pos: uint64(bodyStart + len(body)), start: ^uint64(0), counts: map[uint32]uint32{}}
		type entry struct {
			time uint64
			off  uint32
		}
		index := map[uint32][]entry{}
		for _, m := range tb.msgs[lo:hi] {
			if !written[m.conn] {
				c := chans[m.conn]
				if c == nil {
					t.Fatalf("message on undeclared connection %d", m.conn)
				}
				raw = connectionRecord(raw, c)
				written[m.conn] = true
			}
			index[m.conn] = append(index[m.conn], entry{m.time, uint32(len(raw))})
			raw = appendRecord(raw, m.data, "op", byte(bagOpMessage), "conn", u32(m.conn), "time", rosTime(m.time))
			info.start = min(info.start, m.time)
			info.end = max(info.end, m.time)
			info.counts[m.conn]++
		}
		comp := compressChunk(t, tb.compression, raw)
		body = appendRecord(body, comp, "op", byte(bagOpChunk), "compression", tb.compression, "size", u32(uint32(len(raw))))
		conns := make([]uint32, 0, len(index))
		for c := range index {
			conns = append(conns, c)
		}
		sort.Slice(conns, func(i, j int) bool { return conns[i] < conns[j] })
		for _, c := range conns {
			var data []byte
			for _, e := range index[c] {
				data = append(data, rosTime(e.time)...)
				data = append(data, u32(e.off)...)
			}
			body = appendRecord(body, data, "op", byte(bagOpIndexData), "ver", u32(1), "conn", u32(c), "count", u32(uint32(len(index[c]))))
		}
		infos = append(infos, info)
	}
	indexPos := uint64(bodyStart + len(body))
	if tb.noIndex {
		indexPos = 0
	} else {
		for _, c := range tb.channels {
			body = connectionRecord(body, c)
		}
		for _, info := range infos {
			var data []byte
			conns := make([]uint32, 0, len(info.counts))
			for c := range info.counts {
				conns = append(conns, c)
			}
			sort.Slice(conns, func(i, j int) bool { return conns[i] < conns[j] })
			for _, c := range conns {
				data = append(data, u32(c)...)
				data = append(data, u32(info.counts[c])...)
			}
			body = appendRecord(body, data, "op", byte(bagOpChunkInfo), "ver", u32(1),
				"chunk_pos", u64(info.pos), "start_time", rosTime(info.start), "end_time", rosTime(info.end),
				"count", u32(uint32(len(conns))))
		}
	}
	out := []byte(BagMagic)
	h := appendFields(nil, "op", byte(bagOpBagHeader), "index_pos", u64(indexPos),
		"conn_count", u32(uint32(len(tb.channels))), "chunk_count", u32(uint32(len(infos))))
	pad := headerRecordLen - 4 - len(h) - 4
	out = binary.LittleEndian.AppendUint32(out, uint32(len(h)))
	out = append(out, h...)
	out = binary.LittleEndian.AppendUint32(out, uint32(pad))
	out = append(out, bytes.Repeat([]byte{' '}, pad)...)
	return append(out, body...)
}

// smallBag returns a bag of three connections on two topics and n messages
// with increasing times.
func smallBag(n int) testBag {
	chans := []*Channel{
		{ID: 0, Topic: "/joint_states", Type: "sensor_msgs/JointState", Schema: []byte("Header header\nstring[] name\nfloat64[] position\n"), Metadata: map[string]string{"md5sum": "3066dcd76a6cfaef579bd0f34173e9fd"}},
		{ID: 1, Topic: "/odom", Type: "nav_msgs/Odometry", Schema: []byte("Header header\n"), Metadata: map[string]string{"md5sum": "cd5e73d190d741a2f92e81eda573aca7"}},
		{ID: 7, Topic: "/odom", Type: "nav_msgs/Odometry", Schema: []byte("Header header\n"), Metadata: map[string]string{"md5sum": "cd5e73d190d741a2f92e81eda573aca7"}},
	}
	ids := []uint32{0, 1, 0, 7}
	msgs := make([]testMessage, n)
	for i := range msgs {
		msgs[i] = testMessage{
			conn: ids[i%len(ids)],
			time: 1_349_176_210_000_000_000 + uint64(i)*10_000_000 + 7,
			data: bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 1+i%5),
		}
	}
	return testBag{channels: chans, msgs: msgs, compression: "none", perChunk: 3}
}
