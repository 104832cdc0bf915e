package outguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "run.mcap")
	data := filepath.Join(dir, "data")
	link := filepath.Join(dir, "link.mcap")
	for _, p := range []string{log, filepath.Join(data, "x.npy")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("input"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(log, link); err != nil {
		t.Fatal(err)
	}
	in := []Path{{"LOG", log}, {"--data", data}, {"--params", ""}}
	for _, c := range []struct {
		name string
		outs []Path
		want string // "" passes
	}{
		{"elsewhere", []Path{{"--out", filepath.Join(dir, "out.mcap")}}, ""},
		{"no output", []Path{{"--out", ""}}, ""},
		{"the input", []Path{{"--out", log}}, "--out " + log + " is also the input LOG"},
		{"the input spelt otherwise", []Path{{"--out", filepath.Join(dir, ".", "data", "..", "run.mcap")}}, "is also the input LOG"},
		{"a link to the input", []Path{{"--out", link}}, "is also the input LOG"},
		{"a file of an input folder", []Path{{"--out", filepath.Join(data, "x.npy")}}, "is inside the input --data"},
		{"a new file in an input folder", []Path{{"--out", filepath.Join(data, "model.safetensors")}}, "is inside the input --data"},
		{"the input folder", []Path{{"--out", data}}, "is also the input --data"},
		{"two outputs one file", []Path{{"--checkpoint", filepath.Join(dir, "m")}, {"--out", filepath.Join(dir, "m")}}, "--checkpoint and --out are both"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(in, c.outs)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrOverwrite)):
				t.Errorf("error %v, want ErrOverwrite containing %q", err, c.want)
			}
		})
	}
}

func TestCheckDir(t *testing.T) {
	write := func(t *testing.T, dir, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // "" passes
	}{
		{"empty", func(*testing.T, string) {}, ""},
		{"user files", func(t *testing.T, d string) { write(t, d, "notes.txt", "mine") }, ""},
		{"its own", func(t *testing.T, d string) { write(t, d, Marker, "demo\n") }, ""},
		{"another command's", func(t *testing.T, d string) { write(t, d, Marker, "convert\n") }, "written by calisym convert"},
		{"a conversion before the marker", func(t *testing.T, d string) {
			write(t, d, "report.json", `{"robot": "r", "window_len": 100, "stride": 10, "splits": {}}`)
		}, "written by calisym convert"},
		{"a demo's report", func(t *testing.T, d string) { write(t, d, "report.json", `{"system": "pendulum"}`) }, ""},
		{"a dataset", func(t *testing.T, d string) { write(t, d, "meta.json", `{}`) }, "holds a dataset (meta.json)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			err := CheckDir("--out", dir, "demo")
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--out "+dir)):
				t.Errorf("error %v, want one naming --out %s and containing %q", err, dir, c.want)
			}
		})
	}
	if err := CheckDir("--out", filepath.Join(t.TempDir(), "missing"), "demo"); err != nil {
		t.Errorf("a missing folder: %v", err)
	}
}

// TestClaim: a claimed folder is the command's own, and refused to the
// others.
func TestClaim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := Claim(dir, "sim"); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir("--out", dir, "sim"); err != nil {
		t.Errorf("its own folder: %v", err)
	}
	if err := CheckDir("--out", dir, "demo"); err == nil || !strings.Contains(err.Error(), "written by calisym sim") {
		t.Errorf("another's folder: %v", err)
	}
}
