package experiment

import (
	"math"

	"github.com/calisym/calisym/trainer/plot"
)

// seedSeries is a study model's curve over the horizons: the mean over its
// seeds, with the least and the largest seed's value as the spread that
// the study plot draws as error bars.
func seedSeries(sm seedModel, name, model string, dashed bool) plot.Series {
	s := plot.Series{Name: name, Role: plot.Other, Model: model, Dashed: dashed,
		Values: make([]float64, len(sm.Vals)), Lo: make([]float64, len(sm.Vals)), Hi: make([]float64, len(sm.Vals))}
	for i, vs := range sm.Vals {
		s.Lo[i], s.Hi[i] = math.Inf(1), math.Inf(-1)
		for _, x := range vs {
			s.Values[i] += x
			s.Lo[i], s.Hi[i] = min(s.Lo[i], x), max(s.Hi[i], x)
		}
		s.Values[i] /= float64(len(vs))
		if len(vs) == 0 {
			s.Values[i], s.Lo[i], s.Hi[i] = math.NaN(), math.NaN(), math.NaN()
		}
	}
	return s
}
