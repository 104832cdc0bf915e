package replay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// FoxgloveVersion is the Foxglove whose settings foxgloveKeys lists: the
// open-source Foxglove Studio (github.com/foxglove/studio, MPL-2.0) at its
// last public version, 1.87, whose 3D panel current Foxglove releases
// continue. The keys are those its code reads: RendererConfig (panels/
// ThreeDeeRender/Renderer.ts: cameraState, followMode, followTf, scene
// with scene.transforms, transforms, topics, layers), the layer settings
// of renderables/Grids.ts (LayerSettingsGrid), renderables/Urdfs.ts
// (LayerSettingsUrdf, LayerSettingsCustomUrdf: sourceType, topic,
// framePrefix, displayMode, fallbackColor; no opacity) and
// renderables/PoseArrays.ts (LayerSettingsPoseArray, which draws
// nav_msgs/Path), panels/Plot/types.ts (PlotConfig, PlotPath) and
// panels/DiagnosticSummary (its Config).
const FoxgloveVersion = "Foxglove Studio 1.87 (github.com/foxglove/studio, open source)"

// keySchema is what a JSON object may hold: its allowed keys, each with
// the schema of its value (nil: a leaf, any value), or any key with the
// schema of each value (anyKey).
type keySchema struct {
	keys   map[string]*keySchema
	anyKey *keySchema
	items  *keySchema // the schema of each element of an array value
	// byField picks the schema of an object by the value of one of its
	// keys (the layers' layerId)
	byField string
	byValue map[string]*keySchema
}

func leafKeys(names ...string) *keySchema {
	s := &keySchema{keys: map[string]*keySchema{}}
	for _, n := range names {
		s.keys[n] = nil
	}
	return s
}

func with(s *keySchema, key string, sub *keySchema) *keySchema {
	s.keys[key] = sub
	return s
}

// foxgloveKeys returns the settings FoxgloveVersion reads, per panel
// type (the configById key's prefix before "!").
func foxgloveKeys() map[string]*keySchema {
	base := []string{"visible", "frameLocked"}
	custom := append([]string{"layerId", "instanceId", "label", "order"}, base...)
	urdfTopic := leafKeys(append([]string{"instanceId", "displayMode", "label", "fallbackColor"}, base...)...)
	poseArray := leafKeys(append([]string{"type", "axisScale", "arrowScale", "lineWidth", "gradient"}, base...)...)
	threeD := leafKeys("followMode", "followTf")
	with(threeD, "cameraState", leafKeys("distance", "perspective", "phi", "target", "targetOffset", "targetOrientation", "thetaOffset", "fovy", "near", "far"))
	with(threeD, "scene", with(leafKeys("enableStats", "backgroundColor", "labelScaleFactor", "ignoreColladaUpAxis", "meshUpAxis", "topicsVisible"),
		"transforms", leafKeys("editable", "showLabel", "labelSize", "axisScale", "lineWidth", "lineColor", "enablePreloading")))
	with(threeD, "publish", leafKeys("type", "poseTopic", "pointTopic", "poseEstimateTopic", "poseEstimateXDeviation", "poseEstimateYDeviation", "poseEstimateThetaDeviation"))
	with(threeD, "transforms", &keySchema{anyKey: leafKeys(append([]string{"xyzOffset", "rpyOffset"}, base...)...)})
	// topics: the robot description (a URDF topic) and nav_msgs/Path
	with(threeD, "topics", &keySchema{keys: map[string]*keySchema{"/robot_description": urdfTopic, "/calisym/predicted_path": poseArray}})
	with(threeD, "layers", &keySchema{anyKey: &keySchema{byField: "layerId", byValue: map[string]*keySchema{
		"foxglove.Grid": leafKeys(append([]string{"frameId", "size", "divisions", "lineWidth", "color", "position", "rotation"}, custom...)...),
		"foxglove.Urdf": leafKeys(append([]string{"sourceType", "url", "filePath", "parameter", "topic", "framePrefix", "displayMode", "fallbackColor"}, custom...)...),
	}}})
	plot := leafKeys("title", "minXValue", "maxXValue", "minYValue", "maxYValue", "showLegend", "legendDisplay", "showPlotValuesInLegend",
		"showXAxisLabels", "showYAxisLabels", "isSynced", "xAxisVal", "xAxisPath", "followingViewWidth", "sidebarDimension", "foxglovePanelTitle")
	plot.keys["paths"] = &keySchema{items: leafKeys("value", "enabled", "color", "label", "timestampMethod", "showLine", "lineSize")}
	return map[string]*keySchema{
		"3D":                threeD,
		"Plot":              plot,
		"DiagnosticSummary": leafKeys("minLevel", "pinnedIds", "topicToRender", "hardwareIdFilter", "sortByLevel", "foxglovePanelTitle"),
	}
}

// checkKeys returns every key of v that s does not allow, as paths.
func checkKeys(path string, v any, s *keySchema) []string {
	if s == nil {
		return nil
	}
	if s.items != nil {
		arr, ok := v.([]any)
		if !ok {
			return []string{path + ": not an array"}
		}
		var out []string
		for i, x := range arr {
			out = append(out, checkKeys(path+"["+strconv.Itoa(i)+"]", x, s.items)...)
		}
		return out
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{path + ": not an object"}
	}
	if s.byField != "" {
		id, _ := obj[s.byField].(string)
		sub, ok := s.byValue[id]
		if !ok {
			return []string{fmt.Sprintf("%s: %s %q is not one this check knows", path, s.byField, id)}
		}
		return checkKeys(path, v, sub)
	}
	var out []string
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		sub, ok := s.keys[k]
		if s.anyKey != nil {
			sub, ok = s.anyKey, true
		}
		if !ok {
			out = append(out, path+"."+k)
			continue
		}
		out = append(out, checkKeys(path+"."+k, obj[k], sub)...)
	}
	return out
}

// TestFoxgloveLayoutKeys checks every key of foxglove/anymal.json against
// the settings FoxgloveVersion reads (foxgloveKeys): a key it does not
// read is ignored silently (an opacity on a URDF layer left the ghost
// opaque; scene.transforms.visible left 175 frame axes and labels over
// both robots). The ghost is drawn translucent through the alpha of its
// fallback colour, which its collision shapes take; the frame labels
// are off.
func TestFoxgloveLayoutKeys(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtures.Root(), "foxglove", "anymal.json"))
	if err != nil {
		t.Fatal(err)
	}
	var layout map[string]any
	if err := json.Unmarshal(b, &layout); err != nil {
		t.Fatal(err)
	}
	split := &keySchema{keys: map[string]*keySchema{"direction": nil, "splitPercentage": nil}}
	top := leafKeys("globalVariables", "userNodes")
	top.keys["playbackConfig"] = leafKeys("speed", "messageOrder", "timeDisplayMethod")
	top.keys["layout"] = split
	top.keys["configById"] = nil // checked per panel below
	for _, k := range []string{"first", "second"} {
		split.keys[k] = nil // a panel id, or a nested split: checked below
	}
	var errs []string
	errs = append(errs, checkKeys("layout", layout, top)...)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if m, ok := v.(map[string]any); ok {
			errs = append(errs, checkKeys(path, m, split)...)
			walk(path+".first", m["first"])
			walk(path+".second", m["second"])
		}
	}
	walk("layout.layout", layout["layout"])
	panels, _ := layout["configById"].(map[string]any)
	schemas := foxgloveKeys()
	for id, cfg := range panels {
		typ, _, _ := strings.Cut(id, "!")
		s, ok := schemas[typ]
		if !ok {
			errs = append(errs, fmt.Sprintf("configById.%s: panel type %s is not one this check knows", id, typ))
			continue
		}
		errs = append(errs, checkKeys("configById."+id, cfg, s)...)
	}
	sort.Strings(errs)
	for _, e := range errs {
		t.Errorf("%s: not a setting %s reads", e, FoxgloveVersion)
	}
	layers := panels["3D!calisym"].(map[string]any)["layers"].(map[string]any)
	ghost := layers["ghost"].(map[string]any)
	if c, _ := ghost["fallbackColor"].(string); len(c) != 9 || c[7:] == "ff" || ghost["displayMode"] != "collision" {
		t.Errorf("the ghost layer %v: want collision shapes in a fallback colour #rrggbbaa with alpha below ff", ghost)
	}
}
