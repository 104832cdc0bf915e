package convert

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// TestCorruptTimeValue: a time value no log can have (1e300 s; a zero
// among Unix times) is an error that names the file, the time column and
// the line, not a panic in signal.Clock.
func TestCorruptTimeValue(t *testing.T) {
	const epoch = 1.7e9 // s, a Unix time
	for _, tc := range []struct {
		name string
		edit func(i int, r *synthRow)
		want []string
	}{
		{"1e300 mid-file", func(i int, r *synthRow) {
			if i == 500 {
				r.t = 1e300
			}
		}, []string{"line 502", "1e+300 s"}},
		{"1e300 last row", func(i int, r *synthRow) {
			if i == 1000 {
				r.t = 1e300
			}
		}, []string{"line 1002", "1e+300 s"}},
		{"zero among Unix times", func(i int, r *synthRow) {
			if i > 0 {
				r.t += epoch
			}
		}, []string{"line 2", "0 s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSynthCSV(t, dir, "run.csv", 1001, 200, tc.edit)
			_, err := Convert(context.Background(), synthSpec("run.csv"), Options{DataRoot: dir})
			if !errors.Is(err, ErrTime) {
				t.Fatalf("err = %v, want ErrTime", err)
			}
			for _, w := range append(tc.want, "run.csv", `time column "time"`, "clock.unit") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

// TestTimeGoesBackwards: rows whose time goes backwards are sorted as
// before, and the file's warnings count them and name the first.
func TestTimeGoesBackwards(t *testing.T) {
	dir := t.TempDir()
	// Rows 300 and 700 are stamped 1 s early: time goes back twice.
	writeSynthCSV(t, dir, "run.csv", 1001, 200, func(i int, r *synthRow) {
		if i == 300 || i == 700 {
			r.t--
		}
	})
	res, err := Convert(context.Background(), synthSpec("run.csv"), Options{DataRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Report.Files[0]
	if len(f.Warnings) != 1 {
		t.Fatalf("warnings %q, want one", f.Warnings)
	}
	for _, w := range []string{"time goes backwards at 2 of 1001 samples", `time column "time" at line 302`, "0.5 s after 1.495 s", "sorted"} {
		if !strings.Contains(f.Warnings[0], w) {
			t.Errorf("warning %q lacks %q", f.Warnings[0], w)
		}
	}
	if !strings.Contains(res.Report.String(), "time goes backwards") {
		t.Errorf("report summary does not show the warning:\n%s", res.Report)
	}

	// In order: no warning.
	writeSynthCSV(t, dir, "run.csv", 1001, 200, nil)
	res, err = Convert(context.Background(), synthSpec("run.csv"), Options{DataRoot: dir})
	if err != nil || len(res.Report.Files[0].Warnings) != 0 {
		t.Errorf("ordered file: %v, warnings %q", err, res.Report.Files[0].Warnings)
	}
}

// TestLocate: sources name where a sample lies in their file.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	p := writeSynthCSV(t, dir, "run.csv", 20, 200, func(i int, r *synthRow) {
		if i == 3 {
			r.t = math.NaN() // a row Read drops
		}
	})
	s, err := OpenTableSource(p, synthSpec(p))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.(Locator).Locate("q1", 5); got != `time column "time" at line 8` {
		t.Errorf("CSV: %q", got)
	}

	mc := filepath.Join(dir, "log.mcap")
	writeJointMCAP(t, mc, jointLogOptions{n: 10, hz: 100})
	ms, err := OpenMessageLog(mc, MessageLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ms.Locate("/joint_states.position[1]", 4); got != "message 5 on /joint_states" {
		t.Errorf("MCAP: %q", got)
	}

	pq := fixtures.Path(t, "crazyflie", "test", "random1_20251017_run4.parquet")
	spec := synthSpec(pq)
	spec.Clock.Column = "t"
	ps, err := OpenTableSource(pq, spec)
	if err != nil {
		t.Skipf("crazyflie parquet: %v", err)
	}
	if got := ps.(Locator).Locate("x", 9); got != `time column "t" at row 10` {
		t.Errorf("parquet: %q", got)
	}
}
