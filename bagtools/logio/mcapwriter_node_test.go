package logio

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/calisym/calisym/internal/nodetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// jsMCAP is what test/js/read_mcap.mjs prints.
type jsMCAP struct {
	Header struct {
		Profile string `json:"profile"`
		Library string `json:"library"`
	} `json:"header"`
	Statistics struct {
		MessageCount         string            `json:"messageCount"`
		SchemaCount          int               `json:"schemaCount"`
		ChannelCount         int               `json:"channelCount"`
		MetadataCount        int               `json:"metadataCount"`
		ChunkCount           int               `json:"chunkCount"`
		MessageStartTime     string            `json:"messageStartTime"`
		MessageEndTime       string            `json:"messageEndTime"`
		ChannelMessageCounts map[string]string `json:"channelMessageCounts"`
	} `json:"statistics"`
	Schemas []struct {
		ID       int    `json:"id"`
		Name     string `json:"name"`
		Encoding string `json:"encoding"`
		Data     string `json:"data"`
	} `json:"schemas"`
	Channels []struct {
		ID              int               `json:"id"`
		SchemaID        int               `json:"schemaId"`
		Topic           string            `json:"topic"`
		MessageEncoding string            `json:"messageEncoding"`
		Metadata        map[string]string `json:"metadata"`
	} `json:"channels"`
	ChunkIndexes []struct {
		Compression     string `json:"compression"`
		IndexedChannels []int  `json:"indexedChannels"`
	} `json:"chunkIndexes"`
	MetadataIndexes      []string `json:"metadataIndexes"`
	SummaryOffsetOpcodes []int    `json:"summaryOffsetOpcodes"`
	Metadata             []struct {
		Name     string            `json:"name"`
		Metadata map[string]string `json:"metadata"`
	} `json:"metadata"`
	Messages []struct {
		Topic       string `json:"topic"`
		ChannelID   int    `json:"channelId"`
		Sequence    int    `json:"sequence"`
		LogTime     string `json:"logTime"`
		PublishTime string `json:"publishTime"`
		Value       any    `json:"value"`
	} `json:"messages"`
}

// TestROS2WriterJS opens files written by ROS2Writer with Foxglove's
// indexed MCAP reader and CDR decoder and compares everything with what was
// written: header, statistics, schemas, channels and their QoS metadata,
// chunk and metadata indexes, the rosbag2 metadata record, and every
// message's times and decoded value (JointState, Float64MultiArray and
// PredictedTrajectory).
func TestROS2WriterJS(t *testing.T) {
	nodetest.Require(t)
	for _, compression := range []string{"none", "lz4"} {
		t.Run(compression, func(t *testing.T) {
			const n = 80
			data, want := testROS2(t, n, &ROS2WriterOptions{Compression: compression, ChunkSize: 3000, FileName: "x.mcap"})
			path := filepath.Join(t.TempDir(), "x.mcap")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var got jsMCAP
			if err := json.Unmarshal(nodetest.Run(t, time.Minute, "read_mcap.mjs", path), &got); err != nil {
				t.Fatal(err)
			}
			mr, err := mcap.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			defer mr.Close()
			info, err := mr.Info()
			if err != nil {
				t.Fatal(err)
			}

			if got.Header.Profile != "ros2" || got.Header.Library != info.Header.Library {
				t.Errorf("header %+v", got.Header)
			}
			st := got.Statistics
			if st.MessageCount != strconv.Itoa(n) || st.SchemaCount != 3 || st.ChannelCount != 4 || st.MetadataCount != 1 ||
				st.ChunkCount != int(info.Statistics.ChunkCount) || st.ChunkCount < 2 ||
				st.MessageStartTime != strconv.FormatUint(want[0].logTime, 10) || st.MessageEndTime != strconv.FormatUint(want[n-1].logTime, 10) {
				t.Errorf("statistics %+v", st)
			}
			for id, c := range info.Statistics.ChannelMessageCounts {
				if st.ChannelMessageCounts[strconv.Itoa(int(id))] != strconv.FormatUint(c, 10) {
					t.Errorf("channel %d count %s, want %d", id, st.ChannelMessageCounts[strconv.Itoa(int(id))], c)
				}
			}
			if len(got.Schemas) != 3 {
				t.Errorf("%d schemas", len(got.Schemas))
			}
			for _, s := range got.Schemas {
				def, err := msgs.Definition(s.Name)
				if err != nil || s.Encoding != "ros2msg" || s.Data != def {
					t.Errorf("schema %d %s (%s): %v", s.ID, s.Name, s.Encoding, err)
				}
			}
			if len(got.Channels) != 4 {
				t.Errorf("%d channels", len(got.Channels))
			}
			for _, c := range got.Channels {
				gc := info.Channels[uint16(c.ID)]
				if gc == nil || c.Topic != gc.Topic || c.SchemaID != int(gc.SchemaID) || c.MessageEncoding != "cdr" ||
					!reflect.DeepEqual(c.Metadata, gc.Metadata) || c.Metadata["offered_qos_profiles"] == "" {
					t.Errorf("channel %+v", c)
				}
			}
			if len(got.ChunkIndexes) != st.ChunkCount {
				t.Errorf("%d chunk indexes", len(got.ChunkIndexes))
			}
			for _, ci := range got.ChunkIndexes {
				if ci.Compression != map[string]string{"none": "", "lz4": "lz4"}[compression] || len(ci.IndexedChannels) == 0 {
					t.Errorf("chunk index %+v", ci)
				}
			}
			if len(got.SummaryOffsetOpcodes) == 0 || len(got.MetadataIndexes) != 1 || got.MetadataIndexes[0] != "rosbag2" {
				t.Errorf("summary offsets %v, metadata indexes %v", got.SummaryOffsetOpcodes, got.MetadataIndexes)
			}
			md, err := mr.GetMetadata(info.MetadataIndexes[0].Offset)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Metadata) != 1 || got.Metadata[0].Name != "rosbag2" || !reflect.DeepEqual(got.Metadata[0].Metadata, md.Metadata) {
				t.Errorf("metadata %+v", got.Metadata)
			}

			if len(got.Messages) != n {
				t.Fatalf("%d messages, want %d", len(got.Messages), n)
			}
			schemas := map[string]*rosmsg.Schema{}
			seq := map[string]int{}
			for i, w := range want {
				m := got.Messages[i]
				if m.Topic != w.topic || m.LogTime != strconv.FormatUint(w.logTime, 10) ||
					m.PublishTime != strconv.FormatUint(w.pubTime, 10) || m.Sequence != seq[w.topic] {
					t.Errorf("message %d: %s at %s/%s seq %d, want %s at %d/%d seq %d", i, m.Topic, m.LogTime, m.PublishTime,
						m.Sequence, w.topic, w.logTime, w.pubTime, seq[w.topic])
				}
				seq[w.topic]++
				var ch *mcap.Channel
				for _, c := range info.Channels {
					if c.Topic == w.topic {
						ch = c
					}
				}
				typ := info.Schemas[ch.SchemaID].Name
				s := schemas[typ]
				if s == nil {
					if s, err = rosmsg.ParseSchema(typ, rosmsg.ROS2Msg, info.Schemas[ch.SchemaID].Data); err != nil {
						t.Fatal(err)
					}
					schemas[typ] = s
				}
				v, err := s.Decode(rosmsg.EncodingCDR, w.data)
				if err != nil {
					t.Fatal(err)
				}
				if goValue, jsValue := nodetest.JSONValue(t, v.Map()), nodetest.JSONValue(t, m.Value); !reflect.DeepEqual(goValue, jsValue) {
					t.Errorf("message %d (%s) differs:\n  Go: %v\n  JS: %v", i, w.topic, goValue, jsValue)
				}
			}
		})
	}
}
