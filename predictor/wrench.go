package predictor

import (
	"errors"
	"fmt"
	"math"
)

// OffsetEstimator is an offset-free wrapper of a Stepper fed the measured
// samples one dt apart (ForceEstimator, WrenchEstimator). The live node and
// the evaluation (trainer.LogHistory) feed either the same way.
type OffsetEstimator interface {
	Stepper
	// Observe adds the measured sample x (2n values, q's origin
	// coordinates zeroed) with its ports e, one dt after the previous one.
	Observe(x, e []float64) error
	// Reset forgets every sample: the next Observe starts a new history.
	Reset()
	// Residuals returns the number of one-step residuals held.
	Residuals() int
	// History returns the number of residuals the estimate is over at most
	// (its window): the evaluation feeds History()+1 samples before a
	// window's start.
	History() int
}

// History returns the window (OffsetEstimator).
func (f *ForceEstimator) History() int { return f.cfg.Window }

// WrenchBase says how a WrenchEstimator reads the base's orientation from
// the model's state (statemap's floating-base kinds).
type WrenchBase int

const (
	// WrenchBaseSE3 is the SE(3) logarithm relative to the window's first
	// pose (statemap.StateFloatingBase): every observed sample is its own
	// origin, so the orientation of sample t relative to sample t−1 is the
	// rotation of the model's one-step prediction, q̂_t[3:6] (an SO(3)
	// rotation vector). The estimate's frame is the base frame of the
	// latest sample, each residual of the window rotated into it by these
	// rotations chained back from the latest sample: an inertial frame for
	// the window, the state carrying no gravity direction.
	WrenchBaseSE3 WrenchBase = iota + 1
	// WrenchBaseGravity is the gravity-aware base
	// (statemap.StateFloatingBaseGravity): roll and pitch (q[3], q[4]) are
	// absolute, the yaw relative. The estimate's frame is z up with the
	// heading of the latest sample, each residual rotated into it by its
	// sample's roll and pitch and the one-step predictions' yaw changes
	// q̂_t[5] chained back from the latest sample.
	WrenchBaseGravity
)

// WrenchEstimate configures the external-wrench estimate on a floating
// base (WrenchEstimator).
type WrenchEstimate struct {
	// Window is the number of most recent one-step residuals the estimate
	// is over (default 400: 4 s at 100 Hz, seven or more trot cycles of
	// 1.7–2.4 Hz).
	Window int `json:"window" yaml:"window"`
	// Gate is the consistency threshold z: each of the six components of
	// the mean residual m is applied times max(0, 1 − (z/t)²), t = |m|/se
	// its ratio to its standard error over the window (default 6: of the
	// gates 3, 4 and 6 measured on the simulated ANYmal, the one with the
	// lowest ID-test error, all three recovering from a payload;
	// docs/benchmarks.md).
	Gate float64 `json:"gate" yaml:"gate"`
	// Decay multiplies the applied wrench at every predicted step (0 is
	// unset, and Defaults makes it 1: held over the horizon).
	Decay float64 `json:"decay" yaml:"decay"`
	// Blocks is the number of consecutive blocks of the window whose means
	// give the standard error (batch means: gait-periodic residuals, which
	// average out over a block, leave the block means close together, a
	// persistent offset moves them all; default 8: blocks of 50 samples,
	// about one trot cycle at 100 Hz).
	Blocks int `json:"blocks" yaml:"blocks"`
}

// Defaults fills unset fields: a window of 400 residuals, gate 6, decay
// 1, 8 blocks (the window, decay and blocks as first set; the gate chosen
// by the payload study of docs/benchmarks.md).
func (c *WrenchEstimate) Defaults() {
	if c.Window == 0 {
		c.Window = 400
	}
	if c.Gate == 0 {
		c.Gate = 6
	}
	if c.Decay == 0 {
		c.Decay = 1
	}
	if c.Blocks == 0 {
		c.Blocks = 8
	}
}

// Check reports settings the estimator cannot use, naming the setting,
// its range and the value.
func (c WrenchEstimate) Check() error {
	if c.Blocks < 2 || c.Blocks > 1000 {
		return fmt.Errorf("predictor: wrench estimate blocks %d: want 2 … 1000 blocks", c.Blocks)
	}
	if c.Window < c.Blocks || c.Window > 100000 {
		return fmt.Errorf("predictor: wrench estimate window %d: want %d (the blocks) … 100000 residuals", c.Window, c.Blocks)
	}
	if !(c.Gate >= 0 && c.Gate <= 1000) {
		return fmt.Errorf("predictor: wrench estimate gate %v: want a ratio of mean to standard error in [0, 1000]", c.Gate)
	}
	if !(c.Decay >= 0 && c.Decay <= 1) {
		return fmt.Errorf("predictor: wrench estimate decay %v: want a factor in [0, 1]", c.Decay)
	}
	return nil
}

// String describes the settings ("window 400, gate 3, decay 1, 8 blocks").
func (c WrenchEstimate) String() string {
	return fmt.Sprintf("window %d, gate %g, decay %g, %d blocks", c.Window, c.Gate, c.Decay, c.Blocks)
}

// WrenchEstimator makes a Stepper of a floating-base robot offset-free by
// an external wrench on the base, 6 numbers in a world frame (WrenchBase:
// fixed to the latest sample's base frame or heading, so that the
// estimate depends on the window's samples only): the force at the base
// origin and the torque about it.
//
// Observe feeds it the measured samples one dt apart; each one after the
// first leaves the residual r_t = p_t − p̂_t of the model's one-step
// prediction on the base's six momenta only (p's first six coordinates:
// linear, then angular, in the base frame of sample t), rotated into the
// world frame, w_t = (R_t r_lin, R_t r_ang): an impulse per step. Over the
// last Window residuals (after a (re)start, over the ones held once there
// are Blocks of them; none before) it splits the newest Blocks·⌊count/
// Blocks⌋ into Blocks consecutive blocks: m is the mean of the block means
// and se their standard deviation over √Blocks, per component. The
// estimate is g·m, g = max(0, 1 − (Gate·se/|m|)²) per component: a
// persistent offset passes, residuals that average out within a block
// (the gait's) or wander from block to block do not.
//
// Rollout predicts as the model does and translates the base momenta of
// step k by Decay^(k−1)·d, d = (R_0ᵀ ŵ_lin, R_0ᵀ ŵ_ang) the estimate in the
// base frame of the latest observed sample (R_0 = I for WrenchBaseSE3,
// its roll and pitch for WrenchBaseGravity). The translation does not
// depend on the state, so each corrected step has the model's Jacobian
// and ε_J is unchanged.
//
// The live node and the evaluation (trainer.EvalOptions.Wrench) feed it
// the same way, with the origin coordinates of q zeroed
// (statemap.OriginCoordinates). A WrenchEstimator does not allocate after
// NewWrenchEstimator and is not safe for concurrent use.
type WrenchEstimator struct {
	s        Stepper
	cfg      WrenchEstimate
	base     WrenchBase
	n, ne    int
	ring     []float64 // Window × 6 residual impulses, each in its sample's base frame
	rots     []float64 // Window × 9: SE3: the rotation from the sample before (row major); gravity: roll, pitch, yaw change
	world    []float64 // Window × 6 scratch: the residuals in the world frame
	count    int       // residuals in the ring (≤ Window)
	next     int       // ring slot of the next residual
	one      oneStep
	rot      [9]float64 // the latest sample's base orientation in the world frame
	mean, se [6]float64
	gate     [6]float64
	est      [6]float64 // gated estimate, world frame, impulse per step
	blocks   []float64  // Blocks × 6 block means

	loopD     [6]float64 // RolloutLoop's translation
	loopScale float64    // RolloutLoop's decay factor of the next step
}

// NewWrenchEstimator wraps s, a model of n configuration coordinates (six
// of them the floating base, first) and ne port values.
func NewWrenchEstimator(s Stepper, n, ne int, base WrenchBase, cfg WrenchEstimate) (*WrenchEstimator, error) {
	if s == nil || n < 6 || ne < 0 {
		return nil, fmt.Errorf("predictor: wrench estimator needs a model of a floating base, n ≥ 6 and n_e ≥ 0 (n %d, n_e %d)", n, ne)
	}
	if base != WrenchBaseSE3 && base != WrenchBaseGravity {
		return nil, fmt.Errorf("predictor: wrench estimator needs a floating base (SE(3) or gravity-aware coordinates), not kind %d", base)
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	f := &WrenchEstimator{
		s: s, cfg: cfg, base: base, n: n, ne: ne,
		ring: make([]float64, cfg.Window*6), rots: make([]float64, cfg.Window*9), world: make([]float64, cfg.Window*6),
		one: newOneStep(s, "wrench estimator", n, ne), blocks: make([]float64, cfg.Blocks*6),
	}
	f.Reset()
	return f, nil
}

// Config returns the estimator's settings.
func (f *WrenchEstimator) Config() WrenchEstimate { return f.cfg }

// History returns the window (OffsetEstimator).
func (f *WrenchEstimator) History() int { return f.cfg.Window }

// Reset forgets every sample and residual: the next Observe starts a new
// history, and its base frame the world frame.
func (f *WrenchEstimator) Reset() {
	f.count, f.next = 0, 0
	f.one.reset()
	f.rot = [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	f.mean, f.se, f.gate, f.est = [6]float64{}, [6]float64{}, [6]float64{}, [6]float64{}
}

// Residuals returns how many residuals the window holds (≤ Window).
func (f *WrenchEstimator) Residuals() int { return f.count }

// Observe adds the measured sample x (2n values, q's origin coordinates
// zeroed) with its ports e (n_e values, held over the next dt), one dt
// after the previous sample. A non-finite value resets the history and is
// reported.
func (f *WrenchEstimator) Observe(x, e []float64) error {
	pred, err := f.one.predict(x, e)
	if err != nil {
		if !errors.Is(err, ErrLayout) {
			f.Reset()
		}
		return err
	}
	if pred != nil {
		slot := f.rots[f.next*9 : f.next*9+9]
		switch f.base {
		case WrenchBaseSE3:
			var d [9]float64
			expSO3(pred[3], pred[4], pred[5], &d)
			copy(slot, d[:])
		case WrenchBaseGravity:
			slot[0], slot[1], slot[2] = x[3], x[4], pred[5]
		}
		r := f.ring[f.next*6 : f.next*6+6]
		for j := range r {
			r[j] = x[f.n+j] - pred[f.n+j]
		}
		f.next = (f.next + 1) % f.cfg.Window
		f.count = min(f.count+1, f.cfg.Window)
		f.estimate()
	}
	if f.base == WrenchBaseGravity {
		f.rot = rpy(x[3], x[4], 0)
	}
	f.one.keep(x, e)
	return nil
}

// estimate sets mean, se, gate and est from the newest Blocks·⌊count/
// Blocks⌋ residuals, summed oldest first so that the bits depend only on
// the residuals.
func (f *WrenchEstimator) estimate() {
	B := f.cfg.Blocks
	L := f.count / B
	f.mean, f.se, f.gate, f.est = [6]float64{}, [6]float64{}, [6]float64{}, [6]float64{}
	if L == 0 {
		return
	}
	W := f.cfg.Window
	start := (f.next - B*L + W) % W
	// the residuals in the world frame, from the latest back: C is the
	// orientation of sample i's base in the world frame
	C := [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	var yaw float64 // gravity: the heading of sample i less the latest's
	for i := B*L - 1; i >= 0; i-- {
		k := (start + i) % W
		rs := f.rots[k*9 : k*9+9]
		if f.base == WrenchBaseGravity {
			C = rpy(rs[0], rs[1], yaw)
			yaw -= rs[2]
		}
		r, w := f.ring[k*6:k*6+6], f.world[k*6:k*6+6]
		rotate(&C, r[0:3], w[0:3], false)
		rotate(&C, r[3:6], w[3:6], false)
		if f.base == WrenchBaseSE3 {
			// the sample before: C·Dᵀ
			var D [9]float64
			copy(D[:], rs)
			C = mulT3(&C, &D)
		}
	}
	clear(f.blocks)
	invL := 1 / float64(L)
	for b := range B {
		bm := f.blocks[b*6 : b*6+6]
		for i := range L {
			r := f.world[((start+b*L+i)%W)*6:]
			for j := range bm {
				bm[j] += r[j]
			}
		}
		for j := range bm {
			bm[j] *= invL
			f.mean[j] += bm[j]
		}
	}
	invB := 1 / float64(B)
	for j := range f.mean {
		f.mean[j] *= invB
	}
	for b := range B {
		bm := f.blocks[b*6 : b*6+6]
		for j := range bm {
			d := bm[j] - f.mean[j]
			f.se[j] += d * d
		}
	}
	for j := range f.se {
		f.se[j] = math.Sqrt(f.se[j] / float64(B-1) / float64(B))
		m := math.Abs(f.mean[j])
		switch {
		case m == 0:
			f.gate[j] = 0
		case f.se[j] == 0:
			f.gate[j] = 1
		default:
			q := f.cfg.Gate * f.se[j] / m
			f.gate[j] = max(0, 1-q*q)
		}
		f.est[j] = f.gate[j] * f.mean[j]
	}
}

// WrenchState is a WrenchEstimator's estimate, in its world frame.
type WrenchState struct {
	// Impulse is the applied estimate, force then torque, per step
	// (N·s, N·m·s): divide by dt for newtons and newton-metres.
	Impulse [6]float64
	// Mean is the mean residual over the window before the gate, SE its
	// standard error (batch means), Gate the fraction of Mean applied.
	Mean, SE, Gate [6]float64
	// Rotation is the base orientation of the latest observed sample in
	// the estimate's world frame (row major): the identity for
	// WrenchBaseSE3, its roll and pitch for WrenchBaseGravity.
	Rotation [9]float64
	// Residuals is the number of residuals in the window.
	Residuals int
}

// State returns the current estimate.
func (f *WrenchEstimator) State() WrenchState {
	return WrenchState{Impulse: f.est, Mean: f.mean, SE: f.se, Gate: f.gate, Rotation: f.rot, Residuals: f.count}
}

// Translation writes into d the translation of the base momenta at the
// first predicted step (d in the base frame of the latest observed
// sample: (R_0ᵀ ŵ_lin, R_0ᵀ ŵ_ang)).
func (f *WrenchEstimator) Translation(d *[6]float64) {
	rotate(&f.rot, f.est[0:3], d[0:3], true)
	rotate(&f.rot, f.est[3:6], d[3:6], true)
}

// Rollout predicts x̂_1 … x̂_H from x0 under ports as the model does,
// translating the base momenta of step k by Decay^(k−1)·d (Translation).
// With no estimate yet it is the model's rollout, step by step.
func (f *WrenchEstimator) Rollout(x0, ports []float64, horizon int, out []float64) error {
	n2 := 2 * f.n
	if len(x0) != n2 || horizon < 0 || len(ports) < horizon*f.ne || len(out) < horizon*n2 {
		return fmt.Errorf("%w: wrench-corrected rollout of horizon %d with %d state, %d port and %d output values (state %d, ports %d)", ErrLayout, horizon, len(x0), len(ports), len(out), n2, f.ne)
	}
	var d [6]float64
	f.Translation(&d)
	apply := d != [6]float64{}
	prev := x0
	scale := 1.0
	for k := range horizon {
		next := out[k*n2 : (k+1)*n2]
		if err := f.s.Rollout(prev, ports[k*f.ne:(k+1)*f.ne], 1, next); err != nil {
			return err
		}
		if apply {
			for j, v := range d {
				next[f.n+j] += scale * v
			}
			scale *= f.cfg.Decay
		}
		prev = next
	}
	return nil
}

// rotate writes R v (or Rᵀ v with transpose) into out; R is row major.
func rotate(R *[9]float64, v, out []float64, transpose bool) {
	x, y, z := v[0], v[1], v[2]
	if transpose {
		out[0] = R[0]*x + R[3]*y + R[6]*z
		out[1] = R[1]*x + R[4]*y + R[7]*z
		out[2] = R[2]*x + R[5]*y + R[8]*z
		return
	}
	out[0] = R[0]*x + R[1]*y + R[2]*z
	out[1] = R[3]*x + R[4]*y + R[5]*z
	out[2] = R[6]*x + R[7]*y + R[8]*z
}

// mulT3 returns a·bᵀ (row major).
func mulT3(a, b *[9]float64) [9]float64 {
	var c [9]float64
	for i := range 3 {
		for j := range 3 {
			c[i*3+j] = a[i*3]*b[j*3] + a[i*3+1]*b[j*3+1] + a[i*3+2]*b[j*3+2]
		}
	}
	return c
}

// expSO3 writes the rotation of the rotation vector (x, y, z) into R
// (Rodrigues' formula, its Taylor series near zero).
func expSO3(x, y, z float64, R *[9]float64) {
	t2 := x*x + y*y + z*z
	var a, b float64 // sin θ/θ, (1 − cos θ)/θ²
	if t2 < 1e-8 {
		a, b = 1-t2/6, 0.5-t2/24
	} else {
		t := math.Sqrt(t2)
		a, b = math.Sin(t)/t, (1-math.Cos(t))/t2
	}
	*R = [9]float64{
		1 - b*(y*y+z*z), b*x*y - a*z, b*x*z + a*y,
		b*x*y + a*z, 1 - b*(x*x+z*z), b*y*z - a*x,
		b*x*z - a*y, b*y*z + a*x, 1 - b*(x*x+y*y),
	}
}

// rpy returns Rz(yaw)·Ry(pitch)·Rx(roll) (row major).
func rpy(roll, pitch, yaw float64) [9]float64 {
	sr, cr := math.Sincos(roll)
	sp, cp := math.Sincos(pitch)
	sy, cy := math.Sincos(yaw)
	return [9]float64{
		cy * cp, cy*sp*sr - sy*cr, cy*sp*cr + sy*sr,
		sy * cp, sy*sp*sr + cy*cr, sy*sp*cr - cy*sr,
		-sp, cp * sr, cp * cr,
	}
}
