package convert

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/mechanics"
)

// floatingSource returns a memSource of a tumbling, accelerating rigid body
// sampled at 100 Hz on the crazyflie table's columns (world-frame linear
// velocity, body rates), with four motor commands.
func floatingSource(n int) *memSource {
	src := &memSource{series: map[string]Series{}}
	t := make([]float64, n)
	cols := map[string][]float64{}
	for k := range n {
		tk := float64(k) / 100
		t[k] = tk
		roll, pitch, yaw := 0.3*math.Sin(1.1*tk), 0.2*math.Cos(0.7*tk), 0.9*tk
		q := mechanics.QuatFromRotation(mechanics.RPY(roll, pitch, yaw))
		vals := map[string]float64{
			"x": math.Sin(tk), "y": 0.5 * tk, "z": 1 + 0.1*tk*tk,
			"qx": q.X, "qy": q.Y, "qz": q.Z, "qw": q.W,
			"vx": math.Cos(tk), "vy": 0.5, "vz": 0.2 * tk,
			"wx": 0.4 * math.Cos(1.3*tk), "wy": -0.2 * math.Sin(tk), "wz": 0.9,
			"m1": 0.5 + 0.1*math.Sin(tk), "m2": 0.55, "m3": 0.6 - 0.05*tk, "m4": 0.45,
		}
		for c, v := range vals {
			cols[c] = append(cols[c], v)
		}
	}
	for c, v := range cols {
		src.series[c] = Series{Name: c, Time: t, Values: v}
	}
	return src
}

func floatingSpec(kind string) *Spec {
	return &Spec{
		Robot:  "body",
		Inputs: []string{"mem"},
		Spec: statemap.Spec{
			State: statemap.StateSpec{Kind: kind, Base: statemap.BaseSpec{
				Position:        []statemap.Channel{{Name: "x"}, {Name: "y"}, {Name: "z"}},
				Orientation:     statemap.OrientationSpec{Channels: []statemap.Channel{{Name: "qx"}, {Name: "qy"}, {Name: "qz"}, {Name: "qw"}}},
				LinearVelocity:  statemap.VelocitySpec{Frame: statemap.FrameWorld, Channels: []statemap.Channel{{Name: "vx"}, {Name: "vy"}, {Name: "vz"}}},
				AngularVelocity: statemap.VelocitySpec{Frame: statemap.FrameBody, Channels: []statemap.Channel{{Name: "wx"}, {Name: "wy"}, {Name: "wz"}}},
			}},
			Model: statemap.ModelSpec{Kind: statemap.ModelRigidBody, RigidBody: statemap.RigidBodySpec{Mass: 0.045, Inertia: []float64{2.4e-5, 2.5e-5, 3.2e-5}, COM: []float64{0.001, 0, -0.002}}},
			Control: statemap.ControlSpec{Kind: statemap.ControlQuadrotor, PortSpec: statemap.PortSpec{Interp: statemap.InterpHold}, Quadrotor: statemap.QuadrotorSpec{
				Motors:     []statemap.Channel{{Name: "m1"}, {Name: "m2"}, {Name: "m3"}, {Name: "m4"}},
				ThrustPoly: []float64{0.01, 0.173, 0.02}, ArmLength: 0.05, TorqueCoeff: 0.0057,
			}},
		},
		Resample: ResampleSpec{Rate: 100},
		Window:   WindowSpec{Length: 10, Stride: 7},
	}
}

// TestSamplerMatchesConversion checks that the live per-sample mapping
// gives, from one row of raw values, exactly the state and ports the
// conversion writes at the first sample of a window starting at that row.
func TestSamplerMatchesConversion(t *testing.T) {
	for _, kind := range []string{statemap.StateFloatingBase, statemap.StateFloatingBaseGravity} {
		t.Run(kind, func(t *testing.T) {
			src := floatingSource(60)
			conv, err := NewConverter(floatingSpec(kind), Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := conv.ConvertSource(src, "mem")
			if err != nil {
				t.Fatal(err)
			}
			smp, err := statemap.NewSampler(&floatingSpec(kind).Spec, statemap.SamplerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n, nu, nc := smp.Layout()
			if n != 6 || nu != 6 || nc != 0 || !smp.Floating() {
				t.Fatalf("layout %d %d %d", n, nu, nc)
			}
			ds := res.Splits["id"]
			if strings.Join(smp.Coordinates(), ",") != strings.Join(ds.Coordinates, ",") || strings.Join(smp.Ports(), ",") != strings.Join(ds.Ports, ",") {
				t.Errorf("names %v %v, conversion %v %v", smp.Coordinates(), smp.Ports(), ds.Coordinates, ds.Ports)
			}
			values := make([]float64, len(smp.Channels()))
			x, e := make([]float64, 2*n), make([]float64, nu)
			x2, e2 := make([]float64, 2*n), make([]float64, nu)
			var worst float64
			for w, ep := range ds.Episodes {
				row := w * 7
				for i, name := range smp.Channels() {
					values[i] = src.series[name].Values[row]
				}
				pose, err := smp.Sample(values, x, e)
				if err != nil {
					t.Fatal(err)
				}
				for i := range x {
					worst = math.Max(worst, math.Abs(x[i]-ep.X[i]))
				}
				for i := range e {
					worst = math.Max(worst, math.Abs(e[i]-ep.E[i]))
				}
				// Predicted coordinates of later samples map back to their world poses.
				if w == 0 {
					for k := 1; k < ep.Len; k++ {
						got := smp.BasePose(pose, ep.X[k*12:k*12+6])
						want, err := smp.Sample(rowValues(smp, src, row+k), x2, e2)
						if err != nil {
							t.Fatal(err)
						}
						if d := got.P.Sub(want.P).Norm() + mechanics.LogSO3(got.R.T().Mul(want.R)).Norm(); d > 1e-9 {
							t.Errorf("sample %d: BasePose off by %.3g", k, d)
						}
					}
				}
			}
			if worst > 1e-12 {
				t.Errorf("live sample differs from the conversion by %.3g", worst)
			}
		})
	}
}

func rowValues(s *statemap.Sampler, src *memSource, row int) []float64 {
	out := make([]float64, len(s.Channels()))
	for i, name := range s.Channels() {
		out[i] = src.series[name].Values[row]
	}
	return out
}

func TestSamplerChannelsAndErrors(t *testing.T) {
	// Table columns mapped to message paths, with a live scale.
	spec := synthSpec("mem")
	pp := synthPendulum(t)
	live := map[string]statemap.Channel{}
	for i, j := range spec.State.Joints {
		live[j.Position.Name] = statemap.Channel{Name: fmt.Sprintf(`/joint_states.position[name=="%s"]`, j.Name)}
		live[j.Velocity.Name] = statemap.Channel{Name: fmt.Sprintf(`/joint_states.velocity[name=="%s"]`, j.Name)}
		live[spec.Control.Channels[i].Name] = statemap.Channel{Name: fmt.Sprintf("/torque.data[%d]", i), Unit: "mN*m"}
	}
	smp, err := statemap.NewSampler(&spec.Spec, statemap.SamplerOptions{Channels: live})
	if err != nil {
		t.Fatal(err)
	}
	topics, other := smp.Topics()
	if strings.Join(topics, ",") != "/joint_states,/torque" || len(other) != 0 {
		t.Errorf("topics %v, other %v", topics, other)
	}
	q, v, tau := synthMotion(0.37)
	want := map[string]float64{
		`/joint_states.position[name=="a"]`: q[0], `/joint_states.position[name=="b"]`: q[1],
		`/joint_states.velocity[name=="a"]`: v[0], `/joint_states.velocity[name=="b"]`: v[1],
		"/torque.data[0]": 1000 * tau[0], "/torque.data[1]": 1000 * tau[1],
	}
	values := make([]float64, len(smp.Channels()))
	for i, name := range smp.Channels() {
		var ok bool
		if values[i], ok = want[name]; !ok {
			t.Fatalf("unexpected channel %q", name)
		}
	}
	x, e := make([]float64, 4), make([]float64, 2)
	if _, err := smp.Sample(values, x, e); err != nil {
		t.Fatal(err)
	}
	p := pp.Momentum(q, v)
	if math.Abs(x[0]-q[0])+math.Abs(x[1]-q[1])+math.Abs(x[2]-p[0])+math.Abs(x[3]-p[1]) > 1e-12 ||
		math.Abs(e[0]-tau[0])+math.Abs(e[1]-tau[1]) > 1e-12 {
		t.Errorf("x %v e %v, want q %v p %v tau %v", x, e, q, p, tau)
	}
	values[0] = math.NaN()
	if _, err := smp.Sample(values, x, e); !errors.Is(err, statemap.ErrNaN) || !strings.Contains(err.Error(), "state.joints") {
		t.Errorf("NaN: %v", err)
	}

	// Velocities that conversion would differentiate are refused.
	spec = synthSpec("mem")
	spec.State.Joints[0].Velocity = statemap.Channel{}
	if _, err := statemap.NewSampler(&spec.Spec, statemap.SamplerOptions{}); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "velocity") {
		t.Errorf("no velocity channel: %v", err)
	}
	// A bad quaternion is refused.
	fs := floatingSpec(statemap.StateFloatingBase)
	fs.Validate.MaxQuatNormError = 0.05
	smp, err = statemap.NewSampler(&fs.Spec, statemap.SamplerOptions{MaxQuatNormError: fs.Validate.MaxQuatNormError})
	if err != nil {
		t.Fatal(err)
	}
	src := floatingSource(2)
	values = rowValues(smp, src, 1)
	for i, name := range smp.Channels() {
		if name == "qw" {
			values[i] *= 1.2
		}
	}
	if _, err := smp.Sample(values, make([]float64, 12), make([]float64, 6)); !errors.Is(err, ErrSpec) {
		t.Errorf("quaternion norm 1.2: %v", err)
	}
}

// TestContactBodyAxes rotates world-axes contact forces into the base's
// body axes, in the conversion and in the live sampler alike, and checks
// them against Rᵀf computed here from the logged quaternion.
func TestContactBodyAxes(t *testing.T) {
	const n = 60
	src := floatingSource(n)
	tm := src.series["x"].Time
	force := func(k int) mechanics.Vec3 {
		tk := float64(k) / 100
		return mechanics.Vec3{10 * math.Sin(2*tk), -5 + tk, 300 + 20*math.Cos(tk)}
	}
	for a, name := range []string{"fx", "fy", "fz"} {
		v := make([]float64, n)
		for k := range n {
			v[k] = force(k)[a]
		}
		src.series[name] = Series{Name: name, Time: tm, Values: v}
	}
	spec := func() *Spec {
		s := floatingSpec(statemap.StateFloatingBase)
		s.Contact = statemap.PortSpec{Channels: []statemap.Channel{{Name: "fx"}, {Name: "fy"}, {Name: "fz"}}, Interp: statemap.InterpHold, BodyAxes: true}
		return s
	}
	conv, err := NewConverter(spec(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conv.ConvertSource(src, "mem")
	if err != nil {
		t.Fatal(err)
	}
	smp, err := statemap.NewSampler(&spec().Spec, statemap.SamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	values := make([]float64, len(smp.Channels()))
	x, e := make([]float64, 12), make([]float64, 9)
	for w, ep := range res.Splits["id"].Episodes {
		row := w * 7
		q := mechanics.Quat{W: src.series["qw"].Values[row], X: src.series["qx"].Values[row], Y: src.series["qy"].Values[row], Z: src.series["qz"].Values[row]}
		want := q.Rotation().T().MulVec(force(row))
		for a := range 3 {
			if d := math.Abs(ep.E[6+a] - want[a]); d > 1e-9 {
				t.Fatalf("window %d: contact %v, want Rᵀf = %v", w, ep.E[6:9], want)
			}
		}
		for i, name := range smp.Channels() {
			values[i] = src.series[name].Values[row]
		}
		if _, err := smp.Sample(values, x, e); err != nil {
			t.Fatal(err)
		}
		for i := range e {
			if math.Abs(e[i]-ep.E[i]) > 1e-12 {
				t.Fatalf("window %d: live ports %v, conversion %v", w, e, ep.E[:9])
			}
		}
	}
	bad := spec()
	bad.Defaults()
	bad.Contact.Channels = bad.Contact.Channels[:2]
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "contact.body_axes") {
		t.Errorf("two channels: %v", err)
	}
	bad = spec()
	bad.Defaults()
	bad.Control.BodyAxes = true
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "control.body_axes") {
		t.Errorf("control port: %v", err)
	}
}
