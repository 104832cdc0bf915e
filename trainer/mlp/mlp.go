// Package mlp implements the multilayer-perceptron baseline with the same
// Markovian interface as the symplectic predictor: from the state
// x_t = (q, p) ∈ R^{2n} and the ports e_t ∈ R^{n_u+n_c} it predicts x_{t+1}
// by a residual on normalised inputs,
//
//	x̂_{t+1} = x_t + σ_Δ ⊙ f_θ(z),  z = ((x_t − μ_x)/s_x, (e_t − μ_e)/s_e),
//
// where μ, s are per-channel means and standard deviations of the data and
// σ_Δ the per-channel standard deviation of the one-step difference
// x_{t+1} − x_t. These are fixed buffers (Norm), not trained. f_θ is a
// fully connected network with tanh hidden layers (tanh as in the paper's
// GR-SympNet, smooth and bounded) and a linear output layer.
//
// Parameters live in one flat FP64 vector, layer by layer, each layer's
// weight matrix (out×in, row-major, the torch convention) followed by its
// bias. Batches are row-major N×width matrices; dense layers use gonum's
// blas64.Gemm.
package mlp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/predictor/kernel"
	"github.com/calisym/calisym/trainer/optim"
)

// ErrModel wraps every problem found in a configuration, a normalisation
// or serialised weights.
var ErrModel = errors.New("mlp: bad model")

// Config is the architecture of an MLP.
type Config struct {
	// StateDim is 2n, the length of x = (q, p).
	StateDim int `json:"state_dim"`
	// PortDim is n_u + n_c, the length of the port vector e.
	PortDim int `json:"port_dim"`
	// Hidden lists the widths of the tanh hidden layers.
	Hidden []int `json:"hidden"`
}

// In returns the input width StateDim + PortDim.
func (c Config) In() int { return c.StateDim + c.PortDim }

// Widths returns the layer widths from input to output:
// In, Hidden..., StateDim.
func (c Config) Widths() []int {
	w := append([]int{c.In()}, c.Hidden...)
	return append(w, c.StateDim)
}

// Validate checks the dimensions.
func (c Config) Validate() error {
	if c.StateDim <= 0 || c.PortDim < 0 {
		return fmt.Errorf("%w: state dimension %d, port dimension %d", ErrModel, c.StateDim, c.PortDim)
	}
	for i, h := range c.Hidden {
		if h <= 0 {
			return fmt.Errorf("%w: hidden layer %d has width %d", ErrModel, i, h)
		}
	}
	return nil
}

// NumParams returns the number of trained parameters:
// Σ_l (in_l·out_l + out_l).
func (c Config) NumParams() int {
	w := c.Widths()
	n := 0
	for l := 1; l < len(w); l++ {
		n += w[l-1]*w[l] + w[l]
	}
	return n
}

// layer is one dense layer; w (out×in) and b (out) are views into theta.
type layer struct {
	in, out    int
	wOff, bOff int // offsets of w and b in theta
	w, b       []float64
}

// MLP is the baseline model. Forward and Backward are safe for concurrent
// use with distinct Workspaces as long as the parameters are not being
// changed; Step and Rollout use scratch buffers held by the MLP and must
// not be called concurrently on the same MLP.
type MLP struct {
	cfg    Config
	theta  []float64
	grad   []float64
	layers []layer
	blocks []predictor.ParamBlock
	norm   Norm
	// derived from norm: 1/s_x, 1/s_e
	invSX, invSE []float64
	// Step scratch: three buffers of the widest layer (s2 takes the sech²
	// Step does not use).
	s0, s1, s2 []float64
	// ones are the unit gains of the tanh layers (kernel.TanhSech2's a).
	ones []float64
}

// New returns an MLP with the torch default initialisation of nn.Linear
// (weights and biases uniform in ±1/√in) drawn from rng, and the identity
// normalisation (zero means, unit scales). It panics if cfg is invalid;
// use cfg.Validate first for untrusted configurations.
func New(cfg Config, rng *rand.Rand) *MLP {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := alloc(cfg)
	for _, L := range m.layers {
		bound := 1 / math.Sqrt(float64(L.in))
		for i := range L.w {
			L.w[i] = bound * (2*rng.Float64() - 1)
		}
		for i := range L.b {
			L.b[i] = bound * (2*rng.Float64() - 1)
		}
	}
	return m
}

// alloc builds a zero-parameter MLP with identity normalisation.
func alloc(cfg Config) *MLP {
	cfg.Hidden = slices.Clone(cfg.Hidden)
	n := cfg.NumParams()
	m := &MLP{cfg: cfg, theta: make([]float64, n), grad: make([]float64, n)}
	w := cfg.Widths()
	off, widest := 0, 0
	for l := 1; l < len(w); l++ {
		in, out := w[l-1], w[l]
		widest = max(widest, in, out)
		nw := in * out
		m.layers = append(m.layers, layer{in: in, out: out,
			wOff: off, bOff: off + nw,
			w: m.theta[off : off+nw : off+nw], b: m.theta[off+nw : off+nw+out : off+nw+out]})
		m.blocks = append(m.blocks,
			predictor.ParamBlock{Name: fmt.Sprintf("layers.%d.weight", l-1), Rows: out, Cols: in, Offset: off},
			predictor.ParamBlock{Name: fmt.Sprintf("layers.%d.bias", l-1), Rows: out, Cols: 1, Offset: off + nw})
		off += nw + out
	}
	m.s0, m.s1, m.s2, m.ones = make([]float64, widest), make([]float64, widest), make([]float64, widest), make([]float64, widest)
	for i := range m.ones {
		m.ones[i] = 1
	}
	if err := m.SetNorm(IdentityNorm(cfg.StateDim, cfg.PortDim)); err != nil {
		panic(err) // unreachable: the identity normalisation is valid
	}
	return m
}

// Config returns a copy of the architecture.
func (m *MLP) Config() Config {
	c := m.cfg
	c.Hidden = slices.Clone(c.Hidden)
	return c
}

// NumParams returns the number of trained parameters.
func (m *MLP) NumParams() int { return len(m.theta) }

// Theta returns the flat parameter vector (a view, not a copy).
func (m *MLP) Theta() []float64 { return m.theta }

// Grad returns the model's own flat gradient vector (a view), the one the
// tensors of Params point into. Backward accumulates into whatever slice it
// is given; pass Grad() to use this one.
func (m *MLP) Grad() []float64 { return m.grad }

// ParamBlocks describes the parameter blocks of Theta in order:
// "layers.<l>.weight" (out×in) then "layers.<l>.bias" (out×1).
func (m *MLP) ParamBlocks() []predictor.ParamBlock { return slices.Clone(m.blocks) }

// Params returns the parameter blocks as optimiser tensors viewing Theta
// and Grad.
func (m *MLP) Params() []optim.Tensor {
	ts, err := optim.Bind(m.theta, m.grad, m.blocks)
	if err != nil {
		panic(err) // unreachable: the layout is built by alloc
	}
	return ts
}

// Norm returns a copy of the normalisation buffers.
func (m *MLP) Norm() Norm { return m.norm.clone() }

// SetNorm installs normalisation buffers (copied).
func (m *MLP) SetNorm(n Norm) error {
	if err := n.validate(m.cfg.StateDim, m.cfg.PortDim); err != nil {
		return err
	}
	m.norm = n.clone()
	m.invSX = make([]float64, len(n.SX))
	for i, s := range n.SX {
		m.invSX[i] = 1 / s
	}
	m.invSE = make([]float64, len(n.SE))
	for i, s := range n.SE {
		m.invSE[i] = 1 / s
	}
	return nil
}

// FLOPsByOp counts the floating-point operations of one Step by operator:
// "normalise" 2 per input channel (subtract, scale), "dense" 2·in·out per
// layer (multiply-add), "bias" out per layer, "tanh" one per hidden unit,
// "residual" 2 per state channel (scale by σ_Δ, add x_t).
func (m *MLP) FLOPsByOp() map[string]int {
	f := map[string]int{"normalise": 2 * m.cfg.In(), "residual": 2 * m.cfg.StateDim}
	for i, L := range m.layers {
		f["dense"] += 2 * L.in * L.out
		f["bias"] += L.out
		if i < len(m.layers)-1 {
			f["tanh"] += L.out
		}
	}
	return f
}

// FLOPs returns the total floating-point operations of one Step (the sum
// of FLOPsByOp).
func (m *MLP) FLOPs() int {
	n := 0
	for _, v := range m.FLOPsByOp() {
		n += v
	}
	return n
}

// Step predicts x_{t+1} = xnext from x_t = x (StateDim) and e_t = e
// (PortDim) without allocating. xnext may alias x. It panics on wrong
// lengths.
func (m *MLP) Step(x, e, xnext []float64) {
	nx, ne := m.cfg.StateDim, m.cfg.PortDim
	if len(x) != nx || len(e) != ne || len(xnext) != nx {
		panic(fmt.Sprintf("mlp: Step with len(x)=%d, len(e)=%d, len(xnext)=%d; want %d, %d, %d", len(x), len(e), len(xnext), nx, ne, nx))
	}
	a, h := m.s0, m.s1
	m.normalize(x, e, a[:nx+ne])
	last := len(m.layers) - 1
	for l, L := range m.layers {
		out := h[:L.out]
		kernel.MatVec(L.out, L.in, L.w, L.in, a, out)
		if l < last {
			kernel.TanhSech2(1, L.out, out, L.out, L.b, m.ones[:L.out], out, L.out, m.s2[:L.out], L.out)
		} else {
			for i, b := range L.b {
				out[i] += b
			}
		}
		a, h = h, a
	}
	for i := range nx {
		xnext[i] = x[i] + m.norm.SDelta[i]*a[i]
	}
}

// normalize writes the network input z = ((x − μ_x)/s_x, (e − μ_e)/s_e).
func (m *MLP) normalize(x, e, z []float64) {
	nx := len(x)
	for i, v := range x {
		z[i] = (v - m.norm.MuX[i]) * m.invSX[i]
	}
	for i, v := range e {
		z[nx+i] = (v - m.norm.MuE[i]) * m.invSE[i]
	}
}

// Rollout predicts autoregressively from x0 (StateDim): for k = 0 …
// horizon−1, out row k (row-major horizon×StateDim) is x̂_{k+1} computed
// from x̂_k (x̂_0 = x0) and ports row k (row-major horizon×PortDim).
func (m *MLP) Rollout(x0, ports []float64, horizon int, out []float64) error {
	nx, ne := m.cfg.StateDim, m.cfg.PortDim
	if len(x0) != nx || horizon < 0 || len(ports) < horizon*ne || len(out) < horizon*nx {
		return fmt.Errorf("mlp: rollout of horizon %d with len(x0)=%d, len(ports)=%d, len(out)=%d (state %d, ports %d)", horizon, len(x0), len(ports), len(out), nx, ne)
	}
	prev := x0
	for k := range horizon {
		next := out[k*nx : (k+1)*nx]
		m.Step(prev, ports[k*ne:(k+1)*ne], next)
		prev = next
	}
	return nil
}

// Export returns the configuration as JSON and every parameter and
// normalisation buffer by name: the ParamBlocks names (row-major) and
// "norm.mu_x", "norm.s_x", "norm.mu_e", "norm.s_e", "norm.s_delta".
func (m *MLP) Export() (cfg []byte, weights map[string][]float64, err error) {
	cfg, err = json.Marshal(m.cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("mlp: encoding config: %w", err)
	}
	weights = make(map[string][]float64, len(m.blocks)+5)
	for _, s := range m.blocks {
		weights[s.Name] = slices.Clone(m.theta[s.Offset : s.Offset+s.Rows*s.Cols])
	}
	for k, v := range m.norm.named() {
		weights[k] = slices.Clone(v)
	}
	return cfg, weights, nil
}

// Load rebuilds an MLP from the output of Export. Every named block must be
// present with the right length; unknown names are an error.
func Load(cfg []byte, weights map[string][]float64) (*MLP, error) {
	var c Config
	if err := json.Unmarshal(cfg, &c); err != nil {
		return nil, fmt.Errorf("%w: decoding config: %w", ErrModel, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	m := alloc(c)
	want := len(m.blocks) + 5
	if len(weights) != want {
		return nil, fmt.Errorf("%w: %d weight blocks, want %d", ErrModel, len(weights), want)
	}
	for _, s := range m.blocks {
		v, ok := weights[s.Name]
		if !ok || len(v) != s.Rows*s.Cols {
			return nil, fmt.Errorf("%w: block %q missing or of length %d, want %d", ErrModel, s.Name, len(v), s.Rows*s.Cols)
		}
		copy(m.theta[s.Offset:], v)
	}
	var n Norm
	for k, dst := range n.fields() {
		v, ok := weights[k]
		if !ok {
			return nil, fmt.Errorf("%w: missing buffer %q", ErrModel, k)
		}
		*dst = slices.Clone(v)
	}
	if err := m.SetNorm(n); err != nil {
		return nil, err
	}
	return m, nil
}
