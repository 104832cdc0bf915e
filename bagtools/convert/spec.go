package convert

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/viper"

	"github.com/calisym/calisym/statemap"
)

// ErrSpec wraps every problem found in a conversion spec (statemap.ErrSpec:
// the mapping and the rest of the section share it).
var ErrSpec = statemap.ErrSpec

// SpecKey is the key of the conversion spec in a params YAML file.
const SpecKey = statemap.SpecKey

// Spec says how to turn robot logs into a calisym dataset: where every
// configuration, velocity, control and contact component comes from, the
// mechanics model for p = M(q)v, the clock, resampling, filtering,
// windowing, validation and the ID/OOD split. It is read from the
// "convert:" section of a params YAML file by LoadSpec.
//
// Channel names are column names for tables (CSV, parquet) and, for message
// logs, message paths in Foxglove's style ("/joint_states.position[1]").
type Spec struct {
	// Robot names the robot, recorded in the dataset's provenance.
	Robot string `yaml:"robot" mapstructure:"robot"`
	// Inputs are the log files, as glob patterns relative to the data root
	// (Options.DataRoot) unless absolute. They may be left out of the
	// params when the files are given otherwise (the LOG arguments of
	// `calisym convert`, which replace them).
	Inputs []string `yaml:"inputs" mapstructure:"inputs"`
	// Source configures how tables are read.
	Source SourceSpec `yaml:"source" mapstructure:"source"`
	// Clock says which timestamps to trust.
	Clock ClockSpec `yaml:"clock" mapstructure:"clock"`
	// Spec is the mapping to the state and ports (state, model, control
	// and contact), which the live node shares.
	statemap.Spec `yaml:",inline" mapstructure:",squash"`
	// Resample sets the target and working rates.
	Resample ResampleSpec `yaml:"resample" mapstructure:"resample"`
	// Filter is the zero-phase low-pass applied at the working rate.
	Filter FilterSpec `yaml:"filter" mapstructure:"filter"`
	// Window sets the training windows.
	Window WindowSpec `yaml:"window" mapstructure:"window"`
	// Validate sets the thresholds that reject samples and windows.
	Validate ValidateSpec `yaml:"validate" mapstructure:"validate"`
	// Split assigns windows to splits (ID, OOD, …).
	Split SplitSpec `yaml:"split" mapstructure:"split"`
}

// SourceSpec configures the table readers.
type SourceSpec struct {
	// Format is "csv", "parquet", "mcap" or "bag" (message logs, whose
	// reader is chosen by the file's magic bytes), or "" to choose by file
	// extension.
	Format string `yaml:"format" mapstructure:"format"`
	// NoHeader says that CSV files have no header line; Columns then names
	// their columns.
	NoHeader bool `yaml:"no_header" mapstructure:"no_header"`
	// Columns names the columns of header-less CSV files, in file order.
	Columns []string `yaml:"columns" mapstructure:"columns"`
	// Comma is the CSV field separator (default ",").
	Comma string `yaml:"comma" mapstructure:"comma"`
}

// Clock stamps.
const (
	// StampHeader trusts each message's header.stamp (message logs).
	StampHeader = "header"
	// StampLogTime trusts the time the recorder logged each message.
	StampLogTime = "log_time"
)

// ClockSpec says which timestamps to trust.
type ClockSpec struct {
	// Stamp chooses, for message logs, between StampHeader and
	// StampLogTime (default StampHeader). Under StampHeader, messages of
	// a type without a header, or with a zero stamp, are stamped with
	// their log time, and the conversion report's warnings say so (see
	// MessageSource).
	Stamp string `yaml:"stamp" mapstructure:"stamp"`
	// Column is the time column of tables.
	Column string `yaml:"column" mapstructure:"column"`
	// Unit is the unit of Column: "s" (default), "ms", "us" or "ns".
	Unit string `yaml:"unit" mapstructure:"unit"`
}

// ResampleSpec sets the rates.
type ResampleSpec struct {
	// Rate is the dataset's sampling rate in hertz.
	Rate float64 `yaml:"rate" mapstructure:"rate"`
	// WorkRate is the uniform rate the inputs are aligned and filtered at
	// before decimation to Rate; it must be an integer multiple of Rate.
	// Zero chooses the multiple of Rate nearest the input's median rate.
	WorkRate float64 `yaml:"work_rate" mapstructure:"work_rate"`
}

// FilterSpec is the zero-phase Butterworth low-pass.
type FilterSpec struct {
	// Kind is "butterworth" or "none" (default "none").
	Kind string `yaml:"kind" mapstructure:"kind"`
	// Order is the filter order (the paper: 6).
	Order int `yaml:"order" mapstructure:"order"`
	// Cutoff is the −3 dB frequency in hertz (the paper: 18); it must lie
	// below the Nyquist frequency of Rate.
	Cutoff float64 `yaml:"cutoff" mapstructure:"cutoff"`
	// Channels are the channel groups the filter acts on (FilterGroups):
	// "configuration" (base pose, joint positions), "velocity" (base
	// twist, joint rates), "momentum" (p = M(q)v, computed at the working
	// rate and filtered before decimation, the paper's quadruped
	// preparation), "control" and "contact". Empty means every input
	// group: configuration, velocity, control and contact (without the
	// last two under SkipPorts), with p computed from the filtered inputs.
	Channels []string `yaml:"channels" mapstructure:"channels"`
	// SkipPorts leaves the ports unfiltered (they are still decimated);
	// with Channels empty only. Prefer Channels.
	SkipPorts bool `yaml:"skip_ports" mapstructure:"skip_ports"`
}

// Filter channel groups (FilterSpec.Channels).
const (
	FilterConfiguration = statemap.GroupConfiguration
	FilterVelocity      = statemap.GroupVelocity
	FilterMomentum      = "momentum"
	FilterControl       = statemap.GroupControl
	FilterContact       = statemap.GroupContact
)

// FilterGroups returns the channel groups FilterSpec.Channels accepts.
func FilterGroups() []string {
	return []string{FilterConfiguration, FilterVelocity, FilterMomentum, FilterControl, FilterContact}
}

// Filters reports whether the filter acts on the channel group.
func (f *FilterSpec) Filters(group string) bool {
	if f.Kind != "butterworth" {
		return false
	}
	if len(f.Channels) == 0 {
		switch group {
		case FilterConfiguration, FilterVelocity:
			return true
		case FilterControl, FilterContact:
			return !f.SkipPorts
		}
		return false
	}
	return slices.Contains(f.Channels, group)
}

// WindowSpec sets the training windows, in samples at Rate.
type WindowSpec struct {
	// Length is the number of samples in a window (≥ 2).
	Length int `yaml:"length" mapstructure:"length"`
	// Stride is the distance between window starts (≥ 1).
	Stride int `yaml:"stride" mapstructure:"stride"`
	// Storage says how windows become dataset episodes when q is relative
	// to a window's first pose (floating-base kinds): StorageWindow
	// (default) writes every window as its own episode, exactly as the
	// trainer consumes it; StorageEpisode merges consecutive windows into
	// one episode with q relative to the episode's first pose, about
	// Length/Stride times smaller, to be re-expressed per window with
	// RebaseSE3 or RebaseGravity. Joint-only datasets always merge.
	Storage string `yaml:"storage" mapstructure:"storage"`
}

// Window storage modes.
const (
	// StorageWindow writes one episode per window.
	StorageWindow = "window"
	// StorageEpisode merges consecutive windows into episodes.
	StorageEpisode = "episode"
)

// ValidateSpec sets the thresholds of validation. Zero disables a check.
type ValidateSpec struct {
	// MaxGap is the longest time between two input samples before the
	// samples between them are rejected as a gap [s].
	MaxGap float64 `yaml:"max_gap" mapstructure:"max_gap"`
	// MaxSpeed bounds the speed of the base origin between consecutive raw
	// samples [m/s]; a faster step is a position jump.
	MaxSpeed float64 `yaml:"max_speed" mapstructure:"max_speed"`
	// MaxAngularSpeed bounds the base's rotation rate between consecutive
	// raw samples [rad/s].
	MaxAngularSpeed float64 `yaml:"max_angular_speed" mapstructure:"max_angular_speed"`
	// MaxJointSpeed bounds each joint's rate between consecutive raw
	// samples [rad/s or m/s].
	MaxJointSpeed float64 `yaml:"max_joint_speed" mapstructure:"max_joint_speed"`
	// MaxQuatNormError bounds ||q| − 1| of raw quaternions.
	MaxQuatNormError float64 `yaml:"max_quat_norm_error" mapstructure:"max_quat_norm_error"`
	// MaxMomentumStep bounds |p_i(k+1) − p_i(k)| at Rate, one value for all
	// components or one per component.
	MaxMomentumStep []float64 `yaml:"max_momentum_step" mapstructure:"max_momentum_step"`
	// MomentumJumpMAD flags a momentum step more than this many robust
	// standard deviations (1.4826·MAD of the file's steps) from the median.
	MomentumJumpMAD float64 `yaml:"momentum_jump_mad" mapstructure:"momentum_jump_mad"`
	// MaxNaNFraction fails a file with a channel whose fraction of NaN
	// samples exceeds it. A channel that is entirely NaN always fails.
	MaxNaNFraction float64 `yaml:"max_nan_fraction" mapstructure:"max_nan_fraction"`
	// Exclude rejects the windows that overlap known bad stretches of
	// named files (unmodelled contacts, a fall, an operator's push),
	// counted under ReasonExcluded.
	Exclude []ExcludeSpec `yaml:"exclude" mapstructure:"exclude"`
	// Bounds declare the physical range of channels the spec reads: a
	// sample outside it is a glitch of the logger, repaired or rejected
	// (BoundSpec).
	Bounds []BoundSpec `yaml:"bounds" mapstructure:"bounds"`
}

// DefaultBoundMaxFraction is BoundSpec.MaxFraction when unset.
const DefaultBoundMaxFraction = 0.01

// BoundSpec is the physical range [Min, Max] of some channels, in the
// units the log records them (before the channel's unit, scale and
// offset), so that the value an error names is the one in the file.
//
// Per file and channel, the finite samples outside the range (a NaN is
// counted as a NaN, not here) are counted in FileReport.OutOfRange. A
// run of at most Repair consecutive such samples between two samples in
// range is replaced by the linear interpolation in time between those two
// (FileReport.Repaired, with a warning naming the row); a longer run, or
// one at the file's start or end, marks its samples bad and every window
// that covers one is rejected (ReasonOutOfRange). A channel with more
// than MaxFraction of its samples out of range is not glitching but
// wrong (its unit, its scale, the bound): the file fails with ErrRange,
// naming the channel, the first such sample's row and value.
type BoundSpec struct {
	// Channels are the channel names (columns or message paths) the
	// bound applies to; each must be one the spec reads.
	Channels []string `yaml:"channels" mapstructure:"channels"`
	// Min and Max are the bounds; either may be left out (no bound on
	// that side), not both.
	Min *float64 `yaml:"min" mapstructure:"min"`
	Max *float64 `yaml:"max" mapstructure:"max"` // see Min
	// Repair is the longest run of consecutive out-of-range samples
	// repaired by interpolation (0: none, every window covering an
	// out-of-range sample is rejected).
	Repair int `yaml:"repair" mapstructure:"repair"`
	// MaxFraction is the largest fraction of a channel's samples that may
	// lie out of range before the file fails (0: DefaultBoundMaxFraction).
	MaxFraction float64 `yaml:"max_fraction" mapstructure:"max_fraction"`
	// Why says where the bound comes from (documentation only).
	Why string `yaml:"why" mapstructure:"why"`
}

// Contains reports whether x lies within the bound (NaN does: it is not
// out of range but missing).
func (b *BoundSpec) Contains(x float64) bool {
	return !(b.Min != nil && x < *b.Min) && !(b.Max != nil && x > *b.Max)
}

// String formats the range as "[min, max]" with ±∞ for a missing side.
func (b *BoundSpec) String() string {
	lo, hi := math.Inf(-1), math.Inf(1)
	if b.Min != nil {
		lo = *b.Min
	}
	if b.Max != nil {
		hi = *b.Max
	}
	return fmt.Sprintf("[%g, %g]", lo, hi)
}

// ExcludeSpec names a stretch of some input files whose windows are
// rejected.
type ExcludeSpec struct {
	// Files are glob patterns matched, like SplitRule.Files, against the
	// input path relative to the data root and against its base name.
	Files []string `yaml:"files" mapstructure:"files"`
	// Time is [from, to) in seconds since the start of the file; to may
	// be omitted for "to the end". Empty excludes the whole file.
	Time []float64 `yaml:"time" mapstructure:"time"`
	// Why is recorded in the conversion report.
	Why string `yaml:"why" mapstructure:"why"`
}

// matchFiles reports whether rel (a path relative to the data root)
// matches one of the glob patterns, whole or by its base name.
func matchFiles(patterns []string, rel string) bool {
	for _, pat := range patterns {
		if ok, _ := filepath.Match(pat, rel); ok {
			return true
		}
		if ok, _ := filepath.Match(pat, filepath.Base(rel)); ok {
			return true
		}
	}
	return false
}

// excludes reports whether the stretch [from, to] of file rel overlaps
// the exclusion.
func (e *ExcludeSpec) excludes(rel string, from, to float64) bool {
	if !matchFiles(e.Files, rel) {
		return false
	}
	switch len(e.Time) {
	case 0:
		return true
	case 1:
		return to >= e.Time[0]
	}
	return to >= e.Time[0] && from < e.Time[1]
}

// Split criteria.
const (
	// SplitByFile assigns whole files by glob pattern.
	SplitByFile = "file"
	// SplitByTime assigns windows by their start time since the start of
	// their file.
	SplitByTime = "time"
	// SplitByEnergy assigns windows by the mechanical energy at their start,
	// by absolute range or by quantile over all windows.
	SplitByEnergy = "energy"
)

// SplitSpec assigns windows to named splits.
type SplitSpec struct {
	// By is SplitByFile, SplitByTime, SplitByEnergy or "" (everything to
	// Default).
	By string `yaml:"by" mapstructure:"by"`
	// Default is the split of windows no rule matches (default "id").
	Default string `yaml:"default" mapstructure:"default"`
	// Rules are tried in order; the first match wins.
	Rules []SplitRule `yaml:"rules" mapstructure:"rules"`
}

// SplitRule assigns matching windows to Split.
type SplitRule struct {
	// Split names the split.
	Split string `yaml:"split" mapstructure:"split"`
	// Files are glob patterns matched against the input path relative to
	// the data root and against its base name (SplitByFile).
	Files []string `yaml:"files" mapstructure:"files"`
	// Time is [from, to) in seconds since the start of the file
	// (SplitByTime).
	Time []float64 `yaml:"time" mapstructure:"time"`
	// Energy is [min, max) in joules (SplitByEnergy); omit max for no bound.
	Energy []float64 `yaml:"energy" mapstructure:"energy"`
	// Quantile is [from, to) of the distribution of window energies over
	// all inputs, in [0, 1] (SplitByEnergy).
	Quantile []float64 `yaml:"quantile" mapstructure:"quantile"`
}

// LoadSpec reads the "convert:" section of the params YAML file at path
// with viper, rejecting unknown keys, fills in defaults and validates it.
// Errors name the offending field, e.g. "convert.window.length".
func LoadSpec(path string) (*Spec, error) {
	v := viper.New()
	v.SetConfigFile(path)
	if err := v.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("convert: read params %s: %w", path, err)
	}
	return SpecFromViper(v, path)
}

// SpecFromViper decodes the "convert:" section of v (see LoadSpec); where
// names the configuration in errors.
func SpecFromViper(v *viper.Viper, where string) (*Spec, error) {
	if !v.IsSet(SpecKey) {
		return nil, fmt.Errorf("%s: %w: no %q section (keys: %s)", where, ErrSpec, SpecKey, strings.Join(topKeys(v), ", "))
	}
	sub := v.Sub(SpecKey)
	if sub == nil {
		return nil, fmt.Errorf("%s: %w: %q is not a mapping", where, ErrSpec, SpecKey)
	}
	var s Spec
	if err := sub.UnmarshalExact(&s, viper.DecodeHook(channelHook)); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", where, ErrSpec, decodeMessage(err))
	}
	s.Defaults()
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &s, nil
}

// decodeMessage turns a mapstructure decoding error into one line with
// full field paths: "'window' has invalid keys: strid" becomes
// "convert.window has invalid keys: strid".
func decodeMessage(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "decoding failed due to the following error(s):")
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "* "))
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "''"); ok {
			line = SpecKey + rest
		} else if rest, ok := strings.CutPrefix(line, "'"); ok {
			if field, tail, ok := strings.Cut(rest, "'"); ok {
				line = SpecKey + "." + field + tail
			}
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

func topKeys(v *viper.Viper) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range v.AllKeys() {
		top, _, _ := strings.Cut(k, ".")
		if !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	return out
}

// channelHook decodes a bare string into statemap.Channel{Name: s}, and
// refuses a fraction for an integer key (viper would truncate it).
func channelHook(from, to reflect.Type, data any) (any, error) {
	if to == reflect.TypeFor[statemap.Channel]() && from.Kind() == reflect.String {
		return statemap.Channel{Name: data.(string)}, nil
	}
	if to == reflect.TypeFor[statemap.Channel]() && from.Kind() == reflect.Map {
		if m, ok := data.(map[string]any); ok {
			if v, ok := m["scale"]; ok && zeroNumber(v) {
				return nil, fmt.Errorf("scale %v: %w", v, statemap.ErrZeroScale)
			}
		}
	}
	// viper decodes weakly: 2.5 would become the integer 2 unsaid
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if from.Kind() == reflect.Float64 || from.Kind() == reflect.Float32 {
			if v := reflect.ValueOf(data).Float(); v != math.Trunc(v) {
				return nil, fmt.Errorf("want a whole number, got %v", v)
			}
		}
	}
	return data, nil
}

// zeroNumber reports whether v, a value viper decoded, is a number equal
// to 0.
func zeroNumber(v any) bool {
	r := reflect.ValueOf(v)
	switch {
	case r.CanFloat():
		return r.Float() == 0
	case r.CanInt():
		return r.Int() == 0
	case r.CanUint():
		return r.Uint() == 0
	}
	return false
}

// Defaults fills in the defaults of unset fields.
func (s *Spec) Defaults() {
	if s.Clock.Stamp == "" {
		s.Clock.Stamp = StampHeader
	}
	if s.Clock.Unit == "" {
		s.Clock.Unit = "s"
	}
	s.Spec.Defaults()
	if s.Filter.Kind == "" {
		s.Filter.Kind = "none"
	}
	if s.Split.Default == "" {
		s.Split.Default = "id"
	}
	if s.Window.Storage == "" {
		s.Window.Storage = StorageWindow
	}
	for i := range s.Validate.Bounds {
		if s.Validate.Bounds[i].MaxFraction == 0 {
			s.Validate.Bounds[i].MaxFraction = DefaultBoundMaxFraction
		}
	}
}

// specError returns an error wrapping ErrSpec that names the field.
func specError(field, format string, args ...any) error {
	return statemap.FieldError(field, format, args...)
}

func oneOf(field, got string, allowed ...string) error {
	return statemap.CheckOneOf(field, got, allowed...)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Check validates the spec (after Defaults), naming the first offending
// field. It checks the spec alone; files are checked when opened.
func (s *Spec) Check() error {
	if s.Source.Format != "" {
		if err := oneOf("source.format", s.Source.Format, "csv", "parquet", "mcap", "bag"); err != nil {
			return err
		}
	}
	if s.Source.NoHeader && len(s.Source.Columns) == 0 {
		return specError("source.columns", "header-less CSV needs column names")
	}
	if len([]rune(s.Source.Comma)) > 1 {
		return specError("source.comma", "%q is not a single character", s.Source.Comma)
	}
	if err := oneOf("clock.stamp", s.Clock.Stamp, StampHeader, StampLogTime); err != nil {
		return err
	}
	if err := oneOf("clock.unit", s.Clock.Unit, "s", "ms", "us", "ns"); err != nil {
		return err
	}
	if err := s.Spec.Check(); err != nil {
		return err
	}
	if err := s.checkProcessing(); err != nil {
		return err
	}
	return s.checkSplit()
}

func (s *Spec) checkProcessing() error {
	r := &s.Resample
	if !(r.Rate > 0) || !finite(r.Rate) {
		return specError("resample.rate", "must be positive, got %g", r.Rate)
	}
	if r.WorkRate != 0 {
		ratio := r.WorkRate / r.Rate
		if !(ratio >= 1) || math.Abs(ratio-math.Round(ratio)) > 1e-9 {
			return specError("resample.work_rate", "%g Hz is not an integer multiple of rate %g Hz", r.WorkRate, r.Rate)
		}
	}
	f := &s.Filter
	if err := oneOf("filter.kind", f.Kind, "none", "butterworth"); err != nil {
		return err
	}
	if f.Kind == "butterworth" {
		if f.Order < 1 || f.Order > 32 {
			return specError("filter.order", "must be in [1, 32], got %d", f.Order)
		}
		if !(f.Cutoff > 0 && f.Cutoff < r.Rate/2) {
			return specError("filter.cutoff", "%g Hz must lie between 0 and the Nyquist frequency %g Hz of rate %g Hz", f.Cutoff, r.Rate/2, r.Rate)
		}
	}
	for i, g := range f.Channels {
		if !slices.Contains(FilterGroups(), g) {
			return specError(fmt.Sprintf("filter.channels[%d]", i), "unknown channel group %q (known: %s)", g, strings.Join(FilterGroups(), ", "))
		}
		if slices.Index(f.Channels, g) != i {
			return specError(fmt.Sprintf("filter.channels[%d]", i), "channel group %q given twice", g)
		}
	}
	if len(f.Channels) > 0 && f.SkipPorts {
		return specError("filter.skip_ports", "give either filter.channels or filter.skip_ports, not both")
	}
	for i, e := range s.Validate.Exclude {
		key := fmt.Sprintf("validate.exclude[%d]", i)
		if len(e.Files) == 0 {
			return specError(key+".files", "name at least one file pattern")
		}
		for _, pat := range e.Files {
			if _, err := filepath.Match(pat, ""); err != nil {
				return specError(key+".files", "bad pattern %q: %v", pat, err)
			}
		}
		if len(e.Time) > 2 || (len(e.Time) == 2 && !(e.Time[1] > e.Time[0])) || (len(e.Time) > 0 && !finite(e.Time[0])) {
			return specError(key+".time", "must be [from] or [from, to) with from < to, got %v", e.Time)
		}
	}
	if err := s.checkBounds(); err != nil {
		return err
	}
	w := &s.Window
	if w.Length < 2 {
		return specError("window.length", "must be at least 2, got %d", w.Length)
	}
	if w.Stride < 1 {
		return specError("window.stride", "must be at least 1, got %d", w.Stride)
	}
	if err := oneOf("window.storage", w.Storage, StorageWindow, StorageEpisode); err != nil {
		return err
	}
	v := &s.Validate
	for _, x := range []struct {
		name string
		v    float64
	}{
		{"max_gap", v.MaxGap}, {"max_speed", v.MaxSpeed}, {"max_angular_speed", v.MaxAngularSpeed},
		{"max_joint_speed", v.MaxJointSpeed}, {"max_quat_norm_error", v.MaxQuatNormError},
		{"momentum_jump_mad", v.MomentumJumpMAD}, {"max_nan_fraction", v.MaxNaNFraction},
	} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			return specError("validate."+x.name, "must be a finite non-negative number, got %g", x.v)
		}
	}
	if v.MaxNaNFraction > 1 {
		return specError("validate.max_nan_fraction", "must be at most 1, got %g", v.MaxNaNFraction)
	}
	nv := len(s.State.Joints)
	if s.State.Kind != statemap.StateJoints {
		nv += 6
	}
	if n := len(v.MaxMomentumStep); n > 1 && n != nv {
		return specError("validate.max_momentum_step", "needs 1 value or one per momentum component (%d), got %d", nv, n)
	}
	for i, x := range v.MaxMomentumStep {
		if !(x > 0) || math.IsInf(x, 0) {
			return specError(fmt.Sprintf("validate.max_momentum_step[%d]", i), "must be positive, got %g", x)
		}
	}
	return nil
}

// checkBounds checks validate.bounds: channels named once each, a finite
// range with min < max, a non-negative repair length and a fraction in
// (0, 1]. Whether the spec reads the channels is checked by NewConverter.
func (s *Spec) checkBounds() error {
	seen := map[string]string{}
	for i, b := range s.Validate.Bounds {
		key := fmt.Sprintf("validate.bounds[%d]", i)
		if len(b.Channels) == 0 {
			return specError(key+".channels", "name at least one channel")
		}
		for j, ch := range b.Channels {
			if ch == "" {
				return specError(fmt.Sprintf("%s.channels[%d]", key, j), "empty channel name")
			}
			if prev, ok := seen[ch]; ok {
				return specError(fmt.Sprintf("%s.channels[%d]", key, j), "channel %q is bounded already by %s", ch, prev)
			}
			seen[ch] = key
		}
		if b.Min == nil && b.Max == nil {
			return specError(key, "give min, max or both")
		}
		if b.Min != nil && !finite(*b.Min) {
			return specError(key+".min", "must be finite, got %g", *b.Min)
		}
		if b.Max != nil && !finite(*b.Max) {
			return specError(key+".max", "must be finite, got %g", *b.Max)
		}
		if b.Min != nil && b.Max != nil && !(*b.Min < *b.Max) {
			return specError(key, "min %g must be below max %g", *b.Min, *b.Max)
		}
		if b.Repair < 0 {
			return specError(key+".repair", "must be a non-negative number of samples, got %d", b.Repair)
		}
		if !(b.MaxFraction > 0 && b.MaxFraction <= 1) {
			return specError(key+".max_fraction", "must be in (0, 1], got %g", b.MaxFraction)
		}
	}
	return nil
}

// CheckSplitName checks that a split name can name its dataset folder in
// the output directory: not empty, no path separator, not "." or "..".
func CheckSplitName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("split name %q must name a folder (such as train or ood), not a path", name)
	}
	return nil
}

func (s *Spec) checkSplit() error {
	sp := &s.Split
	if err := oneOf("split.by", sp.By, "", SplitByFile, SplitByTime, SplitByEnergy); err != nil {
		return err
	}
	if err := CheckSplitName(sp.Default); err != nil {
		return specError("split.default", "%v", err)
	}
	if sp.By == "" && len(sp.Rules) > 0 {
		return specError("split.by", "rules given but no criterion")
	}
	for i, r := range sp.Rules {
		f := fmt.Sprintf("split.rules[%d]", i)
		if r.Split == "" {
			return specError(f+".split", "rule has no split name")
		}
		if err := CheckSplitName(r.Split); err != nil {
			return specError(f+".split", "%v", err)
		}
		switch sp.By {
		case SplitByFile:
			if len(r.Files) == 0 {
				return specError(f+".files", "no patterns")
			}
		case SplitByTime:
			if len(r.Time) != 2 || !(r.Time[1] > r.Time[0]) {
				return specError(f+".time", "needs [from, to) with to > from, got %v", r.Time)
			}
		case SplitByEnergy:
			switch {
			case len(r.Energy) > 0 && len(r.Quantile) > 0:
				return specError(f, "give energy or quantile, not both")
			case len(r.Energy) == 1, len(r.Energy) == 2 && r.Energy[1] > r.Energy[0]:
			case len(r.Quantile) == 2 && r.Quantile[0] >= 0 && r.Quantile[1] <= 1 && r.Quantile[1] > r.Quantile[0]:
			default:
				return specError(f, "needs energy: [min] or [min, max), or quantile: [from, to) within [0, 1]")
			}
		}
	}
	return nil
}
