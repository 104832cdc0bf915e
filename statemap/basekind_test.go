package statemap

import (
	"slices"
	"testing"
)

// TestBaseKind: the floating-base kind is read off the coordinate names,
// and the coordinates zero at a window's first sample follow it.
func TestBaseKind(t *testing.T) {
	for _, c := range []struct {
		coords []string
		kind   string
		origin []int
	}{
		{append(BaseCoordinates(StateFloatingBase), "LF_HAA"), StateFloatingBase, []int{0, 1, 2, 3, 4, 5}},
		{BaseCoordinates(StateFloatingBaseGravity), StateFloatingBaseGravity, []int{0, 1, 2, 5}},
		{[]string{"q1", "q2"}, "", nil},
		{BaseCoordinates(StateFloatingBase)[:5], "", nil},
	} {
		if k := BaseKind(c.coords); k != c.kind {
			t.Errorf("BaseKind(%v) = %q, want %q", c.coords, k, c.kind)
		}
		if o := OriginCoordinates(c.coords); !slices.Equal(o, c.origin) {
			t.Errorf("OriginCoordinates(%v) = %v, want %v", c.coords, o, c.origin)
		}
	}
}
