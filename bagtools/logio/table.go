package logio

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the table readers.
var (
	// ErrRaggedRow reports a CSV row whose field count differs from the
	// header's (or the first row's).
	ErrRaggedRow = errors.New("row has the wrong number of fields")
	// ErrMissingColumn reports a requested column the table does not have.
	ErrMissingColumn = errors.New("no such column")
)

// Table streams the rows of a column table (CSV or parquet) as float64.
//
// Cells that are null, empty or not numeric are read as NaN; NaNCounts says
// which columns had them. Booleans read as 0 and 1; timestamps as seconds
// since the Unix epoch.
type Table interface {
	// Columns returns the names of the columns Next fills, in order.
	Columns() []string
	// Next fills row[:len(Columns())] with the next row. It returns io.EOF
	// after the last row, and an error naming the row (for CSV, the line)
	// on a malformed one. row must have room for every column.
	Next(row []float64) error
	// NaNCounts reports, for each column that had any, how many of the
	// cells read so far were null or not numeric and became NaN.
	NaNCounts() []NaNCount
	// Close releases the table and closes its file.
	Close() error
}

// NaNCount reports the cells of one column that were read as NaN because
// they were null, empty or not numeric.
type NaNCount struct {
	// Column is the column name.
	Column string
	// Count is the number of such cells read so far.
	Count int64
	// FirstRow is the 0-based data row of the first such cell.
	FirstRow int64
	// FirstValue is the text of the first such cell; empty for a null.
	FirstValue string
}

// nanTally keeps NaNCounts for a table.
type nanTally struct {
	counts []NaNCount // one per column, Count 0 when clean
}

func newNaNTally(cols []string) nanTally {
	t := nanTally{counts: make([]NaNCount, len(cols))}
	for i, c := range cols {
		t.counts[i].Column = c
	}
	return t
}

func (t *nanTally) add(col int, row int64, value string) {
	c := &t.counts[col]
	if c.Count == 0 {
		c.FirstRow = row
		c.FirstValue = value
	}
	c.Count++
}

func (t *nanTally) report() []NaNCount {
	var out []NaNCount
	for _, c := range t.counts {
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	return out
}

// missingColumn returns an error naming a missing column and listing the
// available ones.
func missingColumn(name string, available []string) error {
	return fmt.Errorf("%w %q (available: %s)", ErrMissingColumn, name, strings.Join(available, ", "))
}
