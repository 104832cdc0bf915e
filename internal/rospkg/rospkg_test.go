package rospkg

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPackageXML validates the repository's package.xml against REP 149
// format 3 and checks that it declares what the package builds with and
// the message packages of every type the node reads or writes.
func TestPackageXML(t *testing.T) {
	p, err := CheckPackageXML([]byte(read(t, "package.xml")))
	if err != nil {
		t.Fatal(err)
	}
	if p.BuildType() != "ament_cmake" {
		t.Errorf("build_type %q", p.BuildType())
	}
	tools := p.Dependencies("buildtool_depend")
	for _, want := range []string{"ament_cmake", "rosidl_default_generators"} {
		if !slices.Contains(tools, want) {
			t.Errorf("no buildtool_depend %s", want)
		}
	}
	all := append(append(p.Dependencies("depend"), p.Dependencies("exec_depend")...), p.Dependencies("build_depend")...)
	// PredictedTrajectory's fields, the outputs' and the standard inputs'.
	for _, want := range []string{"std_msgs", "builtin_interfaces", "sensor_msgs", "nav_msgs", "geometry_msgs", "diagnostic_msgs",
		"rosidl_default_runtime", "launch_ros", "foxglove_bridge"} {
		if !slices.Contains(all, want) {
			t.Errorf("package.xml does not depend on %s", want)
		}
	}
	if !slices.Contains(p.Dependencies("member_of_group"), "rosidl_interface_packages") {
		t.Error("not a member of rosidl_interface_packages")
	}
}

func TestCheckPackageXMLRejects(t *testing.T) {
	good := read(t, "package.xml")
	for _, c := range []struct{ name, from, to string }{
		{"format 2", `format="3"`, `format="2"`},
		{"bad name", "<name>calisym</name>", "<name>CaLiSym</name>"},
		{"bad version", "<version>0.1.0</version>", "<version>0.1</version>"},
		{"no email", ` email="maintainers@calisym.invalid"`, ""},
		{"order", "<license>Apache-2.0</license>", "<license>Apache-2.0</license><name>x</name>"},
		{"unknown element", "<member_of_group>", "<run_depend>x</run_depend><member_of_group>"},
		{"two exports", "</export>", "</export><export/>"},
		{"dependency attribute", "<depend>std_msgs</depend>", `<depend version="1">std_msgs</depend>`},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("%s: fixture lacks %q", c.name, c.from)
		}
		if _, err := CheckPackageXML([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: accepted (%v)", c.name, err)
		}
	}
}

// TestCMakeLists checks that the build installs what the launch files and
// the package need.
func TestCMakeLists(t *testing.T) {
	cm := read(t, "CMakeLists.txt")
	for _, want := range []string{
		"find_package(ament_cmake REQUIRED)",
		`rosidl_generate_interfaces(${PROJECT_NAME}`,
		`"${CMAKE_CURRENT_SOURCE_DIR}/msgs:msg/PredictedTrajectory.msg"`,
		"./cmd/calisym",
		`DESTINATION lib/${PROJECT_NAME}`,
		"install(DIRECTORY launch params DESTINATION share/${PROJECT_NAME})",
		"ament_package()",
	} {
		if !strings.Contains(cm, want) {
			t.Errorf("CMakeLists.txt lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(fixtures.Root(), "msgs", "msg", "PredictedTrajectory.msg")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(fixtures.Root(), "nodes", "ros2", "go.mod")); err != nil {
		t.Errorf("the rclgo module CMakeLists.txt builds: %v", err)
	}
}

// launchProbe runs a launch file's generate_launch_description with the
// launch and launch_ros modules replaced by recorders (no ROS 2 here), so
// that a missing import or a misspelt name fails, and prints the recorded
// actions as JSON.
const launchProbe = `
import importlib.util, json, sys, types

class Rec:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
    def items(self):
        return self
    def dump(self):
        return {"type": type(self).__name__, "args": [dump(a) for a in self.args],
                "kwargs": {k: dump(v) for k, v in self.kwargs.items()}}

def dump(v):
    if isinstance(v, Rec):
        return v.dump()
    if isinstance(v, (list, tuple)):
        return [dump(x) for x in v]
    if isinstance(v, dict):
        return {k: dump(x) for k, x in v.items()}
    if isinstance(v, type({}.items())):
        return {k: dump(x) for k, x in v}
    return v

class Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (Rec,), {})
        setattr(self, name, cls)
        return cls

for m in ["launch", "launch.actions", "launch.conditions", "launch.substitutions",
          "launch.launch_description_sources", "launch_ros", "launch_ros.actions", "launch_ros.substitutions"]:
    sys.modules[m] = Stub(m)
spec = importlib.util.spec_from_file_location("launchfile", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(json.dumps(dump(mod.generate_launch_description())))
`

// walk calls f on every recorded object below v.
func walk(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["type"]; ok {
			f(v)
		}
		for _, x := range v {
			walk(x, f)
		}
	case []any:
		for _, x := range v {
			walk(x, f)
		}
	}
}

// TestLaunchFiles parses every launch file with python3 (ast), runs its
// generate_launch_description against recording stand-ins of the launch
// modules, and checks that predictor.launch.py starts the installed node
// and can start foxglove_bridge, and that every robot's launch file
// includes it with a params file that exists.
func TestLaunchFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures.Root(), "launch", "*.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	var robots []string
	for _, f := range files {
		robots = append(robots, strings.TrimSuffix(filepath.Base(f), ".launch.py"))
	}
	for _, want := range []string{"predictor", "pendulum_sim", "px4_quadrotor", "crazyflie", "anymal"} {
		if !slices.Contains(robots, want) {
			t.Errorf("no launch/%s.launch.py", want)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH")
	}
	for _, f := range files {
		name := filepath.Base(f)
		cmd := exec.Command(py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", f)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
			continue
		}
		out, err := exec.Command(py, "-c", launchProbe, f).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Errorf("%s: generate_launch_description: %v\n%s", name, err, ee.Stderr)
			} else {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		var desc any
		if err := json.Unmarshal(out, &desc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		types := map[string]int{}
		args := map[string]map[string]any{}
		var nodes, includes []map[string]any
		walk(desc, func(a map[string]any) {
			typ := a["type"].(string)
			types[typ]++
			switch typ {
			case "DeclareLaunchArgument":
				args[a["args"].([]any)[0].(string)] = a["kwargs"].(map[string]any)
			case "Node":
				nodes = append(nodes, a["kwargs"].(map[string]any))
			case "IncludeLaunchDescription":
				includes = append(includes, a)
			}
		})
		if types["LaunchDescription"] != 1 {
			t.Errorf("%s: %d LaunchDescriptions", name, types["LaunchDescription"])
		}
		if name == "predictor.launch.py" {
			for _, a := range []string{"model", "params", "data", "foxglove", "foxglove_address", "foxglove_port", "bag"} {
				if _, ok := args[a]; !ok {
					t.Errorf("%s declares no argument %s", name, a)
				}
			}
			if d := args["foxglove_address"]["default_value"]; d != "127.0.0.1" {
				t.Errorf("foxglove_bridge binds to %v by default, want 127.0.0.1", d)
			}
			var exes []string
			for _, n := range nodes {
				exes = append(exes, fmt.Sprint(n["package"], "/", n["executable"]))
			}
			if !slices.Equal(exes, []string{"calisym/calisym_ros2", "foxglove_bridge/foxglove_bridge"}) {
				t.Errorf("%s starts %v", name, exes)
			}
			continue
		}
		// A robot's file: its params default, and the include of
		// predictor.launch.py passing it on.
		def, _ := json.Marshal(args["params"]["default_value"])
		m := regexp.MustCompile(`"params","([a-z0-9_]+\.yaml)"`).FindStringSubmatch(string(def))
		if m == nil {
			t.Errorf("%s: params default %s names no params file", name, def)
			continue
		}
		if _, err := os.Stat(filepath.Join(fixtures.Root(), "params", m[1])); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		found := false
		for _, inc := range includes {
			b, _ := json.Marshal(inc)
			if strings.Contains(string(b), `"launch","predictor.launch.py"`) && strings.Contains(string(b), `"launch_arguments":{"params":{"args":["params"],"kwargs":{},"type":"LaunchConfiguration"}}`) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s does not include predictor.launch.py with its params", name)
		}
	}
}
