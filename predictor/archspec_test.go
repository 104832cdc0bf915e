package predictor

import (
	"strings"
	"testing"
)

// TestParseArchPresets checks that the presets' descriptions parse back to
// the very same architecture, so a preset and its description train
// bit-identical models.
func TestParseArchPresets(t *testing.T) {
	want := map[string]string{"pendulum": "grb:12x8:m2", "quadrotor": "gr:14x36", "quadruped": "gr:18x66"}
	for _, name := range PresetNames() {
		p, _ := LookupPreset(name)
		desc, ok := p.Arch.Description()
		if !ok || desc != want[name] {
			t.Errorf("%s: Description() = %q, %v; want %q, true", name, desc, ok, want[name])
		}
		a, err := ParseArch(desc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a != p.Arch {
			t.Errorf("%s: ParseArch(%q) = %+v, want the preset's %+v", name, desc, a, p.Arch)
		}
		r, pre, err := ResolveArch(name)
		if err != nil || pre == nil || pre.Name != name || r != p.Arch {
			t.Errorf("ResolveArch(%q) = %+v, %v, %v", name, r, pre, err)
		}
		r, pre, err = ResolveArch(desc)
		if err != nil || pre != nil || r != p.Arch {
			t.Errorf("ResolveArch(%q) = %+v, %v, %v", desc, r, pre, err)
		}
	}
	if a, err := ParseArch("grb:12x8"); err != nil || a != Presets()["pendulum"].Arch {
		t.Errorf("grb:12x8 (default m) = %+v, %v; want the pendulum preset", a, err)
	}
}

func TestParseArch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Arch
		desc string
	}{
		{"gr:3x5", Arch{Kind: KindGR, Layers: 3, Width: 5, StepSize: 1}, "gr:3x5"},
		{" GR : 18 × 66 ", Arch{Kind: KindGR, Layers: 18, Width: 66, StepSize: 1}, "gr:18x66"},
		{"gr:4x8:h0.5", Arch{Kind: KindGR, Layers: 4, Width: 8, StepSize: 0.5}, "gr:4x8:h0.5"},
		{"grb:8x32:m3:k8:h0.25", Arch{Kind: KindGRB, Layers: 8, Width: 32, RidgeDim: 3,
			Spline: Spline{Intervals: 8, Lo: -3.5, Hi: 3.5}, StepSize: 0.25}, "grb:8x32:m3:k8:h0.25"},
		{"grb:2x0:m1", Arch{Kind: KindGRB, Layers: 2, Width: 0, RidgeDim: 1,
			Spline: Spline{Intervals: 12, Lo: -3.5, Hi: 3.5}, StepSize: 1}, "grb:2x0:m1"},
	} {
		a, err := ParseArch(tc.in)
		if err != nil {
			t.Errorf("ParseArch(%q): %v", tc.in, err)
			continue
		}
		if a != tc.want {
			t.Errorf("ParseArch(%q) = %+v, want %+v", tc.in, a, tc.want)
		}
		if d, ok := a.Description(); !ok || d != tc.desc {
			t.Errorf("Description of %q = %q, %v; want %q", tc.in, d, ok, tc.desc)
		}
	}
	a := Presets()["pendulum"].Arch
	a.Spline.Hi = 4
	if d, ok := a.Description(); ok {
		t.Errorf("a knot grid on [-3.5, 4] described as %q", d)
	}
}

// TestParseArchErrors checks that every malformed description is refused
// with a message naming the field at fault and the grammar.
func TestParseArchErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"gr", "no LAYERSxWIDTH"},
		{"gr:", "no LAYERSxWIDTH"},
		{"lstm:4x4", `unknown kind "lstm"`},
		{"gr:18", `size "18" is not LAYERSxWIDTH`},
		{"gr:0x66", `layers "0"`},
		{"gr:ax66", `layers "a"`},
		{"gr:18x0", `width "0" in "18x0" is not a whole number ≥ 1`},
		{"grb:18x-1", `width "-1" in "18x-1" is not a whole number ≥ 0`},
		{"gr:18x66:m2", "a GR layer has no spline ridge"},
		{"gr:18x66:k8", "a GR layer has no spline ridge"},
		{"grb:8x32:m5", `ridge dimension "m5" is not a whole number in [1, 4]`},
		{"grb:8x32:m", `ridge dimension "m"`},
		{"grb:8x32:k0", `spline intervals "k0"`},
		{"grb:8x32:m2:m3", "option m given twice"},
		{"grb:8x32:q2", `unknown option "q2"`},
		{"grb:8x32:", "empty option"},
		{"gr:4x4:h0", `step size "h0"`},
		{"gr:4x4:hinf", `step size "hinf"`},
		{"gr:4x4:hnan", `step size "hnan"`},
	} {
		_, err := ParseArch(tc.in)
		if err == nil {
			t.Errorf("ParseArch(%q) accepted", tc.in)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, ArchGrammar) || !strings.Contains(msg, tc.in) {
			t.Errorf("ParseArch(%q): %q, want it to quote the input, mention %q and the grammar", tc.in, msg, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"hexapod", `unknown architecture "hexapod": name a preset [pendulum quadrotor quadruped]`},
		{"", "empty architecture"},
		{"gr", `architecture "gr" has no size`},
		{"grb:1x1:m9", "ridge dimension"},
	} {
		if _, _, err := ResolveArch(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ResolveArch(%q): %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
}
