package statemap

import (
	"math"
	"strings"
	"testing"

	"github.com/calisym/calisym/mechanics"
)

// voltageSpec is quadrotorSpec with the commands scaled by a battery
// voltage channel "vbat" at a reference of 3.7 V through a quadratic
// thrust map.
func voltageSpec() *Spec {
	s := quadrotorSpec(StateFloatingBaseGravity)
	q := &s.Control.Quadrotor
	q.Voltage = Channel{Name: "vbat"}
	q.VoltageRef = 3.7
	q.ThrustPoly = []float64{0, 0.14, 0.06}
	return s
}

// TestVoltageScalesThrust checks the wrench of a sample against the
// thrusts written out here, f = a₁·s + a₂·s² with s = c·V/V_ref, for
// voltages below, at and above the reference: at the reference the map
// is the unscaled polynomial.
func TestVoltageScalesThrust(t *testing.T) {
	for _, v := range []float64{3.2, 3.7, 4.1} {
		s, err := NewSampler(voltageSpec(), SamplerOptions{MaxQuatNormError: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		q := mechanics.QuatFromRotation(mechanics.RPY(0.05, 0.1, -1))
		raw := map[string]float64{"x": 1, "y": 2, "z": 0.5, "qx": q.X, "qy": q.Y, "qz": q.Z, "qw": q.W,
			"vx": 0.3, "vy": -0.4, "vz": 0.1, "wx": 0.5, "wy": 0.2, "wz": -1,
			"m1": 30000, "m2": 41000, "m3": 29000, "m4": 50500, "vbat": v}
		values := make([]float64, len(s.Channels()))
		for i, n := range s.Channels() {
			values[i] = raw[n]
		}
		x, e := make([]float64, 12), make([]float64, 6)
		if _, err := s.Sample(values, x, e); err != nil {
			t.Fatal(err)
		}
		f := make([]float64, 4)
		for i, m := range []string{"m1", "m2", "m3", "m4"} {
			c := raw[m] / 65535 * v / 3.7
			f[i] = 0.14*c + 0.06*c*c
		}
		w := CrazyflieAllocation(CrazyflieArmLength, CrazyflieThrustToTorque).Wrench(f)
		for i := range w {
			if math.Abs(e[i]-w[i]) > 1e-15 {
				t.Errorf("V = %g: e[%d] = %v, want %v", v, i, e[i], w[i])
			}
		}
	}
}

// TestVoltageErrors checks that a voltage channel without its reference,
// a reference without a channel and a sample with no positive voltage are
// refused with errors naming the field.
func TestVoltageErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*QuadrotorSpec)
		want string
	}{
		{"no reference", func(q *QuadrotorSpec) { q.VoltageRef = 0 }, "control.quadrotor.voltage_ref"},
		{"negative reference", func(q *QuadrotorSpec) { q.VoltageRef = -3.7 }, "control.quadrotor.voltage_ref"},
		{"reference without channel", func(q *QuadrotorSpec) { q.Voltage = Channel{} }, "no voltage channel"},
		{"name and const", func(q *QuadrotorSpec) { v := 3.7; q.Voltage.Const = &v }, "control.quadrotor.voltage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := voltageSpec()
			c.edit(&s.Control.Quadrotor)
			s.Defaults()
			err := s.Check()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check() = %v, want an error with %q", err, c.want)
			}
		})
	}
	s, err := NewSampler(voltageSpec(), SamplerOptions{MaxQuatNormError: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "battery voltage 0 V"}, {-3.7, "battery voltage -3.7 V"}, {math.Inf(1), "control.quadrotor.voltage = +Inf"}} {
		v := c.v
		values := make([]float64, len(s.Channels()))
		for i, n := range s.Channels() {
			switch n {
			case "qw":
				values[i] = 1
			case "vbat":
				values[i] = v
			}
		}
		_, err := s.Sample(values, make([]float64, 12), make([]float64, 6))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("V = %g: Sample() = %v, want an error with %q", v, err, c.want)
		}
	}
}
