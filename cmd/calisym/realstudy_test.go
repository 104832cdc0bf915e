package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/fixtures"
)

// realStudySections are the real-robot study's sections of publishedPage
// and the committed JSON of each.
var realStudySections = []struct{ heading, system string }{
	{"#### Crazyflie, gravity-aware pose (`crazyflie_gravity`)", experiment.RealCrazyflieGravity},
	{"#### Crazyflie, the paper's SE(3) pose (`crazyflie`)", experiment.RealCrazyflie},
	{"#### Real double pendulum (`double_pendulum_hw`)", experiment.RealDoublePendulumHW},
}

// TestRealStudyTablesJSON checks that every number of the real-robot
// study's tables in publishedPage (the tables headed "variant | model |
// ID h … | OOD h …", each cell "mean" or "mean [min, max]") is the one of
// docs/results/<system>_study.json, as %.4g prints it: each model row
// under its variant (a variant written "-x" is the table's first variant,
// or a shorter prefix of it, followed by "-x"), the state held constant
// and the identified physics model under any variant of the system.
func TestRealStudyTablesJSON(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), publishedPage))
	if err != nil {
		t.Fatal(err)
	}
	cellRE := regexp.MustCompile(`^(\S+)(?: \[(\S+), (\S+)\])?$`)
	headRE := regexp.MustCompile(`^(ID|OOD) (\d+)$`)
	for _, s := range realStudySections {
		section, err := markdownSection(string(doc), s.heading)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "docs", "results", s.system+"_study.json"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := experiment.ReadStudyRows(raw)
		if err != nil {
			t.Fatal(err)
		}
		variants := map[string]bool{}
		for _, r := range rows {
			variants[r.Variant] = true
		}
		// find returns the rows of a model at a group and horizon: the
		// variant's, or any variant's for the held state and the physics
		find := func(model, variant, group string, h int) []experiment.StudyRow {
			var out []experiment.StudyRow
			for _, r := range rows {
				if r.Model == model && r.Group == group && r.Horizon == h && (variant == "" || r.Variant == variant) {
					out = append(out, r)
				}
			}
			return out
		}
		var cols []struct {
			group string
			h     int
		}
		first, variant := "", ""
		tables, cells := 0, 0
		for line := range strings.SplitSeq(section, "\n") {
			if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
				if !strings.HasPrefix(line, "|") {
					cols = nil
				}
				continue
			}
			c := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
			for i := range c {
				c[i] = strings.TrimSpace(strings.ReplaceAll(c[i], "**", ""))
			}
			if len(c) > 2 && c[0] == "variant" && c[1] == "model" {
				cols, first = cols[:0], ""
				for _, h := range c[2:] {
					m := headRE.FindStringSubmatch(h)
					if m == nil {
						cols = nil
						break
					}
					n, _ := strconv.Atoi(m[2])
					g := "id_test"
					if m[1] == "OOD" {
						g = "ood"
					}
					cols = append(cols, struct {
						group string
						h     int
					}{g, n})
				}
				if cols != nil {
					tables++
				}
				continue
			}
			if cols == nil || len(c) != 2+len(cols) {
				continue
			}
			if c[0] != "" {
				name, _, _ := strings.Cut(strings.Trim(c[0], "`"), " ")
				name = strings.Trim(name, "`")
				switch {
				case strings.HasPrefix(name, "-"):
					v := ""
					for base := first; base != "" && v == ""; {
						if variants[base+name] {
							v = base + name
						}
						i := strings.LastIndex(base, "-")
						if i < 0 {
							break
						}
						base = base[:i]
					}
					if v == "" {
						t.Errorf("%s: variant %q: no %q+%s in the JSON", s.system, c[0], first, name)
						continue
					}
					variant = v
				default:
					if !variants[name] {
						t.Errorf("%s: variant %q is not in the JSON", s.system, c[0])
						continue
					}
					variant = name
					if first == "" {
						first = name
					}
				}
			}
			model, v := "", variant
			switch {
			case c[1] == "CaLiSym":
				model = "calisym"
			case strings.HasPrefix(c[1], "MLP"):
				model = "mlp"
			case c[1] == "state held constant":
				model, v = "hold", ""
			case strings.HasPrefix(c[1], "identified physics model"):
				model, v = "physics", ""
			default:
				t.Errorf("%s: row %q %q: unknown model", s.system, c[0], c[1])
				continue
			}
			for i, col := range cols {
				m := cellRE.FindStringSubmatch(c[2+i])
				if m == nil {
					t.Errorf("%s %s %s %s at %d: cell %q", s.system, variant, model, col.group, col.h, c[2+i])
					continue
				}
				cells++
				ok := false
				for _, r := range find(model, v, col.group, col.h) {
					got := fmt.Sprintf("%.4g", r.Mean)
					if m[2] != "" {
						got += fmt.Sprintf(" [%.4g, %.4g]", r.Min, r.Max)
					}
					want := m[1]
					if m[2] != "" {
						want += " [" + m[2] + ", " + m[3] + "]"
					}
					ok = ok || got == want
				}
				if !ok {
					t.Errorf("%s %s %s %s at %d: table %q, not a row of the JSON (%d candidates)", s.system, cmp.Or(v, "any variant"), model, col.group, col.h, c[2+i], len(find(model, v, col.group, col.h)))
				}
			}
		}
		t.Logf("%s: %d tables, %d cells", s.system, tables, cells)
		if tables == 0 || cells < 100 {
			t.Errorf("%s: %d tables and %d cells read", s.system, tables, cells)
		}
	}
}
