package predictor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/calisym/calisym/predictor/kernel"
)

// envBitsChild marks the child process of TestSameBitsOnEveryKernelSet.
const envBitsChild = "CALISYM_TEST_BITS_CHILD"

// TestSameBitsOnEveryKernelSet runs the same work — rollouts of one and of
// 37 trajectories and a training pass (forward and backward with the
// parameter gradient) for every preset — once per kernel set this machine
// supports, each in a child process started with kernel.EnvKernels naming
// the set, and requires the SHA-256 of every output's bits to be the same
// for all sets: the kernel sets follow one order of operations, so a model
// predicts and trains to the same bits on any CPU.
func TestSameBitsOnEveryKernelSet(t *testing.T) {
	if os.Getenv(envBitsChild) != "" {
		t.Skip("child process")
	}
	sets := kernel.Supported()
	if len(sets) < 2 {
		t.Logf("only %v on this machine: the child still has to run", sets)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, s := range sets {
		cmd := exec.Command(exe, "-test.run=^TestBitsChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), kernel.EnvKernels+"="+s.String(), envBitsChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", s, err, out)
		}
		digest := ""
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "bits "); ok {
				digest += rest + "\n"
			}
		}
		if !strings.Contains(digest, "kernels="+s.String()) {
			t.Fatalf("%s: the child did not run the %s kernels:\n%s", s, s, out)
		}
		digest = strings.ReplaceAll(digest, "kernels="+s.String(), "")
		if first == "" {
			first = digest
			t.Logf("%s:\n%s", s, digest)
			continue
		}
		if digest != first {
			t.Errorf("%s gives other bits than %s:\n%s\nvs\n%s", s, sets[0], digest, first)
		}
	}
}

// TestBitsChild is the child of TestSameBitsOnEveryKernelSet; it does
// nothing unless started by it.
func TestBitsChild(t *testing.T) {
	if os.Getenv(envBitsChild) == "" {
		t.Skip("run by TestSameBitsOnEveryKernelSet")
	}
	fmt.Printf("bits kernels=%s\n", kernel.Active())
	for _, name := range PresetNames() {
		m := testModel(t, name, 0.5, 71)
		plan, err := m.Compile()
		if err != nil {
			t.Fatal(err)
		}
		l := m.Layout
		rng := rand.New(rand.NewPCG(5, 5))
		const horizon, rows = 20, 37
		x0 := randVec(rng, rows*l.StateDim(), 0.5)
		ports := randVec(rng, rows*horizon*l.PortDim(), 0.5)
		one := make([]float64, horizon*l.StateDim())
		if err := plan.NewRoller().Rollout(x0, ports, horizon, one); err != nil {
			t.Fatal(err)
		}
		many := make([]float64, rows*horizon*l.StateDim())
		br := plan.NewBatchRoller(rows, 2)
		if err := br.Rollout(x0, ports, rows, horizon, many); err != nil {
			t.Fatal(err)
		}
		br.Close()
		tr := NewTrainable(m)
		d2 := l.Dim()
		z := randVec(rng, rows*d2, 0.5)
		tape := tr.NewTape(rows)
		tr.Forward(tape, z, rows)
		zbar := append([]float64(nil), z...)
		grad := make([]float64, m.NumParams())
		tr.Backward(tape, zbar, grad)
		for _, o := range []struct {
			what string
			v    []float64
		}{{"rollout-1", one}, {"rollout-37", many}, {"forward", z}, {"backward", zbar}, {"gradient", grad}} {
			fmt.Printf("bits %s %s %s\n", name, o.what, bitsDigest(o.v))
		}
	}
}

// bitsDigest returns the hex SHA-256 of the IEEE-754 bits of v.
func bitsDigest(v []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, x := range v {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
