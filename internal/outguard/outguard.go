// Package outguard keeps a command's outputs off its own inputs and off
// the folders that other commands wrote: one rule for every writer of the
// command-line tool, checked before any work is done. An output may not
// be any input of the same command (the same file, or a path inside an
// input directory), two outputs of one command may not be one file, and a
// folder that another command wrote (its marker file, Marker, names that
// command) is refused unless it is the writing command's own.
package outguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/calisym/calisym/internal/atomicfile"
)

// ErrOverwrite wraps every refusal of this package.
var ErrOverwrite = errors.New("output refused")

// Marker is the file a command that writes a folder leaves in it, holding
// the command's name: the folder is then that command's own.
const Marker = ".calisym-output"

// Path is one file or folder a command reads or writes, named as the
// command line names it ("--out", "LOG").
type Path struct {
	// Flag names the path on the command line.
	Flag string
	// Path is the path; "" is skipped.
	Path string
}

// Check refuses outputs that would replace or write into an input, and
// two outputs that are one file. It reads no file but the inputs' and
// outputs' metadata.
func Check(inputs, outputs []Path) error {
	for i, o := range outputs {
		if o.Path == "" {
			continue
		}
		for _, in := range inputs {
			if in.Path == "" {
				continue
			}
			if same(o.Path, in.Path) {
				return fmt.Errorf("%w: %s %s is also the input %s: it would be overwritten; write the output elsewhere", ErrOverwrite, o.Flag, o.Path, in.Flag)
			}
			if inside(o.Path, in.Path) {
				return fmt.Errorf("%w: %s %s is inside the input %s %s: it would change that input; write the output elsewhere", ErrOverwrite, o.Flag, o.Path, in.Flag, in.Path)
			}
		}
		for _, p := range outputs[:i] {
			if p.Path != "" && same(o.Path, p.Path) {
				return fmt.Errorf("%w: %s and %s are both %s: one would overwrite the other", ErrOverwrite, p.Flag, o.Flag, o.Path)
			}
		}
	}
	return nil
}

// Owner returns the command that wrote the folder dir: the name in its
// Marker, else "convert" for a folder holding a conversion's report.json,
// "a dataset" for a dataset folder (meta.json), "" for a folder of no
// command's (or none at all).
func Owner(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, Marker))
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %w", ErrOverwrite, err)
	}
	// Folders written before the marker existed.
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
		var r struct {
			WindowLen *int            `json:"window_len"`
			Splits    json.RawMessage `json:"splits"`
		}
		if json.Unmarshal(b, &r) == nil && r.WindowLen != nil && r.Splits != nil {
			return "convert", nil
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err == nil {
		return "a dataset", nil
	}
	return "", nil
}

// CheckDir refuses the output folder dir (flag names it) when another
// command than command wrote it. A missing folder passes.
func CheckDir(flag, dir, command string) error {
	if dir == "" {
		return nil
	}
	owner, err := Owner(dir)
	if err != nil {
		return err
	}
	if owner != "" && owner != command {
		who := "was written by calisym " + owner
		if owner == "a dataset" {
			who = "holds a dataset (meta.json)"
		}
		return fmt.Errorf("%w: %s %s %s: calisym %s would overwrite or mix with its files; choose another folder", ErrOverwrite, flag, dir, who, command)
	}
	return nil
}

// Claim creates the folder dir if needed and marks it as command's own
// (after CheckDir).
func Claim(dir, command string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(dir, Marker)
	if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == command {
		return nil
	}
	return atomicfile.WriteFile(p, []byte(command+"\n"))
}

// same reports whether a and b name one file: the same cleaned path, or
// both existing and one file (a link, another spelling).
func same(a, b string) bool {
	if abs(a) == abs(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// inside reports whether path lies inside the existing directory dir.
func inside(path, dir string) bool {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return false
	}
	d := resolve(dir)
	for p := resolve(filepath.Dir(path)); ; p = filepath.Dir(p) {
		if p == d {
			return true
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

// resolve returns p absolute with its symbolic links resolved as far as its
// existing part goes.
func resolve(p string) string {
	p = abs(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d := filepath.Dir(p); d != p {
		return filepath.Join(resolve(d), filepath.Base(p))
	}
	return p
}
