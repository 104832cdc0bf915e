// Package nodetest runs the JavaScript cross-checks in test/js, which call
// Foxglove's own npm libraries (@mcap/core, @foxglove/rosmsg2-serialization,
// @foxglove/ws-protocol) on what calisym writes and serves.
package nodetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Dir returns the absolute path of test/js in this repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "test", "js")
}

// Require skips the test when node or the npm packages are missing, or
// fails it when the environment variable CI is "true" (CI must run every
// cross-check; scripts/test.sh installs the packages).
func Require(t testing.TB) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(filepath.Join(Dir(), "node_modules")); err != nil {
		missing = "test/js/node_modules is missing (run: npm ci --prefix test/js)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("nodetest: %s", missing)
	}
	t.Skipf("nodetest: %s", missing)
}

// Run runs `node test/js/<script> args...` with a timeout and returns its
// standard output; the test fails with the script's stderr when it exits
// non-zero.
func Run(t testing.TB, timeout time.Duration, script string, args ...string) []byte {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(Dir(), script)}, args...)...)
	cmd.Dir = Dir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstderr:\n%s\nstdout:\n%s", script, err, stderr.String(), stdout.String())
	}
	return stdout.Bytes()
}

// Start starts `node test/js/<script> args...` in the background and returns
// the command; the caller waits on it. Its output goes to the buffers given.
func Start(t testing.TB, ctx context.Context, stdout, stderr *bytes.Buffer, script string, args ...string) *exec.Cmd {
	t.Helper()
	Require(t)
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(Dir(), script)}, args...)...)
	cmd.Dir = Dir()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	return cmd
}
