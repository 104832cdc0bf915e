// Package atomicfile writes output files so that a reader never finds one
// that looks complete when it is not: the bytes go to a temporary file in
// the destination's directory, which is renamed onto the destination only
// once everything was written and the file closed. A command that fails
// midway (an error, a crash, a full disk) leaves the destination as it was
// before, and no temporary file where it could clean up. Files are not
// synced to disk: this guards against a command that fails, not against
// a power cut.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Perm is the mode of the files this package writes: the temporary file
// is created private and then set to Perm (the umask does not apply), as
// os.WriteFile(path, data, 0o644) leaves a file under the usual umask.
const Perm fs.FileMode = 0o644

// File is an output file being written under a temporary name. Write to
// it, then Commit to put it at its path; Abort (safe to defer, a no-op
// after Commit) removes it.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts the file that Commit will put at path: a temporary file
// ".<name>.*.partial" in path's directory, so that the rename stays on one
// file system.
func Create(path string) (*File, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".*.partial")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Chmod(Perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: f, path: path}, nil
}

// Path returns the path Commit puts the file at.
func (f *File) Path() string { return f.path }

// Commit closes the file and renames it onto its path, replacing what was
// there. On an error the temporary file is removed and the path left as
// it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("commit %s: %w", f.path, os.ErrClosed)
	}
	f.done = true
	tmp := f.Name()
	err := f.Close()
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// CommitTo closes the file and renames it onto path instead of its own
// (a partial output kept under a name that says so); Path's file is left
// as it was.
func (f *File) CommitTo(path string) error {
	f.path = path
	return f.Commit()
}

// Abort closes and removes the temporary file, leaving the path as it
// was. It does nothing after Commit or a previous Abort, so that it can be
// deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path as os.WriteFile does, through a temporary
// file: path holds either its previous contents or all of data, never a
// part of it.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// Remove removes path where it exists: a completion marker (a dataset's
// meta.json, a report) that an output about to be rewritten must not keep
// while its other files change. A missing path is not an error.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the previous %s: %w", path, err)
	}
	return nil
}
