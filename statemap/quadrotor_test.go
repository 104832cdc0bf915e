package statemap

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// firmwareMotorForces transcribes the Crazyflie firmware's
// powerDistributionForceTorque: per-motor forces from the collective
// thrust and body torques.
func firmwareMotorForces(thrust, tx, ty, tz, armLength, kappa float64) []float64 {
	arm := 0.707106781 * armLength
	roll := 0.25 / arm * tx
	pitch := 0.25 / arm * ty
	t := 0.25 * thrust
	yaw := 0.25 * tz / kappa
	return []float64{t - roll - pitch - yaw, t - roll + pitch + yaw, t + roll + pitch - yaw, t + roll - pitch + yaw}
}

func TestCrazyflieAllocation(t *testing.T) {
	a := CrazyflieAllocation(CrazyflieArmLength, CrazyflieThrustToTorque)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		f := []float64{rng.Float64() * 0.2, rng.Float64() * 0.2, rng.Float64() * 0.2, rng.Float64() * 0.2}
		w := a.Wrench(f)
		// Force along body z is the total thrust, nothing sideways.
		if sum := f[0] + f[1] + f[2] + f[3]; math.Abs(w[2]-sum) > 1e-15 || w[0] != 0 || w[1] != 0 {
			t.Fatalf("wrench %v for thrusts %v (total %v)", w, f, sum)
		}
		// The firmware's mixer inverts the allocation exactly.
		back := firmwareMotorForces(w[2], w[3], w[4], w[5], CrazyflieArmLength, CrazyflieThrustToTorque)
		for i := range f {
			if math.Abs(back[i]-f[i]) > 1e-9 {
				t.Fatalf("firmware mixer gives %v back from wrench %v, want %v", back, w, f)
			}
		}
	}
	tests := []struct {
		name string
		f    []float64
		sign [6]float64 // expected sign of each wrench component
	}{
		{"hover", []float64{0.1, 0.1, 0.1, 0.1}, [6]float64{0, 0, 1, 0, 0, 0}},
		{"left motors (M3, M4) up: roll +x", []float64{0.1, 0.1, 0.12, 0.12}, [6]float64{0, 0, 1, 1, 0, 0}},
		{"front motors (M1, M4) up: nose up, −y torque", []float64{0.12, 0.1, 0.1, 0.12}, [6]float64{0, 0, 1, 0, -1, 0}},
		{"M2, M4 up: yaw +z", []float64{0.1, 0.12, 0.1, 0.12}, [6]float64{0, 0, 1, 0, 0, 1}},
	}
	for _, tc := range tests {
		w := a.Wrench(tc.f)
		for i := range w {
			if got := math.Copysign(1, w[i]) * b2f(math.Abs(w[i]) > 1e-12); got != tc.sign[i] {
				t.Errorf("%s: wrench %v, want signs %v", tc.name, w, tc.sign)
				break
			}
		}
	}
	// A differential of 0.02 N on one side gives τx = 2·0.02·L/√2.
	if w := a.Wrench([]float64{0, 0, 0.01, 0.01}); math.Abs(w[3]-0.02*CrazyflieArmLength/math.Sqrt2) > 1e-15 {
		t.Errorf("τx = %v, want %v", w[3], 0.02*CrazyflieArmLength/math.Sqrt2)
	}
	// Rows (Fz, τx, τy, τz) form an invertible 4×4 map.
	m := mat.NewDense(4, 4, nil)
	for i, col := range a {
		for r := range 4 {
			m.Set(r, i, col[r+2])
		}
	}
	if d := mat.Det(m); math.Abs(d) < 1e-12 {
		t.Errorf("allocation is singular (det %g)", d)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestCustomRotorsMatchCrazyflie(t *testing.T) {
	d := CrazyflieArmLength / math.Sqrt2
	custom, err := QuadrotorAllocation(QuadrotorSpec{
		Layout: "custom", TorqueCoeff: CrazyflieThrustToTorque,
		Rotors: []RotorSpec{{X: d, Y: -d, YawSign: -1}, {X: -d, Y: -d, YawSign: 1}, {X: -d, Y: d, YawSign: -1}, {X: d, Y: d, YawSign: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cf := CrazyflieAllocation(CrazyflieArmLength, CrazyflieThrustToTorque)
	for i := range cf {
		if custom[i] != cf[i] {
			t.Errorf("rotor %d: custom %v, crazyflie %v", i, custom[i], cf[i])
		}
	}
}

func TestThrustPoly(t *testing.T) {
	tests := []struct {
		poly    []float64
		c, want float64
	}{
		{[]float64{0, 0.173}, 0.5, 0.0865},
		{[]float64{0.01, 0.1, 0.2}, 0.5, 0.01 + 0.05 + 0.05},
		{[]float64{0.3}, 0.9, 0.3},
	}
	for _, tc := range tests {
		if got := Thrust(tc.poly, tc.c); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Thrust(%v, %v) = %v, want %v", tc.poly, tc.c, got, tc.want)
		}
	}
}
