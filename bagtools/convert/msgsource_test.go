package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// logStart is the log time of the first message of the test logs.
const logStart = uint64(1_700_000_000_000_000_000)

// stampLag is how much earlier than its log time each test JointState is
// stamped, so that the two clocks differ.
const stampLag = 3_000_000 // ns

// jointLogOptions shapes the synthetic joint-state logs.
type jointLogOptions struct {
	n           int     // joint-state messages
	hz          float64 // their rate
	compression string  // MCAP chunk compression
	chunk       int64   // MCAP chunk size
	zeroStamp   func(i int) bool
}

// jointValue is the value of joint j's field f (0 position, 1 velocity,
// 2 effort) in message i.
func jointValue(i, j, f int) float64 {
	return float64(100*f+10*j) + math.Sin(0.01*float64(i)+float64(j))
}

// writeJointMCAP writes a ROS 2 MCAP log: /joint_states (joints j1 j2 j3)
// at opts.hz, stamped stampLag before their log times, and /cmd
// (Float64MultiArray, no header) with every second message.
func writeJointMCAP(t testing.TB, path string, o jointLogOptions) {
	t.Helper()
	w, err := logio.CreateROS2(path, &logio.ROS2WriterOptions{Compression: o.compression, ChunkSize: o.chunk})
	if err != nil {
		t.Fatal(err)
	}
	js := &msgs.JointState{Name: []string{"j1", "j2", "j3"}, Position: make([]float64, 3), Velocity: make([]float64, 3), Effort: make([]float64, 3)}
	cmd := &msgs.Float64MultiArray{Data: make([]float64, 2)}
	for _, err := range []error{w.AddTypedTopic("/joint_states", js, nil), w.AddTypedTopic("/cmd", cmd, nil)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range o.n {
		ns := logStart + uint64(math.Round(float64(i)/o.hz*1e9))
		js.Header.Stamp = msgs.TimeFromNanos(int64(ns - stampLag))
		if o.zeroStamp != nil && o.zeroStamp(i) {
			js.Header.Stamp = msgs.Time{}
		}
		for j := range 3 {
			js.Position[j], js.Velocity[j], js.Effort[j] = jointValue(i, j, 0), jointValue(i, j, 1), jointValue(i, j, 2)
		}
		if err := w.WriteMessage("/joint_states", ns, ns, js); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			cmd.Data[0], cmd.Data[1] = float64(i), -float64(i)
			if err := w.WriteMessage("/cmd", ns+1000, ns+1000, cmd); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMessageSourceRead(t *testing.T) {
	for _, compression := range []string{"none", "lz4", "zstd"} {
		for _, stamp := range []string{StampHeader, StampLogTime} {
			t.Run(compression+"/"+stamp, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "log.mcap")
				writeJointMCAP(t, path, jointLogOptions{n: 200, hz: 100, compression: compression, chunk: 4096})
				var progress []int64
				paths := []string{
					rosmsg.JointPath("/joint_states", "position", "j2"),
					"/joint_states.velocity[0]",
					rosmsg.JointPath("/joint_states", "effort", "j3"),
					"/cmd.data[1]",
					"/joint_states.header.stamp.nanosec",
				}
				src, err := OpenMessageLog(path, MessageLogOptions{Paths: paths, Stamp: stamp, Progress: func(done, total int64) { progress = append(progress, done, total) }})
				if err != nil {
					t.Fatal(err)
				}
				defer src.Close()
				if got := src.Channels(); !slices.Equal(got, paths) {
					t.Errorf("channels %v, want %v", got, paths)
				}
				series, err := src.Read(paths)
				if err != nil {
					t.Fatal(err)
				}
				st, _ := os.Stat(path)
				if n := len(progress); n < 2 || progress[n-1] != st.Size() || progress[n-2] != st.Size() {
					t.Errorf("progress %v, want it to end at the file size %d", progress, st.Size())
				}
				lag := 0.0
				if stamp == StampHeader {
					lag = stampLag / 1e9
				}
				for k := range 200 {
					tk := float64(uint64(math.Round(float64(k)/100*1e9)))/1e9 - lag
					for i, want := range []float64{jointValue(k, 1, 0), jointValue(k, 0, 1), jointValue(k, 2, 2)} {
						if s := series[i]; s.Values[k] != want || math.Abs(s.Time[k]-tk) > 1e-15 {
							t.Fatalf("%s[%d] = %v at %v, want %v at %v", s.Name, k, s.Values[k], s.Time[k], want, tk)
						}
					}
				}
				cmd := series[3]
				if len(cmd.Values) != 100 || cmd.Values[7] != -14 || cmd.Time[7] != float64(14*10_000_000+1000)/1e9 {
					t.Errorf("/cmd: %d values, [7] = %v at %v", len(cmd.Values), cmd.Values[7], cmd.Time[7])
				}
				if &series[0].Time[0] != &series[2].Time[0] || &series[0].Time[0] == &cmd.Time[0] {
					t.Error("paths of one topic should share their times, other topics not")
				}
				warn := strings.Join(src.Warnings(), "\n")
				if (stamp == StampHeader) != strings.Contains(warn, "/cmd: 100 of 100 messages have no header: stamped with their log times") {
					t.Errorf("warnings %q", warn)
				}
			})
		}
	}
}

func TestMessageSourceZeroStamps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.mcap")
	writeJointMCAP(t, path, jointLogOptions{n: 50, hz: 100, zeroStamp: func(i int) bool { return i%10 == 3 }})
	src, err := OpenMessageLog(path, MessageLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := src.Read([]string{"/joint_states.position[1]"})
	if err != nil {
		t.Fatal(err)
	}
	// Message 3 falls back to its log time, 0.03 s; its neighbours are
	// stamped 3 ms early.
	if got := s[0].Time[2:5]; math.Abs(got[0]-0.017) > 1e-12 || got[1] != 0.03 || math.Abs(got[2]-0.037) > 1e-12 {
		t.Errorf("times %v", got)
	}
	if w := src.Warnings(); len(w) != 1 || !strings.Contains(w[0], "5 of 50 messages have a zero or unreadable header stamp") {
		t.Errorf("warnings %q", w)
	}
}

// writeRawMCAP writes an MCAP file with one channel of the given schema
// and message encodings and one message.
func writeRawMCAP(t *testing.T, path, topic, typ, schemaEnc, schema, msgEnc string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := mcap.NewWriter(&buf, &mcap.WriterOptions{Chunked: true, ChunkSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		w.WriteHeader(&mcap.Header{Profile: "ros2"}),
		w.WriteSchema(&mcap.Schema{ID: 1, Name: typ, Encoding: schemaEnc, Data: []byte(schema)}),
		w.WriteChannel(&mcap.Channel{ID: 1, SchemaID: 1, Topic: topic, MessageEncoding: msgEnc}),
		w.WriteMessage(&mcap.Message{ChannelID: 1, LogTime: logStart, Data: data}),
		w.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMessageSourceErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.mcap")
	writeJointMCAP(t, good, jointLogOptions{n: 20, hz: 100})
	proto := filepath.Join(dir, "proto.mcap")
	writeRawMCAP(t, proto, "/imu", "foo.Imu", "protobuf", "…", "protobuf", []byte{1, 2})
	undefined := filepath.Join(dir, "undefined.mcap")
	writeRawMCAP(t, undefined, "/thing", "my_msgs/msg/Thing", rosmsg.SchemaEncodingROS2Msg, "other_msgs/Missing m\nfloat64 x\n", rosmsg.MessageEncodingCDR, []byte{0, 1, 0, 0})
	garbage := filepath.Join(dir, "bad.mcap")
	writeRawMCAP(t, garbage, "/f", "std_msgs/msg/Float64MultiArray", rosmsg.SchemaEncodingROS2Msg, (&msgs.Float64MultiArray{}).ROSDefinition(), rosmsg.MessageEncodingCDR, []byte{0, 1, 0, 0, 0xff, 0xff, 0xff})
	notLog := filepath.Join(dir, "table.mcap")
	os.WriteFile(notLog, []byte("t,x\n0,1\n"), 0o644)
	js := func(field, joint string) string { return rosmsg.JointPath("/joint_states", field, joint) }

	tests := []struct {
		name  string
		path  string
		paths []string // opened with
		read  []string // then read
		is    []error
		want  []string
	}{
		{"missing topic", good, []string{js("position", "j1"), "/odom.pose.pose.position.x"}, nil, []error{ErrMissingChannel},
			[]string{`no topic "/odom"`, "its topics: /cmd (std_msgs/msg/Float64MultiArray), /joint_states (sensor_msgs/msg/JointState)"}},
		{"missing topic on read", good, nil, []string{"/odom.twist.twist.linear.x"}, []error{ErrMissingChannel}, []string{`no topic "/odom"`, "/joint_states (sensor_msgs/msg/JointState)"}},
		{"no topic in path", good, []string{"position"}, nil, []error{ErrMissingChannel}, []string{`"position" names no topic`}},
		{"unknown field", good, []string{"/joint_states.positions[0]"}, nil, []error{ErrMissingChannel, rosmsg.ErrPath}, []string{"/joint_states", "positions"}},
		{"not a number", good, []string{"/joint_states.name[0]"}, nil, []error{ErrMissingChannel}, []string{"not a number"}},
		{"joint not in the log", good, []string{js("position", "j1"), js("velocity", "elbow")}, []string{js("position", "j1"), js("velocity", "elbow")}, []error{ErrNoMessages},
			[]string{`velocity[name=="elbow"] matches none of the 20 messages on /joint_states`, `its first message holds 3: "j1", "j2", "j3"`}},
		{"index out of range", good, nil, []string{"/joint_states.effort[3]"}, []error{ErrNoMessages, rosmsg.ErrIndexRange}, []string{"effort[3] matches none"}},
		{"schema encoding", proto, []string{"/imu.x"}, nil, []error{ErrMessageType}, []string{"/imu", `"protobuf"`, "ros2msg"}},
		{"undefined type", undefined, []string{"/thing.x"}, nil, []error{ErrMessageType, rosmsg.ErrUnknownType}, []string{"my_msgs/msg/Thing", "other_msgs/Missing"}},
		{"no message decodes", garbage, nil, []string{"/f.data[0]"}, []error{ErrNoMessages}, []string{"none of the 1 messages on /f decodes"}},
		{"not a log", notLog, []string{"/a.b"}, nil, []error{logio.ErrUnknownFormat}, []string{"table.mcap", "not an MCAP file or a ROS 1 bag"}},
		{"bad clock", good, nil, nil, nil, []string{`clock stamp "wall"`}},
		{"directory", dir, nil, nil, nil, []string{"is a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := MessageLogOptions{Paths: tc.paths}
			if tc.name == "bad clock" {
				opts.Stamp = "wall"
			}
			src, err := OpenMessageLog(tc.path, opts)
			if err == nil {
				_, err = src.Read(tc.read)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, is := range tc.is {
				if !errors.Is(err, is) {
					t.Errorf("err = %v, want it to wrap %v", err, is)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

// jointSpec converts the synthetic joint logs: joints j1, j2 (position and
// velocity by name), efforts as the control port, the pendulum model of
// synthParams, windows of 20 every 5 samples at 100 Hz.
func jointSpec(inputs ...string) *Spec {
	js := func(field, joint string) statemap.Channel {
		return statemap.Channel{Name: rosmsg.JointPath("/joint_states", field, joint)}
	}
	s := &Spec{
		Robot:  "synthetic log",
		Inputs: inputs,
		Spec: statemap.Spec{
			State: statemap.StateSpec{Kind: statemap.StateJoints, Joints: []statemap.JointSpec{
				{Name: "a", Position: js("position", "j1"), Velocity: js("velocity", "j1")},
				{Name: "b", Position: js("position", "j2"), Velocity: js("velocity", "j2")},
			}},
			Model:   statemap.ModelSpec{Kind: statemap.ModelDoublePendulum, Pendulum: statemap.PendulumSpec{Params: synthParams}},
			Control: statemap.ControlSpec{Kind: statemap.ControlDirect, PortSpec: statemap.PortSpec{Channels: []statemap.Channel{js("effort", "j1"), js("effort", "j2")}, Names: []string{"u1", "u2"}, Interp: statemap.InterpHold}},
		},
		Resample: ResampleSpec{Rate: 100},
		Window:   WindowSpec{Length: 20, Stride: 5},
		Validate: ValidateSpec{MaxGap: 0.05},
	}
	s.Defaults()
	return s
}

// TestMessageSourceTruncated cuts an MCAP log short: the source keeps the
// complete messages before the damage with a warning, and the conversion
// keeps the windows before it, equal to those of the whole log.
func TestMessageSourceTruncated(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.mcap")
	writeJointMCAP(t, full, jointLogOptions{n: 600, hz: 100, compression: "lz4", chunk: 8 << 10})
	raw, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.mcap")
	if err := os.WriteFile(cut, raw[:len(raw)*55/100], 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := Convert(context.Background(), jointSpec(full), Options{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := Convert(context.Background(), jointSpec(cut), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := part.Report.Files[0]
	if !slices.ContainsFunc(f.Warnings, func(w string) bool {
		return strings.Contains(w, "truncated") && strings.Contains(w, "complete messages before the damage")
	}) {
		t.Errorf("warnings %q, want a truncation warning", f.Warnings)
	}
	if !strings.Contains(part.Report.String(), "truncated") {
		t.Errorf("report summary lacks the warning:\n%s", part.Report)
	}
	if f.Rows < 200 || f.Rows >= 600 {
		t.Errorf("%d rows read from the cut log, want some but not all of 600", f.Rows)
	}
	pw, ww := part.Splits["id"], whole.Splits["id"]
	if len(pw.Windows()) < 30 || len(pw.Windows()) >= len(ww.Windows()) {
		t.Fatalf("%d windows from the cut log, %d from the whole", len(pw.Windows()), len(ww.Windows()))
	}
	pe, we := pw.Episodes[0], ww.Episodes[0]
	if !slices.Equal(pe.X, we.X[:len(pe.X)]) || !slices.Equal(pe.E, we.E[:len(pe.E)]) {
		t.Error("the windows before the damage differ from those of the whole log")
	}
}

func TestOpenSourceDispatch(t *testing.T) {
	dir := t.TempDir()
	csv := writeSynthCSV(t, dir, "run.csv", 11, 200, nil)
	log := filepath.Join(dir, "run.mcap")
	writeJointMCAP(t, log, jointLogOptions{n: 5, hz: 100})
	renamed := filepath.Join(dir, "run.dat")
	raw, _ := os.ReadFile(log)
	os.WriteFile(renamed, raw, 0o644)
	for _, tc := range []struct {
		path, format string
		want         string
	}{
		{csv, "", "*convert.TableSource"},
		{log, "", "*convert.MessageSource"},
		{renamed, "mcap", "*convert.MessageSource"},
	} {
		spec := synthSpec(tc.path)
		if tc.want == "*convert.MessageSource" {
			spec = jointSpec(tc.path)
		}
		spec.Source.Format = tc.format
		src, err := OpenSource(tc.path, spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if got := fmt.Sprintf("%T", src); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.path, got, tc.want)
		}
		src.Close()
	}
	if err := synthSpec("x").Check(); err != nil {
		t.Fatal(err)
	}
	s := jointSpec("x")
	s.Source.Format = "rosbag3"
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), `"mcap", "bag"`) {
		t.Errorf("bad format: %v", err)
	}
}

// TestMessageSourceReadsOnce reads a log through a reader that counts
// the bytes it serves: Read streams the file once (plus what opening
// needs) and its result holds only the requested values.
func TestMessageSourceReadsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.mcap")
	writeJointMCAP(t, path, jointLogOptions{n: 3000, hz: 100, compression: "none"})
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingSeeker{r: bytes.NewReader(raw)}
	src, err := NewMessageSource("mem", cr, MessageLogOptions{Paths: []string{"/joint_states.position[2]"}})
	if err != nil {
		t.Fatal(err)
	}
	opened := cr.n
	if opened > int64(len(raw))/4 {
		t.Errorf("opening read %d of %d bytes; the summary should suffice", opened, len(raw))
	}
	s, err := src.Read(src.Channels())
	if err != nil {
		t.Fatal(err)
	}
	if read := cr.n - opened; read < int64(len(raw))*9/10 || read > int64(len(raw))*11/10 {
		t.Errorf("Read took %d bytes of a %d-byte log, want one pass", read, len(raw))
	}
	if len(s[0].Values) != 3000 || cap(s[0].Values) > 2*3000 {
		t.Errorf("%d values (capacity %d)", len(s[0].Values), cap(s[0].Values))
	}
}

type countingSeeker struct {
	r *bytes.Reader
	n int64
}

func (c *countingSeeker) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingSeeker) Seek(off int64, whence int) (int64, error) { return c.r.Seek(off, whence) }

func FuzzMessageSource(f *testing.F) {
	dir := f.TempDir()
	for i, compression := range []string{"none", "lz4"} {
		p := filepath.Join(dir, fmt.Sprintf("%d.mcap", i))
		writeJointMCAP(f, p, jointLogOptions{n: 6, hz: 100, compression: compression, chunk: 512})
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	if p, err := os.ReadFile(filepath.Join("..", "logio", "testdata", "small_bz2.bag")); err == nil {
		f.Add(p)
	}
	paths := []string{rosmsg.JointPath("/joint_states", "position", "j2"), "/joint_states.velocity[0]", "/cmd.data[1]"}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := MessageLogOptions{Limits: logio.ReaderOptions{MaxRecordSize: 1 << 20, MaxChunkSize: 4 << 20}}
		src, err := NewMessageSource("fuzz", bytes.NewReader(data), opts)
		if err != nil {
			return
		}
		names := slices.Clone(paths)
		for _, topic := range src.Topics() {
			names = append(names, topic+".header.stamp")
		}
		for _, n := range names {
			s, err := src.Read([]string{n})
			if err != nil {
				continue
			}
			if len(s) != 1 || len(s[0].Time) != len(s[0].Values) || len(s[0].Values) > len(data) {
				t.Fatalf("%s: %d times, %d values from %d bytes", n, len(s[0].Time), len(s[0].Values), len(data))
			}
			for _, tk := range s[0].Time {
				if math.IsNaN(tk) || math.IsInf(tk, 0) {
					t.Fatalf("%s: time %v", n, tk)
				}
			}
		}
	})
}

var _ io.ReadSeeker = (*countingSeeker)(nil)
