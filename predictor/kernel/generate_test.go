package kernel

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedAssemblyUpToDate runs every avo generator under asmgen (the
// programs go generate runs) into a temporary directory and checks that the
// committed assembly and stub files are what they generate, so that no one
// edits the generated files by hand or changes a generator without
// regenerating.
func TestGeneratedAssemblyUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the generators (go test -short skips it)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the generators: %v", err)
	}
	for _, name := range []string{"gemm", "act"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			asm := filepath.Join(dir, name+"_amd64.s")
			stubs := filepath.Join(dir, name+"_stubs_amd64.go")
			cmd := exec.Command(goBin, "run", "./"+name, "-out", asm, "-stubs", stubs, "-pkg", "kernel")
			cmd.Dir = "asmgen"
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go run ./%s: %v\n%s", name, err, out)
			}
			for _, f := range []string{asm, stubs} {
				want, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Base(f))
				if err != nil {
					t.Fatalf("committed file: %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from what asmgen/%s generates: run go generate ./predictor/kernel", filepath.Base(f), name)
				}
			}
		})
	}
}
