package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// copyTree copies the regular files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// editFile writes a copy of src at dst with old replaced by new (which
// must occur).
func editFile(t *testing.T, src, dst, old, new string) {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s lacks %q", src, old)
	}
	if err := os.WriteFile(dst, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNodeCheckLoadsWhatNodeLoads: `node --check` fails where the node
// would, before any model or log: a URDF not under the data root, a xacro
// file, a joint of the params that the URDF lacks; and a params file
// copied out of the repository, whose node.definitions directory is not
// beside it, still checks (the definitions of params/interfaces are built
// in). --check used to read the params and the message definitions only:
// it passed the first three and failed the copy.
func TestNodeCheckLoadsWhatNodeLoads(t *testing.T) {
	anymalData := fixtures.Path(t, "anymal_sim")
	t.Setenv("CALISYM_DATA", "") // the data root is --data alone
	dir := t.TempDir()
	repoParams := filepath.Join(fixtures.Root(), "params")
	anymal := filepath.Join(repoParams, "anymal.yaml")

	// A data root whose URDF is a xacro file.
	xacroRoot := filepath.Join(dir, "xacro")
	copyTree(t, filepath.Join(anymalData, "anymal_d_simple_description"), filepath.Join(xacroRoot, "anymal_d_simple_description"))
	urdf := filepath.Join(xacroRoot, "anymal_d_simple_description", "urdf", "anymal.urdf")
	editFile(t, urdf, urdf, "<robot ", `<robot xmlns:xacro="http://www.ros.org/wiki/xacro" `)
	// A joint the URDF lacks.
	badJoint := filepath.Join(dir, "bad_joint.yaml")
	editFile(t, anymal, badJoint, "- name: LF_HAA", "- name: LF_XXX")

	for _, tc := range []struct {
		name, params, data string
		want               []string // error; nil: OK
	}{
		{"anymal", anymal, anymalData, nil},
		{"no data root", anymal, "", []string{"model.urdf", "--data"}},
		{"xacro", anymal, xacroRoot, []string{"xacro file", "expand it first"}},
		{"joint not in the URDF", badJoint, anymalData, []string{`joint "LF_XXX" is not a movable joint`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"node", "--check", "--params", tc.params}
			if tc.data != "" {
				args = append(args, "--data", tc.data)
			}
			out, _, err := runCLI(t, args...)
			if tc.want == nil {
				if err != nil || !strings.Contains(out, ": OK") {
					t.Fatalf("%v: %v\n%s", args, err, out)
				}
				// the ANYmal triggers on its state: no topic, no dangling space
				if !strings.Contains(out, "trigger on_state)") {
					t.Errorf("%v: %q, want the trigger named without a topic", args, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("%v passed:\n%s", args, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: %v; want it to mention %q", args, err, w)
				}
			}
		})
	}

	// Params files copied out of the repository, without their
	// interfaces directory.
	for _, name := range []string{"crazyflie.yaml", "px4_quadrotor.yaml", "crazyflie_gravity.yaml"} {
		cp := filepath.Join(dir, name)
		raw, err := os.ReadFile(filepath.Join(repoParams, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "definitions: interfaces") {
			t.Fatalf("%s no longer names definitions: interfaces", name)
		}
		if err := os.WriteFile(cp, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, _, err := runCLI(t, "node", "--check", "--params", cp); err != nil || !strings.Contains(out, ": OK") {
			t.Errorf("node --check of a copy of %s: %v\n%s", name, err, out)
		}
	}
}
