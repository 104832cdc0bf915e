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

// FeedPos is the sample of a log an estimator was last fed up to
// (LogHistory.FeedFrom); the zero value is none.
type FeedPos struct {
	file string
	at   int
	ok   bool
}

// FeedFrom leaves est as Feed(est, e, start, buf) does. Where est was last
// fed up to an earlier sample of the same log (*last), at most
// est.History() samples before, with every sample from there to start in
// ds, it observes only the samples after that one: the estimators'
// estimates depend only on the residuals they hold (summed oldest first),
// so the bits are Feed's, for far less work when windows start a few
// samples apart (a wrench estimate recomputes its statistics over the
// whole window at every sample, so that Feed costs O(W²) a window and
// FeedFrom O(W) a sample advanced). *last is updated; an error unsets it.
func (h *LogHistory) FeedFrom(est predictor.OffsetEstimator, e, start int, buf []float64, last *FeedPos) error {
	prev := *last
	*last = FeedPos{}
	file, a, indexed := episodeStart(h.ds.Episodes[e].Name)
	at := a + start
	step := at - prev.at
	stream := indexed && prev.ok && prev.file == file && step > 0 && step <= est.History()
	for back := 0; stream && back < step; back++ {
		_, _, stream = h.Sample(e, start, back)
	}
	if !stream {
		if err := h.Feed(est, e, start, buf); err != nil {
			return err
		}
	} else {
		for back := step - 1; back >= 0; back-- {
			if err := h.observe(est, e, start, back, buf); err != nil {
				return err
			}
		}
	}
	if indexed {
		*last = FeedPos{file: file, at: at, ok: true}
	}
	return nil
}

// observe feeds est the sample back steps before row start of episode e,
// its origin coordinates zeroed; a non-finite prediction restarts the
// history (Observe resets) and is not an error.
func (h *LogHistory) observe(est predictor.OffsetEstimator, e, start, back int, buf []float64) error {
	x, ports, _ := h.Sample(e, start, back)
	copy(buf, x)
	for _, j := range h.origin {
		buf[j] = 0
	}
	if err := est.Observe(buf, ports); err != nil && !errors.Is(err, predictor.ErrNotFinite) {
		return err
	}
	return nil
}

// Back returns how many samples before row start of episode e its log
// has in ds, up to limit and none across a gap: the earliest sample a
// history of limit samples reaches back to without one missing after it.
func (h *LogHistory) Back(e, start, limit int) int {
	back := 0
	for back < limit {
		if _, _, ok := h.Sample(e, start, back+1); !ok {
			break
		}
		back++
	}
	return back
}

// Feed resets est and observes the last est.History()+1 samples up
// to and including row start of episode e (fewer where the log has no
// earlier sample in ds), each with its origin coordinates zeroed. buf is
// scratch of 2n values.
func (h *LogHistory) Feed(est predictor.OffsetEstimator, e, start int, buf []float64) error {
	est.Reset()
	for back := h.Back(e, start, est.History()); back >= 0; back-- {
		if err := h.observe(est, e, start, back, buf); err != nil {
			return err
		}
	}
	return nil
}
