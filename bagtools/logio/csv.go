package logio

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// CSVOptions configures OpenCSV, which takes a *CSVOptions. A nil pointer,
// like the zero value, reads a comma-separated file without a header line,
// naming its columns col1, col2, ...
type CSVOptions struct {
	// Header says that the first line names the columns.
	Header bool
	// Columns, with Header, selects these columns (by name, in this order);
	// empty selects all. Without Header it names the file's columns and must
	// have one name per field; empty names them col1, col2, ...
	Columns []string
	// Comma is the field separator; 0 means ','.
	Comma rune
}

// CSVTable streams a CSV file of numbers row by row. Fields are parsed with
// strconv.ParseFloat after trimming spaces; an empty or non-numeric field
// reads as NaN and is counted in NaNCounts.
type CSVTable struct {
	path    string
	f       *os.File
	r       *csv.Reader
	size    int64
	lastNL  bool // the file ends with a newline
	width   int  // fields per row
	names   []string
	pick    []int    // field index of each selected column
	pending []string // first data row, read to learn the width
	row     int64    // data rows returned so far
	line    int      // line of the last row returned
	nans    nanTally
	err     error
}

// OpenCSV opens the CSV file at path. A row with a different number of
// fields from the header (or, without one, from the first row) yields an
// error naming its line and wrapping ErrRaggedRow, and also ErrTruncated
// when it is the file's last line and lacks its newline (a file cut short).
// opts may be nil for the defaults.
func OpenCSV(path string, opts *CSVOptions) (*CSVTable, error) {
	var o CSVOptions
	if opts != nil {
		o = *opts
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	t, err := newCSV(path, f, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

func newCSV(path string, f *os.File, opts CSVOptions) (*CSVTable, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("csv: %w", err)
	}
	t := &CSVTable{path: path, f: f, size: st.Size()}
	if t.size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], t.size-1); err != nil {
			return nil, fmt.Errorf("csv: %s: %w", path, err)
		}
		t.lastNL = last[0] == '\n'
	}
	t.r = csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	if opts.Comma != 0 {
		t.r.Comma = opts.Comma
	}
	t.r.FieldsPerRecord = -1
	t.r.TrimLeadingSpace = true
	t.r.ReuseRecord = true
	first, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("csv: %s: file is empty", path)
	}
	if err != nil {
		return nil, fmt.Errorf("csv: %s: %w", path, err)
	}
	t.width = len(first)
	var all []string
	if opts.Header {
		for _, h := range first {
			all = append(all, strings.TrimSpace(h))
		}
	} else {
		t.pending = append([]string(nil), first...)
		switch {
		case len(opts.Columns) == 0:
			for i := range first {
				all = append(all, "col"+strconv.Itoa(i+1))
			}
		case len(opts.Columns) != t.width:
			return nil, fmt.Errorf("csv: %s line 1: %d fields but %d column names given", path, t.width, len(opts.Columns))
		default:
			all = append(all, opts.Columns...)
		}
	}
	if opts.Header && len(opts.Columns) > 0 {
		for _, name := range opts.Columns {
			i := indexOf(all, name)
			if i < 0 {
				return nil, fmt.Errorf("csv: %s: %w", path, missingColumn(name, all))
			}
			t.pick = append(t.pick, i)
			t.names = append(t.names, name)
		}
	} else {
		for i := range all {
			t.pick = append(t.pick, i)
		}
		t.names = all
	}
	t.nans = newNaNTally(t.names)
	return t, nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// Columns returns the names of the columns Next fills.
func (t *CSVTable) Columns() []string { return t.names }

// Next fills row with the next data row; see Table.Next.
func (t *CSVTable) Next(row []float64) error {
	if t.err != nil {
		return t.err
	}
	if len(row) < len(t.names) {
		return fmt.Errorf("csv: %s: row buffer holds %d values, the table has %d columns", t.path, len(row), len(t.names))
	}
	rec := t.pending
	line := 1
	if rec != nil {
		t.pending = nil
	} else {
		var err error
		rec, err = t.r.Read()
		if errors.Is(err, io.EOF) {
			t.err = io.EOF
			return t.err
		}
		if err != nil {
			t.err = fmt.Errorf("csv: %s: %w", t.path, err)
			return t.err
		}
		line, _ = t.r.FieldPos(0)
	}
	if len(rec) != t.width {
		t.err = fmt.Errorf("csv: %s line %d: %d fields, want %d: %w", t.path, line, len(rec), t.width, ErrRaggedRow)
		if !t.lastNL && t.r.InputOffset() == t.size {
			t.err = fmt.Errorf("csv: %s line %d: last line is cut short (%d fields, want %d, no final newline): %w: %w",
				t.path, line, len(rec), t.width, ErrTruncated, ErrRaggedRow)
		}
		return t.err
	}
	for j, i := range t.pick {
		s := strings.TrimSpace(rec[i])
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
				row[j] = v // ±Inf or 0 as ParseFloat rounds
				continue
			}
			v = math.NaN()
			t.nans.add(j, t.row, s)
		}
		row[j] = v
	}
	t.row++
	t.line = line
	return nil
}

// Line returns the line (counting from 1) on which the row Next returned
// last starts; 0 before the first row.
func (t *CSVTable) Line() int { return t.line }

// Unterminated reports whether the file does not end with a newline: its
// last line, returned as a row when it has every field, may have been cut
// inside its last field (a value with digits missing), which nothing else
// in the file can tell.
func (t *CSVTable) Unterminated() bool { return t.size > 0 && !t.lastNL }

// NaNCounts reports the columns that had empty or non-numeric fields.
func (t *CSVTable) NaNCounts() []NaNCount { return t.nans.report() }

// Close closes the file.
func (t *CSVTable) Close() error {
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
