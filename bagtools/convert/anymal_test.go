package convert_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
)

// The simulated ANYmal D logs (shared/data/anymal_sim, see its README.md):
// 100 Hz AnymalState messages from MuJoCo, with exact joint torques and true
// foot forces as zero-order-hold ports, converted with params/anymal.yaml.
const (
	anymalSimDir = "anymal_sim"
	anymalURDF   = "anymal_d_simple_description/urdf/anymal.urdf"
	// anymalMass is the model's total mass [kg] and anymalWeight = m·g [N]
	// with g = 9.81 m/s², as the README states for still_0.mcap.
	anymalMass   = 51.539
	anymalWeight = 505.600
)

// anymalFeet are the contact names in the order of the contact port.
var anymalFeet = []string{"LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"}

// anymalDir returns the simulated data folder, skipping the test when one
// of the named files is absent (failing it when CI=true).
func anymalDir(t *testing.T, files ...string) string {
	t.Helper()
	for _, f := range append([]string{anymalURDF}, files...) {
		fixtures.Path(t, anymalSimDir, f)
	}
	return filepath.Join(fixtures.DataDir(), anymalSimDir)
}

// anymalSpec loads params/anymal.yaml with its inputs replaced by the
// absolute path of one log. The low-pass filter is switched off so that
// every converted sample is the logged state itself and p the
// instantaneous M(q)v, which the reference can reproduce exactly, and the
// port history is off (the paper's layout).
func anymalSpec(t *testing.T, dir, log string) *convert.Spec {
	t.Helper()
	s, err := convert.LoadSpec(filepath.Join(fixtures.Root(), "params", "anymal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s.Inputs = []string{filepath.Join(dir, log)}
	s.Filter.Kind = "none"
	// One continuous episode per log (the params store one per window):
	// every sample then maps to one message, with q relative to the log's
	// first pose; the per-sample mapping is the same.
	s.Window.Storage = convert.StorageEpisode
	// The measured ports, which the reference decodes: the port
	// history's means are TestPortHistoryConversion's.
	s.History.PortMean = 0
	return s
}

// anymalConversion is one converted log with its independent references.
type anymalConversion struct {
	conv   *convert.Converter
	spec   *convert.Spec
	d      *dataset.Dataset
	msgs   []anymalMsg
	kin    *kinTree
	joints []string // spec joint order
	// samples maps every dataset sample to its message.
	samples []anymalSample
}

// anymalSample is one row of the dataset and the message it came from.
type anymalSample struct {
	ep, k, msg int
	t          float64 // seconds since the log's start
	x, e       []float64
}

// convertAnymal converts one log of the data folder, reads it again with
// the independent decoder and builds the reference kinematics.
func convertAnymal(t *testing.T, dir, log string) *anymalConversion {
	t.Helper()
	s := anymalSpec(t, dir, log)
	c, err := convert.NewConverter(s, convert.Options{DataRoot: dir, Params: "params/anymal.yaml"})
	if err != nil {
		t.Fatalf("%s: %v", log, err)
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", log, err)
	}
	// One 100 Hz file, aligned at params/anymal.yaml's 400 Hz working rate,
	// without warnings (header stamps present and non-zero).
	if f := res.Report.Files; len(f) != 1 || math.Abs(f[0].InputRate-100) > 1e-6 || f[0].WorkRate != 400 || len(f[0].Warnings) > 0 {
		t.Fatalf("%s: file report %+v", log, f)
	}
	d := res.Splits["id"]
	if d == nil || len(res.Splits) != 1 {
		t.Fatalf("%s: splits %v, want only id", log, res.Splits)
	}
	if d.N != 18 || d.NU != 18 || d.NC != 12 || math.Abs(d.Dt-0.01) > 1e-15 {
		t.Fatalf("%s: n=%d n_u=%d n_c=%d dt=%g, want 18, 18, 12, 0.01", log, d.N, d.NU, d.NC, d.Dt)
	}
	// params/anymal.yaml stores merged episodes: q is relative to each
	// episode's first pose.
	if s.Window.Storage != convert.StorageEpisode || d.Source["q_origin"] != "episode_start" {
		t.Fatalf("%s: storage %q, q origin %q; the test expects episode storage", log, s.Window.Storage, d.Source["q_origin"])
	}
	a := &anymalConversion{conv: c, spec: s, d: d, msgs: readAnymalLog(t, filepath.Join(dir, log))}
	for _, j := range s.State.Joints {
		a.joints = append(a.joints, j.Name)
	}
	if a.kin, err = loadKinTree(filepath.Join(dir, anymalURDF), a.joints); err != nil {
		t.Fatal(err)
	}
	// The converter's clock: header stamps, in seconds since the log's
	// earliest log time.
	start := a.msgs[0].logTime
	for _, m := range a.msgs {
		start = min(start, m.logTime)
	}
	msgTime := func(i int) float64 { return float64(a.msgs[i].stamp-int64(start)) / 1e9 }
	for ei, ep := range d.Episodes {
		for k := range ep.Len {
			tk := ep.Tags["t0"] + float64(k)*d.Dt
			i := int(math.Round(tk * 100))
			if i < 0 || i >= len(a.msgs) || math.Abs(msgTime(i)-tk) > 1e-6 {
				t.Fatalf("%s: episode %s sample %d at t = %.6f s has no message (%d messages)", log, ep.Name, k, tk, len(a.msgs))
			}
			a.samples = append(a.samples, anymalSample{
				ep: ei, k: k, msg: i, t: tk,
				x: ep.X[k*2*d.N : (k+1)*2*d.N],
				e: ep.E[k*(d.NU+d.NC) : (k+1)*(d.NU+d.NC)],
			})
		}
	}
	t.Logf("%s: %d episodes, %d samples of %d messages, windows %+v", log, len(d.Episodes), len(a.samples), len(a.msgs), res.Report.Windows)
	return a
}

// basePose is the logged base pose of message i.
func (a *anymalConversion) basePose(i int) rigid {
	m := a.msgs[i]
	return rigid{R: quatRotation(m.quat), p: m.pos}
}

// jointVector returns message i's joint positions (field 0), velocities (1)
// or efforts (2) in the spec's joint order.
func (a *anymalConversion) jointVector(t *testing.T, i, field int) []float64 {
	t.Helper()
	out := make([]float64, len(a.joints))
	for j, n := range a.joints {
		v, ok := a.msgs[i].joints[n]
		if !ok {
			t.Fatalf("message %d has no joint %q", i, n)
		}
		out[j] = v[field]
	}
	return out
}

// velocity returns v = (base linear, base angular velocity in the base
// frame, joint rates) of message i.
func (a *anymalConversion) velocity(t *testing.T, i int) []float64 {
	t.Helper()
	m := a.msgs[i]
	v := []float64{m.lin[0], m.lin[1], m.lin[2], m.ang[0], m.ang[1], m.ang[2]}
	return append(v, a.jointVector(t, i, 1)...)
}

// checkPorts checks that every sample's ports are the logged values: u =
// (0 × 6, joints.effort in the spec's joint order), bit for bit, and f_c the
// four feet's wrench.force (LF, RF, LH, RH), logged in odom axes, in the
// base's body axes (contact.body_axes): Rᵀf with R from the logged
// quaternion, to 1e-12 relative. Hold interpolation at the message times
// must reproduce them.
func (a *anymalConversion) checkPorts(t *testing.T) {
	t.Helper()
	for _, s := range a.samples {
		want := make([]float64, 6, 30)
		want = append(want, a.jointVector(t, s.msg, 2)...)
		Rt := a.basePose(s.msg).R.T()
		for _, f := range anymalFeet {
			force, ok := a.msgs[s.msg].forces[f]
			if !ok {
				t.Fatalf("message %d has no contact %s", s.msg, f)
			}
			fb := Rt.MulVec(force)
			want = append(want, fb[:]...)
		}
		for c := range want {
			if c >= 18 && math.Abs(s.e[c]-want[c]) <= 1e-12*(1+math.Abs(want[c])) {
				continue
			}
			if s.e[c] != want[c] {
				t.Fatalf("t = %.2f s: port %d (%s) = %.17g, logged %.17g", s.t, c, a.d.Ports[c], s.e[c], want[c])
			}
		}
	}
}

// checkConfiguration checks every sample's q: the joint angles exactly as
// logged, and the base part the SE(3) logarithm of the pose relative to
// the episode's first pose, exp(q) = T₀⁻¹ T, to 1e-9.
func (a *anymalConversion) checkConfiguration(t *testing.T) {
	t.Helper()
	var first rigid
	for _, s := range a.samples {
		if s.k == 0 {
			first = a.basePose(s.msg)
		}
		qj := a.jointVector(t, s.msg, 0)
		for j := range qj {
			if s.x[6+j] != qj[j] {
				t.Fatalf("t = %.2f s: q of %s = %.17g, logged %.17g", s.t, a.joints[j], s.x[6+j], qj[j])
			}
		}
		var xi mechanics.Twist
		copy(xi[:], s.x[:6])
		got := mechanics.ExpSE3(xi)
		T := a.basePose(s.msg)
		// T₀⁻¹ T = (R₀ᵀ R, R₀ᵀ (p − p₀)).
		wantR, wantP := first.R.T().Mul(T.R), first.R.T().MulVec(T.p.Sub(first.p))
		var worst float64
		for r := range 3 {
			worst = math.Max(worst, math.Abs(got.P[r]-wantP[r]))
			for c := range 3 {
				worst = math.Max(worst, math.Abs(got.R[r][c]-wantR[r][c]))
			}
		}
		if worst > 1e-9 {
			t.Fatalf("t = %.2f s: exp(q_base) differs from T₀⁻¹T by %.3g (q = %v)", s.t, worst, s.x[:6])
		}
	}
}

// checkMomentum compares the converted p with the reference M(q)v on the
// given samples, and the converter's own mass matrix with the reference
// one. Each p row r is compared relative to Σ_c |M_rc v_c|, the size of
// the terms it sums, plus 1e-9·max|M|·max|v| for rows whose terms all
// vanish (p_y of a robot falling straight down is 1e-16 of round-off);
// each M entry relative to √(M_rr M_cc), which bounds it. The reference's
// finite differences (step 1e-5 on unit rates: O(h²) truncation on a body
// of about 1 m, O(ε/h) round-off) are good to about 1e-10, so 1e-6 admits
// nothing but round-off while a wrong frame, joint order, axis sign or
// inertia gives errors of order one. It returns the largest relative
// errors of p and M.
func (a *anymalConversion) checkMomentum(t *testing.T, idx []int) (errP, errM float64) {
	t.Helper()
	const tol = 1e-6
	n := a.d.N
	Mc := make([]float64, n*n)
	for _, si := range idx {
		s := a.samples[si]
		qj := a.jointVector(t, s.msg, 0)
		v := a.velocity(t, s.msg)
		M := a.kin.massMatrix(a.basePose(s.msg), qj, 1e-5)
		var mMax float64
		for r := range n {
			mMax = math.Max(mMax, maxAbs(M[r]))
		}
		floor := 1e-9 * mMax * maxAbs(v)
		for r := range n {
			var p, scale float64
			for c := range n {
				p += M[r][c] * v[c]
				scale += math.Abs(M[r][c] * v[c])
			}
			scale += floor
			if scale == 0 {
				continue // v = 0
			}
			e := math.Abs(s.x[n+r]-p) / scale
			errP = math.Max(errP, e)
			if e > tol {
				t.Errorf("t = %.2f s: %s = %.10g, reference ∂T/∂v = %.10g (relative error %.3g)", s.t, a.momentumName(r), s.x[n+r], p, e)
			}
		}
		if err := a.conv.Model().MassMatrix(Mc, qj); err != nil {
			t.Fatal(err)
		}
		for r := range n {
			for c := range n {
				e := math.Abs(Mc[r*n+c]-M[r][c]) / math.Sqrt(M[r][r]*M[c][c])
				errM = math.Max(errM, e)
				if e > tol {
					t.Errorf("t = %.2f s: M[%d][%d] = %.10g, reference %.10g (relative error %.3g)", s.t, r, c, Mc[r*n+c], M[r][c], e)
				}
			}
		}
		if errP > tol || errM > tol {
			t.FailNow()
		}
	}
	return errP, errM
}

// momentumName names row r of p.
func (a *anymalConversion) momentumName(r int) string {
	if r < 6 {
		return []string{"p_x", "p_y", "p_z", "l_x", "l_y", "l_z"}[r]
	}
	return "p_" + a.joints[r-6]
}

// TestAnymalStill converts still_0.mcap, a 10 s stand: the ports are the
// logged torques and foot forces, the feet carry the weight, the robot's
// momentum is that of the URDF at the logged state and nearly zero.
func TestAnymalStill(t *testing.T) {
	const log = "still_0.mcap"
	dir := anymalDir(t, log)
	a := convertAnymal(t, dir, log)
	// The README rounds the URDF's 51.53921 kg to 51.539 kg; its weight
	// 505.600 N is that of the unrounded mass.
	if m := a.kin.totalMass(); math.Abs(m-anymalMass) > 5e-4 || math.Abs(m*9.81-anymalWeight) > 5e-3 {
		t.Fatalf("URDF mass %.6f kg, weight %.4f N; the README says %.3f kg, %.3f N", m, m*9.81, anymalMass, anymalWeight)
	}
	a.checkPorts(t)
	a.checkConfiguration(t)

	// ΣFz (odom z) over the four feet after touch-down (t > 0.5 s) against m·g,
	// and the standing robot's linear momentum (body frame).
	var sum float64
	var n int
	var maxPlin, maxSettled float64
	var idx []int
	for i, s := range a.samples {
		if i%50 == 0 || (s.t > 0.05 && s.t < 0.12) {
			idx = append(idx, i) // the drop and the touch-down included
		}
		if s.t <= 0.5 {
			continue
		}
		// The port holds the forces in body axes: rotate their sum back
		// into odom axes for the vertical.
		var fb mechanics.Vec3
		for f := range 4 {
			for c := range 3 {
				fb[c] += s.e[18+3*f+c]
			}
		}
		sum += a.basePose(s.msg).R.MulVec(fb)[2]
		n++
		p := s.x[18:21]
		norm := math.Sqrt(p[0]*p[0] + p[1]*p[1] + p[2]*p[2])
		maxPlin = math.Max(maxPlin, norm)
		if s.t > 3 {
			maxSettled = math.Max(maxSettled, norm)
		}
	}
	if n < 900 {
		t.Fatalf("%d samples after 0.5 s, want the whole stand (≥ 900)", n)
	}
	mean := sum / float64(n)
	t.Logf("ΣFz mean over %d samples after 0.5 s: %.4f N (m·g = %.3f N, %+.2g %%); max |p_lin| %.3g kg·m/s after 0.5 s, %.3g kg·m/s after 3 s", n, mean, anymalWeight, 100*(mean/anymalWeight-1), maxPlin, maxSettled)
	if math.Abs(mean/anymalWeight-1) > 0.005 {
		t.Errorf("mean ΣFz = %.4f N, want m·g = %.3f N within 0.5 %%", mean, anymalWeight)
	}
	// Standing: |p_lin| = m |v_com| stays below 0.05 kg·m/s (a centre-of-
	// mass speed under 1 mm/s; 0.022 while the touch-down's oscillation
	// decays) and, settled, below 0.002 kg·m/s. The 0.0011 kg·m/s left is
	// the steady sinking of the base by 25 µm/s into MuJoCo's soft
	// contacts (pose.position.z falls 0.2 mm in 9 s).
	if maxPlin > 0.05 || maxSettled > 0.002 {
		t.Errorf("standing robot's linear momentum reaches %.4g kg·m/s after 0.5 s (want < 0.05) and %.4g after 3 s (want < 0.002)", maxPlin, maxSettled)
	}

	errP, errM := a.checkMomentum(t, idx)
	t.Logf("p = M(q)v on %d samples: max relative error %.3g against ∂T/∂v of the URDF, M %.3g against the reference", len(idx), errP, errM)
}

// TestAnymalSway converts sway_202.mcap, 60 s of large 6-DoF base posture
// motions with the feet in place. Its base attitude and joint rates make
// p = M(q)v sensitive to the frame of the twist, the joint order and the
// fusion of the URDF's fixed links, which the independent reference checks.
func TestAnymalSway(t *testing.T) {
	const log = "id/sway_202.mcap"
	dir := anymalDir(t, log)
	a := convertAnymal(t, dir, log)
	a.checkPorts(t)
	a.checkConfiguration(t)

	// Samples spread over the run, and those of largest base speed,
	// angular rate and joint rate.
	var idx []int
	best := [3]int{}
	bestVal := [3]float64{}
	for i, s := range a.samples {
		if i%200 == 0 {
			idx = append(idx, i)
		}
		v := a.velocity(t, s.msg)
		for b, val := range []float64{math.Hypot(math.Hypot(v[0], v[1]), v[2]), math.Hypot(math.Hypot(v[3], v[4]), v[5]), maxAbs(v[6:])} {
			if val > bestVal[b] {
				best[b], bestVal[b] = i, val
			}
		}
	}
	idx = append(idx, best[:]...)
	t.Logf("largest base speed %.3f m/s, angular rate %.3f rad/s, joint rate %.3f rad/s", bestVal[0], bestVal[1], bestVal[2])
	if bestVal[1] < 0.1 || bestVal[2] < 0.5 {
		t.Fatalf("the run barely moves; the momentum check would be weak")
	}
	errP, errM := a.checkMomentum(t, idx)
	t.Logf("p = M(q)v on %d samples: max relative error %.3g against ∂T/∂v of the URDF, M %.3g against the reference", len(idx), errP, errM)

	// Sanity check of the linear part: R p_lin / m is the centre of
	// mass's velocity in odom, here against central differences of the
	// reference's centre of mass over the neighbouring messages (±10 ms).
	// Their truncation error stays below 0.6 % of the largest speed after
	// the touch-down's impact; reading the body-frame twist as a world-
	// frame one would give 22 %.
	var worst, top float64
	for _, s := range a.samples {
		i := s.msg
		if s.t < 0.2 || i+1 >= len(a.msgs) {
			continue // the drop and the touch-down's impact (t ≈ 0.07 s)
		}
		dt := float64(a.msgs[i+1].stamp-a.msgs[i-1].stamp) / 1e9
		fd := a.kin.com(a.basePose(i+1), a.jointVector(t, i+1, 0)).Sub(a.kin.com(a.basePose(i-1), a.jointVector(t, i-1, 0))).Scale(1 / dt)
		vp := a.basePose(i).R.MulVec(mechanics.Vec3{s.x[18], s.x[19], s.x[20]}).Scale(1 / a.kin.totalMass())
		worst = math.Max(worst, vp.Sub(fd).Norm())
		top = math.Max(top, vp.Norm())
	}
	t.Logf("centre-of-mass velocity: R p_lin/m vs finite differences: max difference %.3g m/s, max speed %.3g m/s", worst, top)
	if worst > 0.01*top {
		t.Errorf("R p_lin/m differs from the centre of mass's velocity by %.3g m/s (max speed %.3g m/s)", worst, top)
	}
}

// maxAbs returns the largest |x_i| (0 for an empty x).
func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// TestAnymalSpecErrors checks that a spec that does not fit the robot or
// the log fails with an error that names the problem.
func TestAnymalSpecErrors(t *testing.T) {
	const log = "still_0.mcap"
	dir := anymalDir(t, log)
	tests := []struct {
		name   string
		edit   func(s *convert.Spec)
		target error
		want   []string // substrings of the error
	}{
		{
			name:   "joint not in the URDF",
			edit:   func(s *convert.Spec) { s.State.Joints[1].Name = "LF_HFE_typo" },
			target: convert.ErrSpec,
			want:   []string{"state.joints[1].name", "LF_HFE_typo"},
		},
		{
			name: "URDF joint without an entry",
			edit: func(s *convert.Spec) {
				s.State.Joints = s.State.Joints[:11]
				s.Control.Channels = s.Control.Channels[:17]
				s.Control.Names = s.Control.Names[:17]
			},
			target: convert.ErrSpec,
			want:   []string{"RH_KFE"},
		},
		{
			name: "topic not in the log",
			edit: func(s *convert.Spec) {
				s.State.Base.Position[0].Name = "/state_estimator/anymal_state_missing.pose.pose.position.x"
			},
			target: convert.ErrMissingChannel,
			want:   []string{"/state_estimator/anymal_state_missing", anymalTopic},
		},
		{
			name: "contact not in the messages",
			edit: func(s *convert.Spec) {
				s.Contact.Channels[0].Name = `/state_estimator/anymal_state.contacts[:]{name=="LF_TOE"}.wrench.force.x`
			},
			target: convert.ErrNoMessages,
			want:   []string{"LF_TOE"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := anymalSpec(t, dir, log)
			tc.edit(s)
			c, err := convert.NewConverter(s, convert.Options{DataRoot: dir})
			if err == nil {
				_, err = c.Run(context.Background())
			}
			if err == nil {
				t.Fatal("conversion succeeded")
			}
			if !errors.Is(err, tc.target) {
				t.Errorf("error %q does not wrap %v", err, tc.target)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
