package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Report is the conversion report: per input file what was read and
// rejected, window counts with rejection reasons, and per split the
// statistics of every written channel.
type Report struct {
	// Robot is the spec's robot name.
	Robot string `json:"robot"`
	// Rate is the dataset rate [Hz].
	Rate float64 `json:"rate_hz"`
	// WindowLen and Stride are the window length and stride in samples.
	WindowLen int `json:"window_len"`
	Stride    int `json:"stride"` // see WindowLen
	// Files has one entry per input converted, in input order.
	Files []FileReport `json:"files"`
	// Skipped lists the inputs left out because they failed to convert
	// (Options.SkipBad), in input order.
	Skipped []SkippedFile `json:"skipped,omitempty"`
	// Windows sums the window counts of all files.
	Windows WindowCounts `json:"windows"`
	// Splits describes each split written.
	Splits map[string]SplitReport `json:"splits"`
}

// FileReport describes the conversion of one input.
type FileReport struct {
	// Path is the input's path relative to the data root.
	Path string `json:"path"`
	// Rows is the number of samples read (of the first channel).
	Rows int `json:"rows"`
	// Duration is the aligned time span [s].
	Duration float64 `json:"duration_s"`
	// InputRate is the median input rate [Hz]; WorkRate the rate of
	// alignment and filtering [Hz].
	InputRate float64 `json:"input_rate_hz"`
	WorkRate  float64 `json:"work_rate_hz"` // see InputRate
	// Samples is the number of samples at the dataset rate.
	Samples int `json:"samples"`
	// NaN counts the NaN and infinite values read, per channel that had
	// any.
	NaN map[string]int `json:"nan,omitempty"`
	// Gaps counts the input gaps longer than validate.max_gap, GapSeconds
	// their total length.
	Gaps       int     `json:"gaps"`
	GapSeconds float64 `json:"gap_seconds"` // see Gaps
	// Jumps counts the raw configuration steps beyond the speed limits.
	Jumps int `json:"jumps"`
	// MaxQuatNormError is the largest ||q| − 1| of the raw quaternions;
	// QuatRejected counts those beyond validate.max_quat_norm_error.
	MaxQuatNormError float64 `json:"max_quat_norm_error"`
	QuatRejected     int     `json:"quat_rejected"` // see MaxQuatNormError
	// MomentumJumps counts the momentum steps beyond the thresholds.
	MomentumJumps int `json:"momentum_jumps"`
	// OutOfRange counts, per channel that had any, the finite samples
	// outside the channel's physical range (validate.bounds); Repaired
	// those of them replaced by interpolation. The others reject the
	// windows that cover them (ReasonOutOfRange).
	OutOfRange map[string]int `json:"out_of_range,omitempty"`
	Repaired   map[string]int `json:"repaired,omitempty"` // see OutOfRange
	// Windows counts this file's windows.
	Windows WindowCounts `json:"windows"`
	// Warnings lists recoverable problems (a truncated last line, …).
	Warnings []string `json:"warnings,omitempty"`
}

// SkippedFile is an input left out of a conversion (Options.SkipBad).
type SkippedFile struct {
	// Path is the input's path relative to the data root (as
	// FileReport.Path).
	Path string `json:"path"`
	// Error says why it did not convert.
	Error string `json:"error"`
}

// WindowCounts counts windows and the reasons of their rejection.
type WindowCounts struct {
	// Total is the number of candidate windows.
	Total int `json:"total"`
	// Kept is the number written.
	Kept int `json:"kept"`
	// Rejected counts the rejected windows by reason (ReasonGap, …).
	Rejected map[string]int `json:"rejected,omitempty"`
}

func (w *WindowCounts) add(o WindowCounts) {
	w.Total += o.Total
	w.Kept += o.Kept
	for k, v := range o.Rejected {
		if w.Rejected == nil {
			w.Rejected = map[string]int{}
		}
		w.Rejected[k] += v
	}
}

// SplitReport describes one written split.
type SplitReport struct {
	// Windows, Episodes and Samples count what the split holds; Samples
	// counts rows written (a row shared by overlapping windows once).
	Windows  int `json:"windows"`
	Episodes int `json:"episodes"` // see Windows
	Samples  int `json:"samples"`  // see Windows
	// EnergyRange is the [min, max] of the windows' initial energies [J].
	EnergyRange [2]float64 `json:"energy_range"`
	// Channels has the statistics of every state and port column.
	Channels []ChannelStats `json:"channels"`
}

// ChannelStats summarises one written column.
type ChannelStats struct {
	Name  string  `json:"name"`  // column name (coordinate, momentum or port)
	Count int     `json:"count"` // rows written
	Mean  float64 `json:"mean"`  // sample mean
	Std   float64 `json:"std"`   // sample standard deviation
	Min   float64 `json:"min"`   // smallest value
	Max   float64 `json:"max"`   // largest value
}

// stats accumulates ChannelStats with Welford's algorithm.
type stats struct {
	ChannelStats
	m2 float64
}

func newStats(name string) *stats {
	return &stats{ChannelStats: ChannelStats{Name: name, Min: math.Inf(1), Max: math.Inf(-1)}}
}

func (s *stats) add(x float64) {
	s.Count++
	d := x - s.Mean
	s.Mean += d / float64(s.Count)
	s.m2 += d * (x - s.Mean)
	s.Min = math.Min(s.Min, x)
	s.Max = math.Max(s.Max, x)
}

func (s *stats) result() ChannelStats {
	out := s.ChannelStats
	if s.Count > 1 {
		out.Std = math.Sqrt(s.m2 / float64(s.Count-1))
	}
	if s.Count == 0 {
		out.Min, out.Max = 0, 0
	}
	return out
}

// asMap returns the report as generic JSON values, for dataset.Meta.Report.
func (r *Report) asMap() (map[string]any, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("convert: report: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("convert: report: %w", err)
	}
	return m, nil
}

// String summarises the report in a few lines.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d files", r.Robot, len(r.Files))
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, " (%d more skipped)", len(r.Skipped))
	}
	fmt.Fprintf(&b, ", %d of %d windows kept", r.Windows.Kept, r.Windows.Total)
	writeReasons(&b, r.Windows.Rejected)
	b.WriteByte('\n')
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %s: %.1f s at %.0f→%.0f Hz, %d/%d windows", f.Path, f.Duration, f.InputRate, r.Rate, f.Windows.Kept, f.Windows.Total)
		writeReasons(&b, f.Windows.Rejected)
		if f.Jumps > 0 || f.Gaps > 0 || f.MomentumJumps > 0 {
			fmt.Fprintf(&b, "; %d jumps, %d gaps, %d momentum jumps", f.Jumps, f.Gaps, f.MomentumJumps)
		}
		if n := sumCounts(f.OutOfRange); n > 0 {
			fmt.Fprintf(&b, "; %d samples out of range, %d repaired", n, sumCounts(f.Repaired))
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(&b, "; warning: %s", w)
		}
		b.WriteByte('\n')
	}
	writeSkipped(&b, r.Skipped)
	names := make([]string, 0, len(r.Splits))
	for k := range r.Splits {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		s := r.Splits[k]
		fmt.Fprintf(&b, "  split %s: %d windows, %d episodes, %d samples, energy [%.4g, %.4g] J\n", k, s.Windows, s.Episodes, s.Samples, s.EnergyRange[0], s.EnergyRange[1])
	}
	return b.String()
}

// sumCounts returns the sum of per-channel counts.
func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func writeReasons(b *strings.Builder, r map[string]int) {
	if len(r) == 0 {
		return
	}
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString(" (rejected:")
	for _, k := range keys {
		fmt.Fprintf(b, " %s %d", k, r[k])
	}
	b.WriteString(")")
}

// writeSkipped writes a line per skipped file.
func writeSkipped(b *strings.Builder, skipped []SkippedFile) {
	for _, f := range skipped {
		fmt.Fprintf(b, "  skipped %s: %s\n", f.Path, f.Error)
	}
}
