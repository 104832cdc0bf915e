//go:build !amd64 || noasm

package kernel

// cpuHas reports whether this build can run the kernel set s: only Go
// without the amd64 assembly.
func cpuHas(s Set) bool { return s == Go }
