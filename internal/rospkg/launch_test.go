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
	"sort"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// entity is one object launchProbe recorded: a launch action,
// substitution or description with its constructor's arguments.
type entity struct {
	Type   string
	Args   []any
	Kwargs map[string]any
}

// asEntity returns v as a recorded object, or nil.
func asEntity(v any) *entity {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	typ, ok := m["type"].(string)
	if !ok {
		return nil
	}
	e := &entity{Type: typ, Kwargs: map[string]any{}}
	e.Args, _ = m["args"].([]any)
	if kw, ok := m["kwargs"].(map[string]any); ok {
		e.Kwargs = kw
	}
	return e
}

// launchArg is a DeclareLaunchArgument.
type launchArg struct {
	name     string
	required bool // declared without default_value
}

// include is an IncludeLaunchDescription.
type include struct {
	// target is the included file when it is one of this package's
	// (FindPackageShare("calisym")/launch/NAME), else "".
	target string
	// passed are the names of its launch_arguments.
	passed []string
}

// launchFile is what a launch file's generate_launch_description returns,
// as the check needs it.
type launchFile struct {
	name     string
	args     []launchArg
	includes []include
	// entities are the top-level entries of its LaunchDescription, in
	// order.
	entities []*entity
}

// probeTail is the end of launchProbe, which runs one file; probeAll
// replaces it to run every file given in one python3 process (a process
// per file takes seconds on a loaded machine).
const probeTail = `spec = importlib.util.spec_from_file_location("launchfile", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
print(json.dumps(dump(mod.generate_launch_description())))
`

const probeAllTail = `out = {}
for i, path in enumerate(sys.argv[1:]):
    spec = importlib.util.spec_from_file_location("launchfile%d" % i, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out[path] = dump(mod.generate_launch_description())
print(json.dumps(out))
`

// probeLaunchFiles runs every launch file's generate_launch_description
// against the recording stand-ins of launchProbe.
func probeLaunchFiles(t *testing.T, dir string) map[string]*launchFile {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no launch files in %s", dir)
	}
	if !strings.HasSuffix(launchProbe, probeTail) {
		t.Fatal("launchProbe no longer ends as probeTail says")
	}
	probe := strings.TrimSuffix(launchProbe, probeTail) + probeAllTail
	b, err := exec.Command(py, append([]string{"-c", probe}, files...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("generate_launch_description: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]*launchFile{}
	for _, f := range files {
		name := filepath.Base(f)
		lf, err := parseLaunchFile(name, all[f])
		if err != nil {
			t.Fatal(err)
		}
		out[name] = lf
	}
	return out
}

// parseLaunchFile reads the recorded LaunchDescription of file name.
func parseLaunchFile(name string, v any) (*launchFile, error) {
	ld := asEntity(v)
	if ld == nil || ld.Type != "LaunchDescription" || len(ld.Args) != 1 {
		return nil, fmt.Errorf("%s: generate_launch_description returns %v, not a LaunchDescription([...])", name, v)
	}
	list, ok := ld.Args[0].([]any)
	if !ok {
		return nil, fmt.Errorf("%s: LaunchDescription of %v, not a list", name, ld.Args[0])
	}
	lf := &launchFile{name: name}
	for _, x := range list {
		e := asEntity(x)
		if e == nil {
			return nil, fmt.Errorf("%s: entry %v is not a launch action", name, x)
		}
		lf.entities = append(lf.entities, e)
		switch e.Type {
		case "DeclareLaunchArgument":
			n, ok := argString(e, 0, "name")
			if !ok {
				return nil, fmt.Errorf("%s: DeclareLaunchArgument without a literal name: %v", name, e.Args)
			}
			_, hasDefault := e.Kwargs["default_value"]
			lf.args = append(lf.args, launchArg{name: n, required: !hasDefault})
		case "IncludeLaunchDescription":
			inc, err := parseInclude(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			lf.includes = append(lf.includes, inc)
		}
	}
	return lf, nil
}

// argString returns positional argument i of e, or its keyword kw, when it
// is a literal string.
func argString(e *entity, i int, kw string) (string, bool) {
	var v any
	if i < len(e.Args) {
		v = e.Args[i]
	} else {
		v = e.Kwargs[kw]
	}
	s, ok := v.(string)
	return s, ok
}

// parseInclude reads an IncludeLaunchDescription: the included file,
// when it is PathJoinSubstitution([FindPackageShare("calisym"), "launch",
// NAME]), and the names of the arguments passed.
func parseInclude(e *entity) (include, error) {
	var inc include
	var src any
	if len(e.Args) > 0 {
		src = e.Args[0]
	} else {
		src = e.Kwargs["launch_description_source"]
	}
	if s := asEntity(src); s != nil && len(s.Args) > 0 {
		if pj := asEntity(s.Args[0]); pj != nil && pj.Type == "PathJoinSubstitution" && len(pj.Args) == 1 {
			if parts, ok := pj.Args[0].([]any); ok && len(parts) == 3 {
				pkg := asEntity(parts[0])
				dir, _ := parts[1].(string)
				file, _ := parts[2].(string)
				if pkg != nil && pkg.Type == "FindPackageShare" && len(pkg.Args) == 1 && pkg.Args[0] == "calisym" && dir == "launch" {
					inc.target = file
				}
			}
		}
	}
	if la, ok := e.Kwargs["launch_arguments"]; ok {
		m, ok := la.(map[string]any)
		if !ok {
			return inc, fmt.Errorf("launch_arguments %v is not a dict", la)
		}
		for k := range m {
			inc.passed = append(inc.passed, k)
		}
		sort.Strings(inc.passed)
	}
	return inc, nil
}

// declaredAll returns the arguments file declares itself or through the
// package's launch files it includes: those `ros2 launch` accepts for it
// (a command-line argument is a launch configuration that the included
// file's declaration then finds set).
func declaredAll(files map[string]*launchFile, name string, seen map[string]bool) map[string]bool {
	out := map[string]bool{}
	f := files[name]
	if f == nil || seen[name] {
		return out
	}
	seen[name] = true
	for _, a := range f.args {
		out[a.name] = true
	}
	for _, inc := range f.includes {
		for k := range declaredAll(files, inc.target, seen) {
			out[k] = true
		}
	}
	return out
}

// launchLine is one `ros2 launch calisym FILE name:=value …` command of
// the documentation.
type launchLine struct {
	where string // document:line
	file  string
	args  []string
}

var (
	launchCmd   = regexp.MustCompile(`ros2 launch calisym (\S+)((?:[ \t]+[A-Za-z_][A-Za-z0-9_]*:=\S*)*)`)
	launchArgRe = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*):=`)
)

// launchLines returns the `ros2 launch calisym` commands of a document,
// with backslash continuations joined.
func launchLines(doc, text string) []launchLine {
	lines := strings.Split(text, "\n")
	var out []launchLine
	for i := 0; i < len(lines); i++ {
		start := i
		l := lines[i]
		for strings.HasSuffix(strings.TrimRight(l, " \t"), `\`) && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(strings.TrimRight(l, " \t"), `\`) + " " + strings.TrimSpace(lines[i])
		}
		for _, m := range launchCmd.FindAllStringSubmatch(l, -1) {
			ll := launchLine{where: fmt.Sprintf("%s:%d", doc, start+1), file: strings.Trim(m[1], "`")}
			for _, a := range launchArgRe.FindAllStringSubmatch(m[2], -1) {
				ll.args = append(ll.args, a[1])
			}
			out = append(out, ll)
		}
	}
	return out
}

// launchPage is the documentation page that shows a `ros2 launch` line
// for every launch file.
const launchPage = "docs/live-prediction.md"

// launchDocs are the documents whose `ros2 launch` lines the check
// validates: the README and the pages of docs/ (fixtures.DocPages),
// nodes/ros2/README.md, CMakeLists.txt's header and the launch files' own
// docstrings.
func launchDocs(t *testing.T, root string) []launchLine {
	t.Helper()
	docs := append(fixtures.DocPages(), "nodes/ros2/README.md", "CMakeLists.txt")
	fs, err := filepath.Glob(filepath.Join(root, "launch", "*.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		docs = append(docs, filepath.Join("launch", filepath.Base(f)))
	}
	var out []launchLine
	for _, d := range docs {
		b, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, launchLines(d, string(b))...)
	}
	return out
}

// checkLaunch returns every way the launch files and the documents'
// `ros2 launch` lines break what ROS 2's launch checks when it runs them:
//   - an IncludeLaunchDescription of one of the package's launch files
//     passes every argument that file declares without a default (launch
//     stops with "Included launch description missing required argument"
//     otherwise, in Humble and Jazzy alike);
//   - a documented `ros2 launch` line names an existing file, uses only
//     arguments it declares (itself or through its includes) and gives
//     every argument the file declares without a default;
//   - optional actions (those with a condition: foxglove_bridge, ros2 bag
//     play, Crazyswarm2's server, MicroXRCEAgent) come before every
//     unconditional action that starts something (a Node, a process, an
//     include), so that an optional package that is missing stops the
//     launch before the predictor node starts, not after, leaving it
//     running as an orphan.
func checkLaunch(files map[string]*launchFile, lines []launchLine) []string {
	var errs []string
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := files[n]
		for _, inc := range f.includes {
			if inc.target == "" {
				continue
			}
			t := files[inc.target]
			if t == nil {
				errs = append(errs, fmt.Sprintf("%s includes launch/%s, which does not exist", n, inc.target))
				continue
			}
			for _, a := range t.args {
				if a.required && !slices.Contains(inc.passed, a.name) {
					errs = append(errs, fmt.Sprintf("%s includes %s without its required argument %q (given: [%s])", n, inc.target, a.name, strings.Join(inc.passed, ", ")))
				}
			}
		}
		firstStart, lastOptional := -1, -1
		for i, e := range f.entities {
			switch e.Type {
			case "Node", "ExecuteProcess", "IncludeLaunchDescription":
			default:
				continue
			}
			if _, cond := e.Kwargs["condition"]; cond {
				lastOptional = i
			} else if firstStart < 0 {
				firstStart = i
			}
		}
		if lastOptional >= 0 && firstStart >= 0 && lastOptional > firstStart {
			errs = append(errs, fmt.Sprintf("%s: the optional %s (entry %d) comes after the %s (entry %d) it should precede", n,
				describe(f.entities[lastOptional]), lastOptional, describe(f.entities[firstStart]), firstStart))
		}
	}
	for _, l := range lines {
		f := files[l.file]
		if f == nil {
			errs = append(errs, fmt.Sprintf("%s: ros2 launch calisym %s: no such launch file", l.where, l.file))
			continue
		}
		decl := declaredAll(files, l.file, map[string]bool{})
		for _, a := range l.args {
			if !decl[a] {
				errs = append(errs, fmt.Sprintf("%s: ros2 launch calisym %s %s:=…: %s declares no argument %q", l.where, l.file, a, l.file, a))
			}
		}
		for _, a := range f.args {
			if a.required && !slices.Contains(l.args, a.name) {
				errs = append(errs, fmt.Sprintf("%s: ros2 launch calisym %s lacks the required argument %s:=…", l.where, l.file, a.name))
			}
		}
	}
	return errs
}

// describe names a launch action for messages.
func describe(e *entity) string {
	if e.Type == "Node" {
		return fmt.Sprintf("Node %v/%v", e.Kwargs["package"], e.Kwargs["executable"])
	}
	if e.Type == "IncludeLaunchDescription" {
		if inc, err := parseInclude(e); err == nil && inc.target != "" {
			return "include of " + inc.target
		}
	}
	return e.Type
}

// TestLaunchArguments checks the launch files and every documented
// `ros2 launch` line as ROS 2's launch would when it runs them (see
// checkLaunch), without ROS 2: each launch file's
// generate_launch_description runs against recording stand-ins of the
// launch modules (launchProbe). It also checks that launchPage shows a
// `ros2 launch` line for every launch file, so that the lines it
// validates are the documentation's own.
func TestLaunchArguments(t *testing.T) {
	root := fixtures.Root()
	files := probeLaunchFiles(t, filepath.Join(root, "launch"))
	lines := launchDocs(t, root)
	for _, e := range checkLaunch(files, lines) {
		t.Error(e)
	}
	onPage := map[string]bool{}
	for _, l := range lines {
		t.Logf("%s: ros2 launch calisym %s %s", l.where, l.file, strings.Join(l.args, " "))
		if strings.HasPrefix(l.where, launchPage+":") {
			onPage[l.file] = true
		}
	}
	for n := range files {
		if !onPage[n] {
			t.Errorf("%s has no `ros2 launch calisym %s` line", launchPage, n)
		}
	}
}

// TestCheckLaunchRejects feeds checkLaunch the mistakes it exists for: a
// robot file that does not pass the included file's required argument,
// a documented argument nobody declares, a documented line without a
// required argument, and an optional action after the node.
func TestCheckLaunchRejects(t *testing.T) {
	pred := &launchFile{name: "predictor.launch.py", args: []launchArg{{"model", true}, {"params", true}, {"bag", false}},
		entities: []*entity{
			{Type: "Node", Kwargs: map[string]any{"package": "foxglove_bridge", "executable": "foxglove_bridge", "condition": "x"}},
			{Type: "Node", Kwargs: map[string]any{"package": "calisym", "executable": "calisym_ros2"}},
		}}
	robot := &launchFile{name: "robot.launch.py", args: []launchArg{{"model", true}, {"params", false}},
		includes: []include{{target: "predictor.launch.py", passed: []string{"model", "params"}}}}
	good := func() map[string]*launchFile {
		p, r := *pred, *robot
		return map[string]*launchFile{p.name: &p, r.name: &r}
	}
	goodLine := launchLine{where: "doc:1", file: "robot.launch.py", args: []string{"model", "bag"}}
	if errs := checkLaunch(good(), []launchLine{goodLine}); len(errs) != 0 {
		t.Fatalf("the good files: %v", errs)
	}
	for _, c := range []struct {
		name string
		edit func(map[string]*launchFile) []launchLine
		want string
	}{
		{"include without model", func(fs map[string]*launchFile) []launchLine {
			fs["robot.launch.py"].includes = []include{{target: "predictor.launch.py", passed: []string{"params"}}}
			return []launchLine{goodLine}
		}, `without its required argument "model" (given: [params])`},
		{"undeclared argument", func(map[string]*launchFile) []launchLine {
			return []launchLine{{where: "doc:2", file: "robot.launch.py", args: []string{"model", "foxglove"}}}
		}, `declares no argument "foxglove"`},
		{"line without model", func(map[string]*launchFile) []launchLine {
			return []launchLine{{where: "doc:3", file: "robot.launch.py", args: []string{"bag"}}}
		}, "lacks the required argument model"},
		{"missing file", func(map[string]*launchFile) []launchLine {
			return []launchLine{{where: "doc:4", file: "nope.launch.py", args: []string{"model"}}}
		}, "no such launch file"},
		{"optional after the node", func(fs map[string]*launchFile) []launchLine {
			p := fs["predictor.launch.py"]
			p.entities = []*entity{p.entities[1], p.entities[0]}
			return []launchLine{goodLine}
		}, "the optional Node foxglove_bridge/foxglove_bridge (entry 1) comes after the Node calisym/calisym_ros2 (entry 0)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := good()
			lines := c.edit(fs)
			errs := checkLaunch(fs, lines)
			if len(errs) != 1 || !strings.Contains(errs[0], c.want) {
				t.Errorf("errors %q, want one containing %q", errs, c.want)
			}
		})
	}
}

// TestLaunchLines checks the extraction of documented launch commands:
// continuations joined, arguments after the file, inline code.
func TestLaunchLines(t *testing.T) {
	doc := "x\n    ros2 launch calisym a.launch.py model:=m.safetensors \\\n        bag:=b.mcap foxglove:=true\nand `ros2 launch calisym b.launch.py model:=x` here\n"
	got := launchLines("d", doc)
	want := []launchLine{{"d:2", "a.launch.py", []string{"model", "bag", "foxglove"}}, {"d:4", "b.launch.py", []string{"model"}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestROS2Docs checks that the ROS 2 documentation says what was verified
// on ROS 2 (Humble built from source, the clean-clone colcon build, the
// node against an independent rcl peer, the launch files' failure and
// fix) and no longer says what is not true any more.
func TestROS2Docs(t *testing.T) {
	page := read(t, launchPage)
	i := strings.Index(page, "On ROS 2 the node is")
	if i < 0 {
		t.Fatalf("%s: no ROS 2 paragraph (\"On ROS 2 the node is\")", launchPage)
	}
	docs := map[string]string{launchPage + " (ROS 2)": page[i:min(len(page), i+6000)], "nodes/ros2/README.md": read(t, "nodes/ros2/README.md")}
	for name, text := range docs {
		flat := strings.Join(strings.Fields(text), " ")
		for _, want := range []string{"Humble built from source", "clean clone", "colcon build --packages-select calisym",
			"1000 of 1000", "2500 of 2500", "AnymalState", "missing required argument 'model'", "TestLaunchArguments"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%s does not say %q", name, want)
			}
		}
		for _, stale := range []string{"has not been built", "not been built", "never been built", "has not been run"} {
			if strings.Contains(flat, stale) {
				t.Errorf("%s still says %q", name, stale)
			}
		}
	}
}
