package convert

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/statemap"
)

// The eRPM glitches of the Crazyflie flights: 0-based rows of the parquet
// files, the channel and the logged value.
var erpmGlitches = map[string][]struct {
	row     int
	channel string
	value   float64
}{
	"crazyflie/train/multisine_20251017_run1.parquet": {{2261, "m3_erpm", 1892800}, {2567, "m4_erpm", 6e6}},
	"crazyflie/test/multisine_20251017_run4.parquet":  {{1762, "m1_erpm", 1892800}, {1763, "m1_erpm", 1892800}, {1764, "m1_erpm", 1892800}},
}

// convertFlights converts the two flights with the eRPM glitches with a
// params file of the repository, changed by edit.
func convertFlights(t *testing.T, params string, edit func(*Spec)) *Result {
	t.Helper()
	s := repoSpec(t, params, slices.Sorted(maps.Keys(erpmGlitches))...)
	if edit != nil {
		edit(s)
	}
	res, err := Convert(context.Background(), s, Options{DataRoot: fixtures.DataDir(), Params: "params/" + params})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// splitEpisodes indexes the episodes of every split by name.
func splitEpisodes(res *Result) map[string]dataset.Episode {
	out := map[string]dataset.Episode{}
	for _, d := range res.Splits {
		maps.Copy(out, episodesByName(d))
	}
	return out
}

// TestCrazyflieERPMGlitches converts the two flights whose eRPM channels
// hold the logger's glitches (1,892,800 and 6,000,000 against a largest
// real value of 146,700) with params/crazyflie_erpm.yaml: every glitch
// sample is found, counted and repaired (an isolated sample each in
// m3_erpm and m4_erpm of the training flight, a run of three in m1_erpm
// of the test flight), with a warning naming its row and value; the
// conversion keeps exactly the windows of params/crazyflie.yaml, with the
// same states bit for bit, and its port is the quadratic rotor model of
// the (repaired) measured speeds. Without repair the windows covering a
// glitch, and only those, are rejected (out_of_range). A bound that no
// sample violates (the commands in [0, 1] of params/crazyflie.yaml)
// leaves the default's conversion bit for bit as it was.
func TestCrazyflieERPMGlitches(t *testing.T) {
	fixtures.Path(t, "crazyflie")
	def := convertFlights(t, "crazyflie.yaml", nil)
	erpm := convertFlights(t, "crazyflie_erpm.yaml", nil)
	t.Logf("%s", erpm.Report)
	for _, f := range erpm.Report.Files {
		want := map[string]int{}
		for _, g := range erpmGlitches[f.Path] {
			want[g.channel]++
		}
		if !maps.Equal(f.OutOfRange, want) || !maps.Equal(f.Repaired, want) {
			t.Errorf("%s: out of range %v, repaired %v; want %v both", f.Path, f.OutOfRange, f.Repaired, want)
		}
		warnings := strings.Join(f.Warnings, "\n")
		for _, g := range erpmGlitches[f.Path] {
			if g.row == 1763 || g.row == 1764 {
				continue // in the run that the warning at 1-based row 1763 names
			}
			if w := `"` + g.channel + `"`; !strings.Contains(warnings, w) || !strings.Contains(warnings, "row "+strconv.Itoa(g.row+1)) {
				t.Errorf("%s: no warning naming %s at row %d: %q", f.Path, g.channel, g.row+1, f.Warnings)
			}
		}
		if !strings.Contains(warnings, "1.8928e+06") {
			t.Errorf("%s: warnings do not name the glitch value: %q", f.Path, f.Warnings)
		}
	}
	if !strings.Contains(erpm.Report.String(), "samples out of range, ") {
		t.Errorf("report summary without the count:\n%s", erpm.Report)
	}
	defEps, erpmEps := splitEpisodes(def), splitEpisodes(erpm)
	if len(defEps) < 1000 || !slices.Equal(slices.Sorted(maps.Keys(defEps)), slices.Sorted(maps.Keys(erpmEps))) {
		t.Fatalf("%d windows with the commands, %d with the measured speeds: want the same", len(defEps), len(erpmEps))
	}
	if !maps.Equal(def.Report.Windows.Rejected, erpm.Report.Windows.Rejected) {
		t.Errorf("rejections %v with the commands, %v with the measured speeds", def.Report.Windows.Rejected, erpm.Report.Windows.Rejected)
	}
	for name, ep := range defEps {
		if !slices.Equal(ep.X, erpmEps[name].X) {
			t.Fatalf("%s: states differ", name)
		}
	}

	// The port: Fz = k Σ erpm², with the glitch samples interpolated
	// between their neighbours in time.
	k2 := 1.09e-11
	checked := 0
	for file, glitches := range erpmGlitches {
		cols := readColumns(t, filepath.Join(fixtures.DataDir(), file), "t", "m1_erpm", "m2_erpm", "m3_erpm", "m4_erpm")
		for _, g := range glitches {
			ch := int(g.channel[1] - '0')
			if cols[ch][g.row] != g.value {
				t.Fatalf("%s row %d: %s = %v, want the glitch %v", file, g.row+1, g.channel, cols[ch][g.row], g.value)
			}
		}
		for _, g := range glitches {
			ch := int(g.channel[1] - '0')
			lo, hi := g.row-1, g.row+1
			for cols[ch][lo] > 200000 {
				lo--
			}
			for cols[ch][hi] > 200000 {
				hi++
			}
			a := (cols[0][g.row] - cols[0][lo]) / (cols[0][hi] - cols[0][lo])
			cols[ch][g.row] = cols[ch][lo] + a*(cols[ch][hi]-cols[ch][lo])
		}
		for name, ep := range erpmEps {
			if !strings.HasPrefix(name, file+"@") {
				continue
			}
			for j := range ep.Len {
				row := int(math.Round((ep.Tags["t0"] + float64(j)/100) * 100))
				var s float64
				for m := 1; m <= 4; m++ {
					s += cols[m][row] * cols[m][row]
				}
				if fz := ep.E[6*j+2]; math.Abs(fz-k2*s) > 1e-12 {
					t.Fatalf("%s sample %d (row %d): Fz = %v, want k·Σ erpm² = %v", name, j, row+1, fz, k2*s)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no port checked")
	}

	// Without repair: the windows covering a glitch are rejected.
	noRepair := convertFlights(t, "crazyflie_erpm.yaml", func(s *Spec) { s.Validate.Bounds[0].Repair = 0 })
	nrEps := splitEpisodes(noRepair)
	covering := 0
	for name := range defEps {
		file, start := splitName(t, name)
		hit := false
		for _, g := range erpmGlitches[file] {
			hit = hit || g.row >= start && g.row < start+100
		}
		_, kept := nrEps[name]
		if hit == kept {
			t.Errorf("%s: kept %v, covers a glitch %v", name, kept, hit)
		}
		if hit {
			covering++
		}
	}
	if got := noRepair.Report.Windows.Rejected[ReasonOutOfRange]; got != covering || covering == 0 {
		t.Errorf("%d windows rejected out of range, %d cover a glitch", got, covering)
	}

	// A bound no sample violates changes nothing.
	bounded := convertFlights(t, "crazyflie.yaml", func(s *Spec) {
		lo, hi := 0.0, 1.0
		s.Validate.Bounds = []BoundSpec{{Channels: []string{"m1_thrust", "m2_thrust", "m3_thrust", "m4_thrust"}, Min: &lo, Max: &hi}}
	})
	bEps := splitEpisodes(bounded)
	if len(bEps) != len(defEps) {
		t.Fatalf("%d windows with the commands bounded, %d without", len(bEps), len(defEps))
	}
	for name, ep := range defEps {
		if !slices.Equal(ep.X, bEps[name].X) || !slices.Equal(ep.E, bEps[name].E) {
			t.Fatalf("%s differs with the commands bounded", name)
		}
	}
	for _, f := range bounded.Report.Files {
		if f.OutOfRange != nil || f.Repaired != nil {
			t.Errorf("%s: out of range %v, repaired %v", f.Path, f.OutOfRange, f.Repaired)
		}
	}
}

// splitName splits an episode name "<file>@<start>".
func splitName(t *testing.T, name string) (string, int) {
	t.Helper()
	file, start, ok := strings.Cut(name, "@")
	n, err := strconv.Atoi(start)
	if !ok || err != nil {
		t.Fatalf("episode name %q", name)
	}
	return file, n
}

// TestCrazyflieERPMThrustFit fits the quadratic rotor model's k of
// params/crazyflie_erpm.yaml on the logs as the command map's 0.173 N per
// unit was fitted (statemap/quadrotor.go): over the airborne samples
// (z > 0.3 m, 0.05 < m1_thrust < 0.99) of the 16 training flights, with
// every sample whose eRPM lies outside the params' bound left out, k =
// mean m·a_z / mean Σ erpm_i² (m = 0.045 kg; a_z the accelerometer's
// specific force, so m·a_z is the collective thrust). The least-squares
// fit through the origin must agree, and the params' k must be the fit
// to its three significant digits. The same fit of the commands over all
// 19 flights gives the params' 0.173.
func TestCrazyflieERPMThrustFit(t *testing.T) {
	fixtures.Path(t, "crazyflie")
	spec := repoSpec(t, "crazyflie_erpm.yaml")
	bound := spec.Validate.Bounds[0]
	files, err := filepath.Glob(filepath.Join(fixtures.DataDir(), "crazyflie", "*", "*.parquet"))
	if err != nil || len(files) != 19 {
		t.Fatalf("%d flights: %v", len(files), err)
	}
	var my, ms, myS, mSS, mc, nTrain, nAll, myAll, mcAll float64
	for _, f := range files {
		train := strings.Contains(filepath.ToSlash(f), "/train/")
		c := readColumns(t, f, "z", "az", "m1_thrust", "m2_thrust", "m3_thrust", "m4_thrust", "m1_erpm", "m2_erpm", "m3_erpm", "m4_erpm")
		for r := range c[0] {
			if !(c[0][r] > 0.3 && c[2][r] > 0.05 && c[2][r] < 0.99) {
				continue
			}
			y := statemap.CrazyflieMass * c[1][r]
			var cmd, s float64
			ok := true
			for m := range 4 {
				cmd += c[2+m][r]
				e := c[6+m][r]
				ok = ok && bound.Contains(e) && !math.IsNaN(e)
				s += e * e
			}
			if math.IsNaN(y) || math.IsNaN(cmd) {
				continue
			}
			myAll += y
			mcAll += cmd
			nAll++
			if !ok || !train {
				continue
			}
			my += y
			ms += s
			myS += y * s
			mSS += s * s
			mc += cmd
			nTrain++
		}
	}
	kMeans, kLS := my/ms, myS/mSS
	t.Logf("training flights, %.0f airborne samples: k = %.5g N/eRPM² (ratio of means), %.5g (least squares through 0); commands %.4g N per unit; all flights (%.0f samples): commands %.4g N per unit",
		nTrain, kMeans, kLS, my/mc, nAll, myAll/mcAll)
	k := spec.Control.Quadrotor.ThrustPoly[2]
	if math.Abs(kMeans/k-1) > 0.005 || math.Abs(kLS/k-1) > 0.005 || nTrain < 50000 {
		t.Errorf("fitted k = %.5g (means), %.5g (least squares) on %.0f samples; the params say %g", kMeans, kLS, nTrain, k)
	}
	if got := math.Round(myAll/mcAll*1000) / 1000; got != statemap.CrazyflieThrustPerUnit {
		t.Errorf("the command map's fit gives %.4g, the params %g", myAll/mcAll, statemap.CrazyflieThrustPerUnit)
	}
}
