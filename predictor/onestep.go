package predictor

import "fmt"

// oneStep predicts each observed sample from the one before it, one dt
// earlier: the one-step residuals the force and wrench estimators
// average. It holds the previous sample and the prediction, allocates
// nothing after newOneStep and is not safe for concurrent use.
type oneStep struct {
	s        Stepper
	name     string // "force estimator", "wrench estimator": labels errors
	n, ne    int
	prevX    []float64 // 2n
	prevE    []float64 // n_e
	pred     []float64 // 2n: the prediction of the latest sample
	havePrev bool
}

func newOneStep(s Stepper, name string, n, ne int) oneStep {
	return oneStep{s: s, name: name, n: n, ne: ne,
		prevX: make([]float64, 2*n), prevE: make([]float64, ne), pred: make([]float64, 2*n)}
}

// reset forgets the previous sample.
func (o *oneStep) reset() { o.havePrev = false }

// predict checks the sample x (2n values) with its ports e (n_e values)
// and returns the prediction of x from the previous sample, or nil for
// the first sample after a reset. On an error the caller resets.
func (o *oneStep) predict(x, e []float64) ([]float64, error) {
	if len(x) != 2*o.n || len(e) != o.ne {
		return nil, fmt.Errorf("%w: %s observed %d state and %d port values, want %d and %d", ErrLayout, o.name, len(x), len(e), 2*o.n, o.ne)
	}
	if !finite(x) || !finite(e) {
		return nil, fmt.Errorf("%w: %s sample", ErrNotFinite, o.name)
	}
	if !o.havePrev {
		return nil, nil
	}
	if err := o.s.Rollout(o.prevX, o.prevE, 1, o.pred); err != nil {
		return nil, fmt.Errorf("predictor: %s one-step prediction: %w", o.name, err)
	}
	if !finite(o.pred) {
		return nil, fmt.Errorf("%w: %s one-step prediction", ErrNotFinite, o.name)
	}
	return o.pred, nil
}

// keep records x and e as the previous sample.
func (o *oneStep) keep(x, e []float64) {
	copy(o.prevX, x)
	copy(o.prevE, e)
	o.havePrev = true
}
