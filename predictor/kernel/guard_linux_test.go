package kernel

import (
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns a slice of n float64 whose end touches an inaccessible page,
// so that any read or write past it faults.
func guarded(t *testing.T, n int) []float64 {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n*8+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	off := size - page - n*8
	s := unsafe.Slice((*float64)(unsafe.Pointer(&mem[off])), n)
	for i := range s {
		s[i] = float64(i%7) - 3
	}
	return s
}

// TestGuardPages runs every kernel with all operands ending at a page
// boundary: the tail handling must neither read nor write past the slices.
func TestGuardPages(t *testing.T) {
	paths(t, func(t *testing.T) {
		for _, R := range []int{1, 2, 3, 4, 5} {
			for _, m := range []int{1, 2, 3, 5, 13} {
				for _, n := range []int{1, 2, 3, 5, 6, 7, 13, 17, 35} {
					a := guarded(t, m*n)
					MatVec(m, n, a, n, guarded(t, n), guarded(t, m))
					MatTVec(m, n, a, n, guarded(t, m), guarded(t, n))
					MulNT(R, m, n, guarded(t, R*n), n, a, n, guarded(t, R*m), m)
					MulNN(R, m, n, guarded(t, R*m), m, a, n, guarded(t, R*n), n)
				}
			}
		}
	})
}

// TestGuardPagesGemm runs Gemm in every transpose combination, and Sech2,
// with all operands ending at a page boundary.
func TestGuardPagesGemm(t *testing.T) {
	paths(t, func(t *testing.T) {
		for _, tc := range transCases {
			for _, m := range []int{1, 2, 3, 4, 5, 13} {
				for _, n := range []int{1, 2, 3, 5, 6, 7, 9, 11, 13, 17, 25} {
					for _, k := range []int{1, 2, 3, 5, 13} {
						for _, beta := range []float64{0, 1} {
							ar, ac := m, k
							if tc.tA {
								ar, ac = k, m
							}
							br, bc := k, n
							if tc.tB {
								br, bc = n, k
							}
							Gemm(tc.tA, tc.tB, m, n, k, 1, guarded(t, ar*ac), ac, guarded(t, br*bc), bc, beta, guarded(t, m*n), n)
						}
					}
				}
			}
		}
		for rows := 1; rows < 4; rows++ {
			for n := 1; n < 10; n++ {
				Sech2(rows, n, guarded(t, rows*n), n, guarded(t, n), guarded(t, n), guarded(t, rows*n), n)
			}
		}
	})
}
