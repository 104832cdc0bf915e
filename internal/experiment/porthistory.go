package experiment

import (
	"fmt"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/trainer"
)

// PortHistory returns a study's data change (Variant.Data) that adds, as
// control ports after the measured ones, the mean of every port over the
// m samples before each sample in its log (an impulse over the last m
// steps, divided by m dt): the lever 4, "history as ports". The
// samples before a window come from the episodes before it in the same log
// (trainer.LogHistory); where the log has fewer than m earlier samples the
// mean is over those it has, and at its first sample it is the sample's
// own ports. An experiment of the study only: conversion and the live
// node do not build these channels.
func PortHistory(m int) func(Datasets) (Datasets, error) {
	return func(d Datasets) (Datasets, error) {
		if m < 1 {
			return d, fmt.Errorf("experiment: port history of %d samples", m)
		}
		out := Datasets{Train: withPortHistory(d.Train, m), ID: withPortHistory(d.ID, m), OOD: withPortHistory(d.OOD, m)}
		for _, g := range d.Groups {
			g.Data = withPortHistory(g.Data, m)
			out.Groups = append(out.Groups, g)
		}
		return out, nil
	}
}

// withPortHistory returns a copy of ds whose ports are (control, the mean
// of all ports over the m samples before, contact).
func withPortHistory(ds *dataset.Dataset, m int) *dataset.Dataset {
	if ds == nil {
		return nil
	}
	h := trainer.NewLogHistory(ds)
	ne, nu := ds.PortDim(), ds.NU
	out := &dataset.Dataset{Meta: ds.Meta}
	out.NU = nu + ne
	out.Ports = nil
	if len(ds.Ports) == ne {
		out.Ports = append(out.Ports, ds.Ports[:nu]...)
		for _, p := range ds.Ports {
			out.Ports = append(out.Ports, fmt.Sprintf("mean%d(%s)", m, p))
		}
		out.Ports = append(out.Ports, ds.Ports[nu:]...)
	}
	out.Episodes = make([]dataset.Episode, len(ds.Episodes))
	mean := make([]float64, ne)
	for e, ep := range ds.Episodes {
		oe := ep
		oe.E = make([]float64, 0, ep.Len*(ne+ne))
		for t := range ep.Len {
			clear(mean)
			k := 0
			for back := 1; back <= m; back++ {
				_, p, ok := h.Sample(e, t, back)
				if !ok {
					break
				}
				for j, v := range p {
					mean[j] += v
				}
				k++
			}
			cur := ep.E[t*ne : (t+1)*ne]
			if k == 0 {
				copy(mean, cur)
			} else {
				for j := range mean {
					mean[j] /= float64(k)
				}
			}
			oe.E = append(oe.E, cur[:nu]...)
			oe.E = append(oe.E, mean...)
			oe.E = append(oe.E, cur[nu:]...)
		}
		out.Episodes[e] = oe
	}
	return out
}
