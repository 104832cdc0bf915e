package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/tty/ttytest"
)

// TestTrainProgressOnTerminal runs train with its stderr on a terminal:
// by default it draws a bar (carriage returns, no epoch line); with
// --progress plain, and with --quiet, one plain line per epoch with the
// elapsed time and the ETA and no bar.
func TestTrainProgressOnTerminal(t *testing.T) {
	data := trainConvertedSim(t)
	line := regexp.MustCompile(`(?m)^CaLiSym-gr epoch [12]/2 loss \S+ val \S+ \d+ tr/s \S+ s, elapsed \S+, ETA \S+\r?$`)
	for _, c := range []struct {
		name  string
		args  []string
		lines int
		bar   bool
	}{
		{"auto", nil, 0, true},
		{"--progress plain", []string{"--progress", "plain"}, 2, false},
		{"--quiet", []string{"--quiet"}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ptmx, pts := ttytest.Open(t)
			read := make(chan string)
			go func() {
				var b strings.Builder
				buf := make([]byte, 4096)
				for {
					n, err := ptmx.Read(buf)
					b.Write(buf[:n])
					if err != nil { // EIO once the terminal side is closed
						break
					}
				}
				read <- b.String()
			}()
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(pts)
			root.SetArgs(append([]string{"train", "--data", data, "--model", "gr", "--arch", "gr:2x4", "--epochs", "2", "--workers", "1",
				"--out", filepath.Join(t.TempDir(), "m.safetensors")}, c.args...))
			err := root.ExecuteContext(context.Background())
			pts.Close()
			got := <-read
			if err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			// the terminal ends lines with \r\n: a bar's \r is one not
			// followed by \n
			bar := strings.Contains(strings.ReplaceAll(got, "\r\n", "\n"), "\r")
			if n := len(line.FindAllString(got, -1)); n != c.lines || bar != c.bar {
				t.Errorf("%d epoch lines (want %d), a bar %v (want %v):\n%q", n, c.lines, bar, c.bar, got)
			}
		})
	}
}
