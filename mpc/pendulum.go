package mpc

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/mechanics"
)

// PendulumModel is the simulated double pendulum with its true dynamics:
// a step is the simulator's zero-order-hold step (mechanics.ZOHStep,
// DOP853 at the configuration's tolerances) from x = (q1, q2, p1, p2)
// under the torques u = (u1, u2) held for cfg.Dt. As a Linearizer its
// Jacobians are central differences of that step, which is how the same
// controller runs "on the true model". It does not allocate after
// NewPendulumModel; it is not safe for concurrent use.
type PendulumModel struct {
	cfg    mechanics.SimConfig
	solver mechanics.DOP853
	y      []float64
	xp, xm []float64
	up, um [2]float64
	outP   []float64
	outM   []float64
	// Eps is the relative finite-difference step (default 1e-6).
	Eps float64
}

// NewPendulumModel returns the true pendulum of the configuration.
func NewPendulumModel(cfg mechanics.SimConfig) (*PendulumModel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &PendulumModel{cfg: cfg, y: make([]float64, 4), xp: make([]float64, 4), xm: make([]float64, 4),
		outP: make([]float64, 4), outM: make([]float64, 4), Eps: 1e-6}, nil
}

// Dims returns 4 states and 2 torques.
func (m *PendulumModel) Dims() (stateDim, portDim int) { return 4, 2 }

// Step advances x by one sample interval under the torques u into next.
func (m *PendulumModel) Step(x, u, next []float64) error {
	if len(x) != 4 || len(u) != 2 || len(next) != 4 {
		return fmt.Errorf("%w: pendulum step with %d states, %d torques, %d outputs", ErrConfig, len(x), len(u), len(next))
	}
	copy(m.y, x)
	if err := mechanics.ZOHStep(&m.cfg, &m.solver, 0, m.y, [2]float64{u[0], u[1]}); err != nil {
		return err
	}
	copy(next, m.y)
	return nil
}

// Linearize writes the step and its central-difference Jacobians; a
// failed integration (a state the simulator cannot integrate) writes NaN.
func (m *PendulumModel) Linearize(x, e, next, fx, fe []float64) {
	if len(fx) != 16 || len(fe) != 8 {
		panic(fmt.Sprintf("mpc: pendulum Linearize with %d and %d Jacobian entries, want 16 and 8", len(fx), len(fe)))
	}
	if err := m.Step(x, e, next); err != nil {
		for i := range next {
			next[i] = math.NaN()
		}
		return
	}
	for c := range 6 {
		var h float64
		copy(m.xp, x)
		copy(m.xm, x)
		m.up, m.um = [2]float64{e[0], e[1]}, [2]float64{e[0], e[1]}
		if c < 4 {
			h = m.Eps * math.Max(1, math.Abs(x[c]))
			m.xp[c] += h
			m.xm[c] -= h
		} else {
			h = m.Eps * math.Max(1, math.Abs(e[c-4]))
			m.up[c-4] += h
			m.um[c-4] -= h
		}
		errP := m.Step(m.xp, m.up[:], m.outP)
		errM := m.Step(m.xm, m.um[:], m.outM)
		for r := range 4 {
			v := (m.outP[r] - m.outM[r]) / (2 * h)
			if errP != nil || errM != nil {
				v = math.NaN()
			}
			if c < 4 {
				fx[r*4+c] = v
			} else {
				fe[r*2+c-4] = v
			}
		}
	}
}
