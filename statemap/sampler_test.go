package statemap

import (
	"math"
	"testing"

	"github.com/calisym/calisym/mechanics"
)

// quadrotorSpec is a floating base read from odometry-like channels with
// the quadrotor's motor commands as the control port.
func quadrotorSpec(kind string) *Spec {
	chs := func(names ...string) []Channel {
		out := make([]Channel, len(names))
		for i, n := range names {
			out[i] = Channel{Name: n}
		}
		return out
	}
	return &Spec{
		State: StateSpec{Kind: kind, Base: BaseSpec{
			Position:        chs("x", "y", "z"),
			Orientation:     OrientationSpec{Channels: chs("qx", "qy", "qz", "qw")},
			LinearVelocity:  VelocitySpec{Frame: FrameWorld, Channels: chs("vx", "vy", "vz")},
			AngularVelocity: VelocitySpec{Frame: FrameBody, Channels: chs("wx", "wy", "wz")},
		}},
		Model: ModelSpec{Kind: ModelRigidBody, RigidBody: RigidBodySpec{Mass: CrazyflieMass, Inertia: []float64{CrazyflieIxx, CrazyflieIyy, CrazyflieIzz}}},
		Control: ControlSpec{Kind: ControlQuadrotor, Quadrotor: QuadrotorSpec{
			Motors:     []Channel{{Name: "m1", Scale: 1.0 / 65535}, {Name: "m2", Scale: 1.0 / 65535}, {Name: "m3", Scale: 1.0 / 65535}, {Name: "m4", Scale: 1.0 / 65535}},
			ThrustPoly: []float64{0, CrazyflieThrustPerUnit}, ArmLength: CrazyflieArmLength, TorqueCoeff: CrazyflieThrustToTorque,
		}},
	}
}

// TestSamplerQuadrotor checks one live sample against the mapping written
// out here: the body twist, p = M v with M = diag(m I₃, I), the wrench of
// the four thrusts, and the base coordinates of a window's first sample.
func TestSamplerQuadrotor(t *testing.T) {
	for _, kind := range []string{StateFloatingBase, StateFloatingBaseGravity} {
		t.Run(kind, func(t *testing.T) {
			s, err := NewSampler(quadrotorSpec(kind), SamplerOptions{MaxQuatNormError: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			q := mechanics.QuatFromRotation(mechanics.RPY(0.1, -0.2, 2.5))
			raw := map[string]float64{"x": 1, "y": 2, "z": 0.5, "qx": q.X, "qy": q.Y, "qz": q.Z, "qw": q.W,
				"vx": 0.3, "vy": -0.4, "vz": 0.1, "wx": 0.5, "wy": 0.2, "wz": -1, "m1": 30000, "m2": 31000, "m3": 29000, "m4": 30500}
			values := make([]float64, len(s.Channels()))
			for i, n := range s.Channels() {
				values[i] = raw[n]
			}
			x, e := make([]float64, 12), make([]float64, 6)
			pose, err := s.Sample(values, x, e)
			if err != nil {
				t.Fatal(err)
			}
			R := q.Rotation()
			vb := R.T().MulVec(mechanics.Vec3{0.3, -0.4, 0.1})
			want := []float64{CrazyflieMass * vb[0], CrazyflieMass * vb[1], CrazyflieMass * vb[2], CrazyflieIxx * 0.5, CrazyflieIyy * 0.2, CrazyflieIzz * -1}
			for i, w := range want {
				if math.Abs(x[6+i]-w) > 1e-15 {
					t.Errorf("p[%d] = %v, want %v", i, x[6+i], w)
				}
			}
			f := make([]float64, 4)
			for i, m := range []string{"m1", "m2", "m3", "m4"} {
				f[i] = CrazyflieThrustPerUnit * raw[m] / 65535
			}
			w := CrazyflieAllocation(CrazyflieArmLength, CrazyflieThrustToTorque).Wrench(f)
			for i := range w {
				if math.Abs(e[i]-w[i]) > 1e-15 {
					t.Errorf("e[%d] = %v, want %v", i, e[i], w[i])
				}
			}
			base := s.spec.BaseCoordinates(pose, pose)
			for i := range 6 {
				if x[i] != base[i] {
					t.Errorf("q[%d] = %v, want the window-start coordinate %v", i, x[i], base[i])
				}
			}
			if kind == StateFloatingBaseGravity && (math.Abs(x[3]-0.1) > 1e-12 || math.Abs(x[4]+0.2) > 1e-12 || x[5] != 0) {
				t.Errorf("gravity coordinates %v: want absolute roll 0.1 and pitch −0.2, yaw 0", x[:6])
			}
			if d := pose.P.Sub(mechanics.Vec3{1, 2, 0.5}).Norm(); d != 0 {
				t.Errorf("pose %v", pose)
			}
			if n := testing.AllocsPerRun(100, func() { _, _ = s.Sample(values, x, e) }); n != 0 {
				t.Errorf("Sample allocates %v times", n)
			}
		})
	}
}
