package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/calisym/calisym/internal/fixtures"
)

// mdLink is a Markdown link or image of a page: its line and target.
type mdLink struct {
	line   int
	target string
}

var (
	// mdLinkRe matches [text](target) and ![alt](target), the text
	// possibly over several lines, the target with an optional "title".
	mdLinkRe = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpanRe matches an inline code span, possibly over a line break
	// but not over a blank line.
	codeSpanRe = regexp.MustCompile("`[^`]*`")
)

// blankCode returns doc with its fenced blocks and inline code spans
// replaced by spaces, line breaks kept, so that what looks like a link
// inside code is not one and line numbers stay.
func blankCode(doc string) string {
	lines := strings.Split(doc, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return codeSpanRe.ReplaceAllStringFunc(strings.Join(lines, "\n"), func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	})
}

// mdLinks returns the links and images of a Markdown page, outside code.
func mdLinks(doc string) []mdLink {
	text := blankCode(doc)
	var out []mdLink
	for _, m := range mdLinkRe.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, mdLink{line: 1 + strings.Count(text[:m[0]], "\n"), target: text[m[2]:m[3]]})
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page: the heading's text lower-cased, without the characters
// that are not letters, digits, spaces, hyphens or underscores, spaces
// turned into hyphens; a repeated anchor gets -1, -2, ….
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		h := len(l) - len(strings.TrimLeft(l, "#"))
		if fenced || h == 0 || h > 6 || !strings.HasPrefix(l[h:], " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(l[h:])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// brokenLinks returns what is wrong with the relative links of the page at
// root/page: a target file that does not exist, or an anchor (#…) that is
// no heading of the Markdown page it points to. Links with a scheme
// (https:, mailto:) are not followed.
func brokenLinks(root, page string) ([]string, error) {
	doc, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, l := range mdLinks(string(doc)) {
		if regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(l.target) {
			continue
		}
		path, anchor, _ := strings.Cut(l.target, "#")
		target := page
		if path != "" {
			target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path)))
		}
		where := fmt.Sprintf("%s:%d: (%s)", page, l.line, l.target)
		raw, err := os.ReadFile(filepath.Join(root, target))
		if err != nil {
			if st, serr := os.Stat(filepath.Join(root, target)); serr == nil && st.IsDir() && anchor == "" {
				continue
			}
			errs = append(errs, fmt.Sprintf("%s: no file %s", where, target))
			continue
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(target, ".md") {
			errs = append(errs, fmt.Sprintf("%s: an anchor into %s, which is not a Markdown page", where, target))
			continue
		}
		if !headingAnchors(string(raw))[anchor] {
			errs = append(errs, fmt.Sprintf("%s: %s has no heading #%s", where, target, anchor))
		}
	}
	return errs, nil
}

// linkedPages returns the files the relative links of the page at
// root/page point to, relative to root.
func linkedPages(t *testing.T, root, page string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range mdLinks(string(doc)) {
		if path, _, _ := strings.Cut(l.target, "#"); path != "" && !strings.Contains(path, ":") {
			out = append(out, filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path))))
		}
	}
	return out
}

// TestDocLinks checks every relative link and image of the documentation
// (the README and docs/, and the READMEs of nodes/ros2 and python): the
// file it names exists, and an anchor is a heading of the page it points
// to.
func TestDocLinks(t *testing.T) {
	root := fixtures.Root()
	pages := append(fixtures.DocPages(), "nodes/ros2/README.md", "python/README.md")
	links := 0
	for _, page := range pages {
		errs, err := brokenLinks(root, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range errs {
			t.Error(e)
		}
		links += len(linkedPages(t, root, page))
	}
	if links < 20 {
		t.Errorf("%d relative links found in %v: the extraction is broken", links, pages)
	}
}

// TestDocPages checks that fixtures.DocPages, the pages whose commands
// TestReadmeCommands runs and whose links TestDocLinks checks, are the
// README and every docs/*.md page, and that the README links to every one
// of docs/.
func TestDocPages(t *testing.T) {
	root := fixtures.Root()
	glob, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md"}
	for _, g := range glob {
		want = append(want, "docs/"+filepath.Base(g))
	}
	got := fixtures.DocPages()
	slices.Sort(want)
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, want) {
		t.Errorf("fixtures.DocPages() = %v, want the pages %v", got, want)
	}
	if got[0] != "README.md" {
		t.Errorf("fixtures.DocPages() starts with %s, want README.md (its set-up commands run first)", got[0])
	}
	linked := linkedPages(t, root, "README.md")
	for _, p := range want[1:] {
		if p != "README.md" && !slices.Contains(linked, p) {
			t.Errorf("README.md does not link to %s", p)
		}
	}
}

// TestDocLinksRejects feeds brokenLinks a page with a link to a missing
// file, an anchor that is no heading, and links that are fine or not
// links (an external address, a link inside code).
func TestDocLinksRejects(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := "# Other page\n\n## The UR10e, end to end\n\n## Logs to datasets (bagtools)\n\n```sh\n# not a heading\n```\n"
	page := "# Page\n\nSee [other](other.md), [its UR10e](other.md#the-ur10e-end-to-end),\n" +
		"[logs](other.md#logs-to-datasets-bagtools) and [here](#page).\n" +
		"A [missing page](missing.md) and [a missing\nheading](other.md#not-a-heading).\n" +
		"![a picture](pic.png), [the site](https://example.com/x.md#y) and `[code](nope.md)`.\n" +
		"```sh\n[fenced](nope.md)\n```\n"
	for name, text := range map[string]string{"docs/other.md": other, "docs/page.md": page, "docs/pic.png": "png"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	errs, err := brokenLinks(root, "docs/page.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docs/page.md:5: (missing.md): no file docs/missing.md", "docs/page.md:5: (other.md#not-a-heading): docs/other.md has no heading #not-a-heading"}
	if !slices.Equal(errs, want) {
		t.Errorf("errors\n%q\nwant\n%q", errs, want)
	}
}
