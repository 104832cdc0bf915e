package logio

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/foxglove/mcap/go/mcap"
)

func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	mc, _ := testMCAP(t, 30, &mcap.WriterOptions{Chunked: true, ChunkSize: 300, Compression: mcap.CompressionZSTD}, true)
	bag := smallBag(20).encode(t)
	files := map[string][]byte{"a.mcap": mc, "b.bag": bag, "cut.bag": bag[:len(bag)*2/3]}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		file   string
		want   []TopicInfo // RateHz checked separately
		err    error
		rateHz float64 // of the first topic
	}{
		{file: "a.mcap", want: []TopicInfo{
			{Topic: "/joint_states", Type: "sensor_msgs/msg/JointState", Encoding: rosmsg.MessageEncodingCDR, Count: 10, First: 1_700_000_000_000_000_000, Last: 1_700_000_000_027_000_000},
			{Topic: "/odom", Type: "nav_msgs/msg/Odometry", Encoding: rosmsg.MessageEncodingCDR, Count: 20, First: 1_700_000_000_001_000_000, Last: 1_700_000_000_029_000_000},
		}, rateHz: 9 / 0.027},
		{file: "b.bag", want: []TopicInfo{
			{Topic: "/joint_states", Type: "sensor_msgs/JointState", Encoding: rosmsg.MessageEncodingROS1, Count: 10, First: 1_349_176_210_000_000_007, Last: 1_349_176_210_180_000_007},
			{Topic: "/odom", Type: "nav_msgs/Odometry", Encoding: rosmsg.MessageEncodingROS1, Count: 10, First: 1_349_176_210_010_000_007, Last: 1_349_176_210_190_000_007},
		}, rateHz: 9 / 0.18},
		{file: "cut.bag", err: ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			infos, err := Summarize(filepath.Join(dir, tt.file), nil)
			if !errors.Is(err, tt.err) || tt.err == nil && err != nil {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				if len(infos) != 2 || infos[0].Count == 0 || infos[0].Count >= 10 {
					t.Errorf("partial summary %+v", infos)
				}
				return
			}
			if len(infos) != len(tt.want) {
				t.Fatalf("%+v", infos)
			}
			for i, w := range tt.want {
				g := infos[i]
				g.RateHz = 0
				if g != w {
					t.Errorf("topic %d = %+v, want %+v", i, g, w)
				}
			}
			if math.Abs(infos[0].RateHz-tt.rateHz) > 1e-6*tt.rateHz {
				t.Errorf("rate %v, want %v", infos[0].RateHz, tt.rateHz)
			}
		})
	}
}

func TestSummarizeFixture(t *testing.T) {
	path := fixtures.Path(t, "bags", "pr1012_sensors.bag")
	infos, err := Summarize(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]TopicInfo{}
	for _, i := range infos {
		by[i.Topic] = i
	}
	js := by["/joint_states"]
	if js.Count != 1325 || js.Type != "sensor_msgs/JointState" || js.RateHz < 95 || js.RateHz > 102 || math.Abs(js.Duration()-13.4) > 0.1 {
		t.Errorf("/joint_states: %+v", js)
	}
	if od := by["/base_odometry/odom"]; od.Count != 1229 || od.Type != "nav_msgs/Odometry" {
		t.Errorf("/base_odometry/odom: %+v", od)
	}
	if by["/tf"].Count == 0 {
		t.Errorf("/tf missing: %+v", infos)
	}
}
