package logio

import (
	"errors"
	"math"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// TestDecodeBagFixture decodes every message of the real PR2 bag with the
// schemas its connections carry, and checks that the byte-level Extractor
// reads the same values as paths on the decoded messages: joint states by
// joint name, odometry, and tf transforms picked by a filter.
func TestDecodeBagFixture(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pathsByTopic := map[string][]string{
		"/joint_states": {`.position[name=="r_shoulder_pan_joint"]`, `.velocity[name=="r_shoulder_pan_joint"]`,
			`.effort[name=="torso_lift_joint"]`, ".position[0]", ".position[-1]", ".header.stamp"},
		"/base_odometry/odom": {".pose.pose.position.x", ".pose.pose.orientation.w", ".twist.twist.angular.z",
			".pose.covariance[35]", ".header.stamp.nsec"},
		"/tf": {`.transforms[:]{child_frame_id=="/base_footprint"}.transform.translation.x`, ".transforms[0].header.stamp"},
	}
	type decoder struct {
		schema *rosmsg.Schema
		paths  []*rosmsg.MessagePath
		x      *rosmsg.Extractor
	}
	decoders := map[*Channel]*decoder{}
	counts := map[string]int{}
	matched := map[string]int{}
	for m, err := range Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		d := decoders[m.Channel]
		if d == nil {
			dialect, err := rosmsg.DialectFor(m.Channel.SchemaEncoding)
			if err != nil {
				t.Fatal(err)
			}
			s, err := rosmsg.ParseSchema(m.Channel.Type, dialect, m.Channel.Schema)
			if err != nil {
				t.Fatalf("%s: %v", m.Channel.Topic, err)
			}
			d = &decoder{schema: s}
			for _, e := range pathsByTopic[m.Channel.Topic] {
				p, err := rosmsg.CompilePath(s, e)
				if err != nil {
					t.Fatalf("%s%s: %v", m.Channel.Topic, e, err)
				}
				d.paths = append(d.paths, p)
			}
			enc, err := rosmsg.EncodingFor(m.Channel.Encoding)
			if err != nil {
				t.Fatal(err)
			}
			if d.x, err = rosmsg.NewExtractor(s, enc, d.paths...); err != nil {
				t.Fatal(err)
			}
			decoders[m.Channel] = d
		}
		v, err := d.schema.Decode(rosmsg.EncodingROS1, m.Data)
		if err != nil {
			t.Fatalf("%s message %d: %v", m.Channel.Topic, counts[m.Channel.Topic], err)
		}
		counts[m.Channel.Topic]++
		if m.Channel.Topic == "/joint_states" {
			if names, _ := v.Field("name"); len(names.([]string)) != 45 {
				t.Fatalf("joint_states has %d names", len(names.([]string)))
			}
		}
		out := make([]float64, len(d.paths))
		xerr := d.x.Extract(m.Data, out)
		for i, p := range d.paths {
			want, err := p.Float64(v)
			if err != nil {
				if !errors.Is(err, rosmsg.ErrNoMatch) && !errors.Is(err, rosmsg.ErrIndexRange) || xerr == nil || !math.IsNaN(out[i]) {
					t.Fatalf("%s%s: %v (extractor: %v)", m.Channel.Topic, p, err, xerr)
				}
				continue
			}
			matched[m.Channel.Topic]++
			if out[i] != want {
				t.Fatalf("%s%s: extracted %v, decoded %v", m.Channel.Topic, p, out[i], want)
			}
		}
	}
	if counts["/joint_states"] != 1325 || counts["/base_odometry/odom"] != 1229 || counts["/tf"] == 0 {
		t.Errorf("decoded %v", counts)
	}
	if matched["/tf"] == 0 || matched["/joint_states"] != 6*1325 {
		t.Errorf("paths matched %v", matched)
	}
}
