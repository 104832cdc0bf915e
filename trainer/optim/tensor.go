// Package optim implements the optimisers, gradient clipping and schedules
// used to train the calisym models: AdamW (exactly as torch.optim.AdamW),
// Muon (Newton–Schulz orthogonalised momentum for matrices, AdamW for the
// rest), global-norm clipping, learning-rate schedules and the
// teacher-forcing α schedule of the paper's Appendix D.
//
// Optimisers work on a flat parameter vector organised in named tensors:
// Bind turns the vector's parameter blocks (predictor.ParamBlock) into
// Tensors that hold views into the parameter and gradient slices, so an
// optimiser step updates the parameters in place. All arithmetic is FP64.
// Matrices are stored row-major, Rows×Cols, in the torch convention for a
// dense layer (Rows = outputs, Cols = inputs).
package optim

import (
	"errors"
	"fmt"
	"math"

	"github.com/calisym/calisym/predictor"
)

// ErrState wraps every problem found when restoring an optimiser state.
var ErrState = errors.New("optim: bad optimiser state")

// ErrShape wraps every problem found in a tensor layout.
var ErrShape = errors.New("optim: bad tensor layout")

// Tensor is one named parameter block bound to memory. Data and Grad are
// views (length Rows·Cols, row-major) into the model's parameter and
// gradient vectors. A tensor with Rows > 1 and Cols > 1 is a matrix;
// otherwise it is a vector. NoMuon forces the AdamW fallback in Muon even
// for a matrix.
type Tensor struct {
	Name       string
	Rows, Cols int
	NoMuon     bool
	Data       []float64
	Grad       []float64
}

// Size returns Rows·Cols.
func (t Tensor) Size() int { return t.Rows * t.Cols }

// IsMatrix reports whether t is a matrix (Rows > 1 and Cols > 1).
func (t Tensor) IsMatrix() bool { return t.Rows > 1 && t.Cols > 1 }

// Bind returns the tensors of the parameter blocks as views into theta and
// grad, which must have the same length. It checks that every block is
// non-empty, lies inside the vectors and that names are unique; blocks may
// not overlap. The tensors have NoMuon unset; set it on the result to keep
// a matrix out of Muon.
func Bind(theta, grad []float64, blocks []predictor.ParamBlock) ([]Tensor, error) {
	if len(theta) != len(grad) {
		return nil, fmt.Errorf("%w: %d parameters but %d gradients", ErrShape, len(theta), len(grad))
	}
	used := make([]bool, len(theta))
	names := make(map[string]bool, len(blocks))
	ts := make([]Tensor, len(blocks))
	for i, s := range blocks {
		if s.Rows <= 0 || s.Cols <= 0 {
			return nil, fmt.Errorf("%w: tensor %q has shape %d×%d", ErrShape, s.Name, s.Rows, s.Cols)
		}
		if names[s.Name] {
			return nil, fmt.Errorf("%w: duplicate tensor name %q", ErrShape, s.Name)
		}
		names[s.Name] = true
		n := s.Rows * s.Cols
		if s.Offset < 0 || s.Offset+n > len(theta) {
			return nil, fmt.Errorf("%w: tensor %q [%d, %d) outside %d parameters", ErrShape, s.Name, s.Offset, s.Offset+n, len(theta))
		}
		for k := s.Offset; k < s.Offset+n; k++ {
			if used[k] {
				return nil, fmt.Errorf("%w: tensor %q overlaps another at index %d", ErrShape, s.Name, k)
			}
			used[k] = true
		}
		ts[i] = Tensor{Name: s.Name, Rows: s.Rows, Cols: s.Cols,
			Data: theta[s.Offset : s.Offset+n : s.Offset+n], Grad: grad[s.Offset : s.Offset+n : s.Offset+n]}
	}
	return ts, nil
}

// checkTensors validates the views of a tensor list.
func checkTensors(ts []Tensor) error {
	names := make(map[string]bool, len(ts))
	for _, t := range ts {
		if t.Rows <= 0 || t.Cols <= 0 {
			return fmt.Errorf("%w: tensor %q has shape %d×%d", ErrShape, t.Name, t.Rows, t.Cols)
		}
		if len(t.Data) != t.Size() || len(t.Grad) != t.Size() {
			return fmt.Errorf("%w: tensor %q is %d×%d but has %d values and %d gradients", ErrShape, t.Name, t.Rows, t.Cols, len(t.Data), len(t.Grad))
		}
		if names[t.Name] {
			return fmt.Errorf("%w: duplicate tensor name %q", ErrShape, t.Name)
		}
		names[t.Name] = true
	}
	return nil
}

// GradNorm returns the global Euclidean norm of the gradients of ts.
func GradNorm(ts []Tensor) float64 {
	var s float64
	for _, t := range ts {
		for _, g := range t.Grad {
			s += g * g
		}
	}
	return math.Sqrt(s)
}

// ClipGradNorm scales the gradients of ts in place so that their global
// Euclidean norm is at most maxNorm, as torch.nn.utils.clip_grad_norm_
// does (coefficient maxNorm/(norm+1e-6), applied only when below 1). It
// returns the norm before clipping. maxNorm ≤ 0 or +Inf disables clipping.
// A non-finite norm is returned unchanged and the gradients are left as
// they are, so the caller can detect divergence.
func ClipGradNorm(ts []Tensor, maxNorm float64) float64 {
	norm := GradNorm(ts)
	if maxNorm <= 0 || math.IsInf(maxNorm, 1) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm
	}
	c := maxNorm / (norm + 1e-6)
	if c >= 1 {
		return norm
	}
	for _, t := range ts {
		for i := range t.Grad {
			t.Grad[i] *= c
		}
	}
	return norm
}

// ZeroGrad sets every gradient of ts to zero.
func ZeroGrad(ts []Tensor) {
	for _, t := range ts {
		clear(t.Grad)
	}
}
