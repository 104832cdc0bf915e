package kernel

import (
	"fmt"
	"os"
	"strings"
)

// Set names one implementation of every kernel of the package: portable Go,
// AVX2 with FMA3, or AVX-512. All sets compute the same operations in the
// same order (see order.go), so they return the same bits.
type Set uint8

// The kernel sets, slowest first.
const (
	Go     Set = iota // portable Go (math.FMA for every fused multiply–add)
	AVX2              // 256-bit AVX2 + FMA3 assembly
	AVX512            // 512-bit AVX-512 (F, with VL and DQ) assembly
)

// EnvKernels is the environment variable that caps the kernel set chosen at
// start-up: "go", "avx2" or "avx512". A set the CPU cannot run, or an
// unknown name, is ignored (see Selection).
const EnvKernels = "CALISYM_KERNELS"

// String returns the set's name as EnvKernels spells it.
func (s Set) String() string {
	switch s {
	case Go:
		return "go"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("Set(%d)", uint8(s))
}

// ParseSet returns the set named s ("go", "avx2" or "avx512", any case).
func ParseSet(s string) (Set, error) {
	for _, k := range []Set{Go, AVX2, AVX512} {
		if strings.EqualFold(strings.TrimSpace(s), k.String()) {
			return k, nil
		}
	}
	return Go, fmt.Errorf("kernel: unknown kernel set %q (known: go, avx2, avx512)", s)
}

// Supported returns the sets this CPU and build can run, slowest first. Go
// is always among them.
func Supported() []Set {
	sets := []Set{Go}
	for _, s := range []Set{AVX2, AVX512} {
		if cpuHas(s) {
			sets = append(sets, s)
		}
	}
	return sets
}

// best returns the fastest supported set.
func best() Set {
	s := Supported()
	return s[len(s)-1]
}

// active is the set the kernels run. It is chosen once, when the package is
// initialised, from the CPU's features and EnvKernels; only this package's
// tests change it.
var active, selectionNote = selectSet(os.Getenv(EnvKernels))

// selectSet returns the set to run for the value of EnvKernels and, when that
// value was not honoured, a sentence saying why.
func selectSet(env string) (Set, string) {
	if env == "" {
		return best(), ""
	}
	want, err := ParseSet(env)
	if err != nil {
		return best(), fmt.Sprintf("%s=%q is not a kernel set (go, avx2, avx512); using %s", EnvKernels, env, best())
	}
	if !cpuHas(want) {
		return best(), fmt.Sprintf("%s=%s: this CPU or build cannot run it; using %s", EnvKernels, want, best())
	}
	return want, ""
}

// Active returns the kernel set in use.
func Active() Set { return active }

// Selection describes the kernel set in use and how it was chosen, for
// programs to print beside timings: for example "avx512 (supported: go,
// avx2, avx512)", followed by a note when EnvKernels was set but not
// honoured.
func Selection() string {
	var names []string
	for _, s := range Supported() {
		names = append(names, s.String())
	}
	out := fmt.Sprintf("%s (supported: %s)", active, strings.Join(names, ", "))
	if selectionNote != "" {
		out += "; " + selectionNote
	}
	return out
}

// Accelerated reports whether the kernels run SIMD assembly on this machine.
func Accelerated() bool { return active != Go }
