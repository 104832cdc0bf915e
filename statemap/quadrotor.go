package statemap

import (
	"fmt"
	"math"
)

// Crazyflie 2.1 Brushless figures used by params/crazyflie.yaml. They are
// assumptions with sources, not measurements of the logged vehicles:
//
//   - Mass 0.045 kg: Busetto et al., "Nonlinear System Identification
//     Nano-drone Benchmark" (arXiv 2512.14450, 2025), the paper of the
//     data in data/crazyflie, states m = 45 g for their vehicle (with
//     Flow deck and AI deck); its physics baseline uses m = 0.045. Bitcraze's
//     firmware default CF_MASS is 0.0393 kg for the bare vehicle with
//     guards and Lighthouse deck; the data README says "about 0.043 kg".
//   - Inertia diag(2.3951e-5, 2.3951e-5, 3.2347e-5) kg·m²: the values of the
//     benchmark's physics baseline (nanodrone-sysid-benchmark,
//     control_engineering_practice/sysid/test/test_physics_model_multistep_v2.py),
//     which prints Izz as 3.2347e-6; we read that as a typo for 3.2347e-5,
//     the value of the gym-pybullet-drones cf2x model the triple comes
//     from (Izz < Ixx is implausible for a flat X frame). These are
//     Crazyflie 2.x figures; no identified inertia of the Brushless was
//     found, so treat them as an assumption to revisit.
//   - Arm length 0.050 m (centre to rotor axis) and thrust-to-torque ratio
//     0.00569278844371417 m: bitcraze/crazyflie-firmware,
//     src/platform/interface/platform_defaults_cf21bl.h (ARM_LENGTH,
//     THRUST2TORQUE).
//   - Thrust map f = 0.173 N · command per rotor: the logged commands
//     m1_thrust … m4_thrust are normalised (0–1). The firmware's full-scale
//     per-rotor thrust THRUST_MAX is 0.2 N (same header), but the commands
//     are battery compensated, so we calibrated the linear factor on the
//     logs themselves: over the airborne samples of the 19 flights (z > 0.3 m,
//     0.05 < m1_thrust < 0.99) the mean
//     of m·a_z (accelerometer specific force, m = 0.045 kg) is 0.438 N and
//     the mean summed command is 2.534, giving 0.173 N per unit command.
//
// The motor numbering and signs follow the firmware's force-torque power
// distribution (power_distribution_quadrotor.c): M1 front right, M2 back
// right, M3 back left, M4 front left (x forward, y left, z up), M1 and M3
// with negative yaw torque. With the logged body rates this allocation
// correlates positively (0.4–0.6, at 1–2 samples lag) with the angular
// acceleration about every axis.
const (
	CrazyflieMass           = 0.045               // kg
	CrazyflieIxx            = 2.3951e-5           // kg·m²
	CrazyflieIyy            = 2.3951e-5           // kg·m²
	CrazyflieIzz            = 3.2347e-5           // kg·m²
	CrazyflieArmLength      = 0.050               // m, centre to rotor axis
	CrazyflieThrustToTorque = 0.00569278844371417 // m, yaw torque per newton of thrust
	CrazyflieThrustPerUnit  = 0.173               // N per unit normalised command
)

// The Crazyflie's voltage-scaled thrust map (QuadrotorSpec.Voltage): each
// rotor's thrust f = a₁·s + a₂·s² [N] of the command scaled by the
// battery's voltage, s = c·V/CrazyflieVoltageRef. The commands are not
// fully battery compensated: the same vehicle's summed command averages
// 2.35 over the flight on the fullest battery (random1 run 3, 3.63–4.03 V)
// and 2.84 on the emptiest (random1 run 2, 2.88–3.48 V). a₁ and a₂ are the
// least-squares fit of m·a_z (the accelerometer's specific force, m =
// 0.045 kg: the collective thrust) against Σs and Σs² over the airborne
// samples (z > 0.3 m, 0.05 < m1_thrust < 0.99) of the 11 flights the
// real-robot benchmark trains on; the ID-test and test flights are left
// out (bagtools/convert TestCrazyflieVoltageThrustFit refits them). On the
// three test flights (multisine, random1, random2 run 4) the residual's RMS
// falls from 1.21, 0.85 and 0.65 m/s² (the linear map fitted the same way,
// 0.170 N per command) to 0.77, 0.68 and 0.63.
const (
	CrazyflieVoltageRef  = 3.7     // V
	CrazyflieThrustVolt1 = 0.13997 // N per unit voltage-scaled command
	CrazyflieThrustVolt2 = 0.06193 // N per unit voltage-scaled command squared
)

// Allocation maps rotor thrusts to the body wrench: column i (Allocation[i])
// is the wrench (Fx, Fy, Fz, τx, τy, τz) of a unit thrust of rotor i, in the
// body frame about the body origin.
type Allocation [][6]float64

// Wrench returns Σ f_i · Allocation[i].
func (a Allocation) Wrench(f []float64) [6]float64 {
	var w [6]float64
	for i, col := range a {
		for r := range 6 {
			w[r] += col[r] * f[i]
		}
	}
	return w
}

// RotorAllocation returns the allocation of rotors at body positions
// (x_i, y_i) whose thrust points along body +z, each adding a drag torque
// yawSign_i·κ·f_i about z: column i is (0, 0, 1, y_i, −x_i, yawSign_i·κ).
func RotorAllocation(x, y, yawSign []float64, kappa float64) Allocation {
	a := make(Allocation, len(x))
	for i := range x {
		a[i] = [6]float64{0, 0, 1, y[i], -x[i], yawSign[i] * kappa}
	}
	return a
}

// CrazyflieAllocation returns the Crazyflie's X-configuration allocation for
// arm length L (centre to rotor) and thrust-to-torque ratio κ: with
// d = L/√2,
//
//	Fz = f1 + f2 + f3 + f4
//	τx = d(−f1 − f2 + f3 + f4)
//	τy = d(−f1 + f2 + f3 − f4)
//	τz = κ(−f1 + f2 − f3 + f4)
//
// the inverse of the firmware's powerDistributionForceTorque.
func CrazyflieAllocation(armLength, kappa float64) Allocation {
	d := armLength / math.Sqrt2
	return RotorAllocation(
		[]float64{d, -d, -d, d},
		[]float64{-d, -d, d, d},
		[]float64{-1, 1, -1, 1},
		kappa,
	)
}

// QuadrotorAllocation returns the allocation matrix of the spec's layout.
func QuadrotorAllocation(q QuadrotorSpec) (Allocation, error) {
	if !(q.TorqueCoeff >= 0) || !finite(q.TorqueCoeff) {
		return nil, FieldError("control.quadrotor.torque_coeff", "must be finite and non-negative, got %g", q.TorqueCoeff)
	}
	switch q.Layout {
	case "crazyflie", "":
		if len(q.Rotors) > 0 {
			return nil, FieldError("control.quadrotor.rotors", "rotors are only read with layout \"custom\"")
		}
		if !(q.ArmLength > 0) || !finite(q.ArmLength) {
			return nil, FieldError("control.quadrotor.arm_length", "must be positive, got %g", q.ArmLength)
		}
		return CrazyflieAllocation(q.ArmLength, q.TorqueCoeff), nil
	case "custom":
		if len(q.Rotors) == 0 {
			return nil, FieldError("control.quadrotor.rotors", "layout \"custom\" needs rotors")
		}
		var x, y, s []float64
		for i, r := range q.Rotors {
			if math.Abs(r.YawSign) != 1 || !finite(r.X) || !finite(r.Y) {
				return nil, FieldError(fmt.Sprintf("control.quadrotor.rotors[%d]", i), "needs finite x, y and yaw_sign ±1, got %+v", r)
			}
			x, y, s = append(x, r.X), append(y, r.Y), append(s, r.YawSign)
		}
		return RotorAllocation(x, y, s, q.TorqueCoeff), nil
	}
	return nil, FieldError("control.quadrotor.layout", "%q is not one of \"crazyflie\", \"custom\"", q.Layout)
}

// Thrust returns the rotor thrust Σ poly[k]·c^k for command c (Horner).
func Thrust(poly []float64, c float64) float64 {
	var f float64
	for k := len(poly) - 1; k >= 0; k-- {
		f = f*c + poly[k]
	}
	return f
}
