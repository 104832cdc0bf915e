package main

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/experiment"
	"github.com/calisym/calisym/internal/fixtures"
)

// anymalStudyHeading is the section of publishedPage whose table
// docs/results/anymal_sim_study.json publishes.
const anymalStudyHeading = "### Long-horizon accuracy on the quadruped: the study"

// anymalStudyLabels maps the model rows of that table, measured here, to
// the model and the `bench --variants` name of their rows; rows quoted
// from outside the project ("(quoted, outside the project)") are not in
// the JSON, which cannot mark them.
var anymalStudyLabels = map[string][2]string{
	"CaLiSym-GR, default (long-horizon + port history of 10 samples), 3 seeds":      {"calisym", "default"},
	"MLP, default (long-horizon + port history), 3 seeds":                           {"mlp", "default"},
	"CaLiSym-GR, long-horizon without port history (the previous default), 3 seeds": {"calisym", "longhorizon"},
	"MLP, long-horizon without port history, 3 seeds":                               {"mlp", "longhorizon"},
	"CaLiSym-GR, one-step (the default before that), 3 seeds":                       {"calisym", "onestep"},
	"MLP, one-step, 3 seeds": {"mlp", "onestep"},
}

// anymalStudyGroups maps the table's group cells (less the window count)
// to the groups of bench anymal_sim.
var anymalStudyGroups = map[string]string{"ID test": "id_test", "OOD pushes": "ood_pushes", "OOD rough": "ood_rough"}

// TestAnymalStudyJSON checks that docs/results/anymal_sim_study.json
// holds every number of the quadruped study's table in publishedPage, as
// printed: for each group, the mean [min, max] of each measured model
// row at every horizon under its variant, and the state held constant
// under every variant of the table, with the seeds; and that it reads
// as study rows (experiment.ReadStudyRows). Rows the table does not have
// (other groups, variants or horizons) may be there too.
func TestAnymalStudyJSON(t *testing.T) {
	section := anymalStudySection(t)
	js, err := os.ReadFile(filepath.Join(fixtures.Root(), "docs", "results", "anymal_sim_study.json"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := experiment.ReadStudyRows(js)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		group, model, variant string
		horizon               int
	}
	byKey := map[key]experiment.StudyRow{}
	for _, r := range rows {
		byKey[key{r.Group, r.Model, r.Variant, r.Horizon}] = r
	}
	var hs []int
	var variants []string
	type cell struct {
		group, model, variant string
		horizon, seeds        int
		text                  string
	}
	var cells []cell
	group, quoted := "", 0
	cellRE := regexp.MustCompile(`^(\S+) \[(\S+), (\S+)\]$`)
	for line := range strings.SplitSeq(section, "\n") {
		c := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range c {
			c[i] = strings.TrimSpace(c[i])
		}
		switch {
		case !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---"):
			continue
		case c[0] == "group" && c[1] == "model":
			if hs != nil {
				t.Fatalf("two tables of groups and models in %q", anymalStudyHeading)
			}
			for _, h := range c[2:] {
				n, err := strconv.Atoi(h)
				if err != nil {
					t.Fatalf("header cell %q is not a horizon", h)
				}
				hs = append(hs, n)
			}
			continue
		case hs == nil || len(c) != 2+len(hs):
			continue
		}
		if c[0] != "" {
			name, _, _ := strings.Cut(c[0], " (")
			if group = anymalStudyGroups[name]; group == "" {
				t.Fatalf("group %q of the table: not in anymalStudyGroups", c[0])
			}
		}
		var models [][2]string // model, variant
		seeds := 3
		switch mv, ok := anymalStudyLabels[c[1]]; {
		case ok:
			models = [][2]string{mv}
			if !slices.Contains(variants, mv[1]) {
				variants = append(variants, mv[1])
			}
		case strings.Contains(c[1], "(quoted, outside the project)"):
			quoted++
			continue
		case c[1] == "state held constant":
			for _, v := range variants {
				models = append(models, [2]string{"hold", v})
			}
		default:
			t.Fatalf("row %q of the table: not in anymalStudyLabels", c[1])
		}
		for _, mv := range models {
			for i, h := range hs {
				cells = append(cells, cell{group, mv[0], mv[1], h, seeds, c[2+i]})
			}
		}
	}
	// 3 groups × (6 model rows + the state held constant under 3
	// variants) × 5 horizons; the GRU and Transformer rows of 3 groups
	if len(cells) != 135 || quoted != 6 {
		t.Fatalf("%d cells and %d quoted rows read from the table, want 135 and 6", len(cells), quoted)
	}
	for _, c := range cells {
		r, ok := byKey[key{c.group, c.model, c.variant, c.horizon}]
		if !ok {
			t.Errorf("%s %s %s at %d (%q): no row in the JSON", c.group, c.variant, c.model, c.horizon, c.text)
			continue
		}
		want := []string{c.text, c.text, c.text}
		if m := cellRE.FindStringSubmatch(c.text); m != nil {
			want = m[1:]
		}
		var nums []float64
		for _, w := range want {
			x, err := strconv.ParseFloat(w, 64)
			if err != nil {
				t.Fatalf("%s %s %s at %d: cell %q: %v", c.group, c.variant, c.model, c.horizon, c.text, err)
			}
			nums = append(nums, x)
		}
		if r.Mean != nums[0] || r.Min != nums[1] || r.Max != nums[2] || r.Seeds != c.seeds || r.Diverged != 0 {
			t.Errorf("%s %s %s at %d: the JSON has %g [%g, %g] over %d seeds, the table %q over %d", c.group, c.variant, c.model, c.horizon, r.Mean, r.Min, r.Max, r.Seeds, c.text, c.seeds)
		}
	}
}

// TestBenchPlot: `bench plot` draws study_<group>.png for every group of
// a study.json (or the groups and variants asked for), titled by the
// system its file is named for, and refuses a row with a missing field or
// a mean outside [min, max], naming the file, the row and the field.
func TestBenchPlot(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	for _, g := range []string{"id_test", "ood_pushes"} {
		for _, m := range []string{"calisym", "mlp", "hold"} {
			for i, h := range []int{5, 10, 25} {
				rows = append(rows, `{"group":"`+g+`","model":"`+m+`","variant":"default","horizon":`+strconv.Itoa(h)+
					`,"mean":`+strconv.Itoa(2*(i+1))+`,"min":`+strconv.Itoa(i+1)+`,"max":`+strconv.Itoa(3*(i+1))+`,"seeds":3}`)
			}
		}
	}
	write := func(name string, rows []string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("["+strings.Join(rows, ",\n")+"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("anymal_sim_study.json", rows)
	writeRaw := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name  string
		args  []string
		wrote []string
	}{
		{"every group", nil, []string{"study_id_test.png", "study_ood_pushes.png"}},
		{"one group", []string{"--only-groups", "ood_pushes", "--only-variants", "default"}, []string{"study_ood_pushes.png"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "figs")
			stdout, _, err := runCLI(t, append([]string{"bench", "plot", good, "--out", out}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			ents, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
				f, err := os.Open(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				img, err := png.Decode(f)
				f.Close()
				if err != nil || img.Bounds().Dx() < 600 {
					t.Errorf("%s: %v, %v", e.Name(), err, img)
				}
				if !strings.Contains(stdout, "wrote "+filepath.Join(out, e.Name())) {
					t.Errorf("stdout %q does not name %s", stdout, e.Name())
				}
			}
			if !slices.Equal(got, c.wrote) {
				t.Errorf("wrote %v, want %v", got, c.wrote)
			}
		})
	}
	missing := slices.Clone(rows)
	missing[4] = strings.Replace(missing[4], `"mean":4,`, "", 1)
	outside := slices.Clone(rows)
	outside[2] = strings.Replace(outside[2], `"mean":6,`, `"mean":9.5,`, 1)
	for _, c := range []struct{ name, file, want string }{
		{"missing field", write("m/anymal_sim_study.json", missing), `row 5: no "mean"`},
		{"mean outside", write("o/anymal_sim_study.json", outside), "row 3: id_test default calisym at horizon 25: mean 9.5 outside [min 3, max 9]"},
		{"unknown system", write("robot_study.json", rows), `--system (default: from the file's name, <system>_study.json or <system>/study.json): experiment: unknown real-robot system "robot"`},
		{"unknown variant", good, `variant "onestep" is in no row (the rows have default)`},
		// The file is checked before the system its path names.
		{"missing file", filepath.Join(dir, "none", "robot_study.json"), "no such file or directory"},
		{"empty file", writeRaw("e/robot_study.json", ""), "robot_study.json: not a study.json"},
		{"cut file", writeRaw("c/robot_study.json", "["+rows[0]+",\n"+rows[1][:20]), "robot_study.json: not a study.json"},
		{"empty list", writeRaw("l/robot_study.json", "[]\n"), "not a study.json (a JSON list of rows as 'calisym bench --variants' writes): bad study rows: no rows"},
		{"a report, not a study", writeRaw("r/robot_study.json", `{"system": "anymal_sim", "models": []}`), "robot_study.json: not a study.json"},
		{"a model file", writeRaw("x/robot/study.json", "\x08\x00\x00\x00\x00\x00\x00\x00{}"), "study.json: not a study.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "figs")
			args := []string{"bench", "plot", c.file, "--out", out}
			if c.name == "unknown variant" {
				args = append(args, "--only-variants", "onestep")
			}
			_, _, err := runCLI(t, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bench plot") {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
			if ents, _ := os.ReadDir(out); len(ents) > 0 {
				t.Errorf("%d files written", len(ents))
			}
		})
	}
	if _, _, err := runCLI(t, "bench", "plot", good); err == nil || !strings.Contains(err.Error(), "--out is required") {
		t.Errorf("no --out: %v", err)
	}
}

// anymalStudyFigure is the command of publishedPage that draws
// docs/study_id_test.png from docs/results/anymal_sim_study.json.
const anymalStudyFigure = "go run ./cmd/calisym bench plot docs/results/anymal_sim_study.json --only-variants onestep,longhorizon,default --only-groups id_test --out out/study-figures"

// TestAnymalStudyFigure: docs/study_id_test.png is, pixel for pixel, what
// the command publishedPage gives for it draws from the published rows.
func TestAnymalStudyFigure(t *testing.T) {
	section := anymalStudySection(t)
	if !strings.Contains(section, "\n"+anymalStudyFigure+"\n") {
		t.Fatalf("%s %q does not give the command %q", publishedPage, anymalStudyHeading, anymalStudyFigure)
	}
	out := t.TempDir()
	args := strings.Fields(strings.TrimPrefix(anymalStudyFigure, "go run ./cmd/calisym "))
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "docs/"):
			args[i] = filepath.Join(fixtures.Root(), a)
		case strings.HasPrefix(a, "out/"):
			args[i] = filepath.Join(out, a)
		}
	}
	if _, _, err := runCLI(t, args...); err != nil {
		t.Fatal(err)
	}
	decode := func(p string) image.Image {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return img
	}
	got := decode(filepath.Join(out, "out", "study-figures", "study_id_test.png"))
	pub := decode(filepath.Join(fixtures.Root(), "docs", "study_id_test.png"))
	same := got.Bounds() == pub.Bounds()
	for y := got.Bounds().Min.Y; same && y < got.Bounds().Max.Y; y++ {
		for x := got.Bounds().Min.X; same && x < got.Bounds().Max.X; x++ {
			r0, g0, b0, a0 := got.At(x, y).RGBA()
			r1, g1, b1, a1 := pub.At(x, y).RGBA()
			same = r0 == r1 && g0 == g1 && b0 == b1 && a0 == a1
		}
	}
	if !same {
		t.Errorf("docs/study_id_test.png is not what `%s` draws now: run it and copy out/study-figures/study_id_test.png there", anymalStudyFigure)
	}
}

// anymalStudySection returns the quadruped study's section of
// publishedPage.
func anymalStudySection(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), publishedPage))
	if err != nil {
		t.Fatal(err)
	}
	section, err := markdownSection(string(doc), anymalStudyHeading)
	if err != nil {
		t.Fatal(err)
	}
	return section
}
