package predictor

import (
	"fmt"
	"sort"
)

// Preset is one of the paper's three configurations (Appendix D, Table IV).
type Preset struct {
	Name   string
	Layout Layout
	Arch   Arch
	// PaperParams and PaperFLOPs are the figures the paper reports.
	PaperParams int
	PaperFLOPs  float64
}

// Presets returns the paper's configurations by name: "pendulum" (GRB,
// 12-dim lift, architecture "grb:12x8:m2" as ParseArch reads it),
// "quadrotor" (GR, 36-dim, "gr:14x36") and "quadruped" (GR, 132-dim,
// "gr:18x66"). ResolveArch takes either a name or a description.
func Presets() map[string]Preset {
	return map[string]Preset{
		"pendulum": {
			Name:   "pendulum",
			Layout: Layout{N: 2, NU: 2},
			Arch: Arch{Kind: KindGRB, Layers: 12, Width: 8, RidgeDim: 2,
				Spline: Spline{Intervals: 12, Lo: -3.5, Hi: 3.5}, StepSize: 1},
			PaperParams: 3660, PaperFLOPs: 8.8e3,
		},
		"quadrotor": {
			Name:        "quadrotor",
			Layout:      Layout{N: 6, NU: 6},
			Arch:        Arch{Kind: KindGR, Layers: 14, Width: 36, StepSize: 1},
			PaperParams: 23688, PaperFLOPs: 76.0e3,
		},
		"quadruped": {
			Name:        "quadruped",
			Layout:      Layout{N: 18, NU: 18, NC: 12},
			Arch:        Arch{Kind: KindGR, Layers: 18, Width: 66, StepSize: 1},
			PaperParams: 316008, PaperFLOPs: 953e3,
		},
	}
}

// PresetNames returns the preset names in sorted order.
func PresetNames() []string {
	var names []string
	for k := range Presets() {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// LookupPreset returns the named preset or an error listing the known ones.
func LookupPreset(name string) (Preset, error) {
	p, ok := Presets()[name]
	if !ok {
		return Preset{}, fmt.Errorf("predictor: unknown preset %q (known: %v)", name, PresetNames())
	}
	return p, nil
}
