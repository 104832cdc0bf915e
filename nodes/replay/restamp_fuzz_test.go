package replay

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzRestamp maps the header stamp of arbitrary bytes, as Play does with
// a log's messages: it never panics nor changes the length, touches only
// the 8 stamp bytes, and the identity clock leaves a well-formed stamp
// (nanoseconds below 1e9) as it was.
func FuzzRestamp(f *testing.F) {
	cdr := binary.LittleEndian.AppendUint32([]byte{0, 1, 0, 0}, 1_700_000_000)
	cdr = binary.LittleEndian.AppendUint32(cdr, 5)
	ros1 := binary.LittleEndian.AppendUint32([]byte{7, 0, 0, 0}, 1_300_000_000)
	ros1 = binary.LittleEndian.AppendUint32(ros1, 999_999_999)
	f.Add(cdr, uint8(cdrHeader), int64(0))
	f.Add(ros1, uint8(ros1Header), int64(-5))
	f.Add([]byte{0, 0, 0}, uint8(cdrHeader), int64(1e9))
	f.Add(append([]byte{0, 0, 0, 0}, cdr[4:]...), uint8(cdrHeader), int64(3)) // big-endian CDR
	f.Fuzz(func(t *testing.T, data []byte, kind uint8, shift int64) {
		k := headerKind(kind % 4)
		orig := bytes.Clone(data)
		restamp(data, k, func(ns int64) int64 { return ns + shift })
		if len(data) != len(orig) {
			t.Fatalf("length %d, was %d", len(data), len(orig))
		}
		if len(data) >= 12 && !bytes.Equal(data[:4], orig[:4]) || len(data) > 12 && !bytes.Equal(data[12:], orig[12:]) {
			t.Fatal("restamp changed bytes outside the stamp")
		}
		if len(data) < 12 || k == noHeader || k > ros1Header {
			if !bytes.Equal(data, orig) {
				t.Fatal("restamp changed a message without a stamp it maps")
			}
			return
		}
		id := bytes.Clone(orig)
		restamp(id, k, func(ns int64) int64 { return ns })
		bo := binary.ByteOrder(binary.LittleEndian)
		if k == cdrHeader && orig[1]&1 == 0 {
			bo = binary.BigEndian
		}
		if bo.Uint32(orig[8:]) < 1e9 && int32(bo.Uint32(orig[4:])) >= 0 && !bytes.Equal(id, orig) {
			t.Fatalf("the identity clock changed the stamp: % x to % x", orig[4:12], id[4:12])
		}
	})
}
