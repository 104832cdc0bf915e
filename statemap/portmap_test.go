package statemap

import (
	"errors"
	"strings"
	"testing"
)

// portMapSpec is voltageSpec with a contact port in body axes, a port
// history and the defaults left unset.
func portMapSpec() *Spec {
	s := voltageSpec()
	s.Contact = PortSpec{Channels: []Channel{{Name: "fx"}, {Name: "fy"}, {Name: "fz", Unit: "mN", Offset: 0.1}}, BodyAxes: true}
	s.History.PortMean = 2
	return s
}

// directSpec is a two-joint arm whose direct control port reads a torque
// and a constant.
func directSpec() *Spec {
	zero := 0.0
	s := armSpec(2, ModelSpec{Kind: ModelIdentity})
	s.Control = ControlSpec{PortSpec: PortSpec{Names: []string{"tau1", "tau2"}, Channels: []Channel{{Name: "effort1", Unit: "mN*m"}, {Const: &zero}}}}
	return s
}

// TestPortMap checks that every change of how the ports are computed
// changes Spec.PortMap and that changes that compute them identically
// (defaults filled in, equivalent spellings, names and state) do not;
// every spec is valid, and every port map reads back as itself.
func TestPortMap(t *testing.T) {
	one, two := 1.0, 2.0
	for _, tc := range []struct {
		name   string
		base   func() *Spec
		change func(s *Spec)
		same   bool
	}{
		{"defaults filled", portMapSpec, func(s *Spec) { s.Defaults() }, true},
		{"direct defaults filled", directSpec, func(s *Spec) { s.Defaults() }, true},
		{"unit of factor 1", portMapSpec, func(s *Spec) { s.Contact.Channels[0].Unit = "N" }, true},
		{"unit case", portMapSpec, func(s *Spec) { s.Contact.Channels[2].Unit = "MN" }, true},
		{"scale 0 is 1", portMapSpec, func(s *Spec) { s.Contact.Channels[0].Scale = 1; s.Control.Quadrotor.Voltage.Scale = 1 }, true},
		{"port names", directSpec, func(s *Spec) { s.Control.Names = []string{"a", "b"} }, true},
		{"state", portMapSpec, func(s *Spec) { s.State.Kind = StateFloatingBase }, true},
		{"mass", portMapSpec, func(s *Spec) { s.Model.RigidBody.Mass = 1 }, true},
		{"custom layout ignores arm length", func() *Spec {
			s := portMapSpec()
			s.Control.Quadrotor.Layout = "custom"
			s.Control.Quadrotor.Rotors = []RotorSpec{{X: 1, Y: 1, YawSign: 1}, {X: -1, Y: 1, YawSign: -1}, {X: -1, Y: -1, YawSign: 1}, {X: 1, Y: -1, YawSign: -1}}
			return s
		}, func(s *Spec) { s.Control.Quadrotor.ArmLength = 3 }, true},

		{"control kind", directSpec, func(s *Spec) { s.Control = ControlSpec{} }, false},
		{"control interp", portMapSpec, func(s *Spec) { s.Control.Interp = InterpHold }, false},
		{"direct channel name", directSpec, func(s *Spec) { s.Control.Channels[0].Name = "effort2" }, false},
		{"direct channel unit", directSpec, func(s *Spec) { s.Control.Channels[0].Unit = "N*m" }, false},
		{"direct channel scale", directSpec, func(s *Spec) { s.Control.Channels[0].Scale = 2 }, false},
		{"direct channel offset", directSpec, func(s *Spec) { s.Control.Channels[0].Offset = 0.5 }, false},
		{"direct channel const", directSpec, func(s *Spec) { s.Control.Channels[1].Const = &one }, false},
		{"direct channel const to name", directSpec, func(s *Spec) { s.Control.Channels[1] = Channel{Name: "effort2"} }, false},
		{"direct channel added", directSpec, func(s *Spec) {
			s.Control.Channels = append(s.Control.Channels, Channel{Const: &two})
			s.Control.Names = append(s.Control.Names, "tau3")
		}, false},
		{"motor name", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Motors[3].Name = "m5" }, false},
		{"motor unit", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Motors[0].Unit = "g" }, false},
		{"motor scale", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Motors[1].Scale = 1.0 / 65536 }, false},
		{"motor offset", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Motors[2].Offset = 0.01 }, false},
		{"motor const", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Motors[2] = Channel{Const: &one} }, false},
		{"thrust_poly", portMapSpec, func(s *Spec) { s.Control.Quadrotor.ThrustPoly[2] = 0.06193 }, false},
		{"thrust_poly degree", portMapSpec, func(s *Spec) { s.Control.Quadrotor.ThrustPoly = append(s.Control.Quadrotor.ThrustPoly, 0) }, false},
		{"voltage removed", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Voltage, s.Control.Quadrotor.VoltageRef = Channel{}, 0 }, false},
		{"voltage channel", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Voltage.Name = "Vbat" }, false},
		{"voltage scale", portMapSpec, func(s *Spec) { s.Control.Quadrotor.Voltage.Scale = 1e-3 }, false},
		{"voltage_ref", portMapSpec, func(s *Spec) { s.Control.Quadrotor.VoltageRef = 3.8 }, false},
		{"arm_length", portMapSpec, func(s *Spec) { s.Control.Quadrotor.ArmLength = 0.046 }, false},
		{"torque_coeff", portMapSpec, func(s *Spec) { s.Control.Quadrotor.TorqueCoeff = 0.005 }, false},
		{"layout", portMapSpec, func(s *Spec) {
			d := CrazyflieArmLength / 1.4142135623730951
			s.Control.Quadrotor.Layout = "custom"
			s.Control.Quadrotor.Rotors = []RotorSpec{{X: d, Y: -d, YawSign: -1}, {X: -d, Y: -d, YawSign: 1}, {X: -d, Y: d, YawSign: -1}, {X: d, Y: d, YawSign: 1}}
		}, false},
		{"rotor", func() *Spec {
			s := portMapSpec()
			s.Control.Quadrotor.Layout = "custom"
			s.Control.Quadrotor.Rotors = []RotorSpec{{X: 1, Y: 1, YawSign: 1}, {X: -1, Y: 1, YawSign: -1}, {X: -1, Y: -1, YawSign: 1}, {X: 1, Y: -1, YawSign: -1}}
			return s
		}, func(s *Spec) { s.Control.Quadrotor.Rotors[2].YawSign = -1 }, false},
		{"contact channel", portMapSpec, func(s *Spec) { s.Contact.Channels[1].Name = "fy2" }, false},
		{"contact unit", portMapSpec, func(s *Spec) { s.Contact.Channels[2].Unit = "N" }, false},
		{"contact offset", portMapSpec, func(s *Spec) { s.Contact.Channels[2].Offset = 0 }, false},
		{"contact removed", portMapSpec, func(s *Spec) { s.Contact = PortSpec{} }, false},
		{"contact interp", portMapSpec, func(s *Spec) { s.Contact.Interp = InterpHold }, false},
		{"body_axes", portMapSpec, func(s *Spec) { s.Contact.BodyAxes = false }, false},
		{"port_mean", portMapSpec, func(s *Spec) { s.History.PortMean = 5 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.base(), tc.base()
			tc.change(b)
			for _, s := range []*Spec{a, b} {
				c := *s
				c.Defaults()
				if err := c.Check(); err != nil {
					t.Fatalf("invalid spec: %v", err)
				}
			}
			pa, pb := a.PortMap(), b.PortMap()
			if (pa == pb) != tc.same {
				t.Errorf("same = %v, want %v:\n%s\n%s", pa == pb, tc.same, pa, pb)
			}
			for _, p := range []string{pa, pb} {
				pm, err := ParsePortMap(p)
				if err != nil {
					t.Fatal(err)
				}
				if pm.String() != p {
					t.Errorf("read back as %s, want %s", pm, p)
				}
			}
			err := CheckPortMap(pa, pb)
			if tc.same != (err == nil) {
				t.Errorf("CheckPortMap = %v", err)
			}
			if err != nil && !errors.Is(err, ErrPortMap) {
				t.Errorf("CheckPortMap = %v, want ErrPortMap", err)
			}
		})
	}
}

// TestCheckPortMapWords checks the words of the mismatch the Crazyflie's
// change of thrust map makes: the linear map a model was trained with,
// the voltage-scaled quadratic one of the params, and the fix.
func TestCheckPortMapWords(t *testing.T) {
	linear := quadrotorSpec(StateFloatingBaseGravity)
	linear.Control.Quadrotor.Motors = []Channel{{Name: "m1_thrust"}, {Name: "m2_thrust"}, {Name: "m3_thrust"}, {Name: "m4_thrust"}}
	volt := quadrotorSpec(StateFloatingBaseGravity)
	volt.Control.Quadrotor.Motors = linear.Control.Quadrotor.Motors
	volt.Control.Quadrotor.Voltage, volt.Control.Quadrotor.VoltageRef = Channel{Name: "Vbat"}, CrazyflieVoltageRef
	volt.Control.Quadrotor.ThrustPoly = []float64{0, CrazyflieThrustVolt1, CrazyflieThrustVolt2}
	err := CheckPortMap(linear.PortMap(), volt.PortMap())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"control.quadrotor thrust map: trained with thrust_poly [0 0.173] of the command (no voltage scaling), params give thrust_poly [0 0.13997 0.06193] of the command scaled by voltage Vbat / voltage_ref 3.7 V",
		"retrain the model on data converted with these params, or use it with the params it was trained with",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "motors") || strings.Contains(err.Error(), "arm_length") {
		t.Errorf("error %q names fields that do not differ", err)
	}
	if err := CheckPortMap(`{"control":"quadrotor","mystery":1}`, volt.PortMap()); err == nil || !strings.Contains(err.Error(), "mystery") {
		t.Errorf("unknown key: %v", err)
	}
	for _, bad := range []string{"", "{", "[]", `{"control":""}`, `{"control":"none"} x`} {
		if _, err := ParsePortMap(bad); err == nil {
			t.Errorf("ParsePortMap(%q): no error", bad)
		}
	}
}

// FuzzParsePortMap checks that any string either fails to decode or
// decodes to a port map that reads back as itself.
func FuzzParsePortMap(f *testing.F) {
	f.Add(portMapSpec().PortMap())
	f.Add(directSpec().PortMap())
	f.Add(`{"control":"none","contact":[{"const":1e300}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		pm, err := ParsePortMap(s)
		if err != nil {
			return
		}
		back, err := ParsePortMap(pm.String())
		if err != nil {
			t.Fatalf("%s: %v", pm, err)
		}
		if back.String() != pm.String() {
			t.Fatalf("%s read back as %s", pm, back)
		}
	})
}

// TestPortChannelUnitNames: a port map stores units in lower case, and
// its descriptions spell them as the params do (mN*m, not mn*m).
func TestPortChannelUnitNames(t *testing.T) {
	for _, c := range []struct{ unit, want string }{
		{"mN*m", "tau (unit mN*m)"}, {"MN*M", "tau (unit mN*m)"}, {"deg", "tau (unit deg)"}, {"mA", "tau (unit mA)"}, {"N*m", "tau"},
	} {
		if got := portChannel(Channel{Name: "tau", Unit: c.unit}).String(); got != c.want {
			t.Errorf("unit %q: %q, want %q", c.unit, got, c.want)
		}
	}
}
