package trainer

import (
	"path/filepath"
	"strings"
)

// fileLabels names the log files of EvalResult.PerFile. Conversion names
// an episode by its file relative to the data root (convert's --data),
// and by the path it was converted from when the file lies outside it:
// an absolute path or one that climbs out ("../…"), a path of the machine
// that converted it, which then ended up in tables. Such a file is named
// by its base name where no other file of the evaluation has that base
// name, and kept as it is otherwise; a name relative to the data root is
// kept, so that the JSON of data converted under its root does not change.
func fileLabels(files []string) []string {
	outside := func(f string) bool {
		return filepath.IsAbs(f) || f == ".." || strings.HasPrefix(f, "../") || strings.HasPrefix(f, ".."+string(filepath.Separator))
	}
	base := map[string]int{}
	for _, f := range files {
		base[filepath.Base(f)]++
	}
	labels := make([]string, len(files))
	for i, f := range files {
		labels[i] = f
		if outside(f) && base[filepath.Base(f)] == 1 {
			labels[i] = filepath.Base(f)
		}
	}
	return labels
}
