package logio

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/parquet-go/parquet-go"
)

// Both table readers satisfy Table, and both log readers MessageReader.
var (
	_ Table         = (*CSVTable)(nil)
	_ Table         = (*ParquetTable)(nil)
	_ MessageReader = (*MCAPReader)(nil)
	_ MessageReader = (*BagReader)(nil)
)

// readTable reads every row of t.
func readTable(t *testing.T, tab Table) ([][]float64, error) {
	t.Helper()
	var rows [][]float64
	for {
		row := make([]float64, len(tab.Columns()))
		err := tab.Next(row)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

// readAllRows fails the test on the error of opening tab, closes tab when
// the test ends, and returns every row, failing the test on a read error.
func readAllRows[T Table](t *testing.T, tab T, err error) [][]float64 {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	rows, err := readTable(t, tab)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sameRows(t *testing.T, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(got), len(want), got)
	}
	for i := range got {
		for j := range want[i] {
			g, w := got[i][j], want[i][j]
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) && math.Abs(g-w) > 1e-9*math.Abs(w) {
				t.Fatalf("row %d col %d = %v, want %v", i, j, g, w)
			}
		}
	}
}

func TestCSV(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name    string
		content string
		opts    CSVOptions
		cols    []string
		rows    [][]float64
		nans    []NaNCount
		err     error  // from Next
		openErr error  // from OpenCSV
		substr  string // in the error
	}{
		{name: "header", content: "t,x,y\n0,1,2\n0.5,-1e3, 4\n", opts: CSVOptions{Header: true},
			cols: []string{"t", "x", "y"}, rows: [][]float64{{0, 1, 2}, {0.5, -1000, 4}}},
		{name: "select", content: "t,x,y\n0,1,2\n1,3,4\n", opts: CSVOptions{Header: true, Columns: []string{"y", "t"}},
			cols: []string{"y", "t"}, rows: [][]float64{{2, 0}, {4, 1}}},
		{name: "no header", content: "1;2\n3;4\n", opts: CSVOptions{Comma: ';'},
			cols: []string{"col1", "col2"}, rows: [][]float64{{1, 2}, {3, 4}}},
		{name: "named", content: "1,2\n3,4", opts: CSVOptions{Columns: []string{"a", "b"}},
			cols: []string{"a", "b"}, rows: [][]float64{{1, 2}, {3, 4}}},
		{name: "non-numeric", content: "a,b\n1,x\n,2\n3,\n", opts: CSVOptions{Header: true},
			cols: []string{"a", "b"}, rows: [][]float64{{1, nan}, {nan, 2}, {3, nan}},
			nans: []NaNCount{{Column: "a", Count: 1, FirstRow: 1}, {Column: "b", Count: 2, FirstRow: 0, FirstValue: "x"}}},
		{name: "ragged", content: "a,b\n1,2\n3\n4,5\n", opts: CSVOptions{Header: true},
			rows: [][]float64{{1, 2}}, err: ErrRaggedRow, substr: "line 3: 1 fields, want 2"},
		{name: "cut last line", content: "a,b,c\n1,2,3\n4,5", opts: CSVOptions{Header: true},
			rows: [][]float64{{1, 2, 3}}, err: ErrTruncated, substr: "line 3"},
		{name: "missing column", content: "t,x\n1,2\n", opts: CSVOptions{Header: true, Columns: []string{"z"}},
			openErr: ErrMissingColumn, substr: `"z" (available: t, x)`},
		{name: "names count", content: "1,2,3\n", opts: CSVOptions{Columns: []string{"a"}},
			openErr: errAny, substr: "3 fields but 1 column names"},
		{name: "empty", content: "", openErr: errAny, substr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "x.csv", tt.content)
			tab, err := OpenCSV(path, &tt.opts)
			if tt.openErr != nil {
				if err == nil || (tt.openErr != errAny && !errors.Is(err, tt.openErr)) || !strings.Contains(err.Error(), tt.substr) {
					t.Fatalf("open error %v, want %v containing %q", err, tt.openErr, tt.substr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			rows, err := readTable(t, tab)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.substr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want %v containing %q and the path", err, tt.err, tt.substr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tt.cols != nil && strings.Join(tab.Columns(), ",") != strings.Join(tt.cols, ",") {
				t.Errorf("columns %v, want %v", tab.Columns(), tt.cols)
			}
			sameRows(t, rows, tt.rows)
			if got := tab.NaNCounts(); len(got) != len(tt.nans) || (len(got) > 0 && !equalNaNs(got, tt.nans)) {
				t.Errorf("NaNCounts %+v, want %+v", got, tt.nans)
			}
		})
	}
}

func equalNaNs(a, b []NaNCount) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// errAny marks a test that wants some error, not a particular sentinel.
var errAny = errors.New("any error")

func TestCSVMissingFile(t *testing.T) {
	_, err := OpenCSV(filepath.Join(t.TempDir(), "nope.csv"), nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.csv") {
		t.Fatalf("error %v", err)
	}
	_, err = OpenParquet(filepath.Join(t.TempDir(), "nope.parquet"), nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.parquet") {
		t.Fatalf("error %v", err)
	}
}

func TestCSVFixtures(t *testing.T) {
	t.Run("double pendulum", func(t *testing.T) {
		dir := fixtures.Path(t, "double_pendulum_hw", "trajectories")
		files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
		if len(files) == 0 {
			t.Skip("no CSV files")
		}
		tab, err := OpenCSV(files[0], &CSVOptions{Header: true, Columns: []string{"time", "pos_meas1", "vel_meas1", "tau_meas2"}})
		rows := readAllRows(t, tab, err)
		if len(rows) < 1000 || rows[0][0] != 0 {
			t.Fatalf("%d rows, first time %v", len(rows), rows[0][0])
		}
		for i := 1; i < len(rows); i++ {
			if !(rows[i][0] > rows[i-1][0]) {
				t.Fatalf("time not increasing at row %d: %v then %v", i, rows[i-1][0], rows[i][0])
			}
		}
		if n := tab.NaNCounts(); len(n) != 0 {
			t.Errorf("NaNs: %+v", n)
		}
		_, err = OpenCSV(files[0], &CSVOptions{Header: true, Columns: []string{"pos_meas3"}})
		if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "pos_meas1, pos_meas2") {
			t.Errorf("missing column error %v", err)
		}
	})
	t.Run("ur10e", func(t *testing.T) {
		path := fixtures.Path(t, "ur10e", "identification", "ur-19_12_23_free.csv")
		tab, err := OpenCSV(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if n := len(tab.Columns()); n != 31 {
			t.Fatalf("%d columns, want 31", n)
		}
		rows, err := readTable(t, tab)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2036 {
			t.Errorf("%d rows, want 2036", len(rows))
		}
		for i := 1; i < len(rows); i++ {
			if dt := rows[i][0] - rows[i-1][0]; dt <= 0 || dt > 0.05 {
				t.Fatalf("time step %v at row %d", dt, i)
			}
		}
	})
	t.Run("ur10e cut last line", func(t *testing.T) {
		// This file's last line is cut short after 20 of 31 fields.
		path := fixtures.Path(t, "ur10e", "identification", "ur-20_02_19_15harm50secLoad.csv")
		tab, err := OpenCSV(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		rows, err := readTable(t, tab)
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrRaggedRow) || !strings.Contains(err.Error(), "line 6107") {
			t.Fatalf("error %v, want a cut last line 6107", err)
		}
		if len(rows) != 6106 {
			t.Errorf("%d rows before the damage, want 6106", len(rows))
		}
	})
}

func TestParquetFixture(t *testing.T) {
	dir := fixtures.Path(t, "crazyflie", "train")
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if len(files) == 0 {
		t.Skip("no parquet files")
	}
	cols := []string{"t", "x", "y", "z", "qx", "qy", "qz", "qw", "m1_thrust", "m2_thrust", "m3_thrust", "m4_thrust", "yaw", "is_flying"}
	for _, file := range files[:3] {
		t.Run(filepath.Base(file), func(t *testing.T) {
			tab, err := OpenParquet(file, &ParquetOptions{Columns: cols})
			rows := readAllRows(t, tab, err)
			if int64(len(rows)) != tab.NumRows() || len(rows) < 5000 || len(rows) > 8000 {
				t.Fatalf("%d rows (file says %d), want about 6000", len(rows), tab.NumRows())
			}
			for i, r := range rows {
				if math.Abs(r[0]-0.01*float64(i)) > 1e-6 {
					t.Fatalf("row %d: t = %v, want %v", i, r[0], 0.01*float64(i))
				}
				if q := math.Sqrt(r[4]*r[4] + r[5]*r[5] + r[6]*r[6] + r[7]*r[7]); math.Abs(q-1) > 0.05 {
					t.Fatalf("row %d: |q| = %v", i, q)
				}
				if r[13] != 0 && r[13] != 1 {
					t.Fatalf("row %d: is_flying = %v", i, r[13])
				}
			}
		})
	}
	t.Run("all columns", func(t *testing.T) {
		tab, err := OpenParquet(files[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if n := len(tab.Columns()); n < 40 || tab.Columns()[0] != "t" {
			t.Fatalf("columns %v", tab.Columns())
		}
		row := make([]float64, len(tab.Columns()))
		if err := tab.Next(row); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing column", func(t *testing.T) {
		_, err := OpenParquet(files[0], &ParquetOptions{Columns: []string{"t", "m5_thrust"}})
		if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "m4_thrust") || !strings.Contains(err.Error(), `"m5_thrust"`) {
			t.Fatalf("error %v", err)
		}
	})
}

type pqRow struct {
	T     float64   `parquet:"t"`
	I     int32     `parquet:"i"`
	L     *int64    `parquet:"l,optional"`
	B     bool      `parquet:"b"`
	F     float32   `parquet:"f"`
	TS    time.Time `parquet:"ts,timestamp(millisecond)"`
	S     string    `parquet:"s"`
	O     *float64  `parquet:"o,optional"`
	Micro int64     `parquet:"micro,timestamp(microsecond)"`
}

// pqRows returns n rows of every column type the reader converts, and the
// values it must read from them: nulls in l and o, a non-number in s.
func pqRows(n int) ([]pqRow, [][]float64) {
	base := time.Date(2025, 10, 17, 12, 0, 0, 0, time.UTC)
	var rows []pqRow
	var want [][]float64
	nan := math.NaN()
	for i := 0; i < n; i++ {
		r := pqRow{T: 0.01 * float64(i), I: int32(-i), B: i%2 == 1, F: float32(i) / 4,
			TS: base.Add(time.Duration(i) * 10 * time.Millisecond), S: "1.5", Micro: int64(i) * 1500}
		l, o := nan, nan
		if i%3 != 0 {
			v := int64(i) << 33
			r.L = &v
			l = float64(v)
		}
		if i%5 == 0 {
			v := float64(i) * 2
			r.O = &v
			o = v
		}
		if i == 4 {
			r.S = "abc"
		}
		s := 1.5
		if i == 4 {
			s = nan
		}
		b := 0.0
		if r.B {
			b = 1
		}
		rows = append(rows, r)
		want = append(want, []float64{r.T, float64(r.I), l, b, float64(r.F), float64(r.TS.UnixMilli()) / 1e3, s, o, float64(i) * 1500e-6})
	}
	return rows, want
}

// writeParquet returns the parquet file of rows, written with opts.
func writeParquet(tb testing.TB, rows []pqRow, opts ...parquet.WriterOption) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[pqRow](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestParquetTypes(t *testing.T) {
	rows, want := pqRows(50)
	path := writeFile(t, "x.parquet", string(writeParquet(t, rows, parquet.MaxRowsPerRowGroup(7), parquet.PageBufferSize(64))))

	tab, err := OpenParquet(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if got := strings.Join(tab.Columns(), ","); got != "t,i,l,b,f,ts,s,o,micro" {
		t.Fatalf("columns %s", got)
	}
	if len(tab.pf.RowGroups()) < 2 {
		t.Fatalf("%d row groups, want several", len(tab.pf.RowGroups()))
	}
	rows2, err := readTable(t, tab)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, rows2, want)
	nans := tab.NaNCounts()
	wantNaNs := []NaNCount{
		{Column: "l", Count: 17, FirstRow: 0},
		{Column: "s", Count: 1, FirstRow: 4, FirstValue: "abc"},
		{Column: "o", Count: 40, FirstRow: 1},
	}
	if !equalNaNs(nans, wantNaNs) || len(nans) != len(wantNaNs) {
		t.Errorf("NaNCounts %+v, want %+v", nans, wantNaNs)
	}

	sub, err := OpenParquet(path, &ParquetOptions{Columns: []string{"o", "t"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	rows2, err = readTable(t, sub)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows2 {
		if rows2[i][1] != want[i][0] || !(rows2[i][0] == want[i][7] || math.IsNaN(want[i][7]) && math.IsNaN(rows2[i][0])) {
			t.Fatalf("row %d = %v", i, rows2[i])
		}
	}
}

func TestParquetCorrupt(t *testing.T) {
	path := writeFile(t, "bad.parquet", "PAR1 this is not parquet PAR1")
	_, err := OpenParquet(path, nil)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bad.parquet") {
		t.Fatalf("error %v", err)
	}
}
