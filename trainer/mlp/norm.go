package mlp

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Norm holds the fixed normalisation buffers: per-channel means and
// standard deviations of the states (MuX, SX, length StateDim) and ports
// (MuE, SE, length PortDim), and the per-channel standard deviation of the
// one-step difference x_{t+1} − x_t (SDelta, length StateDim). Scales must
// be positive and finite.
type Norm struct {
	MuX    []float64 `json:"mu_x"`
	SX     []float64 `json:"s_x"`
	MuE    []float64 `json:"mu_e"`
	SE     []float64 `json:"s_e"`
	SDelta []float64 `json:"s_delta"`
}

// MinScale is the floor below which ComputeNorm treats a channel as
// constant and uses scale 1.
const MinScale = 1e-8

// IdentityNorm returns zero means and unit scales.
func IdentityNorm(stateDim, portDim int) Norm {
	ones := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	return Norm{MuX: make([]float64, stateDim), SX: ones(stateDim), MuE: make([]float64, portDim), SE: ones(portDim), SDelta: ones(stateDim)}
}

// ComputeNorm estimates the buffers from N transitions given as row-major
// N×nx states x, N×ne ports e and N×nx successor states xnext (population
// statistics, FP64, two-pass). Channels with spread below MinScale get
// scale 1.
func ComputeNorm(x, e, xnext []float64, nx, ne int) (Norm, error) {
	if nx <= 0 || ne < 0 || len(x)%nx != 0 {
		return Norm{}, fmt.Errorf("%w: %d state values for state dimension %d", ErrModel, len(x), nx)
	}
	n := len(x) / nx
	if n < 2 || len(xnext) != len(x) || len(e) != n*ne {
		return Norm{}, fmt.Errorf("%w: %d transitions with %d port and %d successor values (need ≥ 2 transitions)", ErrModel, n, len(e), len(xnext))
	}
	delta := make([]float64, len(x))
	for i := range x {
		delta[i] = xnext[i] - x[i]
	}
	nm := Norm{}
	nm.MuX, nm.SX = colStats(x, n, nx)
	nm.MuE, nm.SE = colStats(e, n, ne)
	_, nm.SDelta = colStats(delta, n, nx)
	return nm, nil
}

// colStats returns the column means and standard deviations of an n×w
// row-major matrix, flooring tiny deviations to 1.
func colStats(a []float64, n, w int) (mu, sd []float64) {
	mu, sd = make([]float64, w), make([]float64, w)
	for r := range n {
		for j, v := range a[r*w : (r+1)*w] {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	for r := range n {
		for j, v := range a[r*w : (r+1)*w] {
			d := v - mu[j]
			sd[j] += d * d
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / float64(n))
		if !(sd[j] >= MinScale) {
			sd[j] = 1
		}
	}
	return mu, sd
}

func (n Norm) validate(nx, ne int) error {
	if len(n.MuX) != nx || len(n.SX) != nx || len(n.SDelta) != nx || len(n.MuE) != ne || len(n.SE) != ne {
		return fmt.Errorf("%w: normalisation of lengths mu_x %d, s_x %d, s_delta %d, mu_e %d, s_e %d for state %d, ports %d",
			ErrModel, len(n.MuX), len(n.SX), len(n.SDelta), len(n.MuE), len(n.SE), nx, ne)
	}
	check := func(name string, v []float64, scale bool) error {
		for i, s := range v {
			if math.IsNaN(s) || math.IsInf(s, 0) || scale && s <= 0 {
				return fmt.Errorf("%w: norm.%s[%d] = %v", ErrModel, name, i, s)
			}
		}
		return nil
	}
	return errors.Join(check("mu_x", n.MuX, false), check("s_x", n.SX, true), check("mu_e", n.MuE, false),
		check("s_e", n.SE, true), check("s_delta", n.SDelta, true))
}

func (n Norm) clone() Norm {
	return Norm{MuX: slices.Clone(n.MuX), SX: slices.Clone(n.SX), MuE: slices.Clone(n.MuE), SE: slices.Clone(n.SE), SDelta: slices.Clone(n.SDelta)}
}

// named returns the buffers by their serialisation names.
func (n Norm) named() map[string][]float64 {
	return map[string][]float64{"norm.mu_x": n.MuX, "norm.s_x": n.SX, "norm.mu_e": n.MuE, "norm.s_e": n.SE, "norm.s_delta": n.SDelta}
}

// fields returns pointers to the buffers by their serialisation names.
func (n *Norm) fields() map[string]*[]float64 {
	return map[string]*[]float64{"norm.mu_x": &n.MuX, "norm.s_x": &n.SX, "norm.mu_e": &n.MuE, "norm.s_e": &n.SE, "norm.s_delta": &n.SDelta}
}
