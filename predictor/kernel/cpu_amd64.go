//go:build amd64 && !noasm

package kernel

import "golang.org/x/sys/cpu"

// cpuHas reports whether this CPU and OS can run the kernel set s.
func cpuHas(s Set) bool {
	x := cpu.X86
	switch s {
	case Go:
		return true
	case AVX2:
		return x.HasAVX2 && x.HasFMA
	case AVX512:
		return x.HasAVX2 && x.HasFMA && x.HasAVX512F && x.HasAVX512VL && x.HasAVX512DQ
	}
	return false
}
