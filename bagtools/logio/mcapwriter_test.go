package logio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"gopkg.in/yaml.v3"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// written is one message a test wrote.
type written struct {
	topic            string
	logTime, pubTime uint64
	data             []byte
}

// testQoS is the non-default QoS of the Float64MultiArray topic testROS2
// writes (beside two JointState topics, one added by type and one by name
// and definition, sharing one schema, and a PredictedTrajectory topic).
var testQoS = QoSProfile{History: "keep_last", Depth: 1, Reliability: "best_effort", Durability: "transient_local",
	Deadline: 0, Lifespan: 1500 * time.Millisecond, Liveliness: "manual_by_topic", LivelinessLeaseDuration: QoSInfinite}

// testROS2 writes n messages round-robin on four topics and returns the
// file and what was written, in order.
func testROS2(t testing.TB, n int, opts *ROS2WriterOptions) ([]byte, []written) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewROS2Writer(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(w.AddTypedTopic("/joint_states", &msgs.JointState{}, nil))
	check(w.AddTopic("/arm/joint_states", "sensor_msgs/JointState", (&msgs.JointState{}).ROSDefinition(), nil))
	check(w.AddTypedTopic("/torque_cmd", &msgs.Float64MultiArray{}, &TopicOptions{QoS: []QoSProfile{testQoS, DefaultQoS()}}))
	check(w.AddTypedTopic("/predicted", &msgs.PredictedTrajectory{}, &TopicOptions{TypeHash: "RIHS01_00"}))
	check(w.AddTypedTopic("/joint_states", &msgs.JointState{}, nil)) // again: a no-op
	var out []written
	for i := range n {
		tm := uint64(1_700_000_000_000_000_000 + i*1_000_000)
		x := float64(i)
		var topic string
		var m msgs.Message
		switch i % 4 {
		case 0, 1:
			topic = []string{"/joint_states", "/arm/joint_states"}[i%4]
			m = &msgs.JointState{Header: msgs.Header{Stamp: msgs.TimeFromNanos(int64(tm)), FrameID: "base"},
				Name: []string{"j1", "j2", "j3"}, Position: []float64{x, -x, x / 3}, Velocity: []float64{1, 2, 3}, Effort: nil}
		case 2:
			topic = "/torque_cmd"
			m = &msgs.Float64MultiArray{Layout: msgs.MultiArrayLayout{Dim: []msgs.MultiArrayDimension{{Label: "joints", Size: 3, Stride: 3}}},
				Data: []float64{x * 0.1, math.Pi, -1e-9}}
		case 3:
			topic = "/predicted"
			m = &msgs.PredictedTrajectory{Header: msgs.Header{Stamp: msgs.TimeFromNanos(int64(tm))}, Dt: 0.01,
				CoordinateNames: []string{"q1", "q2"}, Horizon: 2, Q: []float64{x, x + 1, x + 2, x + 3}, P: []float64{0.5, 0.25, 0.125, 1},
				PortNames: []string{"u1"}, Ports: []float64{0.1, 0.2}, ModelID: "dp", ModelSHA256: "00ff", InferenceLatencyS: 2e-4}
		}
		if i%8 == 3 {
			// The raw path.
			data := msgs.Marshal(m)
			check(w.Write(topic, tm, tm-500, data))
			out = append(out, written{topic, tm, tm - 500, data})
			continue
		}
		check(w.WriteMessage(topic, tm, tm-500, m))
		out = append(out, written{topic, tm, tm - 500, msgs.Marshal(m)})
	}
	check(w.Close())
	return buf.Bytes(), out
}

func TestROS2Writer(t *testing.T) {
	tests := []struct {
		name   string
		opts   ROS2WriterOptions
		chunks int // at least
	}{
		{name: "zstd jazzy", opts: ROS2WriterOptions{}, chunks: 1},
		{name: "lz4 small chunks", opts: ROS2WriterOptions{Compression: "lz4", ChunkSize: 2048}, chunks: 5},
		{name: "none humble", opts: ROS2WriterOptions{Compression: "none", ChunkSize: 4096, Distro: "humble", SkipCRC: true}, chunks: 3},
		{name: "zstd file name", opts: ROS2WriterOptions{Compression: "zstd", ChunkSize: 1024, FileName: "run.mcap", Library: "test"}, chunks: 5},
	}
	const n = 120
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, want := testROS2(t, n, &tt.opts)
			numeric := tt.opts.Distro == "humble"

			// Streamed back by logio's reader, bit-exact and in order.
			r, err := NewMCAPReader(bytes.NewReader(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Profile() != "ros2" {
				t.Errorf("profile %q", r.Profile())
			}
			chans := r.Channels()
			if len(chans) != 4 {
				t.Fatalf("%d channels", len(chans))
			}
			for _, c := range chans {
				if c.Encoding != rosmsg.MessageEncodingCDR || c.SchemaEncoding != rosmsg.SchemaEncodingROS2Msg || !strings.Contains(c.Type, "/msg/") {
					t.Errorf("channel %+v", c)
				}
				def, err := msgs.Definition(c.Type)
				if err != nil || string(c.Schema) != def {
					t.Errorf("%s: schema differs from the definition (%v)", c.Topic, err)
				}
				profiles := []QoSProfile{DefaultQoS()}
				if c.Topic == "/torque_cmd" {
					profiles = []QoSProfile{testQoS, DefaultQoS()}
				}
				wantQoS, err := FormatQoSProfiles(profiles, numeric)
				if err != nil || c.Metadata["offered_qos_profiles"] != wantQoS {
					t.Errorf("%s: offered_qos_profiles %q, want %q (%v)", c.Topic, c.Metadata["offered_qos_profiles"], wantQoS, err)
				}
				if (c.Topic == "/predicted") != (c.Metadata["topic_type_hash"] == "RIHS01_00") {
					t.Errorf("%s: metadata %v", c.Topic, c.Metadata)
				}
			}
			for i, w := range want {
				m, err := r.Next()
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if m.Channel.Topic != w.topic || m.LogTime != w.logTime || !bytes.Equal(m.Data, w.data) {
					t.Fatalf("message %d: %s at %d (%d bytes), want %s at %d (%d bytes)", i, m.Channel.Topic, m.LogTime, len(m.Data), w.topic, w.logTime, len(w.data))
				}
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last message: %v", err)
			}

			// Read through the index by the MCAP library.
			mr, err := mcap.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			defer mr.Close()
			info, err := mr.Info()
			if err != nil {
				t.Fatal(err)
			}
			st := info.Statistics
			if st.MessageCount != n || st.SchemaCount != 3 || st.ChannelCount != 4 || st.MetadataCount != 1 ||
				int(st.ChunkCount) < tt.chunks || st.MessageStartTime != want[0].logTime || st.MessageEndTime != want[n-1].logTime {
				t.Errorf("statistics %+v", st)
			}
			for id, c := range info.Channels {
				if got, wantN := st.ChannelMessageCounts[id], uint64(n/4); got != wantN {
					t.Errorf("channel %d (%s): %d messages, want %d", id, c.Topic, got, wantN)
				}
				if id == 0 {
					t.Error("channel ID 0 (rosbag2 starts at 1)")
				}
			}
			if len(info.ChunkIndexes) != int(st.ChunkCount) {
				t.Errorf("%d chunk indexes for %d chunks", len(info.ChunkIndexes), st.ChunkCount)
			}
			for _, ci := range info.ChunkIndexes {
				wantComp := tt.opts.Compression
				if wantComp == "" {
					wantComp = "zstd"
				} else if wantComp == "none" {
					wantComp = ""
				}
				if string(ci.Compression) != wantComp || len(ci.MessageIndexOffsets) == 0 {
					t.Errorf("chunk index %+v", ci)
				}
			}
			if !strings.HasSuffix(info.Header.Library, "; "+map[bool]string{true: "test", false: "calisym"}[tt.opts.Library == "test"]) {
				t.Errorf("library %q", info.Header.Library)
			}
			it, err := mr.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.LogTimeOrder))
			if err != nil {
				t.Fatal(err)
			}
			count := 0
			for {
				_, _, m, err := it.NextInto(nil)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(m.Data, want[count].data) || m.PublishTime != want[count].pubTime {
					t.Fatalf("indexed message %d differs", count)
				}
				count++
			}
			if count != n {
				t.Errorf("%d indexed messages", count)
			}

			// The rosbag2 metadata record.
			if len(info.MetadataIndexes) != 1 || info.MetadataIndexes[0].Name != "rosbag2" {
				t.Fatalf("metadata indexes %+v", info.MetadataIndexes)
			}
			md, err := mr.GetMetadata(info.MetadataIndexes[0].Offset)
			if err != nil {
				t.Fatal(err)
			}
			if numeric {
				if len(md.Metadata) != 1 || md.Metadata["ROS_DISTRO"] != "humble" {
					t.Errorf("metadata %v", md.Metadata)
				}
				return
			}
			var bag bagMetadata
			if err := yaml.Unmarshal([]byte(md.Metadata["serialized_metadata"]), &bag); err != nil {
				t.Fatal(err)
			}
			if bag.Version != 9 || bag.StorageIdentifier != "mcap" || bag.MessageCount != n || bag.ROSDistro != "jazzy" ||
				bag.StartingTime.NanosecondsSinceEpoch != want[0].logTime || bag.Duration.Nanoseconds != want[n-1].logTime-want[0].logTime ||
				len(bag.Topics) != 4 || bag.Topics[0].TopicMetadata.Name != "/arm/joint_states" || bag.Topics[0].MessageCount != n/4 {
				t.Errorf("bag metadata %+v", bag)
			}
			if tt.opts.FileName != "" && (len(bag.Files) != 1 || bag.Files[0].Path != "run.mcap" || bag.RelativeFilePaths[0] != "run.mcap") {
				t.Errorf("files %+v %v", bag.Files, bag.RelativeFilePaths)
			}
			for _, tp := range bag.Topics {
				var profiles []map[string]any
				if err := yaml.Unmarshal([]byte(tp.TopicMetadata.OfferedQoSProfiles), &profiles); err != nil || len(profiles) == 0 {
					t.Errorf("%s: QoS %q: %v", tp.TopicMetadata.Name, tp.TopicMetadata.OfferedQoSProfiles, err)
				}
			}
		})
	}
}

func TestFormatQoSProfiles(t *testing.T) {
	const jazzy = `- history: keep_last
  depth: 10
  reliability: reliable
  durability: volatile
  deadline:
    sec: 9223372036
    nsec: 854775807
  lifespan:
    sec: 9223372036
    nsec: 854775807
  liveliness: automatic
  liveliness_lease_duration:
    sec: 9223372036
    nsec: 854775807
  avoid_ros_namespace_conventions: false`
	got, err := FormatQoSProfiles([]QoSProfile{DefaultQoS()}, false)
	if err != nil || got != jazzy {
		t.Errorf("jazzy:\n%s\n%v", got, err)
	}
	humble := strings.NewReplacer("keep_last", "1", "reliable", "1", "volatile", "2", "automatic", "1").Replace(jazzy)
	if got, err := FormatQoSProfiles([]QoSProfile{DefaultQoS()}, true); err != nil || got != humble {
		t.Errorf("humble:\n%s\n%v", got, err)
	}
	// The YAML parses to the profile's values.
	got, err = FormatQoSProfiles([]QoSProfile{testQoS}, true)
	if err != nil {
		t.Fatal(err)
	}
	var parsed []map[string]any
	if err := yaml.Unmarshal([]byte(got), &parsed); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"history": 1, "depth": 1, "reliability": 2, "durability": 1,
		"deadline": map[string]any{"sec": 0, "nsec": 0}, "lifespan": map[string]any{"sec": 1, "nsec": 500_000_000},
		"liveliness": 3, "liveliness_lease_duration": map[string]any{"sec": 9223372036, "nsec": 854775807},
		"avoid_ros_namespace_conventions": false}
	if fmt.Sprint(parsed[0]) != fmt.Sprint(want) {
		t.Errorf("parsed %v\nwant %v", parsed[0], want)
	}
	if got, err := FormatQoSProfiles(nil, false); err != nil || got != "[]" {
		t.Errorf("no profiles: %q, %v", got, err)
	}
	for _, bad := range []QoSProfile{
		{History: "keep_some", Reliability: "reliable", Durability: "volatile", Liveliness: "automatic"},
		{History: "keep_last", Reliability: "sure", Durability: "volatile", Liveliness: "automatic"},
		{History: "keep_last", Reliability: "reliable", Durability: "forever", Liveliness: "automatic"},
		{History: "keep_last", Reliability: "reliable", Durability: "volatile", Liveliness: "alive"},
		{History: "keep_last", Depth: -1, Reliability: "reliable", Durability: "volatile", Liveliness: "automatic"},
	} {
		if _, err := FormatQoSProfiles([]QoSProfile{bad}, false); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestROS2WriterErrors(t *testing.T) {
	if _, err := NewROS2Writer(io.Discard, &ROS2WriterOptions{Compression: "brotli"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("bad compression: %v", err)
	}
	js := &msgs.JointState{}
	tests := []struct {
		name string
		do   func(w *ROS2Writer) error
	}{
		{"bad definition", func(w *ROS2Writer) error { return w.AddTopic("/x", "a/msg/B", "Missing m\n", nil) }},
		{"empty topic", func(w *ROS2Writer) error { return w.AddTypedTopic("", js, nil) }},
		{"incomplete definition", func(w *ROS2Writer) error {
			return w.AddTopic("/h", "a/msg/B", "std_msgs/Header header\n", nil)
		}},
		{"topic retyped", func(w *ROS2Writer) error { return w.AddTypedTopic("/joint_states", &msgs.Odometry{}, nil) }},
		{"type redefined", func(w *ROS2Writer) error {
			return w.AddTopic("/other", "sensor_msgs/msg/JointState", "float64 x\n", nil)
		}},
		{"bad QoS", func(w *ROS2Writer) error {
			return w.AddTypedTopic("/q", js, &TopicOptions{QoS: []QoSProfile{{History: "sometimes"}}})
		}},
		{"unknown topic", func(w *ROS2Writer) error { return w.Write("/nope", 1, 1, msgs.Marshal(js)) }},
		{"write after close", func(w *ROS2Writer) error {
			if err := w.Close(); err != nil {
				return nil
			}
			return w.WriteMessage("/joint_states", 1, 1, js)
		}},
		{"add after close", func(w *ROS2Writer) error {
			if err := w.Close(); err != nil {
				return nil
			}
			return w.AddTypedTopic("/late", js, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewROS2Writer(&buf, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AddTypedTopic("/joint_states", js, nil); err != nil {
				t.Fatal(err)
			}
			if err := tt.do(w); err == nil || !strings.HasPrefix(err.Error(), "logio: ") {
				t.Errorf("got %v, want a logio error", err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			// A failed call leaves a valid file.
			if _, err := mcap.NewReader(bytes.NewReader(buf.Bytes())); err != nil {
				t.Errorf("file: %v", err)
			}
		})
	}
	// A failing destination makes every later call fail.
	w, err := NewROS2Writer(&failAfter{n: 200}, &ROS2WriterOptions{Compression: "none", ChunkSize: 64})
	if err == nil {
		err = w.AddTypedTopic("/joint_states", js, nil)
		for i := 0; err == nil && i < 100; i++ {
			err = w.WriteMessage("/joint_states", uint64(i), uint64(i), js)
		}
		if err == nil {
			err = w.Close()
		}
		if err2 := w.WriteMessage("/joint_states", 1, 1, js); err2 == nil {
			t.Error("write after failure succeeded")
		}
	}
	if err == nil {
		t.Error("a failing destination went unnoticed")
	}
}

// failAfter is a writer that fails once n bytes have been written.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestCreateROS2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bag_0.mcap")
	w, err := CreateROS2(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddTypedTopic("/joint_states", &msgs.JointState{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteMessage("/joint_states", 5, 5, &msgs.JointState{Name: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	infos, err := Summarize(path, nil)
	if err != nil || len(infos) != 1 || infos[0].Count != 1 || infos[0].Type != "sensor_msgs/msg/JointState" {
		t.Fatalf("summary %+v, %v", infos, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("- bag_0.mcap")) {
		t.Error("file name missing from the bag metadata")
	}
	if _, err := CreateROS2(filepath.Join(t.TempDir(), "missing", "x.mcap"), nil); err == nil {
		t.Error("created a file in a missing directory")
	}
}
