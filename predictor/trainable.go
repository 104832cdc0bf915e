package predictor

import (
	"fmt"
	"math/rand/v2"
)

// Trainable is the training handle of a Model, everything a trainer needs
// beyond inference: the flat parameter vector θ (Params, SetParams), its
// initialisation (Init), the parameter blocks an optimiser updates
// (ParamBlocks), and the batched forward pass recorded on a Tape with its
// backward pass (the gradient with respect to θ) and tangent map.
//
// Every change of θ goes through SetParams or Init, which also recompute the
// layer matrices the model derives from θ, so the model stays ready to
// Compile or Save at all times.
//
// Forward, Backward and Tangent may run concurrently on distinct tapes.
// SetParams and Init must not run concurrently with them, nor with methods of
// the model.
type Trainable struct {
	m *Model
}

// NewTrainable returns the training handle of m. The handle changes m in
// place; m must come from New, Load or Decode.
func NewTrainable(m *Model) *Trainable { return &Trainable{m: m} }

// Model returns the model the handle trains.
func (t *Trainable) Model() *Model { return t.m }

// Params returns a copy of θ, the flat parameter vector, laid out as
// ParamBlocks describes.
func (t *Trainable) Params() []float64 { return append([]float64(nil), t.m.theta...) }

// SetParams copies theta (NumParams values) into the model's parameter
// vector and recomputes what the model derives from it.
func (t *Trainable) SetParams(theta []float64) error {
	if len(theta) != len(t.m.theta) {
		return fmt.Errorf("%w: %d parameters given, the model has %d", ErrLayout, len(theta), len(t.m.theta))
	}
	copy(t.m.theta, theta)
	t.m.syncDerived()
	return nil
}

// Init draws fresh parameters from rng: raw S matrices with standard
// deviation 0.5·scale/√d, ridge weights with variance scale²/fan-in, biases
// and output weights small so that the initial map is close to the identity.
// New initialises at scale 1.
func (t *Trainable) Init(rng *rand.Rand, scale float64) { t.m.initParams(rng, scale) }

// ParamBlocks lists the parameter blocks of θ in order, with the names under
// which the model file stores them.
func (t *Trainable) ParamBlocks() []ParamBlock { return t.m.paramBlocks() }

// NewTape allocates a tape for batches of up to capacity rows of the model.
func (t *Trainable) NewTape(capacity int) *Tape { return t.m.newTape(capacity) }

// Forward applies the map (in normalised lifted coordinates) to the n rows of
// z (n×2d, row major) in place and records the pass on the tape, which must
// come from this handle's NewTape and hold at least n rows.
func (t *Trainable) Forward(tape *Tape, z []float64, n int) {
	t.checkTape(tape)
	t.m.forward(tape, z, n)
}

// Backward propagates zbar, the adjoint of the output of the tape's last
// Forward (n×2d), back to the adjoint of its input (in place), and adds the
// gradient with respect to θ into grad (NumParams values, in Params order).
func (t *Trainable) Backward(tape *Tape, zbar, grad []float64) {
	t.checkTape(tape)
	t.m.backward(tape, zbar, grad)
}

// Tangent pushes n tangent vectors dz (n×2d, row major, n of the tape's last
// Forward) through the map's Jacobian at the recorded states, in place.
func (t *Trainable) Tangent(tape *Tape, dz []float64) {
	t.checkTape(tape)
	t.m.tangent(tape, dz)
}

// checkTape panics when the tape belongs to another model: its buffers
// would not fit this one's layers.
func (t *Trainable) checkTape(tape *Tape) {
	if tape.m != t.m {
		panic("predictor: tape of another model")
	}
}
