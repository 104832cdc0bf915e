package predictor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Defaults of an architecture description (ParseArch) for what it leaves
// out. They are the paper's pendulum settings, so "grb:12x8:m2" is the
// pendulum preset's architecture.
const (
	// DefaultRidgeDim is the ridge dimension m of a GRB layer.
	DefaultRidgeDim = 2
	// DefaultSplineIntervals is the number of knot intervals of the GRB
	// spline on each ridge axis.
	DefaultSplineIntervals = 12
	// DefaultSplineRange is the half-width of the GRB knot grid,
	// [−DefaultSplineRange, DefaultSplineRange] in normalised units.
	DefaultSplineRange = 3.5
	// DefaultStepSize is the flow time h of every layer.
	DefaultStepSize = 1
)

// ArchGrammar is the grammar of an architecture description, as a user reads it.
const ArchGrammar = "KIND:LAYERSxWIDTH[:mM][:kK][:hH], e.g. gr:18x66 or grb:12x8:m2"

// ParseArch reads an architecture description:
//
//	KIND:LAYERSxWIDTH[:OPTION]...
//
//	KIND    gr (GR-SympNet) or grb (GRB-SympNet)
//	LAYERS  number of symplectic layers, ≥ 1
//	WIDTH   tanh units per layer: the ridge width of a GR layer (≥ 1), the
//	        smooth tail of a GRB layer (≥ 0)
//	OPTION  mM  GRB only: ridge dimension m of the spline, 1…4 (default 2)
//	        kK  GRB only: knot intervals per ridge axis on [−3.5, 3.5] (default 12)
//	        hH  flow time h of every layer, > 0 (default 1)
//
// Case and spaces around the fields do not matter; "×" may stand for "x".
// "gr:14x36" and "gr:18x66" are the quadrotor and quadruped presets'
// architectures and "grb:12x8:m2" (or "grb:12x8") the pendulum's. The
// result is validated (Arch.Validate); errors quote the description and
// say which field is wrong.
func ParseArch(desc string) (Arch, error) {
	s := strings.ToLower(strings.TrimSpace(desc))
	fail := func(format string, args ...any) (Arch, error) {
		return Arch{}, fmt.Errorf("predictor: architecture %q: %s (want %s)", desc, fmt.Sprintf(format, args...), ArchGrammar)
	}
	fields := strings.Split(s, ":")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	if len(fields) < 2 || fields[1] == "" {
		return fail("no LAYERSxWIDTH after the kind")
	}
	a := Arch{Kind: Kind(fields[0]), StepSize: DefaultStepSize}
	switch a.Kind {
	case KindGR:
	case KindGRB:
		a.RidgeDim = DefaultRidgeDim
		a.Spline = Spline{Intervals: DefaultSplineIntervals, Lo: -DefaultSplineRange, Hi: DefaultSplineRange}
	default:
		return fail("unknown kind %q: gr (GR-SympNet) or grb (GRB-SympNet)", fields[0])
	}
	size := strings.ReplaceAll(fields[1], "×", "x")
	ls, ws, ok := strings.Cut(size, "x")
	if !ok {
		return fail("size %q is not LAYERSxWIDTH, such as 18x66", fields[1])
	}
	var err error
	if a.Layers, err = strconv.Atoi(strings.TrimSpace(ls)); err != nil || a.Layers < 1 {
		return fail("layers %q in %q is not a whole number ≥ 1", ls, fields[1])
	}
	minWidth := 1
	if a.Kind == KindGRB {
		minWidth = 0
	}
	if a.Width, err = strconv.Atoi(strings.TrimSpace(ws)); err != nil || a.Width < minWidth {
		return fail("width %q in %q is not a whole number ≥ %d (tanh units per %s layer)", ws, fields[1], minWidth, strings.ToUpper(string(a.Kind)))
	}
	seen := map[rune]bool{}
	for _, opt := range fields[2:] {
		if opt == "" {
			return fail("empty option (a doubled or trailing ':')")
		}
		key, n := utf8.DecodeRuneInString(opt)
		val := opt[n:]
		if seen[key] {
			return fail("option %c given twice", key)
		}
		seen[key] = true
		switch key {
		case 'm', 'k':
			if a.Kind != KindGRB {
				return fail("option %q is for grb: a GR layer has no spline ridge", opt)
			}
			v, err := strconv.Atoi(val)
			if key == 'm' {
				if err != nil || v < 1 || v > maxRidgeDim {
					return fail("ridge dimension %q is not a whole number in [1, %d]", opt, maxRidgeDim)
				}
				a.RidgeDim = v
			} else {
				if err != nil || v < 1 {
					return fail("spline intervals %q is not a whole number ≥ 1", opt)
				}
				a.Spline.Intervals = v
			}
		case 'h':
			v, err := strconv.ParseFloat(val, 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return fail("step size %q is not a number > 0", opt)
			}
			a.StepSize = v
		default:
			return fail("unknown option %q: m (ridge dimension), k (spline intervals) or h (step size), each followed by its value", opt)
		}
	}
	if err := a.Validate(); err != nil {
		return fail("%v", err)
	}
	return a, nil
}

// Description returns the architecture as ParseArch reads it, with the
// options that differ from the defaults ("gr:18x66", "grb:12x8:m2"); the
// ridge dimension of a GRB layer is always written. ok is false when the
// architecture has a setting the grammar cannot express (a GRB knot grid
// other than [−3.5, 3.5]); the description then leaves it out.
func (a Arch) Description() (desc string, ok bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%dx%d", a.Kind, a.Layers, a.Width)
	ok = true
	if a.Kind == KindGRB {
		fmt.Fprintf(&b, ":m%d", a.RidgeDim)
		if a.Spline.Intervals != DefaultSplineIntervals {
			fmt.Fprintf(&b, ":k%d", a.Spline.Intervals)
		}
		ok = a.Spline.Lo == -DefaultSplineRange && a.Spline.Hi == DefaultSplineRange
	}
	if a.StepSize != DefaultStepSize {
		b.WriteString(":h" + strconv.FormatFloat(a.StepSize, 'g', -1, 64))
	}
	return b.String(), ok
}

// ResolveArch returns the architecture an --arch value names: a preset
// (see Presets), which is returned too, or a description ParseArch reads
// (preset nil). A value without ':' is taken for a preset name.
func ResolveArch(s string) (Arch, *Preset, error) {
	name := strings.TrimSpace(s)
	if strings.Contains(name, ":") {
		a, err := ParseArch(name)
		return a, nil, err
	}
	if p, ok := Presets()[strings.ToLower(name)]; ok {
		return p.Arch, &p, nil
	}
	switch k := Kind(strings.ToLower(name)); {
	case name == "":
		return Arch{}, nil, fmt.Errorf("predictor: empty architecture: name a preset %v or describe one as %s", PresetNames(), ArchGrammar)
	case k == KindGR || k == KindGRB:
		return Arch{}, nil, fmt.Errorf("predictor: architecture %q has no size: give layers and width as in %s:18x66 (%s)", s, k, ArchGrammar)
	}
	return Arch{}, nil, fmt.Errorf("predictor: unknown architecture %q: name a preset %v or describe one as %s", s, PresetNames(), ArchGrammar)
}
