package msgs_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/internal/msgstest"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// TestDefinitions checks the complete definitions of the typed messages:
// rosbag2's concatenation order and delimiters, and that each parses.
func TestDefinitions(t *testing.T) {
	want := "std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n" +
		"\n================================================================================\nMSG: std_msgs/Header\n" +
		"builtin_interfaces/Time stamp\nstring frame_id\n" +
		"\n================================================================================\nMSG: builtin_interfaces/Time\n" +
		"int32 sec\nuint32 nanosec\n"
	if got := (&JointState{}).ROSDefinition(); got != want {
		t.Errorf("JointState definition:\n%s\nwant:\n%s", got, want)
	}
	// Dependencies are written once, depth first in sorted order.
	var order []string
	for _, line := range strings.Split((&Odometry{}).ROSDefinition(), "\n") {
		if name, ok := strings.CutPrefix(line, "MSG: "); ok {
			order = append(order, name)
		}
	}
	wantOrder := []string{"geometry_msgs/PoseWithCovariance", "geometry_msgs/Pose", "geometry_msgs/Point",
		"geometry_msgs/Quaternion", "geometry_msgs/TwistWithCovariance", "geometry_msgs/Twist",
		"geometry_msgs/Vector3", "std_msgs/Header", "builtin_interfaces/Time"}
	if strings.Join(order, ",") != strings.Join(wantOrder, ",") {
		t.Errorf("Odometry dependencies %v, want %v", order, wantOrder)
	}
	for _, m := range msgstest.SampleMessages() {
		s, err := SchemaOf(m)
		if err != nil {
			t.Errorf("%s: %v", m.ROSType(), err)
			continue
		}
		if s.Root.Name != rosmsg.NormalizeType(m.ROSType()) || len(s.Implied()) != 0 {
			t.Errorf("%s: root %s, implied %v", m.ROSType(), s.Root.Name, s.Implied())
		}
	}
	if _, err := Definition("nope_msgs/msg/Nope"); !errors.Is(err, rosmsg.ErrUnknownType) {
		t.Errorf("unknown type: %v", err)
	}
	// The interface file documents every field.
	def := (&PredictedTrajectory{}).ROSDefinition()
	s, err := rosmsg.ParseSchema("calisym/msg/PredictedTrajectory", rosmsg.ROS2Msg, []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range s.Root.Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "header dt coordinate_names horizon q p port_names ports model_id model_sha256 inference_latency_s" {
		t.Errorf("PredictedTrajectory fields: %s", got)
	}
}
