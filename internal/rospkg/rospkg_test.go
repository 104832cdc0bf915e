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
	// What rclgo (nodes/ros2) compiles against and links
	// (pkg/rclgo/flags.gen.go: -lrcl -lrcl_action -lrmw
	// -lrmw_implementation -lrosidl_runtime_c -lrosidl_typesupport_c
	// -lrcutils, and rcl_action's headers include action_msgs' and
	// unique_identifier_msgs'): needed to build and to run.
	depend := p.Dependencies("depend")
	for _, want := range []string{"rcl", "rcl_action", "rcutils", "rmw", "rmw_implementation", "rosidl_runtime_c",
		"rosidl_typesupport_c", "action_msgs", "unique_identifier_msgs"} {
		if !slices.Contains(depend, want) &&
			!(slices.Contains(p.Dependencies("build_depend"), want) && slices.Contains(p.Dependencies("exec_depend"), want)) {
			t.Errorf("package.xml does not depend on %s at build and run time (rclgo links it)", want)
		}
	}
	if !slices.Contains(p.Dependencies("member_of_group"), "rosidl_interface_packages") {
		t.Error("not a member of rosidl_interface_packages")
	}
}

// variant returns good with the first from replaced by to, failing the test
// if good lacks from.
func variant(t *testing.T, good, name, from, to string) string {
	t.Helper()
	bad := strings.Replace(good, from, to, 1)
	if bad == good {
		t.Fatalf("%s: fixture lacks %q", name, from)
	}
	return bad
}

// deps is the last dependency of the repository's package.xml, after which
// the variants below add dependency elements.
const deps = "<test_depend>ament_lint_auto</test_depend>"

// testVariant is a variant of the repository's package.xml.
type testVariant struct{ name, xml string }

// rejectVariants returns variants of good that package_format3.xsd
// (REP 149) rejects, one or more for each rule of the schema.
func rejectVariants(t *testing.T, good string) []testVariant {
	t.Helper()
	desc := regexp.MustCompile(`(?s)<description>.*</description>`).FindString(good)
	if desc == "" {
		t.Fatal("fixture has no <description>")
	}
	var out []testVariant
	for _, c := range []struct{ name, from, to string }{
		// Well-formedness and the document.
		{"not well-formed", "</export>", "</exprt>"},
		{"second root", "</package>", "</package><package format=\"3\"/>"},
		{"text after the root", "</package>", "</package>trailing"},
		// <package>: in no namespace, format="3" required and fixed, no
		// other attributes, element-only content.
		{"format 2", `format="3"`, `format="2"`},
		{"no format", ` format="3"`, ""},
		{"format with spaces", `format="3"`, `format=" 3"`},
		{"root in a namespace", `<package format="3">`, `<package xmlns="http://example.com/pkg" format="3">`},
		{"root attribute", `<package format="3">`, `<package format="3" kind="ros2">`},
		{"root xml:lang", `<package format="3">`, `<package format="3" xml:lang="en">`},
		{"root text", "<name>calisym</name>", "calisym<name>calisym</name>"},
		// The sequence and its multiplicities.
		{"order", "<license>Apache-2.0</license>", "<license>Apache-2.0</license><name>x</name>"},
		{"no name", "<name>calisym</name>", ""},
		{"two names", "<name>calisym</name>", "<name>calisym</name><name>other</name>"},
		{"no version", "<version>0.1.0</version>", ""},
		{"two versions", "<version>0.1.0</version>", "<version>0.1.0</version><version>0.2.0</version>"},
		{"no description", desc, ""},
		{"two descriptions", desc, desc + desc},
		{"description after maintainer", desc + "\n  <maintainer email=\"maintainers@calisym.invalid\">calisym maintainers</maintainer>",
			"<maintainer email=\"maintainers@calisym.invalid\">calisym maintainers</maintainer>" + desc},
		{"no maintainer", `<maintainer email="maintainers@calisym.invalid">calisym maintainers</maintainer>`, ""},
		{"no license", "<license>Apache-2.0</license>", ""},
		{"url before license", "<license>Apache-2.0</license>\n  <url", "<url>https://example.com</url><license>Apache-2.0</license>\n  <url"},
		{"author before url", "<url type=", "<author>A</author><url type="},
		{"dependency before author", "</url>", "</url><depend>x</depend><author>A</author>"},
		{"group_depend after member_of_group", "</member_of_group>", "</member_of_group><group_depend>g</group_depend>"},
		{"dependency after member_of_group", "</member_of_group>", "</member_of_group><depend>x</depend>"},
		{"unknown element", "<member_of_group>", "<run_depend>x</run_depend><member_of_group>"},
		{"format 1 element", "<member_of_group>", "<build_export_depend>a</build_export_depend><run_depend>x</run_depend><member_of_group>"},
		{"element in a namespace", deps, deps + `<x:depend xmlns:x="urn:x">std_msgs</x:depend>`},
		{"two exports", "</export>", "</export><export/>"},
		{"element after export", "</export>", "</export><member_of_group>g</member_of_group>"},
		// <name>: [a-zA-Z]([_-]?[0-9a-zA-Z]+)*, no attributes.
		{"bad name", "<name>calisym</name>", "<name>cali__sym</name>"},
		{"name starts with a digit", "<name>calisym</name>", "<name>1calisym</name>"},
		{"name ends with an underscore", "<name>calisym</name>", "<name>calisym_</name>"},
		{"name with a space", "<name>calisym</name>", "<name>cali sym</name>"},
		{"name with a dot", "<name>calisym</name>", "<name>cali.sym</name>"},
		{"empty name", "<name>calisym</name>", "<name/>"},
		{"name attribute", "<name>calisym</name>", `<name lang="en">calisym</name>`},
		{"name child", "<name>calisym</name>", "<name>calisym<b/></name>"},
		// <version>: VersionType, no attributes.
		{"bad version", "<version>0.1.0</version>", "<version>0.1</version>"},
		{"leading zero", "<version>0.1.0</version>", "<version>0.01.0</version>"},
		{"four parts", "<version>0.1.0</version>", "<version>0.1.0.0</version>"},
		{"version suffix", "<version>0.1.0</version>", "<version>0.1.0-rc1</version>"},
		{"version compatibility", "<version>0.1.0</version>", `<version compatibility="0.1.0">0.1.0</version>`},
		// <description>: no attributes.
		{"description attribute", "<description>", `<description lang="en">`},
		// <maintainer>: email required, EmailType, no other attributes.
		{"no email", ` email="maintainers@calisym.invalid"`, ""},
		{"bad email", `email="maintainers@calisym.invalid"`, `email="maintainers@calisym"`},
		{"email with a space", `email="maintainers@calisym.invalid"`, `email="main tainers@calisym.invalid"`},
		{"email in a namespace", ` email="maintainers@calisym.invalid"`, ` xmlns:x="urn:x" x:email="maintainers@calisym.invalid"`},
		{"maintainer attribute", `email="maintainers@calisym.invalid"`, `email="maintainers@calisym.invalid" url="https://example.com"`},
		{"maintainer child", "calisym maintainers</maintainer>", "<b>calisym</b></maintainer>"},
		// <author>: email optional, EmailType.
		{"author bad email", "</url>", `</url><author email="jane">Jane</author>`},
		{"author attribute", "</url>", `</url><author role="dev">Jane</author>`},
		// <license>: only file.
		{"license attribute", "<license>Apache-2.0</license>", `<license source="x">Apache-2.0</license>`},
		{"license child", "<license>Apache-2.0</license>", `<license><spdx>Apache-2.0</spdx></license>`},
		// <url>: type from website, bugtracker, repository.
		{"url type", `type="repository"`, `type="homepage"`},
		{"url type case", `type="repository"`, `type="Repository"`},
		{"url attribute", `type="repository"`, `type="repository" rel="x"`},
		// Dependencies: version_* (VersionLimitType) and condition only.
		{"dependency attribute", "<depend>std_msgs</depend>", `<depend version="1">std_msgs</depend>`},
		{"bad version_gte", "<depend>std_msgs</depend>", `<depend version_gte="abc">std_msgs</depend>`},
		{"version_lt with four parts", "<depend>std_msgs</depend>", `<depend version_lt="1.2.3.4">std_msgs</depend>`},
		{"version_eq leading zero", "<depend>std_msgs</depend>", `<depend version_eq="01">std_msgs</depend>`},
		{"empty version_lte", "<depend>std_msgs</depend>", `<depend version_lte="">std_msgs</depend>`},
		{"bad condition", "<depend>std_msgs</depend>", `<depend condition="$A &amp;&amp; $B">std_msgs</depend>`},
		{"condition with a semicolon", "<exec_depend>launch</exec_depend>", `<exec_depend condition="$ROS_VERSION == 2;">launch</exec_depend>`},
		{"dependency child", "<depend>std_msgs</depend>", "<depend><name>std_msgs</name></depend>"},
		{"dependency qualified attribute", "<depend>std_msgs</depend>", `<depend xmlns:x="urn:x" x:condition="1">std_msgs</depend>`},
		// group_depend and member_of_group: condition only, without quotes.
		{"group attribute", "<member_of_group>", `<member_of_group version_gte="1">`},
		{"group condition with quotes", "<member_of_group>", `<member_of_group condition="$ROS_DISTRO == 'jazzy'">`},
		{"group_depend bad condition", "<member_of_group>", `<group_depend condition="a;b">g</group_depend><member_of_group>`},
		{"group child", "<member_of_group>rosidl_interface_packages", "<member_of_group><g/>"},
		// <export>: no attributes, no text of its own.
		{"export attribute", "<export>", `<export kind="x">`},
		{"export text", "<export>", "<export>ament_cmake"},
	} {
		out = append(out, testVariant{c.name, variant(t, good, c.name, c.from, c.to)})
	}
	return out
}

// TestCheckPackageXMLRejects checks that the variants of the repository's
// package.xml that package_format3.xsd (REP 149) rejects are rejected.
func TestCheckPackageXMLRejects(t *testing.T) {
	for _, v := range rejectVariants(t, read(t, "package.xml")) {
		if _, err := CheckPackageXML([]byte(v.xml)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: accepted (%v)", v.name, err)
		} else if testing.Verbose() {
			t.Logf("%s: %v", v.name, err)
		}
	}
}

// acceptVariants returns variants of good that package_format3.xsd
// (REP 149) accepts.
func acceptVariants(t *testing.T, good string) []testVariant {
	t.Helper()
	desc := regexp.MustCompile(`(?s)<description>.*</description>`)
	var out []testVariant
	for _, d := range []string{"<description/>", "<description></description>"} {
		out = append(out, testVariant{"empty description " + d, desc.ReplaceAllString(good, d)})
	}
	for _, c := range []struct{ name, from, to string }{
		{"version_gte and condition", "<depend>std_msgs</depend>", `<depend version_gte="4.2" condition="$ROS_VERSION == 2">std_msgs</depend>`},
		{"version range", "<depend>std_msgs</depend>", `<depend version_gte="1" version_lt="2.0.0">std_msgs</depend>`},
		{"all version attributes", "<depend>std_msgs</depend>", `<depend version_lt="9" version_lte="8.1" version_eq="5.0.0" version_gte="0.0" version_gt="0">std_msgs</depend>`},
		{"quoted condition", "<depend>std_msgs</depend>", `<depend condition="$ROS_DISTRO != 'humble' and ($X == &quot;a b&quot; or $Y &gt;= 2)">std_msgs</depend>`},
		{"empty condition", "<depend>std_msgs</depend>", `<depend condition="">std_msgs</depend>`},
		// VersionLimitType's and VersionType's '.' is unescaped in the schema.
		{"version limit with another separator", "<depend>std_msgs</depend>", `<depend version_gte="1-2">std_msgs</depend>`},
		{"every dependency kind, any order", deps, deps + "<replace>old</replace><conflict>alt</conflict><doc_depend>doxygen</doc_depend>" +
			"<buildtool_export_depend>t</buildtool_export_depend><build_export_depend>b</build_export_depend><depend>d</depend><build_depend>b</build_depend>"},
		{"empty dependency", deps, deps + "<exec_depend/>"},
		{"second maintainer", "</maintainer>", `</maintainer><maintainer email=" jane.doe+ros@example.co.uk ">Jane Doe</maintainer>`},
		{"empty maintainer name", "calisym maintainers</maintainer>", "</maintainer>"},
		{"two licenses with file", "<license>Apache-2.0</license>", `<license file="LICENSE">Apache-2.0</license><license file="third_party/LICENSE">MIT</license>`},
		{"empty license", "<license>Apache-2.0</license>", "<license/>"},
		{"url type website", "</url>", `</url><url type="website">https://calisym.invalid</url><url type=" bugtracker ">https://github.com/calisym/calisym/issues</url>`},
		{"url without type", `<url type="repository">`, "<url>"},
		{"authors", "</url>", `</url><author>John Doe</author><author email="jane@example.com">Jane Doe</author>`},
		{"no url", `<url type="repository">https://github.com/calisym/calisym</url>`, ""},
		{"capitals in the name", "<name>calisym</name>", "<name>CaLiSym</name>"},
		{"dash in the name", "<name>calisym</name>", "<name>cali-sym2_x</name>"},
		{"name with white space", "<name>calisym</name>", "<name>\n  calisym\n</name>"},
		{"version with white space", "<version>0.1.0</version>", "<version> 0.1.0 </version>"},
		{"big version", "<version>0.1.0</version>", "<version>10.0.123</version>"},
		{"version with another separator", "<version>0.1.0</version>", "<version>0-1-0</version>"},
		{"XHTML description", "<description>", `<description><p class="x">Intro</p><x:y xmlns:x="urn:x"/>`},
		{"group_depend with condition", "<member_of_group>", `<group_depend condition="$ROS_VERSION == 2">rosidl_interface_packages</group_depend><member_of_group condition="$ROS_VERSION==2">`},
		{"no group", "<member_of_group>rosidl_interface_packages</member_of_group>", ""},
		{"free export content", "</build_type>", `</build_type><build_type condition="$ROS_VERSION == 1">catkin</build_type><rviz plugin="${prefix}/p.xml"/><x:y xmlns:x="urn:x"><z>text</z></x:y><architecture_independent/>`},
		{"empty export", "<export>\n    <build_type>ament_cmake</build_type>\n  </export>", "<export/>"},
		{"no export", "<export>\n    <build_type>ament_cmake</build_type>\n  </export>", ""},
		{"schema location", `<package format="3">`, `<package format="3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://download.ros.org/schema/package_format3.xsd">`},
		{"comments and CDATA", "<depend>std_msgs</depend>", "<!-- c --><depend><![CDATA[std_msgs]]><!-- d --></depend>"},
		{"trailing comment", "</package>", "</package>\n<!-- end -->\n"},
	} {
		out = append(out, testVariant{c.name, variant(t, good, c.name, c.from, c.to)})
	}
	return out
}

// TestCheckPackageXMLAccepts checks that the variants of the repository's
// package.xml that package_format3.xsd (REP 149) accepts are accepted.
func TestCheckPackageXMLAccepts(t *testing.T) {
	for _, v := range acceptVariants(t, read(t, "package.xml")) {
		if _, err := CheckPackageXML([]byte(v.xml)); err != nil {
			t.Errorf("%s: %v", v.name, err)
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
    if callable(v):
        return {"type": "function", "args": [getattr(v, "__name__", "")], "kwargs": {}}
    return v

class Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (Rec,), {})
        setattr(self, name, cls)
        return cls

for m in ["launch", "launch.actions", "launch.conditions", "launch.substitutions", "launch.event_handlers", "launch.events",
          "launch.launch_description_sources", "launch_ros", "launch_ros.actions", "launch_ros.substitutions"]:
    sys.modules[m] = Stub(m)
spec = importlib.util.spec_from_file_location("launchfile", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(json.dumps(dump(mod.generate_launch_description())))
`

// walk calls f on every recorded object below v, once: an event
// handler's target_action, an entry of the description itself, is not
// visited again.
func walk(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["type"]; ok {
			f(v)
		}
		for k, x := range v {
			if k != "target_action" {
				walk(x, f)
			}
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
			for _, a := range []string{"model", "params", "data", "foxglove", "foxglove_address", "foxglove_port", "bag", "reliable_inputs", "launch_prefix"} {
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
				// the real-time option: the node runs under launch_prefix
				// ('chrt -f 50'), empty by default
				if n["executable"] == "calisym_ros2" && !strings.Contains(fmt.Sprint(n["prefix"]), "launch_prefix") {
					t.Errorf("%s: calisym_ros2's prefix is %v, want LaunchConfiguration(\"launch_prefix\")", name, n["prefix"])
				}
				if d := args["launch_prefix"]["default_value"]; d != "" {
					t.Errorf("%s: launch_prefix defaults to %q, want nothing", name, d)
				}
			}
			// foxglove_bridge first: an optional package that is missing
			// stops the launch before the node starts (TestLaunchArguments).
			if !slices.Equal(exes, []string{"foxglove_bridge/foxglove_bridge", "calisym/calisym_ros2"}) {
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
			if strings.Contains(string(b), `"launch","predictor.launch.py"`) && strings.Contains(string(b), `"params":{"args":["params"],"kwargs":{},"type":"LaunchConfiguration"}`) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s does not include predictor.launch.py with its params", name)
		}
	}
}
