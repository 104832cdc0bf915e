package forecast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Learned is a learned Policy: the measured ports of step k regressed on
// the state reached x_k, the initial state x_0 and the initial measured
// ports m_0, z = (x_k, x_0, m_0). z is standardised per value (InMean,
// InScale), and the features are 1, the standardised z and Features
// random tanh features tanh(R z̃ + b); the ports are W times them,
// unstandardised (OutMean, OutScale). A state-feedback law with the
// initial ports as its memory: a controller's PD law on a target the
// initial torque reveals, contact forces from the legs' configuration.
// It reads its own forecasts only through the state, so it does not
// drift as an autoregression of its own output does.
//
// With Steps > 0 the policy is direct instead: z = (x_0, m_0) only, and W
// holds one map per step k = 1 … Steps (the ports of later steps are step
// Steps'): the conditional mean of the coming ports given the start, open
// loop, which no state the rollout reaches can drive off.
//
// trainer.FitForecaster estimates W by ridge regression (R and b are
// drawn from Seed). A Learned does not allocate in Begin and Next and is
// not safe for concurrent use (Clone gives each goroutine its own).
type Learned struct {
	// N is the model's configuration coordinates (the state has 2N).
	N int `json:"n"`
	// Measured is the number of measured ports forecast.
	Measured int `json:"measured"`
	// Features is the number of random tanh features.
	Features int `json:"features"`
	// Seed draws R and b.
	Seed uint64 `json:"seed"`
	// Steps is the number of steps of a direct policy (0: state feedback).
	Steps int `json:"steps,omitempty"`
	// InMean, InScale standardise z (Inputs values).
	InMean  []float64 `json:"in_mean"`
	InScale []float64 `json:"in_scale"`
	// OutMean, OutScale unstandardise the ports (Measured values).
	OutMean  []float64 `json:"out_mean"`
	OutScale []float64 `json:"out_scale"`
	// R (Features × len(z)) and B (Features) are the random features'.
	R []float64 `json:"r"`
	B []float64 `json:"b"`
	// W (Measured × (1 + len(z) + Features), or Steps × Measured rows
	// of a direct policy, step 1's first) maps the features to the
	// standardised ports.
	W []float64 `json:"w"`

	z, phi []float64 // scratch: z, the features
	x0, m0 []float64 // the prediction's start
}

// inputs returns len(z).
func (l *Learned) inputs() int {
	if l.Steps > 0 {
		return DirectInputs(l.N, l.Measured)
	}
	return Inputs(l.N, l.Measured)
}

// rows returns W's rows.
func (l *Learned) rows() int { return max(l.Steps, 1) * l.Measured }

// Inputs returns the length of z = (x_k, x_0, m_0) for n configuration
// coordinates and nm measured ports.
func Inputs(n, nm int) int { return 4*n + nm }

// DirectInputs returns the length of a direct policy's z = (x_0, m_0).
func DirectInputs(n, nm int) int { return 2*n + nm }

// NewDirect is NewLearned for a direct policy of steps steps.
func NewDirect(n, nm, steps, features int, seed uint64, inMean, inScale, outMean, outScale []float64) *Learned {
	return newLearned(&Learned{N: n, Measured: nm, Steps: steps, Features: features, Seed: seed}, inMean, inScale, outMean, outScale)
}

// NewLearned returns a policy of n coordinates and nm measured ports with
// the standardisation given and features random tanh features drawn from
// seed, and zero weights (SetWeights sets them).
func NewLearned(n, nm, features int, seed uint64, inMean, inScale, outMean, outScale []float64) *Learned {
	return newLearned(&Learned{N: n, Measured: nm, Features: features, Seed: seed}, inMean, inScale, outMean, outScale)
}

func newLearned(l *Learned, inMean, inScale, outMean, outScale []float64) *Learned {
	features, seed := l.Features, l.Seed
	l.InMean, l.InScale, l.OutMean, l.OutScale = slices.Clone(inMean), slices.Clone(inScale), slices.Clone(outMean), slices.Clone(outScale)
	ni := l.inputs()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	l.R, l.B = make([]float64, features*ni), make([]float64, features)
	sd := 1 / math.Sqrt(float64(ni))
	for i := range l.R {
		l.R[i] = rng.NormFloat64() * sd
	}
	for i := range l.B {
		l.B[i] = 2*rng.Float64() - 1
	}
	l.W = make([]float64, l.rows()*l.Cols())
	l.init()
	return l
}

// SetWeights sets W (Measured × Cols values, row major; Steps times as
// many for a direct policy) and checks the policy.
func (l *Learned) SetWeights(w []float64) error {
	if len(w) != len(l.W) {
		return fmt.Errorf("forecast: %d weights for %d rows × %d features", len(w), l.rows(), l.Cols())
	}
	copy(l.W, w)
	return l.check()
}

// Cols returns the number of features (W's columns).
func (l *Learned) Cols() int { return 1 + l.inputs() + l.Features }

// check reports arrays that do not fit the sizes.
func (l *Learned) check() error {
	ni := l.inputs()
	switch {
	case l.N < 1 || l.Measured < 1 || l.Features < 0 || l.Features > MaxFeatures || l.Steps < 0 || l.Steps > maxSteps:
		return fmt.Errorf("forecast: learned policy of n = %d, %d measured ports, %d features and %d direct steps", l.N, l.Measured, l.Features, l.Steps)
	case len(l.InMean) != ni || len(l.InScale) != ni:
		return fmt.Errorf("forecast: learned policy: %d and %d input standardisation values for %d inputs", len(l.InMean), len(l.InScale), ni)
	case len(l.OutMean) != l.Measured || len(l.OutScale) != l.Measured:
		return fmt.Errorf("forecast: learned policy: %d and %d output standardisation values for %d ports", len(l.OutMean), len(l.OutScale), l.Measured)
	case len(l.R) != l.Features*ni || len(l.B) != l.Features:
		return fmt.Errorf("forecast: learned policy: random features of %d and %d values for %d features of %d inputs", len(l.R), len(l.B), l.Features, ni)
	case len(l.W) != l.rows()*l.Cols():
		return fmt.Errorf("forecast: learned policy: %d weights for %d rows × %d features", len(l.W), l.rows(), l.Cols())
	}
	for _, v := range [][]float64{l.InMean, l.InScale, l.OutMean, l.OutScale, l.R, l.B, l.W} {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("forecast: learned policy holds a value that is not finite")
			}
		}
	}
	for i, s := range l.InScale {
		if !(s > 0) {
			return fmt.Errorf("forecast: learned policy: input scale %d is %v, want > 0", i, s)
		}
	}
	return nil
}

// MaxFeatures bounds the random features of a policy, maxSteps a direct
// policy's steps.
const (
	MaxFeatures = 1 << 14
	maxSteps    = 1 << 12
)

// init allocates the scratch.
func (l *Learned) init() {
	l.z, l.phi = make([]float64, l.inputs()), make([]float64, l.Cols())
	l.x0, l.m0 = make([]float64, 2*l.N), make([]float64, l.Measured)
}

// Clone returns an independent copy sharing the read-only weights.
func (l *Learned) Clone() *Learned {
	c := *l
	c.init()
	return &c
}

// Begin implements Policy.
func (l *Learned) Begin(x0, m0 []float64) {
	copy(l.x0, x0)
	copy(l.m0, m0)
	if l.Steps > 0 {
		copy(l.z, x0)
		copy(l.z[2*l.N:], m0)
		l.Featurize(l.z, l.phi)
	}
}

// Next implements Policy.
func (l *Learned) Next(k int, x, _, out []float64) {
	if l.Steps > 0 {
		l.apply(min(max(k, 1), l.Steps)-1, out)
		return
	}
	n2 := 2 * l.N
	copy(l.z[:n2], x)
	copy(l.z[n2:2*n2], l.x0)
	copy(l.z[2*n2:], l.m0)
	l.Featurize(l.z, l.phi)
	l.apply(0, out)
}

// apply writes the ports of W's block r (a direct policy's step r+1) from
// the features in phi.
func (l *Learned) apply(r int, out []float64) {
	nc, nm := l.Cols(), l.Measured
	for i := range nm {
		w := l.W[(r*nm+i)*nc : (r*nm+i+1)*nc]
		var s float64
		for j, f := range l.phi {
			s += w[j] * f
		}
		out[i] = l.OutMean[i] + l.OutScale[i]*s
	}
}

// Featurize writes 1, the standardised z and the random features of z
// into phi (Cols values; z, of 4N + Measured values, is standardised in
// place).
func (l *Learned) Featurize(z, phi []float64) {
	for j := range z {
		z[j] = (z[j] - l.InMean[j]) / l.InScale[j]
	}
	phi[0] = 1
	copy(phi[1:], z)
	ni := len(z)
	rf := phi[1+ni:]
	for f := range rf {
		r := l.R[f*ni : (f+1)*ni]
		s := l.B[f]
		for j, v := range z {
			s += r[j] * v
		}
		rf[f] = math.Tanh(s)
	}
}
