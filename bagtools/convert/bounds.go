package convert

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrRange reports a channel with too many samples outside its physical
// range (validate.bounds): a wrong unit, scale or bound rather than the
// logger's occasional glitch.
var ErrRange = errors.New("convert: samples out of their physical range")

// maxRangeWarnings caps the warnings about repaired runs per channel and
// file.
const maxRangeWarnings = 5

// checkBoundChannels checks that every channel validate.bounds names is
// one the spec reads: a bound on another channel would check nothing.
func (c *Converter) checkBoundChannels() error {
	names := c.plan.Names()
	for i, b := range c.spec.Validate.Bounds {
		for j, ch := range b.Channels {
			if !slices.Contains(names, ch) {
				return specError(fmt.Sprintf("validate.bounds[%d].channels[%d]", i, j), "channel %q is not one the spec reads (it reads %s)", ch, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// checkBounds applies validate.bounds to the raw series read (before
// units, scale and offset): it counts the finite samples out of range,
// fails on a channel with too many, repairs the short runs in place by
// linear interpolation in time and returns, per channel with runs it
// could not repair, a flag per raw sample (1: out of range).
func (c *Converter) checkBounds(src Source, byName map[string]Series, rep *FileReport) (map[string][]float64, error) {
	var flags map[string][]float64
	for i := range c.spec.Validate.Bounds {
		b := &c.spec.Validate.Bounds[i]
		key := fmt.Sprintf("validate.bounds[%d]", i)
		for _, ch := range b.Channels {
			se, ok := byName[ch]
			if !ok {
				continue
			}
			out, err := c.boundChannel(src, se, b, key, rep)
			if err != nil {
				return nil, err
			}
			if out != nil {
				if flags == nil {
					flags = map[string][]float64{}
				}
				flags[ch] = out
			}
		}
	}
	return flags, nil
}

// boundChannel applies bound b to one series (checkBounds).
func (c *Converter) boundChannel(src Source, se Series, b *BoundSpec, key string, rep *FileReport) ([]float64, error) {
	v := se.Values
	bad := func(k int) bool { return !math.IsNaN(v[k]) && !b.Contains(v[k]) }
	n, first := 0, -1
	for k := range v {
		if bad(k) {
			if first < 0 {
				first = k
			}
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if float64(n) > b.MaxFraction*float64(len(v)) {
		return nil, fmt.Errorf("%w: channel %q has %d of %d samples (%.1f%%) outside %s, more than %s.max_fraction = %g; the first at %s is %g: check the channel's unit and scale, or the bound",
			ErrRange, se.Name, n, len(v), 100*float64(n)/float64(len(v)), b, key, b.MaxFraction, locate(src, se.Name, first), v[first])
	}
	if rep.OutOfRange == nil {
		rep.OutOfRange = map[string]int{}
	}
	rep.OutOfRange[se.Name] += n
	var flag []float64
	warned := 0
	for k := 0; k < len(v); {
		if !bad(k) {
			k++
			continue
		}
		end := k
		for end < len(v) && bad(end) {
			end++
		}
		// the run [k, end): repaired between two samples in range
		lo, hi := k-1, end
		if end-k <= b.Repair && lo >= 0 && hi < len(v) && !math.IsNaN(v[lo]) && !math.IsNaN(v[hi]) {
			if warned < maxRangeWarnings {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("channel %q: %d sample(s) outside %s from %s (%g) repaired by linear interpolation between %g and %g (%s)",
					se.Name, end-k, b, locate(src, se.Name, k), v[k], v[lo], v[hi], key))
			}
			warned++
			t0, t1 := se.Time[lo], se.Time[hi]
			for j := k; j < end; j++ {
				a := 0.5
				if t1 > t0 {
					a = (se.Time[j] - t0) / (t1 - t0)
				}
				v[j] = v[lo] + a*(v[hi]-v[lo])
			}
			if rep.Repaired == nil {
				rep.Repaired = map[string]int{}
			}
			rep.Repaired[se.Name] += end - k
		} else {
			if flag == nil {
				flag = make([]float64, len(v))
			}
			for j := k; j < end; j++ {
				flag[j] = 1
			}
		}
		k = end
	}
	if warned > maxRangeWarnings {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("channel %q: %d more runs outside %s repaired", se.Name, warned-maxRangeWarnings, b))
	}
	return flag, nil
}
