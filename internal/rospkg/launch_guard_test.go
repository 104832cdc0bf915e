package rospkg

import (
	"encoding/json"
	"errors"
	"os"
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
// with code 2 and with code 0, while running and while the launch shuts
// down (a handler that raises is recorded as {"type": "raise"}: launch
// then stops and ros2 launch exits 1). It prints, per file, the entries'
// types in order, the checks' outcomes and the handlers' actions.
const guardTail = `import os, stat, tempfile, importlib, types as _t
bindir, pydir = tempfile.mkdtemp(), tempfile.mkdtemp()
params_dir = os.environ["CALISYM_PARAMS_DIR"]
for exe in ["ros2", "MicroXRCEAgent"]:
    p = os.path.join(bindir, exe)
    open(p, "w").write("#!/bin/sh\n")
    os.chmod(p, 0o755)
os.makedirs(os.path.join(pydir, "ros2bag"))
open(os.path.join(pydir, "ros2bag", "__init__.py"), "w").write("")
bag = os.path.join(pydir, "trot.mcap")
open(bag, "w").write("")
model = os.path.join(pydir, "m.safetensors")
open(model, "w").write("")
pendulum = os.path.join(params_dir, "pendulum_sim.yaml")
anymal = os.path.join(params_dir, "anymal.yaml")
data = os.path.join(pydir, "data")
os.makedirs(os.path.join(data, "anymal_d_simple_description", "urdf"))
open(os.path.join(data, "anymal_d_simple_description", "urdf", "anymal.urdf"), "w").write("<robot/>")
ok = {"model": model, "params": pendulum, "data": ""}
scenarios = {
    "no bag": ({"bag": "", "xrce_agent": "false", **ok}, bindir, True),
    "bag": ({"bag": bag, "xrce_agent": "false", **ok}, bindir, True),
    "bag missing": ({"bag": "/nonexistent/trot.mcap", "xrce_agent": "false", **ok}, bindir, True),
    "no ros2": ({"bag": bag, "xrce_agent": "false", **ok}, "/nonexistent", True),
    "no ros2bag": ({"bag": bag, "xrce_agent": "false", **ok}, bindir, False),
    "agent": ({"bag": "", "xrce_agent": "true", **ok}, bindir, True),
    "no agent": ({"bag": "", "xrce_agent": "true", **ok}, "/nonexistent", True),
    "agent off": ({"bag": "", "xrce_agent": "false", **ok}, "/nonexistent", True),
    "anymal without data": ({"bag": "", "model": model, "params": anymal, "data": ""}, bindir, True),
    "anymal with data": ({"bag": "", "model": model, "params": anymal, "data": data}, bindir, True),
    "anymal, wrong data": ({"bag": "", "model": model, "params": anymal, "data": pydir}, bindir, True),
    "no model": ({"bag": "", "model": "/nonexistent/m.safetensors", "params": pendulum, "data": ""}, bindir, True),
    "no params": ({"bag": "", "model": model, "params": "/nonexistent/robot.yaml", "data": ""}, bindir, True),
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
        if isinstance(getattr(e, "kwargs", {}).get("executable"), str):
            d["executable"] = e.kwargs["executable"]
        if type(e).__name__ == "RegisterEventHandler":
            h = e.args[0]
            target = h.kwargs.get("target_action")
            d["handler"] = type(h).__name__
            d["target"] = next((j for j, x in enumerate(entries) if x is target), -1)
            acts = {}
            for code in (2, 0):
                for shutdown in (False, True):
                    try:
                        r = h.kwargs["on_exit"](_t.SimpleNamespace(returncode=code), _t.SimpleNamespace(is_shutdown=shutdown)) or []
                        r = [dump(a) for a in r]
                    except Exception as x:
                        r = [{"type": "raise", "message": str(x)}]
                    acts[str(code) + (" shutting down" if shutdown else "")] = r
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
	Type       string                      `json:"type"`
	Optional   bool                        `json:"optional"`
	Executable string                      `json:"executable"`
	Handler    string                      `json:"handler"`
	Target     int                         `json:"target"`
	OnExit     map[string][]map[string]any `json:"on_exit"`
}

type guardResult struct {
	Entries []guardEntry        `json:"entries"`
	Checks  map[string][]string `json:"checks"`
}

// watcher returns the OnProcessExit handler of entry i, or nil.
func (r guardResult) watcher(i int) *guardEntry {
	for j, h := range r.Entries {
		if h.Type == "RegisterEventHandler" && h.Handler == "OnProcessExit" && h.Target == i {
			return &r.Entries[j]
		}
	}
	return nil
}

// raises reports whether a handler's actions are a raise whose message
// contains want: launch then stops everything and ros2 launch exits 1.
func raises(acts []map[string]any, want string) bool {
	if len(acts) != 1 || acts[0]["type"] != "raise" {
		return false
	}
	msg, _ := acts[0]["message"].(string)
	return strings.Contains(msg, want)
}

// TestOptionalActionsStopTheLaunch: an optional action of a launch file
// that cannot run stops the launch before the node starts, and one that
// fails once running stops it too, with a non-zero exit, as the README and
// the docstrings say. For each launch file (run against the launch
// stand-ins, the checks in scratch environments): every optional process
// (ros2 bag play, MicroXRCEAgent) is preceded by a check (an
// OpaqueFunction, which launch runs in order and whose exception stops
// it) and watched by an OnProcessExit handler that raises on a non-zero
// exit code (launch stops everything and returns 1; a Shutdown event
// alone would make ros2 launch exit 0), and does nothing on a normal end
// or while the launch shuts down (Ctrl-C); and the checks refuse, naming
// the argument, a bag that does not exist, a missing ros2 or ros2bag, and
// xrce_agent:=true without MicroXRCEAgent on PATH, and accept what can
// run. launch itself only logs a process whose executable is missing
// (FileNotFoundError) and starts the rest.
func TestOptionalActionsStopTheLaunch(t *testing.T) {
	all, dir := probeGuards(t)
	processes := 0
	for f, r := range all {
		name := filepath.Base(f)
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
			h := r.watcher(i)
			if h == nil {
				t.Errorf("%s: no OnProcessExit handler stops the launch when the optional process (entry %d) fails", name, i)
				continue
			}
			if fail := h.OnExit["2"]; !raises(fail, "exited with code 2") {
				t.Errorf("%s: on exit code 2 the handler of entry %d runs %v, want a raise (ros2 launch exits 1)", name, i, fail)
			}
			for _, k := range []string{"0", "0 shutting down", "2 shutting down"} {
				if acts := h.OnExit[k]; len(acts) != 0 {
					t.Errorf("%s: on exit %s the handler of entry %d runs %v, want nothing", name, k, i, acts)
				}
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

// probeGuards runs guardTail over every launch file.
func probeGuards(t *testing.T) (map[string]guardResult, string) {
	t.Helper()
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
	cmd := exec.Command(py, append([]string{"-c", probe}, files...)...)
	cmd.Env = append(os.Environ(), "CALISYM_PARAMS_DIR="+filepath.Join(fixtures.Root(), "params"))
	b, err := cmd.Output()
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
	return all, dir
}

// TestNodeFailureFailsTheLaunch: the predictor node that dies (a model
// that does not fit the params, a URDF missing) stops the launch with a
// non-zero exit of ros2 launch, and what it needs is checked before it
// starts. In predictor.launch.py, which every robot's launch file
// includes: an OnProcessExit handler of calisym_ros2 raises on a non-zero
// exit code (launch stops and returns 1), shuts the launch down on a
// normal end (nothing left to serve) and does nothing while the launch
// shuts down; a check before the node refuses a model or params file that
// does not exist and a file the params name that is not under data:=
// (anymal.launch.py without data:=: its URDF, looked for beside the
// installed params file), naming the argument.
func TestNodeFailureFailsTheLaunch(t *testing.T) {
	all, dir := probeGuards(t)
	r := all[filepath.Join(dir, "predictor.launch.py")]
	node := -1
	for i, e := range r.Entries {
		if e.Type == "Node" && e.Executable == "calisym_ros2" {
			node = i
		}
	}
	if node < 0 {
		t.Fatalf("predictor.launch.py starts no calisym_ros2: %+v", r.Entries)
	}
	checked := false
	for _, e := range r.Entries[:node] {
		checked = checked || e.Type == "OpaqueFunction"
	}
	if !checked {
		t.Error("no check precedes the node")
	}
	h := r.watcher(node)
	if h == nil {
		t.Fatal("no OnProcessExit handler watches calisym_ros2")
	}
	if acts := h.OnExit["2"]; !raises(acts, "calisym_ros2 exited with code 2") {
		t.Errorf("on the node's exit code 2 the handler runs %v, want a raise (ros2 launch exits 1)", acts)
	}
	if acts := h.OnExit["0"]; len(acts) != 2 || acts[1]["type"] != "EmitEvent" || !strings.Contains(mustJSON(t, acts[1]), `"type":"Shutdown"`) {
		t.Errorf("on the node's normal end the handler runs %v, want a Shutdown", acts)
	}
	for _, k := range []string{"0 shutting down", "2 shutting down"} {
		if acts := h.OnExit[k]; len(acts) != 0 {
			t.Errorf("on the node's exit %s the handler runs %v, want nothing", k, acts)
		}
	}
	for _, c := range []struct {
		scenario string
		want     []string // nil accepts
	}{
		{"no bag", nil},
		{"anymal with data", nil},
		{"anymal without data", []string{"anymal.yaml names anymal_d_simple_description/urdf/anymal.urdf (convert.model.urdf)",
			"the params file's directory (no data:= given)", "give data:=DIR"}},
		{"anymal, wrong data", []string{"anymal_d_simple_description/urdf/anymal.urdf", "which is not in data:=", "give data:=DIR"}},
		{"no model", []string{"model:=/nonexistent/m.safetensors: no such file"}},
		{"no params", []string{"params:=/nonexistent/robot.yaml: no such file"}},
	} {
		errs := r.Checks[c.scenario]
		if c.want == nil {
			if len(errs) > 0 {
				t.Errorf("%s: refused: %v", c.scenario, errs)
			}
			continue
		}
		if len(errs) != 1 {
			t.Errorf("%s: checks say %q, want one refusal", c.scenario, errs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errs[0], w) {
				t.Errorf("%s: %q does not say %q", c.scenario, errs[0], w)
			}
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
