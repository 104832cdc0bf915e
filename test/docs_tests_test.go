package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

var (
	// testFuncRe matches the declaration of a test, benchmark or fuzz
	// function and captures its name.
	testFuncRe = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z0-9_]\w*)\(`)
	// citedTestRe matches a test function's name cited in prose or code.
	citedTestRe = regexp.MustCompile(`\bTest[A-Z]\w*`)
	// goTestRe matches a `go test …` command in an inline code span.
	goTestRe = regexp.MustCompile("`(go test [^`]*)`")
)

// testFuncs returns the test, benchmark and fuzz functions declared in the
// _test.go files under dir (recursively when all), whatever their build
// tags, by name.
func testFuncs(t *testing.T, dir string, all bool) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && (!all || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFuncRe.FindAllStringSubmatch(string(src), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// citedTests checks a documentation page's test citations against the
// functions declared: every TestName it cites exists somewhere in the
// repository, and the -run and -bench patterns of every `go test ./PKG …`
// it prints match a function of PKG. It returns what is wrong.
func citedTests(t *testing.T, root, doc string, everywhere map[string]bool) []string {
	t.Helper()
	var bad []string
	flat := strings.Join(strings.Fields(doc), " ")
	for _, name := range citedTestRe.FindAllString(flat, -1) {
		if !everywhere[name] {
			bad = append(bad, "cites "+name+", which no _test.go file declares")
		}
	}
	for _, m := range goTestRe.FindAllStringSubmatch(flat, -1) {
		args := strings.Fields(m[1])
		var pkgs, patterns []string
		for i := 2; i < len(args); i++ {
			switch a := args[i]; {
			case a == "&&":
				i = len(args)
			case (a == "-run" || a == "-bench") && i+1 < len(args):
				i++
				patterns = append(patterns, strings.Trim(args[i], `'"`))
			case strings.HasPrefix(a, "./"):
				pkgs = append(pkgs, strings.TrimSuffix(strings.TrimSuffix(a, "/..."), "/"))
			}
		}
		if len(pkgs) != 1 {
			continue // `go test -c`, `go test ./...`: nothing to match
		}
		funcs := testFuncs(t, filepath.Join(root, pkgs[0]), false)
		for _, p := range patterns {
			if p == "^$" {
				continue
			}
			top, _, _ := strings.Cut(p, "/") // subtests are not checked
			re, err := regexp.Compile(top)
			if err != nil {
				bad = append(bad, m[1]+": pattern "+p+": "+err.Error())
				continue
			}
			found := false
			for name := range funcs {
				found = found || re.MatchString(name)
			}
			if !found {
				bad = append(bad, m[1]+": "+p+" matches no test or benchmark of "+pkgs[0])
			}
		}
	}
	return bad
}

// TestDocsCiteTests: every test a documentation page names exists, and
// every `go test` command it prints runs at least one test or benchmark
// (a -run pattern that matches nothing passes with "no tests to run").
func TestDocsCiteTests(t *testing.T) {
	root := fixtures.Root()
	everywhere := testFuncs(t, root, true)
	if !everywhere["TestDocsCiteTests"] || !everywhere["TestIndependentRollouts"] {
		t.Fatalf("the scan of the repository's tests found %d functions, not this one or TestIndependentRollouts", len(everywhere))
	}
	pages := append(fixtures.DocPages(), "python/README.md", "nodes/ros2/README.md")
	for _, page := range pages {
		doc, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range citedTests(t, root, string(doc), everywhere) {
			t.Errorf("%s %s", page, b)
		}
	}
	// The check itself finds a wrong name and a pattern that runs nothing.
	bad := citedTests(t, root, "the test `TestNoSuchThing` and `go test ./trainer -run NoSuchPattern`, `go test ./test -run MPI`", everywhere)
	if len(bad) != 2 || !strings.Contains(bad[0], "TestNoSuchThing") || !strings.Contains(bad[1], "NoSuchPattern") {
		t.Errorf("the check of a wrong page finds %q", bad)
	}
}
