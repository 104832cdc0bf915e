package kernel

import "testing"

// TestActGuardPages runs the activation kernels, TanhRidgeGrad and
// TanhRidgeStep in every set with all operands ending at a page boundary:
// the tails must neither read nor write past the slices.
func TestActGuardPages(t *testing.T) {
	forEachSet(t, func(t *testing.T, s Set) {
		for _, rows := range []int{1, 2, 3} {
			for n := 1; n <= 17; n++ {
				Sech2(rows, n, guarded(t, rows*n), n, guarded(t, n), guarded(t, n), guarded(t, rows*n), n)
				TanhSech2(rows, n, guarded(t, rows*n), n, guarded(t, n), guarded(t, n), guarded(t, rows*n), n, guarded(t, rows*n), n)
			}
		}
		for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17} {
			for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 31, 33} {
				TanhRidgeGrad(k, n, guarded(t, k*n), n, guarded(t, k), guarded(t, k), guarded(t, n), guarded(t, k), guarded(t, n), guarded(t, 1))
				if n%2 == 0 {
					TanhRidgeStep(k, n/2, guarded(t, k*n), n, guarded(t, k), guarded(t, k), 0.5, guarded(t, n), guarded(t, k), guarded(t, n), guarded(t, 1))
				}
			}
		}
	})
}
