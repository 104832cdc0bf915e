package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// readmeRobotPage and readmeRobotHeading are the page and the section
// worked end to end on the UR10e logs, whose commands TestReadmeOwnRobot
// runs.
const (
	readmeRobotPage    = "docs/your-robot.md"
	readmeRobotHeading = "## The UR10e, end to end"
)

// TestReadmeOwnRobot runs the commands of the UR10e walk-through
// (readmeRobotPage, readmeRobotHeading) as written, from the repository root with the shared data
// beside it, except that `go run ./cmd/calisym` is the CLI built once,
// --epochs is 1 and out/ is a temporary directory. It checks that the
// section lists convert, train and eval, that each command succeeds, and
// that the conversion summary lines the section quotes (```text lines
// starting "ur10e:" or "split ") are what convert prints.
func TestReadmeOwnRobot(t *testing.T) {
	fixtures.Path(t, "ur10e")
	doc, err := os.ReadFile(filepath.Join(fixtures.Root(), readmeRobotPage))
	if err != nil {
		t.Fatal(err)
	}
	section, err := readmeSection(string(doc), readmeRobotHeading)
	if err != nil {
		t.Fatalf("%s, section %q: %v", readmeRobotPage, readmeRobotHeading, err)
	}
	cmds := fencedCommands(section)
	var verbs []string
	for _, c := range cmds {
		verbs = append(verbs, c[0])
	}
	if v := strings.Join(verbs, " "); !regexp.MustCompile(`convert.*train.*eval`).MatchString(v) {
		t.Fatalf("the section's commands are %q: want convert, train and eval, in that order", v)
	}
	var quoted []string
	for _, blk := range fencedBlocks(section, "text") {
		for _, l := range strings.Split(blk, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "ur10e:") || strings.HasPrefix(t, "split ") {
				quoted = append(quoted, l)
			}
		}
	}
	if len(quoted) == 0 {
		t.Error(`the section quotes no conversion summary (a ` + "```text" + ` line starting "ur10e:")`)
	}

	bin := buildCLI(t)
	out := t.TempDir()
	epochs := regexp.MustCompile(`^\d+$`)
	for _, c := range cmds {
		args := make([]string, len(c))
		for i, a := range c {
			switch {
			case i > 0 && c[i-1] == "--epochs" && epochs.MatchString(a):
				a = "1"
			case strings.HasPrefix(a, "out/"):
				a = filepath.Join(out, strings.TrimPrefix(a, "out/"))
			}
			args[i] = a
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = fixtures.Root()
		b, err := cmd.CombinedOutput()
		text := string(b)
		if err != nil {
			t.Fatalf("calisym %s: %v\n%s", strings.Join(c, " "), err, text)
		}
		switch c[0] {
		case "convert":
			for _, q := range quoted {
				if !strings.Contains(text, q) {
					t.Errorf("%s quotes %q; convert printed:\n%s", readmeRobotPage, q, text)
				}
			}
		case "eval":
			if !strings.Contains(text, "AR MSE") {
				t.Errorf("calisym %s printed no AR MSE:\n%s", strings.Join(c, " "), text)
			}
		}
		t.Logf("calisym %s: ok", strings.Join(args, " "))
	}
}

// readmeSection returns the Markdown section that starts at the heading
// line, up to the next heading of the same or a higher level.
func readmeSection(doc, heading string) (string, error) {
	level := len(heading) - len(strings.TrimLeft(heading, "#"))
	lines := strings.Split(doc, "\n")
	start := -1
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		if start < 0 {
			if strings.TrimSpace(l) == heading {
				start = i
			}
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "#")); n > 0 && n <= level && strings.HasPrefix(l[n:], " ") {
			return strings.Join(lines[start:i], "\n"), nil
		}
	}
	if start < 0 {
		return "", os.ErrNotExist
	}
	return strings.Join(lines[start:], "\n"), nil
}

// fencedBlocks returns the bodies of the section's fenced blocks of the
// language lang.
func fencedBlocks(section, lang string) []string {
	var out []string
	var cur []string
	in := false
	for _, l := range strings.Split(section, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```"+lang:
			in, cur = true, nil
		case in && strings.TrimSpace(l) == "```":
			in = false
			out = append(out, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, l)
		}
	}
	return out
}

// fencedCommands returns the calisym commands of the section's ```sh
// blocks, as the arguments after `go run ./cmd/calisym`, with line
// continuations joined and comments dropped.
func fencedCommands(section string) [][]string {
	var out [][]string
	for _, blk := range fencedBlocks(section, "sh") {
		joined := strings.ReplaceAll(blk, "\\\n", " ")
		for _, l := range strings.Split(joined, "\n") {
			if i := strings.Index(l, " #"); i >= 0 {
				l = l[:i]
			}
			f := strings.Fields(l)
			if len(f) > 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/calisym" {
				out = append(out, f[3:])
			}
		}
	}
	return out
}
