package logio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// smallParquet returns a parquet file of pqRows(n), written with opts.
func smallParquet(tb testing.TB, n int, opts ...parquet.WriterOption) []byte {
	rows, _ := pqRows(n)
	return writeParquet(tb, rows, opts...)
}

// drainTable reads a table to its end or its first error, which must be one
// of the package's (never a panic); it returns the rows read.
func drainTable(t *testing.T, tab Table) int {
	t.Helper()
	row := make([]float64, len(tab.Columns()))
	for n := 0; ; n++ {
		err := tab.Next(row)
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			if err2 := tab.Next(row); err2 == nil {
				t.Fatalf("Next succeeded after error %v", err)
			}
			return n
		}
	}
}

// FuzzParquetTable feeds arbitrary bytes to the parquet reader: it must
// return an error or rows, never panic, and never return more rows than
// the file declares.
func FuzzParquetTable(f *testing.F) {
	f.Add(smallParquet(f, 20))
	f.Add(smallParquet(f, 20, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(7), parquet.PageBufferSize(64)))
	f.Add(smallParquet(f, 20, parquet.Compression(&parquet.Zstd), parquet.PageBufferSize(64)))
	f.Add(smallParquet(f, 20, parquet.Compression(&parquet.Lz4Raw), parquet.PageBufferSize(64)))
	f.Add(smallParquet(f, 20, parquet.Compression(&parquet.Gzip), parquet.DataPageVersion(1)))
	f.Add(smallParquet(f, 20, parquet.Compression(&parquet.Brotli)))
	f.Add([]byte("PAR1PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := NewParquetTable(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", nil)
		if err != nil {
			return
		}
		defer tab.Close()
		if n := drainTable(t, tab); int64(n) > tab.NumRows() {
			t.Fatalf("%d rows read, the file declares %d", n, tab.NumRows())
		}
	})
}

// FuzzCSVTable feeds arbitrary bytes to the CSV reader, with and without a
// header: an error or rows, never a panic.
func FuzzCSVTable(f *testing.F) {
	f.Add([]byte("t,x,y\n0,1,2\n0.01,1.5,nan\n"), true)
	f.Add([]byte("0;1;2\n1;2\n"), false)
	f.Add([]byte("t,\"x\ny\",z\n1,2,3"), true)
	f.Fuzz(func(t *testing.T, data []byte, header bool) {
		tab, err := OpenCSV(writeFile(t, "f.csv", string(data)), &CSVOptions{Header: header})
		if err != nil {
			return
		}
		defer tab.Close()
		drainTable(t, tab)
	})
}

// TestParquetCodecs reads a file written uncompressed and with each
// compression codec the parquet library writes, in data pages of both
// versions and many pages per chunk, and checks that each reads the values
// written: the page checks pass every valid page.
func TestParquetCodecs(t *testing.T) {
	read := func(data []byte) [][]float64 {
		tab, err := NewParquetTable(bytes.NewReader(data), int64(len(data)), "x.parquet", &ParquetOptions{MaxPageSize: 4 << 10})
		return readAllRows(t, tab, err)
	}
	rows, want := pqRows(300)
	sameRows(t, read(writeParquet(t, rows)), want)
	for _, c := range []struct {
		name  string
		codec parquet.WriterOption
	}{
		{"snappy", parquet.Compression(&parquet.Snappy)},
		{"zstd", parquet.Compression(&parquet.Zstd)},
		{"lz4_raw", parquet.Compression(&parquet.Lz4Raw)},
		{"gzip", parquet.Compression(&parquet.Gzip)},
		{"brotli", parquet.Compression(&parquet.Brotli)},
	} {
		for _, v := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s v%d", c.name, v), func(t *testing.T) {
				sameRows(t, read(writeParquet(t, rows, c.codec, parquet.DataPageVersion(v), parquet.PageBufferSize(256), parquet.MaxRowsPerRowGroup(128))), want)
			})
		}
	}
	t.Run("page over the limit", func(t *testing.T) {
		data := smallParquet(t, 3000, parquet.Compression(&parquet.Zstd))
		tab, err := NewParquetTable(bytes.NewReader(data), int64(len(data)), "x.parquet", &ParquetOptions{MaxPageSize: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if _, err := readTable(t, tab); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "MaxPageSize") {
			t.Fatalf("error %v", err)
		}
	})
}

// TestParquetCorruptSizes corrupts the size fields the parquet library
// would allocate by (the footer length, a page's compressed and uncompressed
// sizes) and checks that the reader says so, naming the field, and
// allocates little; and that a panic of the library is an error.
func TestParquetCorruptSizes(t *testing.T) {
	good := smallParquet(t, 20)
	pf, err := parquet.OpenFile(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	// The first page header of the first column, re-encoded with a size.
	md := pf.Metadata().RowGroups[0].Columns[0].MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	var proto thrift.CompactProtocol
	r := proto.NewReaderFromBytes(good[start:])
	var h format.PageHeader
	if err := thrift.NewDecoder(r).Decode(&h); err != nil {
		t.Fatal(err)
	}
	withHeader := func(edit func(*format.PageHeader)) []byte {
		h2 := h
		edit(&h2)
		enc, err := thrift.Marshal(&proto, &h2)
		if err != nil {
			t.Fatal(err)
		}
		out := append([]byte(nil), good[:start]...)
		out = append(out, enc...)
		return append(out, good[start+int64(r.BytesRead()):]...)
	}
	footer := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(footer[len(footer)-8:], 0x7fff_fff0)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"footer length", string(footer), "footer claims 2147483632 bytes"},
		{"compressed page size", string(withHeader(func(h *format.PageHeader) { h.CompressedPageSize = 1_900_000_000 })), "claims 1900000000 bytes"},
		{"uncompressed page size", string(withHeader(func(h *format.PageHeader) { h.UncompressedPageSize = 1_900_000_000 })), "1900000000 bytes uncompressed"},
		{"not parquet", "PAR1 this is not parquet at all", "not a parquet file"},
		{"too short", "PAR1PAR1", "too few"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			path := writeFile(t, "bad.parquet", tc.data)
			tab, err := OpenParquet(path, nil)
			if err == nil {
				defer tab.Close()
				row := make([]float64, len(tab.Columns()))
				err = tab.Next(row)
			}
			runtime.ReadMemStats(&m1)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.parquet") {
				t.Fatalf("error %v, want ErrCorrupt saying %q", err, tc.want)
			}
			if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
				t.Fatalf("allocated %d MB reading a corrupt file of %d bytes", a>>20, len(tc.data))
			}
		})
	}
}
