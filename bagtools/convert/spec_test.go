package convert

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/internal/fixtures"
)

// minimalYAML is a valid spec: a double pendulum from a CSV.
const minimalYAML = `
convert:
  robot: test
  inputs: [run.csv]
  clock: {column: time}
  state:
    kind: joints
    joints:
      - {name: a, position: q1, velocity: {name: v1, unit: deg/s}}
      - {name: b, position: q2}
  model:
    kind: double_pendulum
    pendulum:
      params: {m1: 1, m2: 1, l1: 1, l2: 1, r1: 0.5, r2: 0.5, I1: 0.4, I2: 0.4, g: 9.81}
  control:
    kind: direct
    channels: [t1, {const: 0}]
    names: [tau1, tau2]
  resample: {rate: 100}
  window: {length: 10, stride: 5}
`

func writeSpec(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "params.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadSpec(t *testing.T) {
	s, err := LoadSpec(writeSpec(t, minimalYAML))
	if err != nil {
		t.Fatal(err)
	}
	j := s.State.Joints
	if j[0].Position.Name != "q1" || j[0].Velocity.Unit != "deg/s" || !j[1].Velocity.IsZero() {
		t.Errorf("joints decoded as %+v", j)
	}
	if c := s.Control.Channels; len(c) != 2 || c[0].Name != "t1" || c[1].Const == nil || *c[1].Const != 0 {
		t.Errorf("control channels %+v", c)
	}
	if s.Model.Pendulum.Params["i1"] != 0.4 {
		t.Errorf("inline pendulum params %v (viper lowercases keys)", s.Model.Pendulum.Params)
	}
	// Defaults.
	if s.Clock.Stamp != StampHeader || s.Clock.Unit != "s" || s.Filter.Kind != "none" || s.Split.Default != "id" || s.Control.Interp != statemap.InterpLinear || s.Model.Gravity != 9.81 {
		t.Errorf("defaults not filled: %+v", s)
	}
}

func TestLoadRepositoryParams(t *testing.T) {
	for _, name := range []string{"crazyflie.yaml", "double_pendulum_hw.yaml"} {
		s, err := LoadSpec(filepath.Join(fixtures.Root(), "params", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Inputs) == 0 || s.Window.Length != 100 || s.Window.Stride != 10 || s.Resample.Rate != 100 {
			t.Errorf("%s: %+v", name, s)
		}
	}
}

func TestSpecErrors(t *testing.T) {
	tests := []struct {
		name    string
		old     string // replaced in minimalYAML
		new     string
		wantMsg []string
	}{
		{"no convert section", "convert:", "other:", []string{`no "convert" section`, "other"}},
		{"unknown key", "  robot: test", "  robto: test", []string{"robto"}},
		{"unknown nested key", "window: {length: 10, stride: 5}", "window: {length: 10, strid: 5}", []string{"strid"}},
		{"window length", "length: 10", "length: 1", []string{"convert.window.length", "at least 2"}},
		{"window stride", "stride: 5", "stride: 0", []string{"convert.window.stride"}},
		{"rate", "resample: {rate: 100}", "resample: {rate: -1}", []string{"convert.resample.rate"}},
		{"work rate", "resample: {rate: 100}", "resample: {rate: 100, work_rate: 250}", []string{"convert.resample.work_rate", "integer multiple"}},
		{"cutoff above Nyquist", "resample: {rate: 100}", "resample: {rate: 100}\n  filter: {kind: butterworth, order: 6, cutoff: 60}", []string{"convert.filter.cutoff", "Nyquist"}},
		{"filter order", "resample: {rate: 100}", "resample: {rate: 100}\n  filter: {kind: butterworth, order: 0, cutoff: 10}", []string{"convert.filter.order"}},
		{"filter kind", "resample: {rate: 100}", "resample: {rate: 100}\n  filter: {kind: bessel}", []string{"convert.filter.kind", "bessel"}},
		{"state kind", "kind: joints", "kind: wheels", []string{"convert.state.kind", "wheels"}},
		{"unit", "unit: deg/s", "unit: furlong", []string{"convert.state.joints[0].velocity.unit", "furlong"}},
		{"joint without position", "{name: b, position: q2}", "{name: b}", []string{"convert.state.joints[1].position", "required"}},
		{"duplicate joint", "{name: b, position: q2}", "{name: a, position: q2}", []string{"convert.state.joints[1].name", "duplicate"}},
		{"pendulum with 3 joints", "{name: b, position: q2}", "{name: b, position: q2}\n      - {name: c, position: q3}", []string{"exactly 2 joints"}},
		{"clock stamp", "clock: {column: time}", "clock: {column: time, stamp: wallclock}", []string{"convert.clock.stamp"}},
		{"control names", "names: [tau1, tau2]", "names: [tau1]", []string{"convert.control.names", "1 names for 2 channels"}},
		{"control kind", "kind: direct", "kind: telepathy", []string{"convert.control.kind"}},
		{"split by", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  split: {by: mood}", []string{"convert.split.by"}},
		{"split rule", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  split: {by: time, rules: [{split: ood, time: [5, 1]}]}", []string{"convert.split.rules[0].time"}},
		{"split name", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  split: {by: time, rules: [{split: ../ood, time: [0, 1]}]}", []string{"convert.split.rules[0].split", "not a path"}},
		{"default split name", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  split: {default: a/b}", []string{"convert.split.default", "not a path"}},
		{"energy rule", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  split: {by: energy, rules: [{split: ood, quantile: [0.5, 2]}]}", []string{"convert.split.rules[0]", "quantile"}},
		{"momentum steps", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  validate: {max_momentum_step: [1, 2, 3]}", []string{"convert.validate.max_momentum_step", "one per momentum component (2)"}},
		{"negative gap", "  window: {length: 10, stride: 5}", "  window: {length: 10, stride: 5}\n  validate: {max_gap: -1}", []string{"convert.validate.max_gap"}},
		{"model kind", "kind: double_pendulum", "kind: spring", []string{"convert.model.kind", "spring"}},
		{"explicit zero scale", "{name: v1, unit: deg/s}", "{name: v1, unit: deg/s, scale: 0}", []string{"convert.state.joints[0].velocity", "scale 0", "nonzero"}},
		{"explicit zero float scale", "channels: [t1, {const: 0}]", "channels: [{name: t1, scale: 0.0}, {const: 0}]", []string{"convert.control.channels[0]", "scale 0", "nonzero"}},
		{"pendulum params and file", "pendulum:", "pendulum:\n      params_file: x.yml", []string{"convert.model.pendulum", "exactly one"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(minimalYAML, tc.old) {
				t.Fatalf("test bug: %q not in the spec", tc.old)
			}
			_, err := LoadSpec(writeSpec(t, strings.Replace(minimalYAML, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrSpec) {
				t.Errorf("err = %v, want ErrSpec", err)
			}
			for _, m := range tc.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to mention %q", err, m)
				}
			}
		})
	}
}

// TestSpecWithoutInputs: a spec may leave the inputs to the caller (the
// command line's LOG arguments); converting with none names
// convert.inputs.
func TestSpecWithoutInputs(t *testing.T) {
	for _, yaml := range []string{
		strings.Replace(minimalYAML, "inputs: [run.csv]", "inputs: []", 1),
		strings.Replace(minimalYAML, "  inputs: [run.csv]\n", "", 1),
	} {
		s, err := LoadSpec(writeSpec(t, yaml))
		if err != nil {
			t.Fatalf("a spec without inputs: %v", err)
		}
		c, err := NewConverter(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Inputs()
		if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "convert.inputs") || !strings.Contains(err.Error(), "command line") {
			t.Errorf("inputs of a spec without any: %v", err)
		}
	}
}

func TestSpecErrorsFloatingBase(t *testing.T) {
	base := `
convert:
  inputs: [f.parquet]
  clock: {column: t}
  state:
    kind: floating_base
    base:
      position: [x, y, z]
      orientation: {channels: [qx, qy, qz, qw]}
      linear_velocity: {frame: world, channels: [vx, vy, vz]}
      angular_velocity: {frame: body, channels: [wx, wy, wz]}
  model:
    kind: rigid_body
    rigid_body: {mass: 0.045, inertia: [1e-5, 1e-5, 2e-5]}
  control:
    kind: quadrotor
    quadrotor: {motors: [m1, m2, m3, m4], thrust_poly: [0, 0.2], arm_length: 0.05, torque_coeff: 0.006}
  resample: {rate: 100}
  window: {length: 10, stride: 5}
`
	if _, err := LoadSpec(writeSpec(t, base)); err != nil {
		t.Fatalf("valid floating-base spec: %v", err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"position needs 3", "position: [x, y, z]", "position: [x, y]", "convert.state.base.position"},
		{"quaternion needs 4", "channels: [qx, qy, qz, qw]", "channels: [qx, qy, qz]", "convert.state.base.orientation.channels"},
		{"quaternion order", "orientation: {channels", "orientation: {order: zyxw, channels", "convert.state.base.orientation.order"},
		{"frame", "frame: world", "frame: moon", "convert.state.base.linear_velocity.frame"},
		{"only one velocity", "      angular_velocity: {frame: body, channels: [wx, wy, wz]}\n", "", "linear_velocity and angular_velocity"},
		{"mass", "mass: 0.045", "mass: 0", "convert.model.rigid_body.mass"},
		{"inertia count", "inertia: [1e-5, 1e-5, 2e-5]", "inertia: [1e-5, 1e-5]", "convert.model.rigid_body.inertia"},
		{"motors", "motors: [m1, m2, m3, m4]", "motors: [m1, m2, m3]", "convert.control.quadrotor.motors"},
		{"arm", "arm_length: 0.05", "arm_length: 0", "convert.control.quadrotor.arm_length"},
		{"layout", "thrust_poly", "layout: hexa, thrust_poly", "convert.control.quadrotor.layout"},
		{"joints with rigid body", "  model:", "    joints: [{name: j, position: a}]\n  model:", "single free body"},
		{"storage", "stride: 5}", "stride: 5, storage: tape}", "convert.window.storage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.old) {
				t.Fatalf("test bug: %q not in the spec", tc.old)
			}
			_, err := LoadSpec(writeSpec(t, strings.Replace(base, tc.old, tc.new, 1)))
			if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrSpec mentioning %q", err, tc.want)
			}
		})
	}
}

// TestLoadSpecModelKinds reads model kind identity and a URDF model's
// drive inertias (model.joints) through LoadSpec, and header-less CSV
// columns (source.no_header, source.columns).
func TestLoadSpecModelKinds(t *testing.T) {
	identity := strings.Replace(minimalYAML, "kind: double_pendulum", "kind: identity", 1)
	identity = strings.Replace(identity, "  clock: {column: time}", "  source: {no_header: true, columns: [time, q1, v1, q2, t1]}\n  clock: {column: time}", 1)
	s, err := LoadSpec(writeSpec(t, identity))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model.Kind != statemap.ModelIdentity || !s.Source.NoHeader || len(s.Source.Columns) != 5 {
		t.Errorf("model %q, source %+v", s.Model.Kind, s.Source)
	}
	urdf := strings.Replace(minimalYAML, `    kind: double_pendulum
    pendulum:
      params: {m1: 1, m2: 1, l1: 1, l2: 1, r1: 0.5, r2: 0.5, I1: 0.4, I2: 0.4, g: 9.81}`, `    kind: urdf
    urdf: arm.urdf
    joints:
      - {name: b, armature: 1.5e-4, gear_ratio: 101}
      - {name: a, armature: 0.07}`, 1)
	if s, err = LoadSpec(writeSpec(t, urdf)); err != nil {
		t.Fatal(err)
	}
	if j := s.Model.Joints; len(j) != 2 || j[0] != (statemap.JointDriveSpec{Name: "b", Armature: 1.5e-4, GearRatio: 101}) || j[1].Reflected() != 0.07 {
		t.Errorf("model.joints = %+v", j)
	}
	_, err = LoadSpec(writeSpec(t, strings.Replace(urdf, "gear_ratio: 101", "ratio: 101", 1)))
	if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "ratio") {
		t.Errorf("misspelt gear_ratio: %v", err)
	}
}
