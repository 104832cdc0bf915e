package livetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/mechanics"
)

// DamagedLogs are one simulated pendulum log and copies of it damaged the
// ways a recording is: cut in the middle of a chunk (a copy that did not
// finish, a full disk) and ending after its last chunk without the
// data-end record, the summary and the footer (a recorder that was
// killed).
type DamagedLogs struct {
	// Whole is the log as written, with its summary.
	Whole string
	// MidChunk is Whole cut in the middle of one of its middle chunks.
	MidChunk string
	// NoSummary is Whole without its data-end record, summary and footer.
	NoSummary string
	// NoFooter is Whole without its footer record and closing magic only:
	// its data section is complete, but a reader cannot find the summary.
	NoFooter string
	// Corrupt is Whole with the length of the first record inside a
	// middle chunk overwritten by a huge one: a reader returns the
	// messages before that chunk and then an error that is not
	// logio.ErrTruncated.
	Corrupt string
	// Messages counts the messages of Whole; MidChunkMessages those of
	// MidChunk that a reader returns before the damage.
	Messages, MidChunkMessages int
}

// PendulumDamaged writes trajectories as an uncompressed ROS 2 MCAP log
// in small chunks (4 KiB, so that a short log has several) into dir and
// makes its damaged copies.
func PendulumDamaged(t testing.TB, dir string, trs []mechanics.Trajectory) DamagedLogs {
	t.Helper()
	d := DamagedLogs{
		Whole:     filepath.Join(dir, "whole.mcap"),
		MidChunk:  filepath.Join(dir, "mid_chunk.mcap"),
		NoSummary: filepath.Join(dir, "no_summary.mcap"),
		NoFooter:  filepath.Join(dir, "no_footer.mcap"),
		Corrupt:   filepath.Join(dir, "corrupt.mcap"),
	}
	if err := experiment.WritePendulumMCAP(d.Whole, trs, &experiment.PendulumMCAPOptions{
		Writer: &logio.ROS2WriterOptions{Compression: "none", ChunkSize: 4 << 10},
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(d.Whole)
	if err != nil {
		t.Fatal(err)
	}
	r, err := mcap.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	info, err := r.Info()
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ChunkIndexes) < 3 {
		t.Fatalf("livetest: %s has %d chunks; the damaged copies need at least 3", d.Whole, len(info.ChunkIndexes))
	}
	ci := info.ChunkIndexes[len(info.ChunkIndexes)/2]
	cut := ci.ChunkStartOffset + ci.ChunkLength/2
	// The data-end record (opcode, length 4, CRC) ends where the summary
	// starts.
	const dataEndLen = 1 + 8 + 4
	dataEnd := int(info.Footer.SummaryStart) - dataEndLen
	if dataEnd < 0 || raw[dataEnd] != byte(mcap.OpDataEnd) {
		t.Fatalf("livetest: no data-end record before the summary of %s at %d", d.Whole, info.Footer.SummaryStart)
	}
	const footerLen = 1 + 8 + 20 + len(logio.MCAPMagic)
	// An uncompressed chunk's records start after its opcode and length,
	// start and end times, uncompressed size, CRC, the empty compression
	// string and the records' length: 1+8+8+8+8+4+4+8 bytes.
	corrupt := bytes.Clone(raw)
	rec := ci.ChunkStartOffset + 49
	if ci.Compression != "" || corrupt[rec] != byte(mcap.OpSchema) && corrupt[rec] != byte(mcap.OpChannel) && corrupt[rec] != byte(mcap.OpMessage) {
		t.Fatalf("livetest: chunk at %d of %s: compression %q, first record opcode %#x", ci.ChunkStartOffset, d.Whole, ci.Compression, corrupt[rec])
	}
	binary.LittleEndian.PutUint64(corrupt[rec+1:], 1<<50)
	for path, data := range map[string][]byte{
		d.MidChunk:  raw[:cut],
		d.NoSummary: raw[:dataEnd],
		d.NoFooter:  raw[:len(raw)-footerLen],
		d.Corrupt:   corrupt,
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d.Messages = countMessages(t, d.Whole, nil)
	d.MidChunkMessages = countMessages(t, d.MidChunk, logio.ErrTruncated)
	if d.MidChunkMessages == 0 || d.MidChunkMessages >= d.Messages {
		t.Fatalf("livetest: the cut log holds %d of %d messages", d.MidChunkMessages, d.Messages)
	}
	if n := countMessages(t, d.Corrupt, logio.ErrTooLarge); n == 0 || n >= d.Messages {
		t.Fatalf("livetest: the corrupt log yields %d of %d messages", n, d.Messages)
	}
	return d
}

// countMessages reads a log to its end and counts its messages; the
// reader must end with want (nil: io.EOF).
func countMessages(t testing.TB, path string, want error) int {
	t.Helper()
	r, err := logio.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) && want == nil {
			return n
		}
		if err != nil {
			if want == nil || !errors.Is(err, want) {
				t.Fatalf("livetest: %s: %v, want %v", path, err, want)
			}
			return n
		}
		n++
	}
}
