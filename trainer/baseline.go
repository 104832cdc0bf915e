package trainer

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer/mlp"
)

// MLP adapts the baseline network to the Learner interface. Its loss is the
// state part of the symplectic objective: w_q times the mean squared error
// of q and w_p times that of p, both in units of the per-channel standard
// deviation of the state, so the two models are trained on the same scale.
type MLP struct {
	Net *mlp.MLP
	W   LossWeights
	// Coordinates and Ports name the state coordinates and ports of the
	// dataset the MLP was built for (NewMLP); Save records them.
	Coordinates, Ports []string
	// Meta records the dataset's control/contact split, sampling period
	// and port history (NewMLP); Save writes it when set.
	Meta *MLPMeta
}

// MLPMeta is what an MLP file records beside its network: the layout (n,
// n_u, n_c: the ports split into control and contact values), the sampling
// period dt in seconds, the port history's m (0: none;
// predictor.PortHistory), the port map of the params the dataset was
// converted with (statemap.Spec.PortMap; "" where the dataset records
// none) and, for an MLP behind a physics prior (Composed), the prior.
type MLPMeta struct {
	N        int     `json:"n"`
	NU       int     `json:"n_u"`
	NC       int     `json:"n_c"`
	Dt       float64 `json:"dt"`
	PortMean int     `json:"port_mean"`
	// Prior, when set, is the physics prior the network sits behind
	// (NewComposed): OpenModel rolls the file out as x' = MLP(Φ₀(x, u), u).
	Prior *mechanics.PriorSpec `json:"prior,omitempty"`
	// PortMap is how the dataset's ports were computed from the logged
	// channels (statemap.PortMap's encoding, the dataset's source
	// statemap.PortMapKey); empty in files written before it was recorded
	// and for datasets that do not record it.
	PortMap string `json:"port_map,omitempty"`
}

// NewMLP builds the baseline with the given hidden widths for the dataset's
// dimensions and sets its normalisation from the dataset's transitions
// (loading the arrays of a dataset opened with them on disk).
func NewMLP(ds *dataset.Dataset, hidden []int, w LossWeights, seed uint64) (*MLP, error) {
	return newMLP(ds, hidden, w, seed, nil)
}

// newMLP is NewMLP with the normalisation computed on the inputs the
// network sees behind prior, (Φ₀(x_t, e_t), e_t) → x_{t+1}, when prior is
// not nil (NewComposedMLP).
func newMLP(ds *dataset.Dataset, hidden []int, w LossWeights, seed uint64, prior mechanics.Prior) (*MLP, error) {
	cfg := mlp.Config{StateDim: ds.StateDim(), PortDim: ds.PortDim(), Hidden: hidden}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	// the normalisation stacks every transition: the arrays in memory
	if err := ds.LoadArrays(); err != nil {
		return nil, err
	}
	net := mlp.New(cfg, rand.New(rand.NewPCG(seed, 0x6d6c70)))
	x, e, xn := transitionArrays(ds)
	if prior != nil {
		nx, ne := cfg.StateDim, cfg.PortDim
		rows := len(x) / nx
		xt := make([]float64, len(x))
		if err := applyPrior(prior.Clone(), x, e, rows, nx, ne, xt); err != nil {
			return nil, fmt.Errorf("trainer: MLP normalisation behind the %s prior: %w", prior.Spec().Kind, err)
		}
		x = xt
	}
	norm, err := mlp.ComputeNorm(x, e, xn, cfg.StateDim, cfg.PortDim)
	if err != nil {
		return nil, fmt.Errorf("trainer: MLP normalisation: %w", err)
	}
	if err := net.SetNorm(norm); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	pm, err := predictor.PortMeanFromNames(ds.Ports, ds.NU, ds.NC)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	return &MLP{Net: net, W: w, Coordinates: slices.Clone(ds.Coordinates), Ports: slices.Clone(ds.Ports),
		Meta: &MLPMeta{N: ds.N, NU: ds.NU, NC: ds.NC, Dt: ds.Dt, PortMean: pm, PortMap: ds.Source[statemap.PortMapKey]}}, nil
}

// transitionArrays stacks every unique transition of ds.
func transitionArrays(ds *dataset.Dataset) (x, e, xnext []float64) {
	nx, ne := ds.StateDim(), ds.PortDim()
	for _, ep := range ds.Episodes {
		if ep.Len < 2 {
			continue
		}
		x = append(x, ep.X[:(ep.Len-1)*nx]...)
		xnext = append(xnext, ep.X[nx:ep.Len*nx]...)
		e = append(e, ep.E[:(ep.Len-1)*ne]...)
	}
	return x, e, xnext
}

// Name implements Learner.
func (m *MLP) Name() string { return "MLP" }

// NumParams implements Learner.
func (m *MLP) NumParams() int { return m.Net.NumParams() }

// Params implements Learner.
func (m *MLP) Params() []float64 { return slices.Clone(m.Net.Theta()) }

// SetParams implements Learner (the MLP keeps no derived quantities).
func (m *MLP) SetParams(theta []float64) error {
	if len(theta) != m.Net.NumParams() {
		return fmt.Errorf("trainer: %d parameters given, the MLP has %d", len(theta), m.Net.NumParams())
	}
	copy(m.Net.Theta(), theta)
	return nil
}

// ParamBlocks implements Learner.
func (m *MLP) ParamBlocks() []predictor.ParamBlock { return m.Net.ParamBlocks() }

// NewWorker implements Learner.
func (m *MLP) NewWorker(capacity int) Worker {
	cfg := m.Net.Config()
	nx := cfg.StateDim
	n := nx / 2
	norm := m.Net.Norm()
	f := append(channelFactors(norm.SX[:n], m.W.Units), channelFactors(norm.SX[n:nx], m.W.Units)...)
	cw := make([]float64, nx)
	for i := range nx {
		wt := m.W.Q
		if i >= n {
			wt = m.W.P
		}
		cw[i] = wt / float64(n) / (norm.SX[i] * norm.SX[i]) * f[i]
	}
	return &mlpWorker{m: m, capacity: capacity, ne: cfg.PortDim, ws: []*mlp.Workspace{m.Net.NewWorkspace(capacity)}, cw: cw,
		pred: make([]float64, capacity*nx), dPred: make([]float64, capacity*nx)}
}

type mlpWorker struct {
	m        *MLP
	capacity int
	ne       int              // ports per row
	ws       []*mlp.Workspace // ws[k] records step k of a rollout
	cw       []float64        // per-channel weight of the squared error
	pred     []float64
	dPred    []float64
	// the K-step path's buffers, grown on first use: states x̂_0 … x̂_K
	// (K+1 × capacity rows), one step's ports, targets and adjoints
	xs, ek, dx []float64
	// behind a prior: the prior's states y_k (K × capacity rows) and one
	// row's adjoint
	ys, pl []float64
}

// LossGrad implements Worker.
func (w *mlpWorker) LossGrad(b Batch, grad, pred []float64) float64 {
	if b.K > 1 {
		return w.lossGradSeq(b, grad)
	}
	nx := len(w.cw)
	n := b.N
	p := w.pred[:n*nx]
	w.m.Net.Forward(w.ws[0], b.X[:n*nx], b.E[:n*w.ne], n, p)
	var total float64
	dp := w.dPred[:n*nx]
	for r := range n {
		wr := b.W[r]
		for j := range nx {
			d := p[r*nx+j] - b.XNext[r*nx+j]
			total += wr * w.cw[j] * d * d
			dp[r*nx+j] = 2 * wr * w.cw[j] * d
		}
	}
	w.m.Net.Backward(w.ws[0], dp, grad, nil)
	if pred != nil {
		copy(pred[:n*nx], p)
	}
	return total
}

// Rollers returns a factory of independent rollers over copies of the
// network (its one-step scratch is not shared between goroutines).
func (m *MLP) Rollers() RollerFactory {
	return func() (Roller, error) {
		cfg, wts, err := m.Net.Export()
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		net, err := mlp.Load(cfg, wts)
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		return net, nil
	}
}

// Rollers returns a factory of rollers over the compiled model (compiled
// when the factory is called, so with the parameters of that moment).
func (s *Symplectic) Rollers() RollerFactory { return planRollers(s.Model()) }

// planRollers returns a factory of rollers over the compiled model m.
func planRollers(m *predictor.Model) RollerFactory {
	return func() (Roller, error) {
		p, err := m.Compile()
		if err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		return p.NewRoller(), nil
	}
}
