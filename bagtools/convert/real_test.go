package convert

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"gonum.org/v1/gonum/stat"
)

// repoSpec loads a params file of the repository with its inputs replaced.
func repoSpec(t *testing.T, name string, inputs ...string) *Spec {
	t.Helper()
	s, err := LoadSpec(filepath.Join(fixtures.Root(), "params", name))
	if err != nil {
		t.Fatal(err)
	}
	s.Inputs = inputs
	return s
}

// readColumns reads whole columns of a parquet file.
func readColumns(t *testing.T, path string, cols ...string) [][]float64 {
	t.Helper()
	tb, err := logio.OpenParquet(path, &logio.ParquetOptions{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	out := make([][]float64, len(cols))
	row := make([]float64, len(cols))
	for {
		err := tb.Next(row)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range row {
			out[i] = append(out[i], v)
		}
	}
}

func TestCrazyflieFlight(t *testing.T) {
	const flight = "crazyflie/train/multisine_20251017_run1.parquet"
	path := fixtures.Path(t, "crazyflie", "train", "multisine_20251017_run1.parquet")
	s := repoSpec(t, "crazyflie.yaml", flight)
	res, err := Convert(context.Background(), s, Options{DataRoot: fixtures.DataDir(), Params: "params/crazyflie.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Splits["id"]
	// the six body-wrench ports and their means over the 2 samples before
	// (convert.history.port_mean: 2)
	if d == nil || d.N != 6 || d.NU != 12 || d.NC != 0 || d.Dt != 0.01 || d.WindowLen != 100 || d.Stride != 10 || d.Ports[6] != "mean2(f_x)" {
		t.Fatalf("dataset n=%d n_u=%d n_c=%d dt %g windows %d/%d", d.N, d.NU, d.NC, d.Dt, d.WindowLen, d.Stride)
	}
	w := res.Report.Windows
	t.Logf("%s", res.Report)
	// 60 s at 100 Hz: 591 candidate windows; the flight has 6 raw position
	// jumps faster than 10 m/s, which cost 11 windows.
	if w.Total != 591 || w.Kept < 550 || w.Rejected[ReasonJump] == 0 || res.Report.Files[0].Jumps == 0 {
		t.Errorf("windows %+v", w)
	}
	if len(d.Episodes) != w.Kept || len(d.Windows()) != w.Kept {
		t.Errorf("%d episodes, %d windows for %d kept", len(d.Episodes), len(d.Windows()), w.Kept)
	}

	// q is the SE(3) log relative to the window's first pose; momenta are
	// M v with v the body twist. Compare v = M⁻¹p with central finite
	// differences of the poses, log(T_{k−1}⁻¹ T_{k+1})/(2Δt): regression
	// slope and correlation per component over all windows. The estimator's
	// velocities and poses are separate noisy estimates (with repeated
	// samples), so agreement is close but not exact: slopes 0.92–1.05,
	// correlations 0.92–0.98 on this flight.
	minv := []float64{1 / statemap.CrazyflieMass, 1 / statemap.CrazyflieMass, 1 / statemap.CrazyflieMass, 1 / statemap.CrazyflieIxx, 1 / statemap.CrazyflieIyy, 1 / statemap.CrazyflieIzz}
	fd := make([][]float64, 6)
	vel := make([][]float64, 6)
	for _, ep := range d.Episodes {
		for i := range 6 {
			if ep.X[i] != 0 {
				t.Fatalf("%s: first q = %v, want 0 (relative to the window's first pose)", ep.Name, ep.X[:6])
			}
		}
		pose := func(k int) mechanics.SE3 {
			var q mechanics.Twist
			copy(q[:], ep.X[12*k:12*k+6])
			return mechanics.ExpSE3(q)
		}
		for k := 1; k+1 < ep.Len; k++ {
			xi := mechanics.LogSE3(pose(k - 1).Inverse().Mul(pose(k + 1)))
			for i := range 6 {
				fd[i] = append(fd[i], xi[i]/0.02)
				vel[i] = append(vel[i], ep.X[12*k+6+i]*minv[i])
			}
		}
	}
	for i := range 6 {
		_, slope := stat.LinearRegression(vel[i], fd[i], nil, false)
		corr := stat.Correlation(vel[i], fd[i], nil)
		if slope < 0.85 || slope > 1.15 || corr < 0.9 {
			t.Errorf("twist component %d: finite differences of poses vs M⁻¹p: slope %.3f, correlation %.3f", i, slope, corr)
		}
	}

	// The wrench: no sideways force, Fz the total thrust. Its mean over the
	// flight matches m·a_z from the accelerometer within 5 %.
	raw := readColumns(t, path, "az", "m1_thrust", "m2_thrust", "m3_thrust", "m4_thrust")
	var fz, n float64
	for _, ep := range d.Episodes {
		for k := range ep.Len {
			u := ep.E[12*k : 12*k+6]
			if u[0] != 0 || u[1] != 0 {
				t.Fatalf("sideways force %v", u[:2])
			}
			row := int(math.Round((ep.Tags["t0"] + float64(k)/100) * 100))
			var sum float64
			for m := range 4 {
				sum += raw[1+m][row]
			}
			if math.Abs(u[2]-statemap.CrazyflieThrustPerUnit*sum) > 1e-12 {
				t.Fatalf("Fz = %v at row %d, want %v·Σ commands = %v", u[2], row, statemap.CrazyflieThrustPerUnit, statemap.CrazyflieThrustPerUnit*sum)
			}
			fz += u[2]
			n++
		}
	}
	var az float64
	for _, v := range raw[0] {
		az += v
	}
	az /= float64(len(raw[0]))
	if r := (fz / n) / (statemap.CrazyflieMass * az); math.Abs(r-1) > 0.05 {
		t.Errorf("mean Fz %.4f N vs m·a_z %.4f N (ratio %.3f)", fz/n, statemap.CrazyflieMass*az, r)
	}

	// Round trip through the dataset format.
	dir := t.TempDir()
	if _, err := res.Save(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	back, err := dataset.Load(filepath.Join(dir, "id"))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Episodes) != len(d.Episodes) || back.Report["windows"] == nil {
		t.Errorf("reloaded %d episodes, report %v", len(back.Episodes), back.Report["windows"])
	}
}

func TestCrazyflieGravityAware(t *testing.T) {
	const flight = "crazyflie/train/melon_20251017_run1.parquet"
	path := fixtures.Path(t, "crazyflie", "train", "melon_20251017_run1.parquet")
	s := repoSpec(t, "crazyflie.yaml", flight)
	s.State.Kind = statemap.StateFloatingBaseGravity
	s.Window.Storage = StorageEpisode
	res, err := Convert(context.Background(), s, Options{DataRoot: fixtures.DataDir()})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Splits["id"]
	if d.Source["q_origin"] != "episode_start" || len(d.Episodes) >= res.Report.Windows.Kept {
		t.Fatalf("%d episodes for %d windows, q origin %q", len(d.Episodes), res.Report.Windows.Kept, d.Source["q_origin"])
	}
	raw := readColumns(t, path, "roll", "pitch", "yaw")
	var worst float64
	for _, ep := range d.Episodes {
		for i := range 3 {
			if ep.X[i] != 0 || ep.X[5] != 0 {
				t.Fatalf("%s: first q = %v, want zero position and yaw", ep.Name, ep.X[:6])
			}
		}
		for k := range ep.Len {
			row := int(math.Round((ep.Tags["t0"] + float64(k)/100) * 100))
			// Roll and pitch are absolute: they match the logged Euler
			// angles (which the logged, slightly non-unit quaternions
			// reproduce to about 0.016 rad).
			worst = math.Max(worst, math.Max(math.Abs(ep.X[12*k+3]-raw[0][row]), math.Abs(ep.X[12*k+4]-raw[1][row])))
			// Relative yaw.
			dy := math.Remainder(raw[2][row]-raw[2][int(math.Round(ep.Tags["t0"]*100))], 2*math.Pi)
			if math.Abs(ep.X[12*k+5]-dy) > 0.03 {
				t.Fatalf("%s sample %d: yaw %v, logged yaw change %v", ep.Name, k, ep.X[12*k+5], dy)
			}
		}
		// Re-expressed per window, the episode's windows start at zero.
		for s := 0; s+d.WindowLen <= ep.Len; s += d.Stride {
			var q0, q [6]float64
			copy(q0[:], ep.X[12*s:12*s+6])
			copy(q[:], ep.X[12*(s+1):12*(s+1)+6])
			r := RebaseGravity(q0, q0)
			if r[0] != 0 || r[1] != 0 || r[2] != 0 || r[5] != 0 {
				t.Fatalf("rebased first pose %v", r)
			}
			if r1 := RebaseGravity(q0, q); math.Abs(r1[3]-q[3]) > 1e-12 || math.Abs(r1[4]-q[4]) > 1e-12 {
				t.Fatalf("rebasing changed roll/pitch: %v vs %v", r1, q)
			}
		}
	}
	if worst > 0.03 {
		t.Errorf("roll/pitch differ from the logged angles by up to %.3f rad", worst)
	}
}

func TestPendulumRun(t *testing.T) {
	const run = "double_pendulum_hw/trajectories/20230629-143339.csv"
	fixtures.Path(t, "double_pendulum_hw", "trajectories", "20230629-143339.csv")
	fixtures.Path(t, "double_pendulum_hw", "identified_parameters", "model_2.0", "model_parameters.yml")
	s := repoSpec(t, "double_pendulum_hw.yaml", run)
	s.Split = SplitSpec{Default: "id"}
	c, err := NewConverter(s, Options{DataRoot: fixtures.DataDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", res.Report)
	f := res.Report.Files[0]
	// ~500 Hz irregular → 500 Hz work clock → 100 Hz: 10 s, 1000 samples,
	// 91 windows of 100 with stride 10, all kept, one episode.
	if f.WorkRate != 500 || f.Samples != 1000 || res.Report.Windows.Kept != 91 || res.Report.Windows.Total != 91 {
		t.Errorf("file %+v", f)
	}
	d := res.Splits["id"]
	if len(d.Episodes) != 1 || d.Episodes[0].Len != 1000 || len(d.Windows()) != 91 || d.N != 2 || d.NU != 2 {
		t.Fatalf("%d episodes, %d windows", len(d.Episodes), len(d.Windows()))
	}
	// p = M(q)q̇ against central differences of the filtered angles:
	// relative RMS difference of q̇ = M⁻¹p ~1 % (0.011 on this run).
	pp := c.Model().(*statemap.PendulumModel).Params
	ep := d.Episodes[0]
	var e2, s2 float64
	for k := 1; k+1 < ep.Len; k++ {
		q := [2]float64{ep.X[4*k], ep.X[4*k+1]}
		v := pp.Velocity(q, [2]float64{ep.X[4*k+2], ep.X[4*k+3]})
		for i := range 2 {
			fd := (ep.X[4*(k+1)+i] - ep.X[4*(k-1)+i]) / 0.02
			e2 += (fd - v[i]) * (fd - v[i])
			s2 += v[i] * v[i]
		}
	}
	if rel := math.Sqrt(e2 / s2); rel > 0.02 {
		t.Errorf("relative RMS of M⁻¹p − finite differences: %.4f, want < 0.02", rel)
	}
	// Energy split of the repository params: the top fifth of the windows
	// by initial energy go to "ood".
	s2spec := repoSpec(t, "double_pendulum_hw.yaml", run)
	res2, err := Convert(context.Background(), s2spec, Options{DataRoot: fixtures.DataDir()})
	if err != nil {
		t.Fatal(err)
	}
	id, ood := res2.Report.Splits["id"], res2.Report.Splits["ood"]
	if id.Windows+ood.Windows != 91 || ood.Windows != 18 || id.EnergyRange[1] > ood.EnergyRange[0] {
		t.Errorf("id %+v, ood %+v", id, ood)
	}
}

func BenchmarkConvertPendulumRun(b *testing.B) {
	fixtures.Path(b, "double_pendulum_hw", "trajectories", "20230629-143339.csv")
	s, err := LoadSpec(filepath.Join(fixtures.Root(), "params", "double_pendulum_hw.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	s.Inputs = []string{"double_pendulum_hw/trajectories/20230629-143339.csv"}
	c, err := NewConverter(s, Options{DataRoot: fixtures.DataDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
