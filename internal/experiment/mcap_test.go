package experiment

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// TestPendulumMCAPRoundTrip records simulated trajectories with
// WritePendulumMCAP, converts the log with params/pendulum_sim.yaml through
// the message-log source, and checks that the conversion yields the windows
// of the simulator's direct path (PendulumDataset) to 1e-12: q and u as
// logged, p recomputed as M(q)q̇ from the logged q̇, against the
// simulator's canonical p. It does so on both clocks (header stamp, log
// time).
func TestPendulumMCAPRoundTrip(t *testing.T) {
	cfg := mechanics.DefaultSimConfig()
	cfg.Steps = 300
	cfg.EnergyMin, cfg.EnergyMax = 20, 40
	cfg.Seed = 7
	trs, err := mechanics.Simulate(context.Background(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	const L, S = 100, 10
	want, err := PendulumDataset(trs, cfg.Dt, L, S, "id", nil)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pendulum_sim"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WritePendulumMCAP(filepath.Join(root, "pendulum_sim", "sim.mcap"), trs, nil); err != nil {
		t.Fatal(err)
	}
	params := filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml")
	for _, stamp := range []string{convert.StampHeader, convert.StampLogTime} {
		t.Run(stamp, func(t *testing.T) {
			spec, err := convert.LoadSpec(params)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Window.Length != L || spec.Window.Stride != S || spec.Resample.Rate != 1/cfg.Dt || spec.Filter.Kind != "none" {
				t.Fatalf("params window %+v, rate %v, filter %q; want %d/%d, 100 Hz, none", spec.Window, spec.Resample.Rate, spec.Filter.Kind, L, S)
			}
			spec.Clock.Stamp = stamp
			c, err := convert.NewConverter(spec, convert.Options{DataRoot: root, Params: params})
			if err != nil {
				t.Fatal(err)
			}
			// The params' pendulum is the simulator's.
			pm, ok := c.Model().(*statemap.PendulumModel)
			if !ok {
				t.Fatalf("model %T, want the analytic pendulum", c.Model())
			}
			paper := mechanics.PaperPendulum()
			for _, q2 := range []float64{0, 0.7, 2.5} {
				a, b := pm.Params.MassMatrix([2]float64{0, q2}), paper.MassMatrix([2]float64{0, q2})
				for i := range 2 {
					for j := range 2 {
						if math.Abs(a[i][j]-b[i][j]) > 1e-15*math.Abs(b[i][j]) {
							t.Errorf("M(q2=%g)[%d][%d] = %.17g, paper pendulum %.17g", q2, i, j, a[i][j], b[i][j])
						}
					}
				}
			}
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := res.Splits["id"]
			if got == nil || len(res.Splits) != 1 {
				t.Fatalf("splits %v", res.Splits)
			}
			if got.Dt != cfg.Dt || !slices.Equal(got.Coordinates, want.Coordinates) || !slices.Equal(got.Ports, want.Ports) || got.N != 2 || got.NU != 2 || got.NC != 0 {
				t.Errorf("meta dt %v coordinates %v ports %v n %d/%d/%d, want %v %v %v", got.Dt, got.Coordinates, got.Ports, got.N, got.NU, got.NC, want.Dt, want.Coordinates, want.Ports)
			}
			// the simulator's datasets record the port map the params
			// compute from its logs
			if pm := got.Source[statemap.PortMapKey]; pm != PendulumPortMap() {
				t.Errorf("port map %s, the simulator's datasets record %s", pm, PendulumPortMap())
			}
			// Windows that straddle two trajectories fall in the pause
			// between them and are rejected as gaps; nothing else is.
			rep := res.Report.Windows
			if rep.Kept != len(want.Windows()) || rep.Total != rep.Kept+rep.Rejected[convert.ReasonGap] {
				t.Errorf("windows %+v, want %d kept and only gaps rejected", rep, len(want.Windows()))
			}
			for _, w := range res.Report.Files[0].Warnings {
				if !strings.Contains(w, "/torque_command") || !strings.Contains(w, "no header") {
					t.Errorf("unexpected warning %q", w)
				}
			}
			maxQ, maxP, maxU := compareWindows(t, got, want)
			t.Logf("max |Δq| %.2g, |Δp| %.2g, |Δu| %.2g over %d windows", maxQ, maxP, maxU, len(want.Windows()))
			if maxQ > 1e-12 || maxP > 1e-12 || maxU > 1e-12 {
				t.Errorf("converted windows differ from the simulator's: max |Δq| %g, |Δp| %g, |Δu| %g (want ≤ 1e-12)", maxQ, maxP, maxU)
			}
		})
	}
}

// compareWindows checks that got and want hold the same windows, in order,
// and returns the largest differences of q, p and u.
func compareWindows(t *testing.T, got, want *dataset.Dataset) (maxQ, maxP, maxU float64) {
	t.Helper()
	gw, ww := got.Windows(), want.Windows()
	if len(gw) != len(ww) {
		t.Fatalf("%d windows, want %d", len(gw), len(ww))
	}
	for i := range gw {
		ge, we := &got.Episodes[gw[i].Episode], &want.Episodes[ww[i].Episode]
		for k := range ww[i].Len {
			gx := ge.X[4*(gw[i].Start+k):][:4]
			wx := we.X[4*(ww[i].Start+k):][:4]
			gu := ge.E[2*(gw[i].Start+k):][:2]
			wu := we.E[2*(ww[i].Start+k):][:2]
			for j := range 2 {
				maxQ = math.Max(maxQ, math.Abs(gx[j]-wx[j]))
				maxP = math.Max(maxP, math.Abs(gx[2+j]-wx[2+j]))
				maxU = math.Max(maxU, math.Abs(gu[j]-wu[j]))
			}
			if math.IsNaN(gx[0] + gx[1] + gx[2] + gx[3] + gu[0] + gu[1]) {
				t.Fatalf("window %d sample %d: NaN", i, k)
			}
		}
	}
	return maxQ, maxP, maxU
}

// TestWritePendulumMCAP checks the log's layout: topics, types, counts,
// joint names, stamps equal to log times, trajectories on whole seconds,
// and bad input.
func TestWritePendulumMCAP(t *testing.T) {
	tr := mechanics.Trajectory{
		T: []float64{0, 0.01, 0.02},
		Q: []float64{1, 2, 3, 4, 5, 6}, V: []float64{7, 8, 9, 10, 11, 12}, U: []float64{13, 14, 15, 16, 17, 18},
	}
	path := filepath.Join(t.TempDir(), "p.mcap")
	if err := WritePendulumMCAP(path, []mechanics.Trajectory{tr, tr}, &PendulumMCAPOptions{Epoch: 5e9, Pause: 0.5, Joints: [2]string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	src, err := convert.OpenMessageLog(path, convert.MessageLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	series, err := src.Read([]string{
		rosmsg.JointPath(PendulumJointTopic, "position", "b"), rosmsg.JointPath(PendulumJointTopic, "velocity", "a"),
		rosmsg.JointPath(PendulumJointTopic, "effort", "b"), PendulumTorqueTopic + ".data[0]",
	})
	if err != nil {
		t.Fatal(err)
	}
	// Trajectory 2 starts at the first whole second at least 0.5 s after
	// 0.02 s: 1 s.
	wantT := []float64{0, 0.01, 0.02, 1, 1.01, 1.02}
	for i, w := range [][]float64{{2, 4, 6, 2, 4, 6}, {7, 9, 11, 7, 9, 11}, {14, 16, 18, 14, 16, 18}, {13, 15, 17, 13, 15, 17}} {
		if !slices.Equal(series[i].Values, w) || !slices.Equal(series[i].Time, wantT) {
			t.Errorf("%s: %v at %v, want %v at %v", series[i].Name, series[i].Values, series[i].Time, w, wantT)
		}
	}
	if got := src.Topics(); !slices.Equal(got, []string{PendulumJointTopic, PendulumTorqueTopic}) {
		t.Errorf("topics %v", got)
	}
	for _, tc := range []struct {
		name string
		trs  []mechanics.Trajectory
		opts *PendulumMCAPOptions
		want string
	}{
		{"none", nil, nil, "no trajectories"},
		{"short arrays", []mechanics.Trajectory{{T: []float64{0, 1}, Q: []float64{1}}}, nil, "want N, 2N"},
		{"time goes back", []mechanics.Trajectory{{T: []float64{0, 0}, Q: make([]float64, 4), V: make([]float64, 4), U: make([]float64, 4)}}, nil, "do not increase"},
		{"negative pause", []mechanics.Trajectory{tr}, &PendulumMCAPOptions{Pause: -1}, "pause"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WritePendulumMCAP(filepath.Join(t.TempDir(), "x.mcap"), tc.trs, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
