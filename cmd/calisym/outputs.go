package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/calisym/calisym/internal/outguard"
)

// checkFileOut checks, before any work, an output file that a command
// writes at its end (flag names it; "" passes): its folder exists, and it
// is neither one of the inputs nor inside an input folder (a run
// directory whose model the command scores).
func checkFileOut(flag, path string, inputs []outguard.Path) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s %s: the folder %s does not exist (create it first)", outguard.ErrOverwrite, flag, path, filepath.Dir(path))
	}
	return outguard.Check(inputs, []outguard.Path{{Flag: flag, Path: path}})
}

// runInputs expands the run-directory patterns of --runs ("{system}"
// standing for each of systems) into the inputs they name.
func runInputs(runs []string, systems []string) []outguard.Path {
	var in []outguard.Path
	for _, pat := range runs {
		for _, s := range systems {
			ms, _ := filepath.Glob(strings.ReplaceAll(pat, "{system}", s))
			for _, m := range ms {
				in = append(in, outguard.Path{Flag: "--runs", Path: m})
			}
		}
	}
	return in
}
