package convert

import (
	"errors"
	"maps"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
)

// boundedSpec is floatingSpec with the motor commands bounded to [0, 1].
func boundedSpec(repair int, maxFraction float64) *Spec {
	s := floatingSpec("floating_base")
	lo, hi := 0.0, 1.0
	s.Validate.Bounds = []BoundSpec{{Channels: []string{"m1", "m2", "m3", "m4"}, Min: &lo, Max: &hi, Repair: repair, MaxFraction: maxFraction}}
	return s
}

// episodesByName indexes a split's episodes (one per window: q is
// relative to each window's first pose) by name, "mem@<start>".
func episodesByName(d *dataset.Dataset) map[string]dataset.Episode {
	out := map[string]dataset.Episode{}
	if d == nil {
		return out
	}
	for _, ep := range d.Episodes {
		out[ep.Name] = ep
	}
	return out
}

// TestBounds: validate.bounds on a synthetic quadrotor log (200 samples,
// windows of 10 at stride 7, motor commands in [0, 1]) with glitches
// written into the motor channels. A run of at most `repair` samples
// between two samples in range is interpolated (m2 and m4 are constant, so
// the repaired windows equal the clean ones bit for bit; m3 is linear in
// time, so they agree to rounding); a longer run, one at the file's edge
// or one beside a NaN rejects exactly the windows that cover it
// (out_of_range); the other windows are the clean conversion's, bit for
// bit; a channel out of range in more than max_fraction of its samples
// fails the file with ErrRange naming the channel, the sample and its
// value.
func TestBounds(t *testing.T) {
	const n, L, S = 200, 10, 7
	clean := convertBounded(t, floatingSpec("floating_base"), floatingSource(n))
	cleanEps := episodesByName(clean.Splits["id"])
	if len(cleanEps) != (n-L)/S+1 {
		t.Fatalf("clean conversion: %d windows", len(cleanEps))
	}
	set := func(ch string, v float64, rows ...int) func(*memSource) {
		return func(src *memSource) {
			for _, r := range rows {
				src.series[ch].Values[r] = v
			}
		}
	}
	both := func(a, b func(*memSource)) func(*memSource) {
		return func(src *memSource) { a(src); b(src) }
	}
	tests := []struct {
		name        string
		edit        func(*memSource)
		repair      int
		maxFraction float64
		outOfRange  map[string]int
		repaired    map[string]int
		rejected    []int   // rows whose windows are rejected
		reason      string  // their reason (default out_of_range)
		portTol     float64 // absolute, of the kept windows' ports against the clean ones
		wantErr     []string
	}{
		{name: "clean", edit: func(*memSource) {}, repair: 1},
		{name: "isolated spike repaired", edit: set("m4", 6e6, 50), repair: 1,
			outOfRange: map[string]int{"m4": 1}, repaired: map[string]int{"m4": 1}},
		{name: "isolated spike on a ramp repaired", edit: set("m3", 1.9e6, 120), repair: 1,
			outOfRange: map[string]int{"m3": 1}, repaired: map[string]int{"m3": 1}, portTol: 1e-15},
		{name: "spike below min repaired", edit: set("m4", -5, 20), repair: 3,
			outOfRange: map[string]int{"m4": 1}, repaired: map[string]int{"m4": 1}},
		{name: "isolated spike without repair", edit: set("m4", 6e6, 50), repair: 0,
			outOfRange: map[string]int{"m4": 1}, rejected: []int{50}},
		{name: "run of 3 repaired", edit: set("m2", 1.9e6, 100, 101, 102), repair: 3, maxFraction: 0.02,
			outOfRange: map[string]int{"m2": 3}, repaired: map[string]int{"m2": 3}},
		{name: "run of 3 longer than repair", edit: set("m2", 1.9e6, 100, 101, 102), repair: 2, maxFraction: 0.02,
			outOfRange: map[string]int{"m2": 3}, rejected: []int{100, 101, 102}},
		{name: "spike at the first sample", edit: set("m1", 7, 0), repair: 3,
			outOfRange: map[string]int{"m1": 1}, rejected: []int{0}},
		{name: "spike at the last sample", edit: set("m1", 7, n-1), repair: 3,
			outOfRange: map[string]int{"m1": 1}, rejected: []int{n - 1}},
		{name: "two channels at one row", edit: both(set("m2", 3, 60), set("m4", 3, 60)), repair: 1,
			outOfRange: map[string]int{"m2": 1, "m4": 1}, repaired: map[string]int{"m2": 1, "m4": 1}},
		{name: "spike beside a NaN", edit: both(set("m2", math.NaN(), 83), set("m2", 9, 84)), repair: 1,
			outOfRange: map[string]int{"m2": 1}, rejected: []int{83, 84}, reason: "mixed"},
		{name: "1.5% of a channel out of range", edit: set("m4", 2, 30, 90, 150), repair: 1,
			wantErr: []string{`channel "m4" has 3 of 200 samples (1.5%) outside [0, 1]`, "validate.bounds[0].max_fraction = 0.01", "sample 31 of channel \"m4\" is 2"}},
		{name: "1.5% with max_fraction 0.05", edit: set("m4", 2, 30, 90, 150), repair: 1, maxFraction: 0.05,
			outOfRange: map[string]int{"m4": 3}, repaired: map[string]int{"m4": 3}},
		{name: "whole channel garbage", edit: func(src *memSource) {
			for i := range src.series["m3"].Values {
				src.series["m3"].Values[i] *= 1e6
			}
		}, repair: 3, wantErr: []string{`channel "m3" has 200 of 200 samples (100.0%) outside [0, 1]`, "sample 1 of channel \"m3\" is 600000", "check the channel's unit and scale"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := floatingSource(n)
			tc.edit(src)
			spec := boundedSpec(tc.repair, tc.maxFraction)
			conv, err := NewConverter(spec, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := conv.ConvertSource(src, "mem")
			if tc.wantErr != nil {
				if !errors.Is(err, ErrRange) {
					t.Fatalf("err = %v, want ErrRange", err)
				}
				for _, m := range tc.wantErr {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("err = %q, want it to mention %q", err, m)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f := res.Report.Files[0]
			if !maps.Equal(f.OutOfRange, tc.outOfRange) || !maps.Equal(f.Repaired, tc.repaired) {
				t.Errorf("out of range %v, repaired %v; want %v, %v", f.OutOfRange, f.Repaired, tc.outOfRange, tc.repaired)
			}
			var warned int
			for _, w := range f.Warnings {
				if strings.Contains(w, "repaired by linear interpolation") {
					warned++
				}
			}
			if runs := len(tc.repaired); warned < runs || (runs == 0 && warned > 0) {
				t.Errorf("%d repair warnings for %v: %q", warned, tc.repaired, f.Warnings)
			}
			covers := func(start int) bool {
				for _, r := range tc.rejected {
					if r >= start && r < start+L {
						return true
					}
				}
				return false
			}
			got := episodesByName(res.Splits["id"])
			nRejected := 0
			for start := 0; start+L <= n; start += S {
				name := "mem@" + strconv.Itoa(start)
				ep, ok := got[name]
				if covers(start) {
					nRejected++
					if ok {
						t.Errorf("window at %d kept, want it rejected", start)
					}
					continue
				}
				if !ok {
					t.Errorf("window at %d rejected, want it kept", start)
					continue
				}
				ref := cleanEps[name]
				for i := range ep.X {
					if ep.X[i] != ref.X[i] {
						t.Fatalf("window at %d: state %d is %v, clean %v", start, i, ep.X[i], ref.X[i])
					}
				}
				for i := range ep.E {
					if d := math.Abs(ep.E[i] - ref.E[i]); d > tc.portTol {
						t.Fatalf("window at %d: port %d is %v, clean %v", start, i, ep.E[i], ref.E[i])
					}
				}
			}
			rej := res.Report.Windows.Rejected
			switch tc.reason {
			case "":
				if rej[ReasonOutOfRange] != nRejected || len(rej) > 0 && nRejected == 0 {
					t.Errorf("rejected %v, want %d out_of_range", rej, nRejected)
				}
			case "mixed":
				// the window over both (at 77) is counted as NaN, the one
				// over the spike alone (at 84) as out of range
				if rej[ReasonOutOfRange]+rej[ReasonNaN] != nRejected || rej[ReasonOutOfRange] == 0 || rej[ReasonNaN] == 0 {
					t.Errorf("rejected %v, want %d nan or out_of_range", rej, nRejected)
				}
			}
		})
	}
}

// convertBounded converts src with spec.
func convertBounded(t *testing.T, spec *Spec, src *memSource) *Result {
	t.Helper()
	conv, err := NewConverter(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conv.ConvertSource(src, "mem")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestBoundsSpecErrors: every malformed validate.bounds entry is refused,
// naming its key; a bound on a channel the spec does not read is refused
// when the converter is built.
func TestBoundsSpecErrors(t *testing.T) {
	const anchor = "  window: {length: 10, stride: 5}"
	tests := []struct {
		name, bounds string
		want         []string
	}{
		{"no channels", "[{max: 1}]", []string{"convert.validate.bounds[0].channels", "at least one"}},
		{"no range", "[{channels: [t1]}]", []string{"convert.validate.bounds[0]", "min, max or both"}},
		{"min above max", "[{channels: [t1], min: 2, max: 1}]", []string{"convert.validate.bounds[0]", "min 2 must be below max 1"}},
		{"infinite max", "[{channels: [t1], max: .inf}]", []string{"convert.validate.bounds[0].max", "finite"}},
		{"negative repair", "[{channels: [t1], max: 1, repair: -1}]", []string{"convert.validate.bounds[0].repair", "-1"}},
		{"fraction above 1", "[{channels: [t1], max: 1, max_fraction: 1.5}]", []string{"convert.validate.bounds[0].max_fraction", "(0, 1]", "1.5"}},
		{"channel twice", "[{channels: [t1], max: 1}, {channels: [q1, t1], min: 0}]", []string{"convert.validate.bounds[1].channels[1]", `"t1" is bounded already`}},
		{"unknown key", "[{channels: [t1], maximum: 1}]", []string{"maximum"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSpec(writeSpec(t, strings.Replace(minimalYAML, anchor, anchor+"\n  validate: {bounds: "+tc.bounds+"}", 1)))
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("err = %v, want ErrSpec", err)
			}
			for _, m := range tc.want {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to mention %q", err, m)
				}
			}
		})
	}
	s, err := LoadSpec(writeSpec(t, strings.Replace(minimalYAML, anchor, anchor+"\n  validate: {bounds: [{channels: [t1, t2], max: 1}]}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Validate.Bounds[0].MaxFraction != DefaultBoundMaxFraction {
		t.Errorf("max_fraction default %v", s.Validate.Bounds[0].MaxFraction)
	}
	_, err = NewConverter(s, Options{})
	if !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "validate.bounds[0].channels[1]") || !strings.Contains(err.Error(), `"t2" is not one the spec reads`) {
		t.Errorf("unread channel: err = %v", err)
	}
}
