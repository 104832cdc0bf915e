package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestCommitAbort checks that a file appears at its path only on Commit,
// with mode Perm, that Abort leaves the previous contents and no
// temporary file, and that WriteFile replaces a file whole.
func TestCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.mcap")
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("partial"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the path exists before Commit: %v", err)
	}
	f.Abort()
	f.Abort() // twice is fine
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("after Abort the directory holds %v", names)
	}

	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	f, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if _, err := f.WriteString("new, whole"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("before Commit the path holds %q, want the previous file", b)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after Commit: nothing
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new, whole" {
		t.Fatalf("after Commit: %q, %v", b, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != Perm {
		t.Fatalf("mode %v, %v; want %v", st.Mode(), err, Perm)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "out.mcap" {
		t.Fatalf("the directory holds %v, want only out.mcap", names)
	}
	if err := f.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}
	// A rename that cannot happen (the path is a non-empty directory)
	// fails and leaves no temporary file.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(blocked, []byte("x")); err == nil {
		t.Error("WriteFile onto a non-empty directory succeeded")
	}
	if names := entries(t, dir); len(names) != 2 {
		t.Errorf("after a failed WriteFile the directory holds %v", names)
	}
	if err := Remove(filepath.Join(dir, "missing")); err != nil {
		t.Error(err)
	}
}
