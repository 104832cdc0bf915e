package rospkg

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// rosTypeLiteral matches a ROS message type as code spells it:
// "pkg/msg/Type" (ROS 2) or "pkg/Type" (ROS 1, and the normalised form),
// for a package named as message packages are (…_msgs, …_interfaces).
var rosTypeLiteral = regexp.MustCompile(`^([a-z][a-z0-9_]*(?:_msgs|_interfaces))/(?:msg/)?[A-Z][A-Za-z0-9]*$`)

// robotMessagePackages are the message packages of one robot's own
// software, which no ROS distribution releases (rosdep has no key for
// them): declaring them in package.xml would make `rosdep install` fail
// for every other robot. The robot's own workspace provides them;
// package.xml must say so in a comment naming each. The value says which
// params file needs it.
var robotMessagePackages = map[string]string{
	"anymal_msgs":          "params/anymal.yaml",
	"any_msgs":             "params/anymal.yaml (anymal_msgs/AnymalState's joints)",
	"px4_msgs":             "params/px4_quadrotor.yaml",
	"crazyflie_interfaces": "params/crazyflie.yaml, params/crazyflie_gravity.yaml",
}

// messagePackagesInCode returns the message packages the main module's Go
// code (its non-test files, outside nested modules) names in string
// literals, with a file that names each.
func messagePackagesInCode(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a module of its own (nodes/ros2)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if m := rosTypeLiteral.FindStringSubmatch(s); m != nil {
				if _, seen := out[m[1]]; !seen {
					rel, _ := filepath.Rel(root, path)
					out[m[1]] = rel
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// messagePackagesInParams returns the message packages the params files
// name: their topics' types and every type those definitions in
// params/interfaces depend on.
func messagePackagesInParams(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	typeKey := regexp.MustCompile(`(?m)^\s*(?:-\s*)?type:\s*['"]?([a-z][a-z0-9_]*)/(?:msg/)?[A-Z][A-Za-z0-9]*`)
	files, err := filepath.Glob(filepath.Join(root, "params", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range typeKey.FindAllStringSubmatch(string(b), -1) {
			if _, seen := out[m[1]]; !seen {
				out[m[1]] = filepath.Join("params", filepath.Base(f))
			}
		}
	}
	// A field "pkg/Type name" of a definition under params/interfaces.
	field := regexp.MustCompile(`(?m)^\s*([a-z][a-z0-9_]*)/[A-Z][A-Za-z0-9]*(?:\[[0-9<=]*\])?\s+[a-z]`)
	ifaces := filepath.Join(root, "params", "interfaces")
	err = filepath.WalkDir(ifaces, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".msg") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		pkg := strings.Split(filepath.ToSlash(strings.TrimPrefix(rel, filepath.Join("params", "interfaces")+string(filepath.Separator))), "/")[0]
		if _, seen := out[pkg]; !seen {
			out[pkg] = rel
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range field.FindAllStringSubmatch(string(b), -1) {
			if _, seen := out[m[1]]; !seen {
				out[m[1]] = rel
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// xmlComments returns the text of every comment of an XML document.
func xmlComments(doc string) string {
	var b strings.Builder
	for _, m := range regexp.MustCompile(`(?s)<!--(.*?)-->`).FindAllStringSubmatch(doc, -1) {
		b.WriteString(m[1])
		b.WriteByte('\n')
	}
	return b.String()
}

// TestPackageXMLDeclaresMessagePackages checks that every ROS message
// package the main module's code or a params file names is declared in
// package.xml (depend, exec_depend or build_depend), so that rosdep
// installs the type supports the node loads by name at run time (a node
// that advertises tf2_msgs/msg/TFMessage without tf2_msgs installed exits
// at start), except the robots' own packages (robotMessagePackages), which
// no distribution releases and which package.xml must name in a comment.
func TestPackageXMLDeclaresMessagePackages(t *testing.T) {
	root := fixtures.Root()
	doc := read(t, "package.xml")
	p, err := CheckPackageXML([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	declared := append(append(p.Dependencies("depend"), p.Dependencies("exec_depend")...), p.Dependencies("build_depend")...)
	named := messagePackagesInCode(t, root)
	for pkg, where := range messagePackagesInParams(t, root) {
		if _, seen := named[pkg]; !seen {
			named[pkg] = where
		}
	}
	for _, want := range []string{"tf2_msgs", "sensor_msgs", "diagnostic_msgs", "anymal_msgs", "px4_msgs"} {
		if _, ok := named[want]; !ok {
			t.Errorf("the scan found no use of %s: it no longer reads the code or the params", want)
		}
	}
	comments := xmlComments(doc)
	pkgs := make([]string, 0, len(named))
	for pkg := range named {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		where := named[pkg]
		if pkg == "calisym" {
			continue // this package's own interface
		}
		if robot, ok := robotMessagePackages[pkg]; ok {
			if slices.Contains(declared, pkg) {
				t.Errorf("package.xml declares %s, a robot's own package (%s) that rosdep cannot resolve", pkg, robot)
			}
			if !regexp.MustCompile(`\b` + pkg + `\b`).MatchString(comments) {
				t.Errorf("package.xml's comments do not name %s, which %s needs from the robot's workspace", pkg, robot)
			}
			continue
		}
		if !slices.Contains(declared, pkg) {
			t.Errorf("%s names message package %s, which package.xml does not declare (depend or exec_depend)", where, pkg)
		}
	}
}

// launchDependencies maps what the launch files and their documented use
// need to the package.xml dependency that provides it: the Python modules
// they import (a top-level module name) and the ros2 verbs they run
// (`ros2 launch` is ros2launch's, not launch's; `ros2 bag play`,
// ros2bag's).
var launchDependencies = map[string]string{
	"launch":      "launch",
	"launch_ros":  "launch_ros",
	"yaml":        "python3-yaml",
	"ros2 launch": "ros2launch",
	"ros2 bag":    "ros2bag",
}

// launchStdlib are the standard-library modules the launch files import.
var launchStdlib = map[string]bool{"importlib": true, "os": true, "shutil": true, "sys": true}

// TestPackageXMLDeclaresLaunchDependencies checks that package.xml
// declares (exec_depend or depend) what the launch files need at run
// time: every Python module they import (the standard library aside) and
// the ros2 verbs they and the documentation run (`ros2 launch` comes
// from ros2launch, which neither launch nor launch_ros pulls in; rosdep
// installs only what is declared).
func TestPackageXMLDeclaresLaunchDependencies(t *testing.T) {
	root := fixtures.Root()
	p, err := CheckPackageXML([]byte(read(t, "package.xml")))
	if err != nil {
		t.Fatal(err)
	}
	declared := append(p.Dependencies("depend"), p.Dependencies("exec_depend")...)
	files, err := filepath.Glob(filepath.Join(root, "launch", "*.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	imports := regexp.MustCompile(`(?m)^(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	need := map[string]string{} // dependency → where
	for _, f := range files {
		src := read(t, filepath.Join("launch", filepath.Base(f)))
		for _, m := range imports.FindAllStringSubmatch(src, -1) {
			mod := m[1]
			if launchStdlib[mod] {
				continue
			}
			dep, ok := launchDependencies[mod]
			if !ok {
				t.Errorf("launch/%s imports %s, which launchDependencies does not map to a package", filepath.Base(f), mod)
				continue
			}
			need[dep] = "launch/" + filepath.Base(f)
		}
		if strings.Contains(src, `"ros2", "bag"`) {
			need[launchDependencies["ros2 bag"]] = "launch/" + filepath.Base(f)
		}
	}
	if strings.Contains(read(t, launchPage), "ros2 launch calisym") {
		need[launchDependencies["ros2 launch"]] = launchPage
	}
	for _, want := range []string{"launch", "launch_ros", "python3-yaml", "ros2launch", "ros2bag"} {
		if _, ok := need[want]; !ok {
			t.Errorf("the scan found no need of %s: it no longer reads the launch files or the docs", want)
		}
	}
	for dep, where := range need {
		if !slices.Contains(declared, dep) {
			t.Errorf("%s needs %s, which package.xml does not declare (exec_depend)", where, dep)
		}
	}
}
