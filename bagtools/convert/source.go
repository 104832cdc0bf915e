package convert

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/statemap"
)

// ErrMissingChannel reports a channel the source does not have; the error
// lists the ones it has.
var ErrMissingChannel = errors.New("convert: missing channel")

// ErrNaN reports a channel with too many NaN samples.
var ErrNaN = errors.New("convert: NaN samples")

// ErrTime reports a corrupt time value: one so far from the others (1e300
// s, a zero among Unix times) that no clock can span them. The error names
// the file and where the value lies (Locator).
var ErrTime = errors.New("convert: corrupt time value")

// Series is one numeric channel of a source: values and their times.
type Series struct {
	// Name is the channel name.
	Name string
	// Time holds the sample times in seconds on the clock the source was
	// opened with. The origin is free (a table's time column, or the log's
	// start): keep it near the data, since float64 seconds since the Unix
	// epoch resolve only about 0.2 µs. Series of one table share the same
	// slice: treat it as read-only.
	Time []float64
	// Values holds one value per time.
	Values []float64
}

// Source yields named numeric channels with timestamps. Tables (CSV,
// parquet) are sources through TableSource; message logs (MCAP, ROS 1
// bags) through MessageSource, which decodes the configured message paths
// and stamps each value with the header stamp or log time the spec's clock
// selects.
type Source interface {
	// Name identifies the source (its file) in errors and reports.
	Name() string
	// Channels lists the names of the channels Read can return.
	Channels() []string
	// Read returns the named channels in order. A name the source does not
	// have yields an error wrapping ErrMissingChannel that lists Channels.
	Read(names []string) ([]Series, error)
	// Close releases the source.
	Close() error
}

// Warner is implemented by sources that met recoverable damage, such as a
// log cut short whose complete records were kept.
type Warner interface {
	// Warnings returns a description of each problem met so far.
	Warnings() []string
}

// Locator is implemented by sources that can say where a sample lies in
// their file, for errors and warnings about it.
type Locator interface {
	// Locate describes where sample k (an index into the Series Read
	// returned) of the named channel lies: `time column "t" at line 502`
	// for a CSV table, "message 5 on /joint_states" for a message log.
	Locate(channel string, k int) string
}

// Opener opens the log at path as a Source configured by spec (its clock
// and source sections).
type Opener func(path string, spec *Spec) (Source, error)

// OpenTableSource opens CSV and parquet files (chosen by
// spec.Source.Format or the extension) as a TableSource with the spec's
// time column, and refuses message logs, which OpenSource (the default
// Opener) opens as a MessageSource.
func OpenTableSource(path string, spec *Spec) (Source, error) {
	format := spec.Source.Format
	if format == "" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".csv", ".txt":
			format = "csv"
		case ".parquet", ".pq":
			format = "parquet"
		case ".mcap", ".bag":
			return nil, fmt.Errorf("convert: %s files are message logs and need a message-log source (OpenSource, OpenMessageLog); OpenTableSource reads CSV and parquet only", filepath.Ext(path))
		default:
			return nil, fmt.Errorf("convert: cannot tell the format from the extension %q; set source.format", filepath.Ext(path))
		}
	}
	scale := statemap.Channel{Unit: spec.Clock.Unit}.Factor()
	opts := TableOptions{Format: format, TimeColumn: spec.Clock.Column, TimeScale: scale}
	if format == "csv" {
		opts.CSV = logio.CSVOptions{Header: !spec.Source.NoHeader}
		if spec.Source.NoHeader {
			opts.CSV.Columns = spec.Source.Columns
		}
		if spec.Source.Comma != "" {
			opts.CSV.Comma = []rune(spec.Source.Comma)[0]
		}
	}
	return OpenTable(path, opts)
}

// TableOptions configures OpenTable.
type TableOptions struct {
	// Format is "csv" or "parquet".
	Format string
	// TimeColumn names the column holding each row's time.
	TimeColumn string
	// TimeScale converts TimeColumn to seconds (0 means 1).
	TimeScale float64
	// CSV configures CSV files (Header, Columns, Comma).
	CSV logio.CSVOptions
}

// TableSource is a Source over a CSV or parquet table: every column is a
// channel, stamped with the time column. Rows whose time is not finite are
// dropped (and counted in Warnings).
type TableSource struct {
	path     string
	opts     TableOptions
	columns  []string
	warnings []string
}

// OpenTable opens the table at path and reads its column names. A missing
// time column yields an error wrapping ErrMissingChannel that lists the
// columns.
func OpenTable(path string, opts TableOptions) (*TableSource, error) {
	if opts.Format != "csv" && opts.Format != "parquet" {
		return nil, fmt.Errorf("convert: table format %q is not csv or parquet", opts.Format)
	}
	if opts.TimeScale == 0 {
		opts.TimeScale = 1
	}
	t, err := openTable(path, opts, nil)
	if err != nil {
		return nil, err
	}
	cols := slices.Clone(t.Columns())
	t.Close()
	if opts.TimeColumn == "" {
		return nil, fmt.Errorf("convert: no time column set (clock.column); columns: %s", strings.Join(cols, ", "))
	}
	if !slices.Contains(cols, opts.TimeColumn) {
		return nil, fmt.Errorf("%w: time column %q (clock.column) (available: %s)", ErrMissingChannel, opts.TimeColumn, strings.Join(cols, ", "))
	}
	return &TableSource{path: path, opts: opts, columns: cols}, nil
}

func openTable(path string, opts TableOptions, cols []string) (logio.Table, error) {
	if opts.Format == "parquet" {
		t, err := logio.OpenParquet(path, &logio.ParquetOptions{Columns: cols})
		if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
		return t, nil
	}
	o := opts.CSV
	if o.Header {
		o.Columns = cols
	}
	t, err := logio.OpenCSV(path, &o)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	return t, nil
}

// Name returns the table's path.
func (s *TableSource) Name() string { return s.path }

// Channels returns the table's column names.
func (s *TableSource) Channels() []string { return s.columns }

// unterminated is a table that can tell that its file lacks a final
// newline (logio.CSVTable).
type unterminated interface {
	Unterminated() bool
	Line() int
}

// Warnings returns the problems met by Read: a last line cut short (its
// complete rows are kept), a last line without its newline (kept: it may
// be cut inside its last field) or rows without a valid time.
func (s *TableSource) Warnings() []string { return s.warnings }

// Close does nothing: Read opens and closes the file.
func (s *TableSource) Close() error { return nil }

// Read reads the named columns and the time column. A table that ends in a
// line cut short keeps the rows before it and records a warning; any other
// read error is returned with the file and line.
func (s *TableSource) Read(names []string) ([]Series, error) {
	var missing []string
	for _, n := range names {
		if !slices.Contains(s.columns, n) {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: no column %s (available: %s)", ErrMissingChannel, strings.Join(missing, ", "), strings.Join(s.columns, ", "))
	}
	want := uniqueStrings(append([]string{s.opts.TimeColumn}, names...))
	tbl, err := openTable(s.path, s.opts, want)
	if err != nil {
		return nil, err
	}
	defer tbl.Close()
	cols := tbl.Columns()
	index := make(map[string]int, len(cols))
	for i, c := range cols {
		index[c] = i
	}
	ti := index[s.opts.TimeColumn]
	row := make([]float64, len(cols))
	data := make([][]float64, len(cols))
	var badTime int
	for {
		err := tbl.Next(row)
		if errors.Is(err, io.EOF) {
			if u, ok := tbl.(unterminated); ok && u.Unterminated() && len(data[0]) > 0 {
				s.warnings = append(s.warnings, fmt.Sprintf("line %d, the last, has no final newline: the file may be cut inside its last field (a value with digits missing); its row was kept, check it or end the file with a newline", u.Line()))
			}
			break
		}
		if errors.Is(err, logio.ErrTruncated) {
			s.warnings = append(s.warnings, fmt.Sprintf("kept the %d complete rows before a truncated last line: %v", len(data[0]), err))
			break
		}
		if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
		if tv := row[ti]; math.IsNaN(tv) || math.IsInf(tv, 0) {
			badTime++
			continue
		}
		for i, v := range row[:len(cols)] {
			data[i] = append(data[i], v)
		}
	}
	if badTime > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("dropped %d rows without a finite time in column %q", badTime, s.opts.TimeColumn))
	}
	if len(data[ti]) == 0 {
		return nil, fmt.Errorf("convert: %s: no rows with a valid time", s.path)
	}
	t := data[ti]
	if s.opts.TimeScale != 1 {
		t = slices.Clone(t)
		for i := range t {
			t[i] *= s.opts.TimeScale
		}
	}
	out := make([]Series, len(names))
	for i, n := range names {
		out[i] = Series{Name: n, Time: t, Values: data[index[n]]}
	}
	return out, nil
}

// Locate names the time column and the line (CSV) or row (parquet),
// counting from 1, of sample k of any channel: every channel shares the
// rows Read kept, those with a finite time. It reads the time column
// again, so it is meant for errors and warnings.
func (s *TableSource) Locate(_ string, k int) string {
	where := fmt.Sprintf("time column %q at", s.opts.TimeColumn)
	fallback := fmt.Sprintf("%s the %d-th row with a finite time", where, k+1)
	tbl, err := openTable(s.path, s.opts, []string{s.opts.TimeColumn})
	if err != nil {
		return fallback
	}
	defer tbl.Close()
	row := make([]float64, len(tbl.Columns()))
	kept := 0
	for n := 1; ; n++ {
		if tbl.Next(row) != nil {
			return fallback
		}
		if math.IsNaN(row[0]) || math.IsInf(row[0], 0) {
			continue
		}
		if kept == k {
			if c, ok := tbl.(*logio.CSVTable); ok {
				return fmt.Sprintf("%s line %d", where, c.Line())
			}
			return fmt.Sprintf("%s row %d", where, n)
		}
		kept++
	}
}

func uniqueStrings(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
