package trainer

import (
	"fmt"
	"math"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// ChannelStats holds per-channel means and standard deviations of the
// states (2n) and ports (n_u + n_c) of a dataset.
type ChannelStats struct {
	MuX, SX []float64
	MuE, SE []float64
}

// minScale is the floor below which a channel's spread counts as constant.
const minScale = 1e-8

// Stats computes per-channel statistics over every sample of the dataset
// (read episode by episode from the files when its arrays are on disk:
// the same sums in the same order).
func Stats(ds *dataset.Dataset) (ChannelStats, error) {
	nx, ne := ds.StateDim(), ds.PortDim()
	st := ChannelStats{MuX: make([]float64, nx), SX: make([]float64, nx), MuE: make([]float64, ne), SE: make([]float64, ne)}
	var count float64
	sc := &scanner{ds: ds}
	for i, ep := range ds.Episodes {
		count += float64(ep.Len)
		err := sc.episode(i, func(x, e []float64) {
			accumulate(st.MuX, st.SX, x, nx)
			accumulate(st.MuE, st.SE, e, ne)
		})
		if err != nil {
			return st, err
		}
	}
	if count < 2 {
		return st, fmt.Errorf("trainer: dataset has %v samples, need at least 2 for statistics", count)
	}
	finish(st.MuX, st.SX, count)
	finish(st.MuE, st.SE, count)
	return st, nil
}

func accumulate(sum, sq, data []float64, w int) {
	for i, v := range data {
		sum[i%w] += v
		sq[i%w] += v * v
	}
}

func finish(mu, s []float64, n float64) {
	for i := range mu {
		mu[i] /= n
		v := s[i]/n - mu[i]*mu[i]
		s[i] = math.Sqrt(math.Max(v, 0))
		if s[i] < minScale*math.Max(1, math.Abs(mu[i])) {
			s[i] = 1
		}
	}
}

// Normalization turns channel statistics into the predictor's base–fibre
// symplectic normalisation (one mean and scale per canonical pair).
func (st ChannelStats) Normalization(l predictor.Layout) predictor.Normalization {
	nz := predictor.IdentityNormalization(l)
	n := l.N
	for i := range 2 * n { // pairs 0..n−1 are q, n..2n−1 are p
		nz.Mu[i], nz.Scale[i] = st.MuX[i], st.SX[i]
	}
	for i := range l.PortDim() { // μ_u then λ_c
		nz.Mu[2*n+i], nz.Scale[2*n+i] = st.MuE[i], st.SE[i]
	}
	return nz
}
