package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/calisym/calisym/internal/experiment"
)

// publishedPage is the documentation page that holds the tables calisym
// demo --check and bench --check compare with a fresh run (demoHeading and
// benchHeading), relative to the repository root.
const publishedPage = "docs/benchmarks.md"

// errPublished reports numbers in a document that a fresh run did not
// reproduce.
var errPublished = errors.New("published numbers not reproduced")

// publishedRow is one table row a run regenerates: the row is found by its
// key cells (a system key, written in backticks in the document, and a
// model name) and its value cells are compared with want.
type publishedRow struct {
	header string // the first header cell of the row's table
	keys   []string
	want   []float64
}

// publishedRows lists, for every model of rep, the row of the results table
// whose cells are system, model, OOD AR MSE, ID AR MSE, horizon, params and
// FLOPs per step (training time and ε_J are not compared: the one is wall
// time, the other round-off).
//
// The multi-horizon table (first header cell "horizon") has a row per model
// with the OOD AR MSE at every horizon of the run.
func publishedRows(system string, rep *experiment.Report) []publishedRow {
	var rows []publishedRow
	for _, m := range rep.Models {
		keys, header := []string{m.Name}, "model"
		if system != "" {
			keys, header = []string{system, m.Name}, "system"
		}
		rows = append(rows, publishedRow{header: header, keys: keys,
			want: []float64{m.OODARMSE, m.IDARMSE, float64(m.Horizon), float64(m.Params), float64(m.FLOPsPerStep)}})
		mh := publishedRow{header: "horizon", keys: keys}
		for _, r := range m.MultiHorizon {
			mh.want = append(mh.want, r.OODMSE)
		}
		rows = append(rows, mh)
	}
	return rows
}

// checkPublishedFile reads the document at path, checks rows against the
// section under heading (see checkPublished) and says so on w.
func checkPublishedFile(w io.Writer, path, heading string, rows []publishedRow) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if err := checkPublished(string(doc), heading, rows); err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	fmt.Fprintf(w, "%s: the %d rows of %q reproduce\n", path, len(rows), heading)
	return nil
}

// checkPublished checks that the Markdown document doc, in the section that
// starts at the heading line heading (up to the next heading of the same or
// a higher level), has a table row for every row of rows, and that its
// value cells equal the regenerated values to the four significant digits
// the tables print. A first cell left empty continues the key of the row
// above (a system spanning several model rows); bold marks and thousands
// separators are ignored.
func checkPublished(doc, heading string, rows []publishedRow) error {
	section, err := markdownSection(doc, heading)
	if err != nil {
		return err
	}
	type tableRow struct {
		header string
		cells  []string
	}
	var table []tableRow
	var carry, header string
	for line := range strings.SplitSeq(section, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		if strings.HasPrefix(line, "|---") {
			// The row above was the table's header.
			if n := len(table); n > 0 {
				header = table[n-1].cells[0]
				table = table[:n-1]
			}
			carry = ""
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = cleanCell(cells[i])
		}
		if cells[0] == "" {
			cells[0] = carry
		} else {
			carry = cells[0]
		}
		table = append(table, tableRow{header: header, cells: cells})
	}
	var problems []string
	for _, r := range rows {
		found := false
		for _, row := range table {
			cells := row.cells
			if row.header != r.header || len(cells) < len(r.keys)+len(r.want) || !keysMatch(cells, r.keys) {
				continue
			}
			found = true
			for j, want := range r.want {
				cell := cells[len(r.keys)+j]
				got, err := strconv.ParseFloat(cell, 64)
				if err != nil || !sameToPrinted(got, want) {
					problems = append(problems, fmt.Sprintf("%s: column %d reads %q, the run gives %.4g", strings.Join(r.keys, "/"), len(r.keys)+j+1, cell, want))
				}
			}
			break
		}
		if !found {
			problems = append(problems, fmt.Sprintf("no row for %s", strings.Join(r.keys, "/")))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w in section %q:\n  %s", errPublished, heading, strings.Join(problems, "\n  "))
	}
	return nil
}

// markdownSection returns the text under the heading line heading, up to
// the next heading of the same or a higher level; lines in fenced code
// blocks are never headings.
func markdownSection(doc, heading string) (string, error) {
	lines := strings.Split(doc, "\n")
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	start, fenced := -1, false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		h := len(l) - len(strings.TrimLeft(l, "#"))
		switch {
		case start < 0 && strings.TrimSpace(l) == heading:
			start = i + 1
		case start >= 0 && h > 0 && h <= level && strings.HasPrefix(l[h:], " "):
			return strings.Join(lines[start:i], "\n"), nil
		}
	}
	if start < 0 {
		return "", fmt.Errorf("%w: no heading %q", errPublished, heading)
	}
	return strings.Join(lines[start:], "\n"), nil
}

// cleanCell strips a cell's spaces, bold marks and thousands separators;
// a cell holding a `key` in backticks becomes the key.
func cleanCell(c string) string {
	c = strings.TrimSpace(c)
	if i := strings.Index(c, "`"); i >= 0 {
		if j := strings.Index(c[i+1:], "`"); j >= 0 {
			return c[i+1 : i+1+j]
		}
	}
	c = strings.ReplaceAll(c, "**", "")
	if _, err := strconv.ParseFloat(strings.ReplaceAll(c, ",", ""), 64); err == nil {
		c = strings.ReplaceAll(c, ",", "")
	}
	return c
}

func keysMatch(cells, keys []string) bool {
	for i, k := range keys {
		if cells[i] != k {
			return false
		}
	}
	return true
}

// sameToPrinted reports whether a printed value and a regenerated one agree
// to the four significant digits the tables print.
func sameToPrinted(printed, value float64) bool {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return false
	}
	if value == math.Trunc(value) && math.Abs(value) < 1e15 {
		return printed == value
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(value, 'g', 4, 64), 64)
	if err != nil {
		return false
	}
	p, err := strconv.ParseFloat(strconv.FormatFloat(printed, 'g', 4, 64), 64)
	return err == nil && p == v
}
