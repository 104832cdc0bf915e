package mechanics

import (
	"errors"
	"fmt"
	"math"
)

// Vec3 is a 3-vector.
type Vec3 [3]float64

// Mat3 is a 3×3 matrix, row-major: m[i][j] is row i, column j.
type Mat3 [3][3]float64

// Identity3 returns the 3×3 identity matrix.
func Identity3() Mat3 { return Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} }

// Add returns a + b.
func (a Vec3) Add(b Vec3) Vec3 { return Vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

// Sub returns a − b.
func (a Vec3) Sub(b Vec3) Vec3 { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// Scale returns s·a.
func (a Vec3) Scale(s float64) Vec3 { return Vec3{s * a[0], s * a[1], s * a[2]} }

// Dot returns a·b.
func (a Vec3) Dot(b Vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// Cross returns a × b.
func (a Vec3) Cross(b Vec3) Vec3 {
	return Vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// Norm returns the Euclidean norm of a.
func (a Vec3) Norm() float64 { return math.Sqrt(a.Dot(a)) }

// Mul returns the matrix product a·b.
func (a Mat3) Mul(b Mat3) Mat3 {
	var c Mat3
	for i := range 3 {
		for j := range 3 {
			c[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return c
}

// MulVec returns a·v.
func (a Mat3) MulVec(v Vec3) Vec3 {
	return Vec3{
		a[0][0]*v[0] + a[0][1]*v[1] + a[0][2]*v[2],
		a[1][0]*v[0] + a[1][1]*v[1] + a[1][2]*v[2],
		a[2][0]*v[0] + a[2][1]*v[1] + a[2][2]*v[2],
	}
}

// T returns the transpose of a.
func (a Mat3) T() Mat3 {
	return Mat3{{a[0][0], a[1][0], a[2][0]}, {a[0][1], a[1][1], a[2][1]}, {a[0][2], a[1][2], a[2][2]}}
}

// Add returns a + b.
func (a Mat3) Add(b Mat3) Mat3 {
	for i := range 3 {
		for j := range 3 {
			a[i][j] += b[i][j]
		}
	}
	return a
}

// Scale returns s·a.
func (a Mat3) Scale(s float64) Mat3 {
	for i := range 3 {
		for j := range 3 {
			a[i][j] *= s
		}
	}
	return a
}

// Hat returns the skew-symmetric matrix [w]× with [w]× v = w × v.
func Hat(w Vec3) Mat3 {
	return Mat3{{0, -w[2], w[1]}, {w[2], 0, -w[0]}, {-w[1], w[0], 0}}
}

// Vee is the inverse of Hat, applied to the skew-symmetric part of m:
// Vee(m) = ((m21 − m12)/2, (m02 − m20)/2, (m10 − m01)/2).
func Vee(m Mat3) Vec3 {
	return Vec3{(m[2][1] - m[1][2]) / 2, (m[0][2] - m[2][0]) / 2, (m[1][0] - m[0][1]) / 2}
}

// Below smallAngle the SO(3) coefficient functions use Taylor series.
const smallAngle = 1e-2

// so3Coeffs returns A = sinθ/θ, B = (1−cosθ)/θ², C = (θ−sinθ)/θ³ for θ = |w|.
func so3Coeffs(theta float64) (a, b, c float64) {
	t2 := theta * theta
	if theta < smallAngle {
		a = 1 - t2/6*(1-t2/20*(1-t2/42))
		b = 0.5 - t2/24*(1-t2/30*(1-t2/56))
		c = 1.0/6 - t2/120*(1-t2/42*(1-t2/72))
		return a, b, c
	}
	s, co := math.Sincos(theta)
	return s / theta, (1 - co) / t2, (theta - s) / (t2 * theta)
}

// so3InvCoeff returns D = (1 − A/(2B))/θ², the W² coefficient of the inverse
// left Jacobian. It is singular at θ = 2π.
func so3InvCoeff(theta float64) float64 {
	t2 := theta * theta
	if theta < smallAngle {
		return 1.0/12 + t2/720 + t2*t2/30240
	}
	s, c := math.Sincos(theta)
	return (1 - theta*s/(2*(1-c))) / t2
}

// ExpSO3 returns the rotation matrix exp([w]×) (Rodrigues' formula): a
// rotation by |w| radians about w/|w|.
func ExpSO3(w Vec3) Mat3 {
	a, b, _ := so3Coeffs(w.Norm())
	W := Hat(w)
	return Identity3().Add(W.Scale(a)).Add(W.Mul(W).Scale(b))
}

// LogSO3 returns the rotation vector w with ExpSO3(w) = r and |w| ≤ π. r
// must be a rotation matrix. Near θ = π the axis is taken from the
// symmetric part of r, which stays accurate where the skew part vanishes;
// at θ = π exactly either of the two equivalent vectors ±πn is returned.
func LogSO3(r Mat3) Vec3 {
	tr := r[0][0] + r[1][1] + r[2][2]
	c := math.Max(-1, math.Min(1, (tr-1)/2))
	v := Vee(r) // sinθ·n
	s := v.Norm()
	theta := math.Atan2(s, c)
	if c > -0.9 {
		var k float64 // θ / sinθ
		if theta < smallAngle {
			t2 := theta * theta
			k = 1 + t2/6 + 7*t2*t2/360
		} else {
			k = theta / math.Sin(theta)
		}
		return v.Scale(k)
	}
	// θ close to π: n nᵀ = (sym(r) − c I)/(1 − c).
	den := 1 - c
	i := 0
	for j := 1; j < 3; j++ {
		if r[j][j] > r[i][i] {
			i = j
		}
	}
	var n Vec3
	n[i] = math.Sqrt(math.Max(0, (r[i][i]-c)/den))
	for j := range 3 {
		if j != i {
			n[j] = (r[i][j] + r[j][i]) / (2 * den * n[i])
		}
	}
	n = n.Scale(1 / n.Norm())
	if n.Dot(v) < 0 {
		n = n.Scale(-1)
	}
	return n.Scale(theta)
}

// LeftJacobianSO3 returns J_l(w) = I + B[w]× + C[w]×², with
// exp([w + δ]×) ≈ exp([J_l δ]×) exp([w]×) for small δ.
func LeftJacobianSO3(w Vec3) Mat3 {
	_, b, c := so3Coeffs(w.Norm())
	W := Hat(w)
	return Identity3().Add(W.Scale(b)).Add(W.Mul(W).Scale(c))
}

// LeftJacobianInvSO3 returns J_l(w)⁻¹ = I − ½[w]× + D[w]×² (|w| < 2π).
func LeftJacobianInvSO3(w Vec3) Mat3 {
	d := so3InvCoeff(w.Norm())
	W := Hat(w)
	return Identity3().Add(W.Scale(-0.5)).Add(W.Mul(W).Scale(d))
}

// RightJacobianSO3 returns J_r(w) = J_l(−w), with
// exp([w + δ]×) ≈ exp([w]×) exp([J_r δ]×) for small δ.
func RightJacobianSO3(w Vec3) Mat3 { return LeftJacobianSO3(w.Scale(-1)) }

// RightJacobianInvSO3 returns J_r(w)⁻¹ = J_l(−w)⁻¹.
func RightJacobianInvSO3(w Vec3) Mat3 { return LeftJacobianInvSO3(w.Scale(-1)) }

// RPY returns the rotation Rz(yaw)·Ry(pitch)·Rx(roll) (URDF / ROS fixed-axis
// roll-pitch-yaw).
func RPY(roll, pitch, yaw float64) Mat3 {
	sr, cr := math.Sincos(roll)
	sp, cp := math.Sincos(pitch)
	sy, cy := math.Sincos(yaw)
	return Mat3{
		{cy * cp, cy*sp*sr - sy*cr, cy*sp*cr + sy*sr},
		{sy * cp, sy*sp*sr + cy*cr, sy*sp*cr - cy*sr},
		{-sp, cp * sr, cp * cr},
	}
}

// SE3 is a rigid transform x ↦ R x + P (for a pose: body to world).
type SE3 struct {
	R Mat3 // rotation
	P Vec3 // translation
}

// IdentitySE3 returns the identity transform.
func IdentitySE3() SE3 { return SE3{R: Identity3()} }

// Mul returns the composition a∘b: x ↦ a(b(x)).
func (a SE3) Mul(b SE3) SE3 {
	return SE3{R: a.R.Mul(b.R), P: a.R.MulVec(b.P).Add(a.P)}
}

// Inverse returns the inverse transform.
func (a SE3) Inverse() SE3 {
	rt := a.R.T()
	return SE3{R: rt, P: rt.MulVec(a.P).Scale(-1)}
}

// Act returns R x + P.
func (a SE3) Act(x Vec3) Vec3 { return a.R.MulVec(x).Add(a.P) }

// Twist is an element of se(3) in the order (v, ω): linear part first, then
// angular (Pinocchio's Motion and Sola's τ = (ρ, θ) convention).
type Twist [6]float64

// Linear returns the linear part v.
func (xi Twist) Linear() Vec3 { return Vec3{xi[0], xi[1], xi[2]} }

// Angular returns the angular part ω.
func (xi Twist) Angular() Vec3 { return Vec3{xi[3], xi[4], xi[5]} }

// ExpSE3 returns exp(ξ^): R = ExpSO3(ω), P = J_l(ω) v.
func ExpSE3(xi Twist) SE3 {
	w := xi.Angular()
	return SE3{R: ExpSO3(w), P: LeftJacobianSO3(w).MulVec(xi.Linear())}
}

// LogSE3 returns the twist ξ = (v, ω) with ExpSE3(ξ) = t and |ω| ≤ π.
func LogSE3(t SE3) Twist {
	w := LogSO3(t.R)
	v := LeftJacobianInvSO3(w).MulVec(t.P)
	return Twist{v[0], v[1], v[2], w[0], w[1], w[2]}
}

// Quat is a Hamilton quaternion W + Xi + Yj + Zk. Unit quaternions represent
// rotations; a pose's orientation maps body to world coordinates (ROS
// convention; note that ROS messages order the fields x, y, z, w).
type Quat struct {
	W, X, Y, Z float64
}

// ErrZeroQuaternion reports a quaternion that cannot be normalised.
var ErrZeroQuaternion = errors.New("mechanics: zero or non-finite quaternion")

// Norm returns the quaternion's Euclidean norm.
func (q Quat) Norm() float64 { return math.Sqrt(q.W*q.W + q.X*q.X + q.Y*q.Y + q.Z*q.Z) }

// Normalized returns q/|q|. It fails on a zero or non-finite quaternion.
func (q Quat) Normalized() (Quat, error) {
	n := q.Norm()
	if !(n > 0) || math.IsInf(n, 0) {
		return Quat{}, fmt.Errorf("%w: %+v", ErrZeroQuaternion, q)
	}
	return Quat{q.W / n, q.X / n, q.Y / n, q.Z / n}, nil
}

// Mul returns the Hamilton product q·r (apply r, then q).
func (q Quat) Mul(r Quat) Quat {
	return Quat{
		W: q.W*r.W - q.X*r.X - q.Y*r.Y - q.Z*r.Z,
		X: q.W*r.X + q.X*r.W + q.Y*r.Z - q.Z*r.Y,
		Y: q.W*r.Y - q.X*r.Z + q.Y*r.W + q.Z*r.X,
		Z: q.W*r.Z + q.X*r.Y - q.Y*r.X + q.Z*r.W,
	}
}

// Conj returns the conjugate (the inverse for a unit quaternion).
func (q Quat) Conj() Quat { return Quat{q.W, -q.X, -q.Y, -q.Z} }

// Rotation returns the rotation matrix of q/|q| (identity for a zero q).
func (q Quat) Rotation() Mat3 {
	n2 := q.W*q.W + q.X*q.X + q.Y*q.Y + q.Z*q.Z
	if !(n2 > 0) {
		return Identity3()
	}
	s := 2 / n2
	w, x, y, z := q.W, q.X, q.Y, q.Z
	return Mat3{
		{1 - s*(y*y+z*z), s * (x*y - w*z), s * (x*z + w*y)},
		{s * (x*y + w*z), 1 - s*(x*x+z*z), s * (y*z - w*x)},
		{s * (x*z - w*y), s * (y*z + w*x), 1 - s*(x*x+y*y)},
	}
}

// QuatFromRotation returns the unit quaternion (with W ≥ 0) of a rotation
// matrix (Shepperd's method).
func QuatFromRotation(r Mat3) Quat {
	tr := r[0][0] + r[1][1] + r[2][2]
	var q Quat
	switch {
	case tr > 0:
		s := 2 * math.Sqrt(tr+1)
		q = Quat{s / 4, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s}
	case r[0][0] > r[1][1] && r[0][0] > r[2][2]:
		s := 2 * math.Sqrt(1+r[0][0]-r[1][1]-r[2][2])
		q = Quat{(r[2][1] - r[1][2]) / s, s / 4, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s}
	case r[1][1] > r[2][2]:
		s := 2 * math.Sqrt(1+r[1][1]-r[0][0]-r[2][2])
		q = Quat{(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, s / 4, (r[1][2] + r[2][1]) / s}
	default:
		s := 2 * math.Sqrt(1+r[2][2]-r[0][0]-r[1][1])
		q = Quat{(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, s / 4}
	}
	if q.W < 0 {
		q = Quat{-q.W, -q.X, -q.Y, -q.Z}
	}
	n := q.Norm()
	return Quat{q.W / n, q.X / n, q.Y / n, q.Z / n}
}

// QuatFromRotationVector returns the unit quaternion of ExpSO3(w).
func QuatFromRotationVector(w Vec3) Quat {
	theta := w.Norm()
	var k float64 // sin(θ/2)/θ
	if theta < smallAngle {
		t2 := theta * theta
		k = 0.5 - t2/48 + t2*t2/3840
	} else {
		k = math.Sin(theta/2) / theta
	}
	return Quat{math.Cos(theta / 2), k * w[0], k * w[1], k * w[2]}
}

// Slerp interpolates between the unit quaternions a (t = 0) and b (t = 1)
// along the shorter great arc, at constant angular velocity. The arc angle is
// computed as 2·atan2(|a − b|, |a + b|), accurate for nearly equal inputs.
func Slerp(a, b Quat, t float64) Quat {
	d := a.W*b.W + a.X*b.X + a.Y*b.Y + a.Z*b.Z
	if d < 0 {
		b = Quat{-b.W, -b.X, -b.Y, -b.Z}
	}
	diff := Quat{a.W - b.W, a.X - b.X, a.Y - b.Y, a.Z - b.Z}.Norm()
	sum := Quat{a.W + b.W, a.X + b.X, a.Y + b.Y, a.Z + b.Z}.Norm()
	theta := 2 * math.Atan2(diff, sum)
	ka, kb := 1-t, t
	if theta > 1e-12 {
		s := math.Sin(theta)
		ka = math.Sin((1-t)*theta) / s
		kb = math.Sin(t*theta) / s
	}
	q := Quat{ka*a.W + kb*b.W, ka*a.X + kb*b.X, ka*a.Y + kb*b.Y, ka*a.Z + kb*b.Z}
	n := q.Norm()
	return Quat{q.W / n, q.X / n, q.Y / n, q.Z / n}
}
