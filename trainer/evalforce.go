package trainer

import (
	"errors"
	"strconv"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// sampleRef locates one sample of a log inside a dataset.
type sampleRef struct {
	ep, row int
}

// LogHistory finds the measured samples that precede a sample of a
// dataset in its log, in whichever episode holds them: conversion names
// episodes file@first-sample, and windows cut one after another (stride =
// length) leave the samples before a window in the episode before it.
type LogHistory struct {
	ds     *dataset.Dataset
	at     map[string]map[int]sampleRef // file → sample index in the log → where
	origin []int                        // q coordinates zeroed (statemap.OriginCoordinates)
}

// NewLogHistory indexes the samples of ds by log file and sample index.
// Episodes whose name carries no sample index contribute only themselves.
func NewLogHistory(ds *dataset.Dataset) *LogHistory {
	h := &LogHistory{ds: ds, at: map[string]map[int]sampleRef{}, origin: statemap.OriginCoordinates(ds.Coordinates)}
	for e, ep := range ds.Episodes {
		file, a, ok := episodeStart(ep.Name)
		if !ok {
			continue
		}
		m := h.at[file]
		if m == nil {
			m = map[int]sampleRef{}
			h.at[file] = m
		}
		for j := range ep.Len {
			if _, dup := m[a+j]; !dup {
				m[a+j] = sampleRef{ep: e, row: j}
			}
		}
	}
	return h
}

// episodeStart splits an episode name file@first into its parts.
func episodeStart(name string) (file string, first int, ok bool) {
	i := strings.LastIndex(name, "@")
	if i < 0 {
		return "", 0, false
	}
	a, err := strconv.Atoi(name[i+1:])
	if err != nil {
		return "", 0, false
	}
	return name[:i], a, true
}

// Sample returns the state and ports of the sample back steps before row
// of episode e in its log (back = 0: that sample), from whichever episode
// holds it, and false where ds has no such sample (before the log's start,
// across a gap, or an episode without a sample index in its name, which
// has only its own samples).
func (h *LogHistory) Sample(e, row, back int) (x, ports []float64, ok bool) {
	nx, ne := h.ds.StateDim(), h.ds.PortDim()
	ep := &h.ds.Episodes[e]
	file, a, indexed := episodeStart(ep.Name)
	if !indexed {
		if r := row - back; r >= 0 && r < ep.Len {
			return ep.X[r*nx : (r+1)*nx], ep.E[r*ne : (r+1)*ne], true
		}
		return nil, nil, false
	}
	ref, found := h.at[file][a+row-back]
	if !found {
		return nil, nil, false
	}
	src := &h.ds.Episodes[ref.ep]
	return src.X[ref.row*nx : (ref.row+1)*nx], src.E[ref.row*ne : (ref.row+1)*ne], true
}

// Feed resets est and observes the last est.History()+1 samples up
// to and including row start of episode e (fewer where the log has no
// earlier sample in ds), each with its origin coordinates zeroed. buf is
// scratch of 2n values.
func (h *LogHistory) Feed(est predictor.OffsetEstimator, e, start int, buf []float64) error {
	est.Reset()
	// the earliest sample, up to History back, with none missing after it
	back := 0
	for back < est.History() {
		if _, _, ok := h.Sample(e, start, back+1); !ok {
			break
		}
		back++
	}
	for ; back >= 0; back-- {
		x, ports, _ := h.Sample(e, start, back)
		copy(buf, x)
		for _, j := range h.origin {
			buf[j] = 0
		}
		// a non-finite prediction restarts the history (Observe resets)
		if err := est.Observe(buf, ports); err != nil && !errors.Is(err, predictor.ErrNotFinite) {
			return err
		}
	}
	return nil
}
