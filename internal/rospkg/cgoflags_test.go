package rospkg

import (
	"regexp"
	"strings"
	"testing"
)

// TestCMakeCgoFlags: the rclgo build's CGO_CFLAGS, which replace go's
// default "-g -O2", give them again, and keep Jazzy's deprecation of
// rcl_timer_init (wrapped by rclgo, never called by the node) out of the
// colcon build's output, as TestROS2EndToEnd found on Jazzy.
func TestCMakeCgoFlags(t *testing.T) {
	cm := read(t, "CMakeLists.txt")
	m := regexp.MustCompile(`set\(CALISYM_CGO_CFLAGS "([^"]*)"\)`).FindStringSubmatch(cm)
	if m == nil {
		t.Fatal(`CMakeLists.txt sets no CALISYM_CGO_CFLAGS "…"`)
	}
	flags := strings.Fields(m[1])
	for _, want := range []string{"-O2", "-g", "-Wno-deprecated-declarations"} {
		found := false
		for _, f := range flags {
			found = found || f == want
		}
		if !found {
			t.Errorf("CALISYM_CGO_CFLAGS %q lacks %s", m[1], want)
		}
	}
	if !strings.Contains(cm, `"CGO_CFLAGS=${CALISYM_CGO_CFLAGS}"`) {
		t.Error("the rclgo build does not pass CALISYM_CGO_CFLAGS as CGO_CFLAGS")
	}
}
