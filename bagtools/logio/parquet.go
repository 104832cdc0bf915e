package logio

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// ParquetOptions configures OpenParquet, which takes a *ParquetOptions. A
// nil pointer, like the zero value, selects every column that is not
// repeated.
type ParquetOptions struct {
	// Columns selects these columns, by name (a nested column's path joined
	// with "."), in this order; empty selects every column that is not
	// repeated.
	Columns []string
	// MaxPageSize caps the size in bytes of one page, compressed or not, and
	// the values it may declare (0 means DefaultMaxRecordSize). Every page
	// header of a selected column chunk is checked against it, and against
	// the chunk's extent in the file, before the chunk is read, so a corrupt
	// size field yields an error wrapping ErrCorrupt instead of an
	// allocation of the size it claims.
	MaxPageSize int
}

// ParquetTable streams a parquet file row group by row group and, within a
// row group, page by page, reading only the selected columns. Nulls read as
// NaN; booleans as 0 and 1; integers, floats and doubles as their value;
// timestamps and times as seconds (since the Unix epoch for timestamps);
// dates as seconds since the epoch; decimals scaled; int96 timestamps as
// seconds since the epoch; byte arrays are parsed as decimal text (NaN
// where they are not numbers).
type ParquetTable struct {
	path  string
	r     io.ReaderAt
	c     io.Closer     // the file OpenParquet opened; nil for NewParquetTable
	size  int64         // file size
	max   int64         // page size limit (ParquetOptions.MaxPageSize)
	hdr   []byte        // page header buffer of checkChunk
	body  []byte        // page body buffer of checkPageData
	out   []byte        // LZ4 output buffer of decompressedSize
	zstd  *zstd.Decoder // checkPageData's, made on the first zstd page
	pf    *parquet.File
	names []string
	cols  []*pqColumn
	group int   // current row group
	left  int64 // rows left in the current row group
	row   int64 // rows returned so far
	grow  int64 // rows returned so far in the current row group
	nans  nanTally
	err   error
}

// pqColumn is the read state of one selected column.
type pqColumn struct {
	name   string
	index  int // leaf column index
	kind   parquet.Kind
	scale  float64 // value multiplier (time units, decimals); 1 otherwise
	int96  bool    // int96 timestamp
	uint   bool    // unsigned integer
	pages  parquet.Pages
	page   parquet.Page
	values parquet.ValueReader
	buf    []parquet.Value
	pos, n int
}

// OpenParquet opens the parquet file at path; opts may be nil for the
// defaults. A missing column yields an error wrapping ErrMissingColumn that
// lists the available ones.
func OpenParquet(path string, opts *ParquetOptions) (*ParquetTable, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("parquet: %w", err)
	}
	t, err := NewParquetTable(f, st.Size(), path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.c = f
	return t, nil
}

// NewParquetTable reads the parquet file of size bytes in r, as OpenParquet
// reads one on disk; name names it in errors. Close does not close r.
func NewParquetTable(r io.ReaderAt, size int64, name string, opts *ParquetOptions) (*ParquetTable, error) {
	var o ParquetOptions
	if opts != nil {
		o = *opts
	}
	return newParquet(name, r, size, o)
}

func newParquet(path string, r io.ReaderAt, size int64, o ParquetOptions) (t *ParquetTable, err error) {
	defer func() {
		// The library panics on some corrupt footers and schemas (a MAP
		// annotation on a leaf, for one).
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("parquet: %s: %w: the parquet reader failed: %v", path, ErrCorrupt, p)
		}
	}()
	pf, err := openParquetFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("parquet: %s: %w: %w", path, ErrCorrupt, err)
	}
	var rows int64
	for i, rg := range pf.Metadata().RowGroups {
		if rg.NumRows < 0 || rg.NumRows > math.MaxInt64-rows {
			return nil, fmt.Errorf("parquet: %s: row group %d has %d rows: %w", path, i, rg.NumRows, ErrCorrupt)
		}
		rows += rg.NumRows
	}
	if n := pf.Metadata().NumRows; n != rows {
		return nil, fmt.Errorf("parquet: %s: the footer says %d rows, its row groups hold %d: %w", path, n, rows, ErrCorrupt)
	}
	leaves := map[string]*parquet.Column{}
	var order []string
	var walk func(c *parquet.Column)
	walk = func(c *parquet.Column) {
		if c.Leaf() {
			name := strings.Join(c.Path(), ".")
			leaves[name] = c
			order = append(order, name)
			return
		}
		for _, ch := range c.Columns() {
			walk(ch)
		}
	}
	walk(pf.Root())
	t = &ParquetTable{path: path, r: r, size: size, pf: pf, group: -1, max: int64(cmp.Or(o.MaxPageSize, DefaultMaxRecordSize))}
	names := o.Columns
	if len(names) == 0 {
		for _, name := range order {
			if leaves[name].MaxRepetitionLevel() == 0 {
				names = append(names, name)
			}
		}
	}
	for _, name := range names {
		c := leaves[name]
		if c == nil {
			return nil, fmt.Errorf("parquet: %s: %w", path, missingColumn(name, order))
		}
		if c.MaxRepetitionLevel() > 0 {
			return nil, fmt.Errorf("parquet: %s: column %q is repeated (a list); only flat columns are read: %w", path, name, ErrUnsupported)
		}
		pc := &pqColumn{name: name, index: c.Index(), kind: c.Type().Kind(), scale: 1, buf: make([]parquet.Value, 256)}
		describeParquetColumn(pc, c.Type())
		t.cols = append(t.cols, pc)
		t.names = append(t.names, name)
	}
	t.nans = newNaNTally(t.names)
	return t, nil
}

// openParquetFile opens the parquet file of r (size bytes) without its page
// indexes and bloom filters. It checks the magic numbers and that the footer
// fits the file first (the library allocates the footer length it reads).
func openParquetFile(r io.ReaderAt, size int64) (*parquet.File, error) {
	const magic = "PAR1"
	if size < 12 {
		return nil, fmt.Errorf("%d bytes are too few for a parquet file", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, err
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, err
	}
	if string(head[:]) != magic || string(tail[4:]) != magic {
		return nil, fmt.Errorf("not a parquet file (it neither starts nor ends with %q)", magic)
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return nil, fmt.Errorf("the footer claims %d bytes, the file has %d", n, size)
	}
	return parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
}

// checkChunk walks the page headers of column c's chunk in the current row
// group, the extent the parquet library will read, and checks each page's
// sizes and value count against the chunk's extent, its value count and the
// page size limit, so that no corrupt field makes the library allocate what
// it claims.
func (t *ParquetTable) checkChunk(c *pqColumn) error {
	rgs := t.pf.Metadata().RowGroups
	if t.group >= len(rgs) || c.index >= len(rgs[t.group].Columns) {
		return fmt.Errorf("row group has no metadata for leaf %d: %w", c.index, ErrCorrupt)
	}
	cc := &rgs[t.group].Columns[c.index]
	if cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0 {
		return fmt.Errorf("encrypted column chunks are not read: %w", ErrUnsupported)
	}
	md := &cc.MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	if start < 0 || md.TotalCompressedSize < 0 || md.TotalCompressedSize > t.size-start || md.NumValues < 0 {
		return fmt.Errorf("column chunk at offset %d of %d bytes with %d values does not fit the file of %d bytes: %w",
			start, md.TotalCompressedSize, md.NumValues, t.size, ErrCorrupt)
	}
	var proto thrift.CompactProtocol
	end, values := start+md.TotalCompressedSize, int64(0)
	for pos := start; pos < end && values < md.NumValues; {
		var h format.PageHeader
		n, err := t.readPageHeader(&proto, &h, pos, end)
		if err != nil {
			return fmt.Errorf("page header at offset %d: %w: %w", pos, ErrCorrupt, err)
		}
		nv := int64(-1)
		switch {
		case h.DataPageHeader.Valid:
			nv = int64(h.DataPageHeader.V.NumValues)
			values += nv
		case h.DataPageHeaderV2.Valid:
			nv = int64(h.DataPageHeaderV2.V.NumValues)
			values += nv
		case h.DictionaryPageHeader.Valid:
			nv = int64(h.DictionaryPageHeader.V.NumValues)
		}
		body := int64(h.CompressedPageSize)
		switch {
		case h.UncompressedPageSize < 0 || int64(h.UncompressedPageSize) > t.max:
			return fmt.Errorf("page at offset %d claims %d bytes uncompressed, more than the limit of %d (ParquetOptions.MaxPageSize): %w", pos, h.UncompressedPageSize, t.max, ErrCorrupt)
		case nv > t.max:
			return fmt.Errorf("page at offset %d claims %d values, more than the limit of %d (ParquetOptions.MaxPageSize): %w", pos, nv, t.max, ErrCorrupt)
		case nv < 0 && !h.IndexPageHeader.Valid:
			return fmt.Errorf("page at offset %d has no header of its type %v or a negative value count: %w", pos, h.Type, ErrCorrupt)
		case body < 0 || body > end-pos-n:
			return fmt.Errorf("page at offset %d claims %d bytes, %d are left in the column chunk: %w", pos, body, end-pos-n, ErrCorrupt)
		}
		if err := t.checkPageData(md.Codec, &h, pos+n, body); err != nil {
			return fmt.Errorf("page at offset %d: %w", pos, err)
		}
		pos += n + body
	}
	if values > md.NumValues {
		return fmt.Errorf("pages hold %d values, the column chunk %d: %w", values, md.NumValues, ErrCorrupt)
	}
	return nil
}

// checkPageData checks that the compressed part of the page whose header
// is h and whose body is the size bytes at pos decompresses to the size the
// header gives, decompressing it with a decoder bounded by that size. The
// parquet library sizes its buffers by what the compressed stream claims
// (snappy's length prefix, zstd's frame size) or grows them while the
// decoder fails (LZ4, without bound), so a corrupt page must not reach it.
// Snappy is checked by its length prefix alone; the other codecs are
// decompressed twice, here and by the library.
func (t *ParquetTable) checkPageData(codec format.CompressionCodec, h *format.PageHeader, pos, size int64) error {
	if codec == format.Uncompressed || h.IndexPageHeader.Valid {
		return nil
	}
	var levels int64
	if v2 := h.DataPageHeaderV2; v2.Valid {
		if v2.V.IsCompressed.Valid && !v2.V.IsCompressed.V {
			return nil
		}
		levels = int64(v2.V.RepetitionLevelsByteLength) + int64(v2.V.DefinitionLevelsByteLength)
	}
	want := int64(h.UncompressedPageSize) - levels
	if levels < 0 || levels > size || want < 0 {
		return fmt.Errorf("%d bytes of levels do not fit the page of %d bytes (%d uncompressed): %w", levels, size, h.UncompressedPageSize, ErrCorrupt)
	}
	if int64(cap(t.body)) < size-levels {
		t.body = make([]byte, size-levels)
	}
	src := t.body[:size-levels]
	if _, err := t.r.ReadAt(src, pos+levels); err != nil {
		return fmt.Errorf("reading the page: %w", err)
	}
	got, err := t.decompressedSize(codec, src, want)
	if err != nil {
		return fmt.Errorf("%v data does not decompress: %w: %w", codec, ErrCorrupt, err)
	}
	if got != want {
		return fmt.Errorf("%v data decompresses to %d bytes or more, the header says %d: %w", codec, got, want, ErrCorrupt)
	}
	return nil
}

// decompressedSize returns the size src decompresses to with codec, or
// want+1 where it is more; its LZ4 buffer holds at most want bytes, and the
// zstd decoder it keeps in t.zstd allocates at most t.max bytes.
func (t *ParquetTable) decompressedSize(codec format.CompressionCodec, src []byte, want int64) (int64, error) {
	switch codec {
	case format.Snappy:
		n, err := snappy.DecodedLen(src)
		return int64(n), err
	case format.Lz4Raw:
		// The block decoder fails when the output does not fit.
		if int64(cap(t.out)) < want {
			t.out = make([]byte, want)
		}
		n, err := lz4.UncompressBlock(src, t.out[:want])
		if err != nil {
			return want + 1, nil
		}
		return int64(n), nil
	case format.Zstd:
		if t.zstd == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(t.max)))
			if err != nil {
				return 0, err
			}
			t.zstd = d
		}
		r := t.zstd
		if err := r.Reset(bytes.NewReader(src)); err != nil {
			return 0, err
		}
		return io.Copy(io.Discard, io.LimitReader(r, want+1))
	case format.Gzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return 0, err
		}
		return io.Copy(io.Discard, io.LimitReader(r, want+1))
	case format.Brotli:
		return io.Copy(io.Discard, io.LimitReader(brotli.NewReader(bytes.NewReader(src)), want+1))
	default:
		return 0, fmt.Errorf("compression codec %v: %w", codec, ErrUnsupported)
	}
}

// readPageHeader decodes the page header at pos (before end) into h and
// returns its length in bytes. It reads 4 KiB, then more as the header needs,
// up to 1 MiB.
func (t *ParquetTable) readPageHeader(proto *thrift.CompactProtocol, h *format.PageHeader, pos, end int64) (int64, error) {
	const maxHeader = 1 << 20
	for size := int64(4 << 10); ; size *= 16 {
		size = min(size, end-pos, maxHeader)
		if int64(cap(t.hdr)) < size {
			t.hdr = make([]byte, size)
		}
		buf := t.hdr[:size]
		if _, err := t.r.ReadAt(buf, pos); err != nil {
			return 0, err
		}
		*h = format.PageHeader{}
		r := proto.NewReaderFromBytes(buf)
		err := thrift.NewDecoder(r).Decode(h)
		if err == nil {
			return int64(r.BytesRead()), nil
		}
		if size == end-pos || size == maxHeader || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			return 0, err
		}
	}
}

// describeParquetColumn sets the conversion of a column from its logical or
// converted type.
func describeParquetColumn(pc *pqColumn, typ parquet.Type) {
	if pc.kind == parquet.Int96 {
		pc.int96 = true
	}
	if lt := typ.LogicalType(); lt != nil && lt.Value != nil {
		switch v := lt.Value.(type) {
		case *format.TimestampType:
			pc.scale = unitSeconds(&v.Unit)
		case *format.TimeType:
			pc.scale = unitSeconds(&v.Unit)
		case *format.DateType:
			pc.scale = 86400
		case *format.DecimalType:
			pc.scale = math.Pow(10, -float64(v.Scale))
		case *format.IntType:
			pc.uint = !v.IsSigned
		}
		return
	}
	if ct := typ.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.TimestampMillis, deprecated.TimeMillis:
			pc.scale = 1e-3
		case deprecated.TimestampMicros, deprecated.TimeMicros:
			pc.scale = 1e-6
		case deprecated.Date:
			pc.scale = 86400
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			pc.uint = true
		}
	}
}

func unitSeconds(u *format.TimeUnit) float64 {
	if u == nil || u.Value == nil {
		return 1
	}
	return u.Value.Duration().Seconds()
}

// Columns returns the names of the columns Next fills.
func (t *ParquetTable) Columns() []string { return t.names }

// NumRows returns the number of rows in the file.
func (t *ParquetTable) NumRows() int64 { return t.pf.NumRows() }

// Next fills row with the next row; see Table.Next. A panic of the parquet
// library on corrupt bytes is returned as an error wrapping ErrCorrupt.
func (t *ParquetTable) Next(row []float64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			t.err = fmt.Errorf("parquet: %s: row group %d, row %d: %w: the parquet reader failed: %v", t.path, t.group, t.grow, ErrCorrupt, p)
			err = t.err
		}
	}()
	return t.next(row)
}

// next is Next.
func (t *ParquetTable) next(row []float64) error {
	if t.err != nil {
		return t.err
	}
	if len(row) < len(t.cols) {
		return fmt.Errorf("parquet: %s: row buffer holds %d values, the table has %d columns", t.path, len(row), len(t.cols))
	}
	for t.left == 0 {
		if err := t.nextGroup(); err != nil {
			t.err = err
			return err
		}
	}
	for j, c := range t.cols {
		v, err := c.next()
		if err != nil {
			t.err = fmt.Errorf("parquet: %s: row group %d, row %d, column %q: %w", t.path, t.group, t.grow, c.name, err)
			return t.err
		}
		x, bad := c.convert(v)
		if math.IsNaN(x) && (v.IsNull() || bad != "") {
			t.nans.add(j, t.row, bad)
		}
		row[j] = x
	}
	t.left--
	t.row++
	t.grow++
	return nil
}

// nextGroup moves to the next row group, or returns io.EOF after the last.
func (t *ParquetTable) nextGroup() error {
	t.closePages()
	groups := t.pf.RowGroups()
	t.group++
	if t.group >= len(groups) {
		return io.EOF
	}
	rg := groups[t.group]
	chunks := rg.ColumnChunks()
	for _, c := range t.cols {
		if c.index < 0 || c.index >= len(chunks) {
			return fmt.Errorf("parquet: %s: row group %d has %d column chunks, column %q is leaf %d: %w", t.path, t.group, len(chunks), c.name, c.index, ErrCorrupt)
		}
		if err := t.checkChunk(c); err != nil {
			return fmt.Errorf("parquet: %s: row group %d, column %q: %w", t.path, t.group, c.name, err)
		}
		c.pages = chunks[c.index].Pages()
	}
	t.left = rg.NumRows()
	t.grow = 0
	return nil
}

// next returns the column's next value, reading pages as needed.
func (c *pqColumn) next() (parquet.Value, error) {
	for c.pos == c.n {
		if c.values == nil {
			if c.page != nil {
				parquet.Release(c.page)
				c.page = nil
			}
			p, err := c.pages.ReadPage()
			if errors.Is(err, io.EOF) {
				return parquet.Value{}, fmt.Errorf("column chunk ends before the row group's last row: %w", ErrCorrupt)
			}
			if err != nil {
				return parquet.Value{}, fmt.Errorf("read page: %w", err)
			}
			c.page = p
			c.values = p.Values()
		}
		n, err := c.values.ReadValues(c.buf)
		c.pos, c.n = 0, n
		if errors.Is(err, io.EOF) {
			c.values = nil
		} else if err != nil {
			return parquet.Value{}, fmt.Errorf("read values: %w", err)
		}
	}
	v := c.buf[c.pos]
	c.pos++
	return v, nil
}

// convert returns a value as float64; for a value that is not a number it
// returns NaN and its text.
func (c *pqColumn) convert(v parquet.Value) (float64, string) {
	if v.IsNull() {
		return math.NaN(), ""
	}
	var x float64
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			x = 1
		}
	case parquet.Int32:
		if c.uint {
			x = float64(v.Uint32())
		} else {
			x = float64(v.Int32())
		}
	case parquet.Int64:
		if c.uint {
			x = float64(v.Uint64())
		} else {
			x = float64(v.Int64())
		}
	case parquet.Int96:
		// Legacy timestamp: nanoseconds of the day, then the Julian day.
		i := v.Int96()
		nanos := uint64(i[0]) | uint64(i[1])<<32
		return float64(int64(i[2])-2440588)*86400 + float64(nanos)*1e-9, ""
	case parquet.Float:
		x = float64(v.Float())
	case parquet.Double:
		x = v.Double()
	case parquet.ByteArray, parquet.FixedLenByteArray:
		s := strings.TrimSpace(string(v.ByteArray()))
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if s == "" {
				s = `""`
			}
			return math.NaN(), s
		}
		return f, ""
	default:
		return math.NaN(), v.String()
	}
	return x * c.scale, ""
}

func (t *ParquetTable) closePages() {
	for _, c := range t.cols {
		if c.page != nil {
			parquet.Release(c.page)
			c.page = nil
		}
		if c.pages != nil {
			c.pages.Close()
			c.pages = nil
		}
		c.values, c.pos, c.n = nil, 0, 0
	}
}

// NaNCounts reports the columns that had nulls or non-numeric values.
func (t *ParquetTable) NaNCounts() []NaNCount { return t.nans.report() }

// Close closes the file.
func (t *ParquetTable) Close() error {
	t.closePages()
	if t.err == nil {
		t.err = errClosed
	}
	t.r = nil
	if t.zstd != nil {
		t.zstd.Close()
		t.zstd = nil
	}
	if t.c == nil {
		return nil
	}
	c := t.c
	t.c = nil
	return c.Close()
}
