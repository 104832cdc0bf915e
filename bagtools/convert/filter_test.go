package convert

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/signal"
)

// TestFilterChannelGroups filters one channel group at a time on a
// pendulum log with a torque step and checks every group against an
// independent computation: unfiltered groups keep their exact values, the
// momentum group is the zero-phase filter of the exact M(q)q̇ at the
// working rate, decimated.
func TestFilterChannelGroups(t *testing.T) {
	dir := t.TempDir()
	const hz, n = 200.0, 801 // 4 s
	step := func(tk float64) float64 {
		if tk >= 2 {
			return 1
		}
		return 0
	}
	writeSynthCSV(t, dir, "run.csv", n, hz, func(i int, r *synthRow) { r.tau[0] += step(r.t) })
	pp := synthPendulum(t)
	sos, err := signal.Butter(6, 18, hz)
	if err != nil {
		t.Fatal(err)
	}
	// The exact momenta at the working rate, filtered component-wise.
	pf := [2][]float64{make([]float64, n), make([]float64, n)}
	for k := range n {
		q, v, _ := synthMotion(float64(k) / hz)
		p := pp.Momentum(q, v)
		pf[0][k], pf[1][k] = p[0], p[1]
	}
	for i := range pf {
		if _, err := signal.NewZeroPhase(sos).Apply(pf[i], pf[i]); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		channels []string
		skip     bool
		// which groups must keep their exact values
		exactQ, exactP, exactU bool
		filteredP              bool // p equals the filtered exact momenta
	}{
		{name: "momentum only (the paper's quadruped)", channels: []string{FilterMomentum}, exactQ: true, exactU: true, filteredP: true},
		{name: "control only", channels: []string{FilterControl}, exactQ: true, exactP: true},
		{name: "configuration and velocity", channels: []string{FilterConfiguration, FilterVelocity}, exactU: true},
		{name: "default: every input", exactQ: false},
		{name: "default with skip_ports", skip: true, exactU: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := synthSpec("run.csv")
			s.Filter = FilterSpec{Kind: "butterworth", Order: 6, Cutoff: 18, Channels: tc.channels, SkipPorts: tc.skip}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			res, err := Convert(context.Background(), s, Options{DataRoot: dir})
			if err != nil {
				t.Fatal(err)
			}
			ep := res.Splits["id"].Episodes[0]
			var dq, dp, du, dpf float64
			for k := range ep.Len {
				tk := float64(k) / 100
				q, v, tau := synthMotion(tk)
				tau[0] += step(tk)
				p := pp.Momentum(q, v)
				for i := range 2 {
					dq = math.Max(dq, math.Abs(ep.X[4*k+i]-q[i]))
					dp = math.Max(dp, math.Abs(ep.X[4*k+2+i]-p[i]))
					du = math.Max(du, math.Abs(ep.E[2*k+i]-tau[i]))
					dpf = math.Max(dpf, math.Abs(ep.X[4*k+2+i]-pf[i][2*k]))
				}
			}
			check := func(what string, exact bool, d float64) {
				t.Helper()
				if exact && d > 1e-12 {
					t.Errorf("%s: max deviation %.3g from the exact values, want unfiltered", what, d)
				}
				if !exact && d < 1e-6 {
					t.Errorf("%s: max deviation %.3g from the exact values, want filtered", what, d)
				}
			}
			check("q", tc.exactQ, dq)
			check("u", tc.exactU, du)
			if tc.filteredP {
				if dpf > 1e-12 {
					t.Errorf("p: max deviation %.3g from the filtered exact momenta", dpf)
				}
			} else {
				check("p", tc.exactP, dp)
			}
		})
	}
}

func TestFilterChannelsSpecErrors(t *testing.T) {
	tests := []struct {
		name string
		f    FilterSpec
		want string
	}{
		{"unknown group", FilterSpec{Kind: "butterworth", Order: 6, Cutoff: 18, Channels: []string{"momenta"}}, "filter.channels[0]"},
		{"twice", FilterSpec{Kind: "butterworth", Order: 6, Cutoff: 18, Channels: []string{"control", "control"}}, "filter.channels[1]"},
		{"both forms", FilterSpec{Kind: "butterworth", Order: 6, Cutoff: 18, Channels: []string{"control"}, SkipPorts: true}, "filter.skip_ports"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := synthSpec("run.csv")
			s.Filter = tc.f
			err := s.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// TestExclude rejects the windows overlapping named stretches of named
// files and counts them.
func TestExclude(t *testing.T) {
	dir := t.TempDir()
	writeSynthCSV(t, dir, "a.csv", 1001, 200, nil) // 5 s: windows of 10 at stride 5 start every 0.05 s
	writeSynthCSV(t, dir, "b.csv", 1001, 200, nil)
	tests := []struct {
		name     string
		exclude  []ExcludeSpec
		excluded int
	}{
		{"none", nil, 0},
		{"a stretch of one file", []ExcludeSpec{{Files: []string{"a.csv"}, Time: []float64{1, 2}}}, 21},
		{"from a time to the end", []ExcludeSpec{{Files: []string{"b.*"}, Time: []float64{4.5}}}, 10},
		{"a whole file", []ExcludeSpec{{Files: []string{"a.csv"}, Why: "fall"}}, 99},
		{"no match", []ExcludeSpec{{Files: []string{"c.csv"}}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := synthSpec("*.csv")
			s.Validate.Exclude = tc.exclude
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			res, err := Convert(context.Background(), s, Options{DataRoot: dir})
			if err != nil && tc.excluded < 198 {
				t.Fatal(err)
			}
			w := res.Report.Windows
			if w.Total != 198 || w.Rejected[ReasonExcluded] != tc.excluded || w.Kept != 198-tc.excluded {
				t.Errorf("windows %+v, want %d excluded of 198", w, tc.excluded)
			}
		})
	}
	s := synthSpec("*.csv")
	s.Validate.Exclude = []ExcludeSpec{{Files: []string{"a.csv"}, Time: []float64{2, 1}}}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "validate.exclude[0].time") {
		t.Errorf("reversed interval: error %v", err)
	}
}
