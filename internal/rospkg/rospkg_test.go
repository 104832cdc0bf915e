package rospkg

import (
	"errors"
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

// TestLaunchFiles parses every launch file with python3 (ast) and checks
// that each starts the installed node with a params file that exists and
// can start foxglove_bridge.
func TestLaunchFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures.Root(), "launch", "*.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	var robots []string
	for _, f := range files {
		robots = append(robots, strings.TrimSuffix(filepath.Base(f), ".launch.py"))
	}
	for _, want := range []string{"pendulum_sim", "px4_quadrotor", "crazyflie", "anymal"} {
		if !slices.Contains(robots, want) {
			t.Errorf("no launch/%s.launch.py", want)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is not on PATH")
		}
		t.Log("python3 is not on PATH: launch files not parsed")
	}
	paramsRef := regexp.MustCompile(`"params", "([a-z0-9_]+\.yaml)"`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if py != "" {
			cmd := exec.Command(py, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", f)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: %v\n%s", f, err, out)
			}
		}
		s := string(src)
		for _, want := range []string{"def generate_launch_description", `executable="calisym_ros2"`, `package="foxglove_bridge"`, `IfCondition(LaunchConfiguration("foxglove"))`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %s", filepath.Base(f), want)
			}
		}
		m := paramsRef.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("%s names no params file", filepath.Base(f))
			continue
		}
		if _, err := os.Stat(filepath.Join(fixtures.Root(), "params", m[1])); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
