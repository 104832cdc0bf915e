package predictor

import (
	"errors"
	"fmt"
	"math"
)

// Stepper is an autoregressive one-step model: from x0 (2n values) under
// ports (horizon × n_e) it writes x̂_1 … x̂_H into out. Roller and the
// trainer's MLP are Steppers.
type Stepper interface {
	Rollout(x0, ports []float64, horizon int, out []float64) error
}

// ForceEstimate configures offset-free prediction (ForceEstimator): the
// model's recent one-step momentum residuals estimate a generalised force
// that no input carries (a push, a payload, an unmodelled friction), and
// the rollout adds it back, fading.
type ForceEstimate struct {
	// Window is the number of most recent residuals averaged (default 10).
	Window int `json:"window" yaml:"window"`
	// Decay multiplies the estimate at every predicted step: step k = 1 … H
	// adds Decay^(k−1) times the mean residual to p (1 holds it; 0 is
	// unset, and Defaults makes it 0.9).
	Decay float64 `json:"decay" yaml:"decay"`
}

// Defaults fills unset fields: a window of 10 residuals, decay 0.9.
func (c *ForceEstimate) Defaults() {
	if c.Window == 0 {
		c.Window = 10
	}
	if c.Decay == 0 {
		c.Decay = 0.9
	}
}

// Check reports settings the estimator cannot use.
func (c ForceEstimate) Check() error {
	if c.Window < 1 || c.Window > 10000 {
		return fmt.Errorf("predictor: force estimate window %d: want 1 … 10000 residuals", c.Window)
	}
	if !(c.Decay >= 0 && c.Decay <= 1) {
		return fmt.Errorf("predictor: force estimate decay %v: want a factor in [0, 1]", c.Decay)
	}
	return nil
}

// String describes the settings ("window 10, decay 0.9").
func (c ForceEstimate) String() string {
	return fmt.Sprintf("window %d, decay %g", c.Window, c.Decay)
}

// ErrNotFinite reports a state or port with a NaN or infinite value.
var ErrNotFinite = errors.New("predictor: value is not finite")

// ForceEstimator makes a Stepper offset-free. Observe feeds it the measured
// samples x_t, e_t one dt apart; each one after the first leaves the
// residual r_t = p_t − p̂_t of the model's one-step prediction p̂_t from
// x_{t−1} under e_{t−1}. Rollout then predicts as the model does and adds
// Decay^(k−1)·d to the momenta of step k, d the mean of the last Window
// residuals (zero before the first): an impulse per step, the generalised
// force d/dt.
//
// A translation of p is symplectic, so the corrected map stays exactly
// symplectic (its Jacobian is the model's). The live node and the
// evaluation (trainer.EvalOptions.Force) feed it the same way, with the
// position and heading coordinates of q zeroed (statemap.OriginCoordinates):
// the one-step predictions start where a rollout starts, at q = 0.
//
// A ForceEstimator does not allocate after NewForceEstimator and is not
// safe for concurrent use.
type ForceEstimator struct {
	s     Stepper
	cfg   ForceEstimate
	n, ne int
	ring  []float64 // Window × n residuals
	count int       // residuals in the ring (≤ Window)
	next  int       // ring slot of the next residual
	one   oneStep
	off   []float64 // n: the current mean residual

	loopScale float64 // RolloutLoop's decay factor of the next step
}

// NewForceEstimator wraps s, a model of n configuration coordinates and ne
// port values.
func NewForceEstimator(s Stepper, n, ne int, cfg ForceEstimate) (*ForceEstimator, error) {
	if s == nil || n < 1 || ne < 0 {
		return nil, fmt.Errorf("predictor: force estimator needs a model, n ≥ 1 and n_e ≥ 0 (n %d, n_e %d)", n, ne)
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return &ForceEstimator{
		s: s, cfg: cfg, n: n, ne: ne,
		ring: make([]float64, cfg.Window*n),
		one:  newOneStep(s, "force estimator", n, ne), off: make([]float64, n),
	}, nil
}

// Config returns the estimator's settings.
func (f *ForceEstimator) Config() ForceEstimate { return f.cfg }

// Reset forgets every sample and residual: the next Observe starts a new
// history (after a gap in the samples).
func (f *ForceEstimator) Reset() {
	f.count, f.next = 0, 0
	f.one.reset()
	clear(f.off)
}

// Residuals returns how many residuals the estimate averages (≤ Window).
func (f *ForceEstimator) Residuals() int { return f.count }

// Observe adds the measured sample x (2n values, q's origin coordinates
// zeroed) with its ports e (n_e values, held over the next dt), one dt
// after the previous sample. A non-finite value resets the history and is
// reported.
func (f *ForceEstimator) Observe(x, e []float64) error {
	pred, err := f.one.predict(x, e)
	if err != nil {
		if !errors.Is(err, ErrLayout) {
			f.Reset()
		}
		return err
	}
	if pred != nil {
		r := f.ring[f.next*f.n : (f.next+1)*f.n]
		for j := range r {
			r[j] = x[f.n+j] - pred[f.n+j]
		}
		if !finite(r) {
			f.Reset()
			return fmt.Errorf("%w: force estimator one-step prediction", ErrNotFinite)
		}
		f.next = (f.next + 1) % f.cfg.Window
		f.count = min(f.count+1, f.cfg.Window)
		f.mean()
	}
	f.one.keep(x, e)
	return nil
}

// mean sets off to the mean of the residuals in the ring, summed oldest
// first so that the bits depend only on the residuals.
func (f *ForceEstimator) mean() {
	clear(f.off)
	start := (f.next - f.count + f.cfg.Window) % f.cfg.Window
	for i := range f.count {
		r := f.ring[((start+i)%f.cfg.Window)*f.n:]
		for j := range f.off {
			f.off[j] += r[j]
		}
	}
	inv := 1 / float64(max(f.count, 1))
	for j := range f.off {
		f.off[j] *= inv
	}
}

// Offset copies the current estimate d (n momentum values: the impulse per
// step; d/dt is the generalised force) into dst and returns it.
func (f *ForceEstimator) Offset(dst []float64) []float64 {
	return append(dst[:0], f.off...)
}

// Rollout predicts x̂_1 … x̂_H from x0 under ports as the model does, adding
// Decay^(k−1)·d to the momenta of step k. With no residual yet it is the
// model's rollout, step by step.
func (f *ForceEstimator) Rollout(x0, ports []float64, horizon int, out []float64) error {
	n2 := 2 * f.n
	if len(x0) != n2 || horizon < 0 || len(ports) < horizon*f.ne || len(out) < horizon*n2 {
		return fmt.Errorf("%w: force-corrected rollout of horizon %d with %d state, %d port and %d output values (state %d, ports %d)", ErrLayout, horizon, len(x0), len(ports), len(out), n2, f.ne)
	}
	prev := x0
	scale := 1.0
	for k := range horizon {
		next := out[k*n2 : (k+1)*n2]
		if err := f.s.Rollout(prev, ports[k*f.ne:(k+1)*f.ne], 1, next); err != nil {
			return err
		}
		if f.count > 0 {
			for j, d := range f.off {
				next[f.n+j] += scale * d
			}
			scale *= f.cfg.Decay
		}
		prev = next
	}
	return nil
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
