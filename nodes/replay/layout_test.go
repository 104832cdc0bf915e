package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/nodes/replay"
	"github.com/calisym/calisym/statemap"
)

// layoutPanels are the panel types the shipped layout may use, as
// Foxglove names them in a layout's configById keys ("Type!id").
var layoutPanels = []string{"3D", "Plot", "DiagnosticSummary", "DiagnosticStatusPanel"}

// TestFoxgloveLayout checks the Foxglove layout shipped for ANYmal
// (foxglove/anymal.json) against a replay of params/anymal.yaml with the
// defaults the command of docs/live-prediction.md uses:
//
//   - it is Foxglove's layout format: configById keyed "Type!id" with
//     known panel types, a layout tree (row/column splits with first,
//     second and a split percentage) whose leaves are exactly the
//     configured panels, globalVariables, userNodes and playbackConfig;
//   - every topic it names is one the replay writes, every frame it names
//     (follow frame, grid frame, both URDF layers' root frames under their
//     prefixes, the frames plot paths filter on) is one the replay's /tf
//     or /tf_static carries;
//   - both robots come from /robot_description with collision geometry
//     (the URDF's meshes are not shipped), the ghost translucent under the
//     replay's ghost prefix;
//   - every plot path reads a number from the replay's messages through
//     the same message-path extractor the node uses, and the joint plots'
//     labels name the joints their indexes pick;
//   - the diagnostics panel reads the replay's diagnostics;
//   - CMake installs the layout under share/calisym.
func TestFoxgloveLayout(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "foxglove", "anymal.json"))
	if err != nil {
		t.Fatal(err)
	}
	var layout struct {
		ConfigByID      map[string]map[string]any `json:"configById"`
		GlobalVariables map[string]any            `json:"globalVariables"`
		UserNodes       map[string]any            `json:"userNodes"`
		PlaybackConfig  struct {
			Speed float64 `json:"speed"`
		} `json:"playbackConfig"`
		Layout any `json:"layout"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&layout); err != nil {
		t.Fatalf("foxglove/anymal.json: %v", err)
	}
	if layout.GlobalVariables == nil || layout.UserNodes == nil || layout.PlaybackConfig.Speed <= 0 {
		t.Errorf("globalVariables %v, userNodes %v, playbackConfig %+v", layout.GlobalVariables, layout.UserNodes, layout.PlaybackConfig)
	}
	var leaves []string
	var walk func(n any)
	walk = func(n any) {
		switch v := n.(type) {
		case string:
			leaves = append(leaves, v)
		case map[string]any:
			d, _ := v["direction"].(string)
			p, _ := v["splitPercentage"].(float64)
			if (d != "row" && d != "column") || v["first"] == nil || v["second"] == nil || p <= 0 || p >= 100 {
				t.Errorf("layout node %v: want a row or column split with first, second and splitPercentage", v)
				return
			}
			walk(v["first"])
			walk(v["second"])
		default:
			t.Errorf("layout node %v (%T)", n, n)
		}
	}
	walk(layout.Layout)
	var ids []string
	for id := range layout.ConfigByID {
		ids = append(ids, id)
		typ, _, ok := strings.Cut(id, "!")
		if !ok || !slices.Contains(layoutPanels, typ) {
			t.Errorf("panel %q: want Type!id with a type among %v", id, layoutPanels)
		}
	}
	if slices.Sort(ids); !slices.Equal(slices.Sorted(slices.Values(leaves)), ids) {
		t.Errorf("the layout tree shows %v, the configured panels are %v", leaves, ids)
	}

	// A replay with the defaults.
	root := anymalSim(t)
	params, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "anymal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sampler, err := statemap.NewSampler(params.Spec, params.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	model := livetest.QuadrupedModel(t, "anymal-test", sampler.Coordinates(), sampler.Ports())
	logPath := fixtures.Path(t, "anymal_sim", "id", "trot_301.mcap")
	r, err := logio.Open(logPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := firstLogTime(logPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "layout.mcap")
	w, err := logio.CreateROS2(out, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay.Run(context.Background(), &logSlice{MessageReader: r, from: first + 5e9, to: first + 5e9 + 20*10_000_000},
		replay.Options{Params: params, Model: model, DataRoot: root, Out: w}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rb, err := logio.Open(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	channels := map[string]*logio.Channel{}
	firstMsg := map[string][]byte{}
	var firstGhost []byte
	frames := map[string]bool{}
	for m, err := range logio.Messages(rb) {
		if err != nil {
			t.Fatal(err)
		}
		topic := m.Channel.Topic
		channels[topic] = m.Channel
		if firstMsg[topic] == nil {
			firstMsg[topic] = slices.Clone(m.Data)
		}
		// /tf: the measured robot's frames come with each state, the
		// ghost's with each prediction; keep the first ghost too
		if topic == "/tf" && firstGhost == nil {
			var tf msgs.TFMessage
			if err := msgs.Unmarshal(m.Data, &tf); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(tf.Transforms[0].ChildFrameID, "ghost/") {
				firstGhost = slices.Clone(m.Data)
			}
		}
		if topic == "/tf" || topic == "/tf_static" {
			var tf msgs.TFMessage
			if err := msgs.Unmarshal(m.Data, &tf); err != nil {
				t.Fatal(err)
			}
			for _, tr := range tf.Transforms {
				frames[tr.Header.FrameID], frames[tr.ChildFrameID] = true, true
			}
		}
	}
	topic := func(where, name string) {
		t.Helper()
		if channels[name] == nil {
			t.Errorf("%s names topic %q, which the replay does not write", where, name)
		}
	}
	frame := func(where, name string) {
		t.Helper()
		if !frames[name] {
			t.Errorf("%s names frame %q, which the replay's /tf and /tf_static do not carry", where, name)
		}
	}
	// Any string in the layout that looks like a topic must be one.
	var strs func(where string, v any)
	strs = func(where string, v any) {
		switch x := v.(type) {
		case string:
			if regexp.MustCompile(`^/[A-Za-z_][\w/]*$`).MatchString(x) {
				topic(where, x)
			}
		case map[string]any:
			for k, y := range x {
				if strings.HasPrefix(k, "/") {
					topic(where, k)
				}
				strs(where+"."+k, y)
			}
		case []any:
			for _, y := range x {
				strs(where, y)
			}
		}
	}
	strs("layout", map[string]any{"configById": toAny(t, layout.ConfigByID)})

	tf := params.Node.TF
	tf.Defaults()
	base := "base" // the URDF's root link
	threeD := layout.ConfigByID["3D!calisym"]
	if threeD == nil {
		t.Fatal("no 3D panel 3D!calisym")
	}
	frame("3D followTf", threeD["followTf"].(string))
	urdfs := 0
	for id, l := range threeD["layers"].(map[string]any) {
		layer := l.(map[string]any)
		switch layer["layerId"] {
		case "foxglove.Grid":
			frame("grid layer", layer["frameId"].(string))
		case "foxglove.Urdf":
			urdfs++
			prefix := layer["framePrefix"].(string)
			frame("URDF layer "+id, prefix+base)
			if layer["sourceType"] != "topic" || layer["topic"] != "/robot_description" || layer["displayMode"] != "collision" {
				t.Errorf("URDF layer %s: %v; want the /robot_description topic drawn with collision geometry", id, layer)
			}
			// translucent through the alpha of the fallback colour its
			// collision shapes take (Foxglove reads no opacity key:
			// TestFoxgloveLayoutKeys)
			if c, _ := layer["fallbackColor"].(string); prefix == tf.GhostPrefix && (len(c) != 9 || c[7:] == "ff") {
				t.Errorf("ghost layer %s is opaque (fallbackColor %q)", id, c)
			}
		default:
			t.Errorf("layer %s: unexpected %v", id, layer["layerId"])
		}
	}
	if urdfs != 2 {
		t.Errorf("%d URDF layers, want the measured robot and the ghost", urdfs)
	}
	plots := 0
	for id, cfg := range layout.ConfigByID {
		switch {
		case strings.HasPrefix(id, "Plot!"):
			for _, p := range cfg["paths"].([]any) {
				path := p.(map[string]any)
				expr, label := path["value"].(string), path["label"].(string)
				plots++
				name, err := rosmsg.TopicOf(expr)
				if err != nil {
					t.Fatalf("%s: %q: %v", id, expr, err)
				}
				topic(id, name)
				for _, m := range regexp.MustCompile(`child_frame_id=="([^"]+)"`).FindAllStringSubmatch(expr, -1) {
					frame(id, m[1])
				}
				ch := channels[name]
				if ch == nil {
					continue
				}
				x, err := rosmsg.CompileExtractor(ch.Type, ch.SchemaEncoding, ch.Schema, ch.Encoding, expr)
				if err != nil {
					t.Errorf("%s: path %q does not compile against %s: %v", id, expr, ch.Type, err)
					continue
				}
				v := make([]float64, 1)
				err = x.Extract(firstMsg[name], v)
				if err != nil && name == "/tf" {
					err = x.Extract(firstGhost, v)
				}
				if err != nil {
					t.Errorf("%s: path %q reads nothing from the replay's first %s: %v", id, expr, name, err)
				}
				// A joint plot's label names the joint its index picks.
				if m := regexp.MustCompile(`position\[(\d+)\]$`).FindStringSubmatch(expr); m != nil {
					names := jointNames(t, ch, firstMsg[name])
					i := 0
					for _, c := range m[1] {
						i = 10*i + int(c-'0')
					}
					if i >= len(names) || !strings.HasPrefix(label, names[i]+" ") {
						t.Errorf("%s: %q is joint %d of %v, but its label is %q", id, expr, i, names, label)
					}
				}
			}
		case strings.HasPrefix(id, "Diagnostic"):
			if cfg["topicToRender"] != params.Node.Outputs.Diagnostics {
				t.Errorf("%s shows %v, want %s", id, cfg["topicToRender"], params.Node.Outputs.Diagnostics)
			}
		}
	}
	if plots < 4 {
		t.Errorf("%d plotted paths, want measured and predicted joints and base height", plots)
	}
	cm, err := os.ReadFile(filepath.Join(fixtures.Root(), "CMakeLists.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cm), "install(DIRECTORY foxglove DESTINATION share/${PROJECT_NAME})") {
		t.Error("CMakeLists.txt does not install foxglove/ under share/calisym")
	}
}

// toAny turns a decoded JSON value into plain maps and slices.
func toAny(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jointNames returns the joint names of a sensor_msgs/JointState or of an
// AnymalState's joints, decoded generically from the message's schema.
func jointNames(t *testing.T, ch *logio.Channel, data []byte) []string {
	t.Helper()
	schema, err := rosmsg.ParseSchema(ch.Type, rosmsg.ROS2Msg, ch.Schema)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Decode(rosmsg.EncodingCDR, data)
	if err != nil {
		t.Fatal(err)
	}
	if j, ok := s.Field("joints"); ok {
		s = j.(*rosmsg.Struct)
	}
	names, _ := s.Field("name")
	out, _ := names.([]string)
	return out
}
