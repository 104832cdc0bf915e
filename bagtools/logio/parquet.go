package logio

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// ParquetOptions configures OpenParquet, which takes a *ParquetOptions. A
// nil pointer, like the zero value, selects every column that is not
// repeated.
type ParquetOptions struct {
	// Columns selects these columns, by name (a nested column's path joined
	// with "."), in this order; empty selects every column that is not
	// repeated.
	Columns []string
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
	f     *os.File
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
	var o ParquetOptions
	if opts != nil {
		o = *opts
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	t, err := newParquet(path, f, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

func newParquet(path string, f *os.File, o ParquetOptions) (*ParquetTable, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("parquet: %s: %w: %w", path, ErrCorrupt, err)
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
	t := &ParquetTable{path: path, f: f, pf: pf, group: -1}
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

// Next fills row with the next row; see Table.Next.
func (t *ParquetTable) Next(row []float64) error {
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
	if t.f == nil {
		return nil
	}
	f := t.f
	t.f = nil
	return f.Close()
}
