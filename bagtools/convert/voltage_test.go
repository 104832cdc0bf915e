package convert

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/statemap"
)

// crazyflieIDTest are the training-folder flights the real-robot benchmark
// holds out as its ID test (internal/experiment, realSystems): the last run
// of each manoeuvre family.
var crazyflieIDTest = []string{"melon_20251017_run4", "multisine_20251017_run3", "random1_20251017_run3",
	"random2_20251017_run3", "square_20251017_run4"}

// TestCrazyflieVoltageThrustFit refits statemap's voltage-scaled thrust
// map from the logs as its doc comment states: the least-squares fit of
// m·a_z against Σs and Σs² (s = c·Vbat/3.7 V) over the airborne samples
// (z > 0.3 m, 0.05 < m1_thrust < 0.99) of the benchmark's 11 training
// flights. The constants must be the fit to their five decimals, and on
// every one of the three test flights, never fitted on, the voltage map
// must leave a smaller residual than the linear map fitted the same way.
func TestCrazyflieVoltageThrustFit(t *testing.T) {
	fixtures.Path(t, "crazyflie")
	files, err := filepath.Glob(filepath.Join(fixtures.DataDir(), "crazyflie", "*", "*.parquet"))
	if err != nil || len(files) != 19 {
		t.Fatalf("%d flights: %v", len(files), err)
	}
	type sample struct{ y, c, s1, s2 float64 }
	flights := map[string][]sample{}
	for _, f := range files {
		c := readColumns(t, f, "z", "az", "m1_thrust", "m2_thrust", "m3_thrust", "m4_thrust", "Vbat")
		var out []sample
		for r := range c[0] {
			if !(c[0][r] > 0.3 && c[2][r] > 0.05 && c[2][r] < 0.99) {
				continue
			}
			smp := sample{y: statemap.CrazyflieMass * c[1][r]}
			for m := range 4 {
				s := c[2+m][r] * c[6][r] / statemap.CrazyflieVoltageRef
				smp.c += c[2+m][r]
				smp.s1 += s
				smp.s2 += s * s
			}
			if !math.IsNaN(smp.y + smp.s2) {
				out = append(out, smp)
			}
		}
		flights[filepath.ToSlash(f)] = out
	}
	// the normal equations of y ≈ a₁·s1 + a₂·s2 and of y ≈ k·c
	var a11, a12, a22, b1, b2, cc, cy, n float64
	for f, ss := range flights {
		if !strings.Contains(f, "/train/") || slices.ContainsFunc(crazyflieIDTest, func(id string) bool { return strings.Contains(f, id) }) {
			continue
		}
		for _, s := range ss {
			a11 += s.s1 * s.s1
			a12 += s.s1 * s.s2
			a22 += s.s2 * s.s2
			b1 += s.s1 * s.y
			b2 += s.s2 * s.y
			cc += s.c * s.c
			cy += s.c * s.y
			n++
		}
	}
	det := a11*a22 - a12*a12
	a1, a2, k := (b1*a22-b2*a12)/det, (a11*b2-a12*b1)/det, cy/cc
	t.Logf("%.0f samples: a₁ = %.6f, a₂ = %.6f N; linear %.5f N per command", n, a1, a2, k)
	if n < 50000 || math.Abs(a1-statemap.CrazyflieThrustVolt1) > 5e-6 || math.Abs(a2-statemap.CrazyflieThrustVolt2) > 5e-6 {
		t.Errorf("fit a₁ = %.6f, a₂ = %.6f on %.0f samples; statemap says %g, %g", a1, a2, n, statemap.CrazyflieThrustVolt1, statemap.CrazyflieThrustVolt2)
	}
	for f, ss := range flights {
		if !strings.Contains(f, "/test/") {
			continue
		}
		var rv, rl float64
		for _, s := range ss {
			rv += math.Pow(s.y-statemap.CrazyflieThrustVolt1*s.s1-statemap.CrazyflieThrustVolt2*s.s2, 2)
			rl += math.Pow(s.y-k*s.c, 2)
		}
		rv, rl = math.Sqrt(rv/float64(len(ss)))/statemap.CrazyflieMass, math.Sqrt(rl/float64(len(ss)))/statemap.CrazyflieMass
		t.Logf("%s: residual RMS %.3f m/s² (voltage map), %.3f (linear)", filepath.Base(f), rv, rl)
		if !(rv < rl) {
			t.Errorf("%s: the voltage map's residual %.3f m/s² is not below the linear map's %.3f", filepath.Base(f), rv, rl)
		}
	}
}
