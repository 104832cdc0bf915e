package signal

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrAlign reports streams that cannot be put onto one clock.
var ErrAlign = errors.New("signal: cannot align streams")

// maxClockSamples bounds the common clock (2³⁰ samples, 8 GiB per stream
// of width 1): a longer one comes from a corrupt time stamp (a garbage row
// of a table stamped 1e154 s), not from a recording.
const maxClockSamples = 1 << 30

// Stream is one timestamped signal: len(Time) samples of Width values each,
// row-major in Values, interpolated with Interp.
type Stream struct {
	// Name identifies the stream in gaps and errors.
	Name string
	// Time holds the sample times in seconds. Align sorts a copy when they
	// are out of order; among samples with equal times the last one wins.
	Time []float64
	// Values holds len(Time)·Width values.
	Values []float64
	// Width is the number of values per sample (4 for Slerp).
	Width int
	// Interp is the interpolation method.
	Interp Interp
}

// AlignOptions configures Align.
type AlignOptions struct {
	// Rate is the rate of the common clock in hertz.
	Rate float64
	// Start and End bound the clock. When both are zero the clock spans the
	// interval every stream covers: from the latest first sample to the
	// earliest last sample.
	Start, End float64
	// MaxGap, when positive, marks as invalid every clock time at which some
	// stream's bracketing samples are more than MaxGap seconds apart (a
	// dropped-out sensor, a paused recording), and reports those stretches
	// in Aligned.Gaps.
	MaxGap float64
}

// Gap is a stretch of time in which a stream has no samples closer together
// than AlignOptions.MaxGap.
type Gap struct {
	// Stream names the stream.
	Stream string
	// From and To are the times of the samples on either side of the gap.
	From, To float64
}

// Aligned holds streams interpolated onto one clock.
type Aligned struct {
	// Time is the common clock.
	Time []float64
	// Values holds, for each input stream in order, len(Time)·Width values.
	Values [][]float64
	// Valid is false at clock times inside a gap of some stream or outside
	// some stream's time span. NaN values in the input propagate to the
	// output and do not clear Valid.
	Valid []bool
	// Gaps lists the gaps of every stream that overlap the clock.
	Gaps []Gap
}

// Align interpolates every stream onto a common uniform clock (see
// AlignOptions) with its own interpolation method, and marks the clock
// times where some stream has a gap.
func Align(streams []Stream, opt AlignOptions) (*Aligned, error) {
	if len(streams) == 0 {
		return nil, fmt.Errorf("%w: no streams", ErrAlign)
	}
	if !(opt.Rate > 0) || math.IsInf(opt.Rate, 0) {
		return nil, fmt.Errorf("%w: clock rate %g Hz must be positive and finite", ErrAlign, opt.Rate)
	}
	sorted := make([]Stream, len(streams))
	start, end := math.Inf(-1), math.Inf(1)
	for i, s := range streams {
		if s.Width < 1 || len(s.Values) != len(s.Time)*s.Width {
			return nil, fmt.Errorf("%w: stream %q has %d values for %d samples of width %d", ErrAlign, s.Name, len(s.Values), len(s.Time), s.Width)
		}
		if len(s.Time) == 0 {
			return nil, fmt.Errorf("%w: stream %q has no samples", ErrAlign, s.Name)
		}
		for k, t := range s.Time {
			if math.IsNaN(t) || math.IsInf(t, 0) {
				return nil, fmt.Errorf("%w: stream %q sample %d has time %v", ErrAlign, s.Name, k, t)
			}
		}
		sorted[i] = sortStream(s)
		ts := sorted[i].Time
		start = math.Max(start, ts[0])
		end = math.Min(end, ts[len(ts)-1])
	}
	if opt.Start != 0 || opt.End != 0 {
		start, end = opt.Start, opt.End
	}
	if !(end >= start) {
		return nil, fmt.Errorf("%w: the streams share no time span (latest start %.6f s after earliest end %.6f s)", ErrAlign, start, end)
	}
	if n := (end - start) * opt.Rate; n > maxClockSamples {
		return nil, fmt.Errorf("%w: the clock from %.6g s to %.6g s would have %.3g samples at %g Hz: a corrupt time stamp? (stream %q spans %.6g s to %.6g s)",
			ErrAlign, start, end, n, opt.Rate, sorted[0].Name, sorted[0].Time[0], sorted[0].Time[len(sorted[0].Time)-1])
	}
	clock := Clock(start, end, opt.Rate)
	out := &Aligned{Time: clock, Values: make([][]float64, len(sorted)), Valid: make([]bool, len(clock))}
	for k := range out.Valid {
		out.Valid[k] = true
	}
	for i, s := range sorted {
		v, err := Resample(nil, s.Time, s.Values, s.Width, clock, s.Interp)
		if err != nil {
			return nil, fmt.Errorf("%w: stream %q: %w", ErrAlign, s.Name, err)
		}
		out.Values[i] = v
		markCoverage(out, s, opt.MaxGap)
	}
	return out, nil
}

// markCoverage clears Valid outside the stream's span and inside its gaps,
// and records the gaps.
func markCoverage(a *Aligned, s Stream, maxGap float64) {
	t := s.Time
	clock := a.Time
	for k, tk := range clock {
		if tk < t[0] || tk > t[len(t)-1] {
			a.Valid[k] = false
		}
	}
	if !(maxGap > 0) || len(clock) == 0 {
		return
	}
	for i := 1; i < len(t); i++ {
		if t[i]-t[i-1] <= maxGap {
			continue
		}
		from, to := t[i-1], t[i]
		if to <= clock[0] || from >= clock[len(clock)-1] {
			continue
		}
		a.Gaps = append(a.Gaps, Gap{Stream: s.Name, From: from, To: to})
		k0 := sort.SearchFloat64s(clock, from)
		for k := k0; k < len(clock) && clock[k] < to; k++ {
			if clock[k] > from {
				a.Valid[k] = false
			}
		}
	}
}

// sortStream returns s with its samples in time order (a sorted copy when
// needed) and, among equal times, only the last sample.
func sortStream(s Stream) Stream {
	t := s.Time
	ordered, dup := true, false
	for i := 1; i < len(t); i++ {
		if t[i] < t[i-1] {
			ordered = false
		} else if t[i] == t[i-1] {
			dup = true
		}
	}
	if ordered && !dup {
		return s
	}
	idx := make([]int, len(t))
	for i := range idx {
		idx[i] = i
	}
	if !ordered {
		sort.SliceStable(idx, func(a, b int) bool { return t[idx[a]] < t[idx[b]] })
	}
	w := s.Width
	out := Stream{Name: s.Name, Width: w, Interp: s.Interp}
	for n, i := range idx {
		if n+1 < len(idx) && t[idx[n+1]] == t[i] {
			continue // a later sample has the same time
		}
		out.Time = append(out.Time, t[i])
		out.Values = append(out.Values, s.Values[i*w:(i+1)*w]...)
	}
	return out
}
