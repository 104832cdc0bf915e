package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// float64MultiArraySchema is std_msgs/msg/Float64MultiArray in the ros2msg
// schema encoding: the message followed by its dependencies.
const float64MultiArraySchema = `# Please look at the MultiArrayLayout message definition for
# documentation on all multiarrays.

MultiArrayLayout  layout        # specification of data layout
float64[]         data          # array of data

================================================================================
MSG: std_msgs/MultiArrayLayout
MultiArrayDimension[] dim # Array of dimension properties
uint32 data_offset        # padding elements at front of data

================================================================================
MSG: std_msgs/MultiArrayDimension
string label   # label of given dimension
uint32 size    # size of given dimension (in type units)
uint32 stride  # stride of given dimension
`

// cdrWriter hand-encodes little-endian XCDR1 (ROS 2's "cdr"), enough for
// the test message. Alignment is relative to the end of the 4-byte
// encapsulation header.
type cdrWriter struct{ b []byte }

func newCDRWriter() *cdrWriter {
	return &cdrWriter{b: []byte{0x00, 0x01, 0x00, 0x00}} // CDR_LE, options 0
}

func (w *cdrWriter) align(n int) {
	for (len(w.b)-4)%n != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *cdrWriter) uint32(v uint32) {
	w.align(4)
	w.b = binary.LittleEndian.AppendUint32(w.b, v)
}

func (w *cdrWriter) float64(v float64) {
	w.align(8)
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
}

func (w *cdrWriter) string(s string) {
	w.uint32(uint32(len(s) + 1))
	w.b = append(w.b, s...)
	w.b = append(w.b, 0)
}

// multiArray is the decoded form of std_msgs/msg/Float64MultiArray, as the
// node script prints it.
type multiArray struct {
	Layout struct {
		Dim []struct {
			Label  string `json:"label"`
			Size   uint32 `json:"size"`
			Stride uint32 `json:"stride"`
		} `json:"dim"`
		DataOffset uint32 `json:"data_offset"`
	} `json:"layout"`
	Data []float64 `json:"data"`
}

// encodeMultiArray encodes a one-dimensional Float64MultiArray.
func encodeMultiArray(label string, offset uint32, data []float64) []byte {
	w := newCDRWriter()
	w.uint32(1) // layout.dim: one dimension
	w.string(label)
	w.uint32(uint32(len(data))) // size
	w.uint32(uint32(len(data))) // stride
	w.uint32(offset)            // layout.data_offset
	w.uint32(uint32(len(data)))
	for _, v := range data {
		w.float64(v)
	}
	return w.b
}

// TestInteropFoxgloveClient serves messages to Foxglove's own client
// (@foxglove/ws-protocol over the ws package) and checks that it decodes,
// with @foxglove/rosmsg2-serialization, exactly what was published.
func TestInteropFoxgloveClient(t *testing.T) {
	nodetest.Require(t)
	checkGoroutines(t)
	srv, url := startServer(t, Options{Name: "calisym-interop", Capabilities: []string{CapabilityTime}})
	if _, err := srv.AddChannel(testChannel("/calisym/other")); err != nil {
		t.Fatal(err)
	}
	const topic = "/calisym/prediction"
	ch, err := srv.AddChannel(testChannel(topic))
	if err != nil {
		t.Fatal(err)
	}

	const n = 25
	const t0 = uint64(1_700_000_000_123_456_789)
	type sample struct {
		label  string
		offset uint32
		data   []float64
	}
	samples := make([]sample, n)
	for i := range samples {
		data := make([]float64, i%7) // includes an empty array
		for j := range data {
			data[j] = math.Pi*float64(i) - 1e-3*float64(j) + 1.5e300*float64(j%2)
		}
		samples[i] = sample{label: fmt.Sprintf("joint_%d", i), offset: uint32(i * 3), data: data}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := nodetest.Start(t, ctx, &stdout, &stderr, "foxglove_client.mjs", url, topic, strconv.Itoa(n), "30000")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Publish only once the script has subscribed, so nothing is missed.
	subCtx, subCancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-exited:
			subCancel()
		case <-subCtx.Done():
		}
	}()
	err = srv.WaitSubscribed(subCtx, ch)
	subCancel()
	if err != nil {
		cancel()
		t.Fatalf("%v\nnode stderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	if err := srv.BroadcastTime(t0); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if err := srv.Publish(ch, t0+uint64(i), encodeMultiArray(s.label, s.offset, s.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-exited; err != nil {
		t.Fatalf("node foxglove_client.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}

	var out struct {
		ServerInfo struct {
			Name         string   `json:"name"`
			Capabilities []string `json:"capabilities"`
		} `json:"serverInfo"`
		Channel  channelJSON `json:"channel"`
		Times    []string    `json:"times"`
		Messages []struct {
			Timestamp string     `json:"timestamp"`
			Message   multiArray `json:"message"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("decoding script output: %v\n%s", err, stdout.String())
	}
	if out.ServerInfo.Name != "calisym-interop" || len(out.ServerInfo.Capabilities) != 1 || out.ServerInfo.Capabilities[0] != CapabilityTime {
		t.Errorf("serverInfo %+v", out.ServerInfo)
	}
	if out.Channel.ID != ch || out.Channel.Topic != topic || out.Channel.SchemaEncoding != rosmsg.SchemaEncodingROS2Msg {
		t.Errorf("channel %+v, want id %d topic %s", out.Channel, ch, topic)
	}
	if len(out.Times) != 1 || out.Times[0] != strconv.FormatUint(t0, 10) {
		t.Errorf("times %v, want [%d]", out.Times, t0)
	}
	if len(out.Messages) != n {
		t.Fatalf("got %d messages, want %d", len(out.Messages), n)
	}
	for i, m := range out.Messages {
		s := samples[i]
		if want := strconv.FormatUint(t0+uint64(i), 10); m.Timestamp != want {
			t.Errorf("message %d: timestamp %s, want %s", i, m.Timestamp, want)
		}
		got := m.Message
		if len(got.Layout.Dim) != 1 || got.Layout.Dim[0].Label != s.label ||
			got.Layout.Dim[0].Size != uint32(len(s.data)) || got.Layout.Dim[0].Stride != uint32(len(s.data)) ||
			got.Layout.DataOffset != s.offset {
			t.Errorf("message %d: layout %+v, want label %s size %d offset %d", i, got.Layout, s.label, len(s.data), s.offset)
		}
		if len(got.Data) != len(s.data) {
			t.Errorf("message %d: data %v, want %v", i, got.Data, s.data)
			continue
		}
		for j := range s.data {
			if got.Data[j] != s.data[j] {
				t.Errorf("message %d: data[%d] = %v, want %v", i, j, got.Data[j], s.data[j])
			}
		}
	}
}
