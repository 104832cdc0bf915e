package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// inspectJSON runs `calisym inspect ARGS --json --states 4`.
func inspectJSON(t *testing.T, args ...string) inspectReport {
	t.Helper()
	out, _, err := runCLI(t, append([]string{"inspect", "--json", "--states", "4"}, args...)...)
	if err != nil {
		t.Fatalf("inspect %v: %v", args, err)
	}
	var rep inspectReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("inspect %v: %v\n%s", args, err, out)
	}
	return rep
}

// TestInspectArch checks `calisym inspect --arch` on a given layout: the
// presets' descriptions on the presets' layouts give the presets' counts,
// a preset's name takes another layout, and bad combinations are refused.
func TestInspectArch(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		source, arch  string
		params, flops int
	}{
		{[]string{"--arch", "grb:12x8:m2", "--n", "2"}, "arch:grb:12x8:m2 n=2 n_u=2 n_c=0", "grb:12x8:m2", 4524, 7412},
		{[]string{"--arch", "gr:14x36", "--n", "6"}, "arch:gr:14x36 n=6 n_u=6 n_c=0", "gr:14x36", 23688, 76416},
		{[]string{"--arch", "gr:18x66", "--n", "18", "--nc", "12"}, "arch:gr:18x66 n=18 n_u=18 n_c=12", "gr:18x66", 316008, 952980},
		{[]string{"--arch", "quadruped"}, "preset:quadruped", "gr:18x66", 316008, 952980},
		{[]string{"--preset", "quadrotor"}, "preset:quadrotor", "gr:14x36", 23688, 76416},
		// A 7-joint arm with a 6-axis wrench port: d = 2·7 + 7 + 6 = 27,
		// 14 layers of 3d² + 36(d + 2) parameters.
		{[]string{"--arch", "quadrotor", "--n", "7", "--nc", "6"}, "arch:quadrotor n=7 n_u=7 n_c=6", "gr:14x36", 14 * (3*27*27 + 36*29), 0},
		{[]string{"--arch", "gr:2x3", "--n", "3", "--nu", "1"}, "arch:gr:2x3 n=3 n_u=1 n_c=0", "gr:2x3", 2 * (3*7*7 + 3*9), 0},
	} {
		rep := inspectJSON(t, tc.args...)
		if rep.Source != tc.source || rep.Arch != tc.arch || rep.Params != tc.params || tc.flops > 0 && rep.FLOPsPerStep != tc.flops {
			t.Errorf("inspect %v: source %q, arch %q, %d params, %d FLOPs; want %q, %q, %d, %d",
				tc.args, rep.Source, rep.Arch, rep.Params, rep.FLOPsPerStep, tc.source, tc.arch, tc.params, tc.flops)
		}
	}
	out, _, err := runCLI(t, "inspect", "--arch", "grb:4x8:m1:k6", "--n", "2", "--states", "4")
	if err != nil || !strings.Contains(out, "GRB-SympNet, 4 layers, width 8  (--arch grb:4x8:m1:k6)") {
		t.Errorf("inspect --arch grb:4x8:m1:k6: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--arch", "gr:14x36"}, "--arch gr:14x36 needs the robot's layout: --n"},
		{[]string{"--arch", "gr:14"}, `size "14" is not LAYERSxWIDTH`},
		{[]string{"--arch", "hexapod", "--n", "3"}, `unknown architecture "hexapod"`},
		{[]string{"--arch", "gr:2x2", "--preset", "pendulum"}, "--preset or --arch, not both"},
		{[]string{"--preset", "pendulum", "--n", "3"}, "use --arch pendulum with --n"},
		{[]string{"--arch", "gr:2x2", "--n", "0"}, "need n > 0"},
		{[]string{"model.safetensors", "--n", "3"}, "a model file or --preset/--arch, not both"},
		{nil, "--arch NAME|KIND:LAYERSxWIDTH"},
	} {
		if _, _, err := runCLI(t, append([]string{"inspect"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("inspect %v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

// TestTrainArch trains tiny models with --arch given as a preset name with
// --layers/--width and as the equivalent description: the two models are
// bit-identical. --arch alone sets the model's kind, and a kind clash is
// refused with the presets that fit.
func TestTrainArch(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runCLI(t, "sim", "--preset", "smoke", "--out", dir); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "id")
	train := func(name string, args ...string) []float64 {
		t.Helper()
		out := filepath.Join(dir, name+".safetensors")
		base := []string{"train", "--data", data, "--epochs", "1", "--batch", "64", "--quiet", "--workers", "1", "--out", out}
		if _, _, err := runCLI(t, append(base, args...)...); err != nil {
			t.Fatalf("train %v: %v", args, err)
		}
		m, err := predictor.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if m.Arch.Kind != predictor.KindGR {
			t.Errorf("train %v: a %s model, want gr", args, m.Arch.Kind)
		}
		return predictor.NewTrainable(m).Params()
	}
	named := train("named", "--model", "gr", "--arch", "quadrotor", "--layers", "2", "--width", "3")
	described := train("described", "--arch", "gr:2x3")
	if len(named) != 2*(3*6*6+3*8) || !slices.Equal(named, described) {
		t.Errorf("--arch quadrotor --layers 2 --width 3 and --arch gr:2x3 trained different models (%d and %d parameters)", len(named), len(described))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "grb", "--arch", "gr:2x3"}, "--arch gr:2x3 is a gr architecture but --model is grb: leave out --model, or give a grb architecture (preset pendulum, or grb:LAYERSxWIDTH)"},
		{[]string{"--model", "gr"}, "--arch pendulum is a grb architecture but --model is gr: leave out --model, or give a gr architecture (preset quadrotor, quadruped, or gr:LAYERSxWIDTH)"},
		{[]string{"--arch", "gr:2"}, `architecture "gr:2": size "2" is not LAYERSxWIDTH`},
	} {
		args := append([]string{"train", "--data", data, "--epochs", "1", "--quiet", "--out", filepath.Join(dir, "x.safetensors")}, tc.args...)
		if _, _, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("train %v: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

// TestInspectPortMap: inspect names how a model file's training data's
// ports were computed (its recorded port map), or says that an older file
// records none; a freshly initialised architecture, which is no file,
// shows no such line.
func TestInspectPortMap(t *testing.T) {
	dir := t.TempDir()
	recorded := filepath.Join(dir, "recorded.safetensors")
	m := livetest.PendulumModel(t)
	pm := m.Meta.Provenance[statemap.PortMapKey]
	if pm == "" {
		t.Fatal("the test model records no port map")
	}
	if err := m.Save(recorded); err != nil {
		t.Fatal(err)
	}
	older := filepath.Join(dir, "older.safetensors")
	m.Meta.Provenance = nil
	if err := m.Save(older); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{recorded, "--states", "2"}, pm},
		{[]string{older, "--states", "2"}, "none recorded (written before calisym recorded it"},
	} {
		out, _, err := runCLI(t, append([]string{"inspect"}, tc.args...)...)
		var line string
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, "port map ") {
				line = l
			}
		}
		if err != nil || !strings.Contains(line, tc.want) {
			t.Errorf("inspect %v: %v\n%s\nwant a port map line with %q", tc.args, err, out, tc.want)
		}
	}
	out, _, err := runCLI(t, "inspect", "--preset", "pendulum", "--states", "2")
	if err != nil || strings.Contains(out, "port map") {
		t.Errorf("inspect --preset pendulum: %v\n%s", err, out)
	}
}
