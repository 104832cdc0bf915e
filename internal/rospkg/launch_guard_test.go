package rospkg

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
)

// guardProbe loads each launch file given with the recording stand-ins of
// launchProbe and runs what the launch would run for its optional actions
// in a scratch environment: every OpaqueFunction (the checks before any
// process starts) with the launch configurations and PATH of each
// scenario, and every OnProcessExit handler with a process that exited
// with code 2 and with code 0. It prints, per file, the entries' types in
// order, the checks' outcomes and the handlers' actions.
const guardTail = `import os, stat, tempfile, importlib, types as _t
bindir, pydir = tempfile.mkdtemp(), tempfile.mkdtemp()
for exe in ["ros2", "MicroXRCEAgent"]:
    p = os.path.join(bindir, exe)
    open(p, "w").write("#!/bin/sh\n")
    os.chmod(p, 0o755)
os.makedirs(os.path.join(pydir, "ros2bag"))
open(os.path.join(pydir, "ros2bag", "__init__.py"), "w").write("")
bag = os.path.join(pydir, "trot.mcap")
open(bag, "w").write("")
scenarios = {
    "no bag": ({"bag": "", "xrce_agent": "false"}, bindir, True),
    "bag": ({"bag": bag, "xrce_agent": "false"}, bindir, True),
    "bag missing": ({"bag": "/nonexistent/trot.mcap", "xrce_agent": "false"}, bindir, True),
    "no ros2": ({"bag": bag, "xrce_agent": "false"}, "/nonexistent", True),
    "no ros2bag": ({"bag": bag, "xrce_agent": "false"}, bindir, False),
    "agent": ({"bag": "", "xrce_agent": "true"}, bindir, True),
    "no agent": ({"bag": "", "xrce_agent": "true"}, "/nonexistent", True),
    "agent off": ({"bag": "", "xrce_agent": "false"}, "/nonexistent", True),
}
out = {}
for i, path in enumerate(sys.argv[1:]):
    spec = importlib.util.spec_from_file_location("launchfile%d" % i, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ld = mod.generate_launch_description()
    entries = ld.args[0]
    res = {"entries": [], "checks": {}, "handlers": []}
    for e in entries:
        d = {"type": type(e).__name__}
        if "condition" in getattr(e, "kwargs", {}):
            d["optional"] = True
        if type(e).__name__ == "RegisterEventHandler":
            h = e.args[0]
            target = h.kwargs.get("target_action")
            d["handler"] = type(h).__name__
            d["target"] = next((j for j, x in enumerate(entries) if x is target), -1)
            acts = {}
            for code in (2, 0):
                r = h.kwargs["on_exit"](_t.SimpleNamespace(returncode=code), None) or []
                acts[str(code)] = [dump(a) for a in r]
            d["on_exit"] = acts
        res["entries"].append(d)
    for name, (cfg, pathenv, withbag) in scenarios.items():
        os.environ["PATH"] = pathenv
        if withbag:
            sys.path.insert(0, pydir)
        importlib.invalidate_caches()
        errs = []
        for e in entries:
            if type(e).__name__ == "OpaqueFunction":
                try:
                    e.kwargs["function"](_t.SimpleNamespace(launch_configurations=dict(cfg)))
                except Exception as x:
                    errs.append(str(x))
        if withbag:
            sys.path.remove(pydir)
        res["checks"][name] = errs
    out[path] = res
print(json.dumps(out))
`

type guardEntry struct {
	Type     string                      `json:"type"`
	Optional bool                        `json:"optional"`
	Handler  string                      `json:"handler"`
	Target   int                         `json:"target"`
	OnExit   map[string][]map[string]any `json:"on_exit"`
}

type guardResult struct {
	Entries []guardEntry        `json:"entries"`
	Checks  map[string][]string `json:"checks"`
}

// TestOptionalActionsStopTheLaunch: an optional action of a launch file
// that cannot run stops the launch before the node starts, and one that
// fails once running stops it too, as the README and the docstrings say.
// For each launch file (run against the launch stand-ins, the checks in
// scratch environments): every optional process (ros2 bag play,
// MicroXRCEAgent) is preceded by a check (an OpaqueFunction, which launch
// runs in order and whose exception stops it) and watched by an
// OnProcessExit handler that shuts the launch down on a non-zero exit
// code and not on a normal end; and the checks refuse, naming the
// argument, a bag that does not exist, a missing ros2 or ros2bag, and
// xrce_agent:=true without MicroXRCEAgent on PATH, and accept what can
// run. launch itself only logs a process whose executable is missing
// (FileNotFoundError) and starts the rest.
func TestOptionalActionsStopTheLaunch(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH")
	}
	dir := filepath.Join(fixtures.Root(), "launch")
	files, err := filepath.Glob(filepath.Join(dir, "*.launch.py"))
	if err != nil {
		t.Fatal(err)
	}
	probe := strings.TrimSuffix(launchProbe, probeTail) + guardTail
	b, err := exec.Command(py, append([]string{"-c", probe}, files...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var all map[string]guardResult
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	processes := 0
	for _, f := range files {
		name := filepath.Base(f)
		r := all[f]
		for i, e := range r.Entries {
			if e.Type != "ExecuteProcess" || !e.Optional {
				continue
			}
			processes++
			checked := false
			for _, before := range r.Entries[:i] {
				checked = checked || before.Type == "OpaqueFunction"
			}
			if !checked {
				t.Errorf("%s: the optional process (entry %d) has no check before it", name, i)
			}
			watched := false
			for _, h := range r.Entries {
				if h.Type != "RegisterEventHandler" || h.Handler != "OnProcessExit" || h.Target != i {
					continue
				}
				watched = true
				if fail := h.OnExit["2"]; len(fail) != 2 || fail[1]["type"] != "EmitEvent" || !strings.Contains(mustJSON(t, fail[1]), `"type":"Shutdown"`) {
					t.Errorf("%s: on exit code 2 the handler of entry %d emits %v, want a Shutdown", name, i, fail)
				}
				if ok := h.OnExit["0"]; len(ok) != 0 {
					t.Errorf("%s: on a normal end the handler of entry %d runs %v, want nothing", name, i, ok)
				}
			}
			if !watched {
				t.Errorf("%s: no OnProcessExit handler stops the launch when the optional process (entry %d) fails", name, i)
			}
		}
	}
	if processes != 2 {
		t.Errorf("%d optional processes in the launch files, want 2 (ros2 bag play, MicroXRCEAgent)", processes)
	}
	for _, c := range []struct {
		file, scenario, want string // want "" accepts
	}{
		{"predictor.launch.py", "no bag", ""},
		{"predictor.launch.py", "bag", ""},
		{"predictor.launch.py", "bag missing", "bag:=/nonexistent/trot.mcap: no such file or directory"},
		{"predictor.launch.py", "no ros2", "the ros2 command is not on PATH"},
		{"predictor.launch.py", "no ros2bag", "ros2bag is not installed"},
		{"px4_quadrotor.launch.py", "agent", ""},
		{"px4_quadrotor.launch.py", "agent off", ""},
		{"px4_quadrotor.launch.py", "no agent", "xrce_agent:=true: MicroXRCEAgent is not on PATH"},
	} {
		errs := all[filepath.Join(dir, c.file)].Checks[c.scenario]
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%s, %s: refused: %v", c.file, c.scenario, errs)
		case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], c.want)):
			t.Errorf("%s, %s: checks say %q, want %q", c.file, c.scenario, errs, c.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
