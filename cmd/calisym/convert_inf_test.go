package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
)

// setCSVValue rewrites the value of column col on line (1-based, the
// header is line 1) of a CSV file.
func setCSVValue(t *testing.T, path string, line int, col, value string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	header := strings.Split(lines[0], ",")
	fields := strings.Split(lines[line-1], ",")
	for i, h := range header {
		if h == col {
			fields[i] = value
			lines[line-1] = strings.Join(fields, ",")
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s has no column %s", path, col)
}

// TestConvertInfinite: an infinite value in a state or a port column is
// missing data, as a NaN is: the windows that cover it are rejected and
// counted (they used to reach the statistics, whose NaN aborted the whole
// run with "json: unsupported value: NaN"); the other files convert.
func TestConvertInfinite(t *testing.T) {
	for _, tc := range []struct {
		col, value string
	}{
		{"q1", "Inf"},
		{"v2", "-Inf"},
		{"tau1", "+Inf"},
		{"q2", "NaN"},
	} {
		t.Run(tc.col+tc.value, func(t *testing.T) {
			f := newConvertLogsFixture(t)
			bad := writePendulumCSV(t, filepath.Join(f.dir, "logs", "bad.csv"), nil)
			setCSVValue(t, bad, 202, tc.col, tc.value) // t = 1 s
			out := filepath.Join(f.dir, "out")
			stdout, err := f.convert(t, out, "--split", "id", f.a, bad)
			if err != nil {
				t.Fatalf("convert: %v\n%s", err, stdout)
			}
			// 19 windows of 20 samples every 10 in each file; the sample at
			// 1 s (row 200 at 200 Hz, 100 at 100 Hz) lies in two of bad.csv's.
			if !strings.Contains(stdout, "36 of 38 windows kept (rejected: nan 2)") {
				t.Errorf("output:\n%s", stdout)
			}
			var rep convert.Report
			raw, err := os.ReadFile(filepath.Join(out, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
			var fr *convert.FileReport
			for i := range rep.Files {
				if strings.HasSuffix(rep.Files[i].Path, "bad.csv") {
					fr = &rep.Files[i]
				}
			}
			if fr == nil || fr.NaN[tc.col] != 1 {
				t.Errorf("bad.csv's report: %+v, want one NaN or infinite value in %s", fr, tc.col)
			}
		})
	}
}
