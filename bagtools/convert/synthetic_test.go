package convert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/mechanics"
)

// synthParams is a double pendulum in the dfki parameter format (pivot
// inertias).
var synthParams = map[string]float64{"m1": 0.6, "m2": 0.5, "l1": 0.2, "l2": 0.3, "r1": 0.2, "r2": 0.25, "I1": 0.03, "I2": 0.04, "g": 9.81}

// synthMotion is the test trajectory: q(t), q̇(t), τ(t).
func synthMotion(t float64) (q, v, tau [2]float64) {
	w1, w2 := 2*math.Pi*0.7, 2*math.Pi*0.45
	q = [2]float64{0.5 * math.Sin(w1*t), 0.8*math.Sin(w2*t+0.3) - 0.2}
	v = [2]float64{0.5 * w1 * math.Cos(w1*t), 0.8 * w2 * math.Cos(w2*t+0.3)}
	tau = [2]float64{0.3 * math.Sin(3*t), -0.2 * math.Cos(2*t)}
	return
}

// synthRow is one CSV row; edit may change it (nil to drop it).
type synthRow struct {
	t      float64
	q, v   [2]float64
	tau    [2]float64
	remove bool
}

// writeSynthCSV writes n rows at rate hz to dir/name and returns the path.
func writeSynthCSV(t *testing.T, dir, name string, n int, hz float64, edit func(i int, r *synthRow)) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("time,q1,q2,v1,v2,tau1,tau2\n")
	for i := range n {
		r := synthRow{t: float64(i) / hz}
		r.q, r.v, r.tau = synthMotion(r.t)
		if edit != nil {
			edit(i, &r)
		}
		if r.remove {
			continue
		}
		fmt.Fprintf(&b, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", r.t, r.q[0], r.q[1], r.v[0], r.v[1], r.tau[0], r.tau[1])
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// synthSpec returns a spec for the synthetic CSVs: 200 Hz input, 100 Hz
// output, windows of 10 with stride 5, no filter.
func synthSpec(inputs ...string) *Spec {
	s := &Spec{
		Robot:  "synthetic",
		Inputs: inputs,
		Clock:  ClockSpec{Column: "time"},
		Spec: statemap.Spec{
			State: statemap.StateSpec{Kind: statemap.StateJoints, Joints: []statemap.JointSpec{
				{Name: "a", Position: statemap.Channel{Name: "q1"}, Velocity: statemap.Channel{Name: "v1"}},
				{Name: "b", Position: statemap.Channel{Name: "q2"}, Velocity: statemap.Channel{Name: "v2"}},
			}},
			Model:   statemap.ModelSpec{Kind: statemap.ModelDoublePendulum, Pendulum: statemap.PendulumSpec{Params: synthParams}},
			Control: statemap.ControlSpec{Kind: statemap.ControlDirect, PortSpec: statemap.PortSpec{Channels: []statemap.Channel{{Name: "tau1"}, {Name: "tau2"}}}},
		},
		Resample: ResampleSpec{Rate: 100, WorkRate: 200},
		Window:   WindowSpec{Length: 10, Stride: 5},
		Validate: ValidateSpec{MaxGap: 0.05},
	}
	s.Defaults()
	return s
}

func synthPendulum(t *testing.T) mechanics.PendulumParams {
	t.Helper()
	m, err := statemap.NewModel(&statemap.Spec{Model: statemap.ModelSpec{Kind: statemap.ModelDoublePendulum, Pendulum: statemap.PendulumSpec{Params: synthParams}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	return m.(*statemap.PendulumModel).Params
}

func TestSyntheticExactMomenta(t *testing.T) {
	dir := t.TempDir()
	writeSynthCSV(t, dir, "run.csv", 1001, 200, nil) // 5 s
	res, err := Convert(context.Background(), synthSpec("*.csv"), Options{DataRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Splits["id"]
	if d == nil || len(res.Splits) != 1 {
		t.Fatalf("splits %v", res.Splits)
	}
	// 501 samples at 100 Hz, windows at 0, 5, …, 490: 99, all kept and
	// merged into one episode.
	if w := res.Report.Windows; w.Total != 99 || w.Kept != 99 {
		t.Errorf("windows %+v, want 99 of 99", w)
	}
	if len(d.Episodes) != 1 || d.Episodes[0].Len != 500 || len(d.Windows()) != 99 {
		t.Fatalf("%d episodes (len %d), %d windows", len(d.Episodes), d.Episodes[0].Len, len(d.Windows()))
	}
	if d.N != 2 || d.NU != 2 || d.NC != 0 || d.Dt != 0.01 || strings.Join(d.Ports, ",") != "tau1,tau2" || strings.Join(d.Coordinates, ",") != "a,b" {
		t.Errorf("meta %+v", d.Meta)
	}
	pp := synthPendulum(t)
	ep := d.Episodes[0]
	for k := range ep.Len {
		tk := float64(k) / 100
		q, v, tau := synthMotion(tk)
		p := pp.Momentum(q, v)
		got := ep.X[4*k : 4*k+4]
		want := []float64{q[0], q[1], p[0], p[1]}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("t=%v: x = %v, want (q, M(q)q̇) = %v", tk, got, want)
			}
		}
		if math.Abs(ep.E[2*k]-tau[0]) > 1e-12 || math.Abs(ep.E[2*k+1]-tau[1]) > 1e-12 {
			t.Fatalf("t=%v: u = %v, want %v", tk, ep.E[2*k:2*k+2], tau)
		}
	}
	if e := ep.Tags["energy0"]; math.Abs(e-pp.Energy(synthMotion0())) > 1e-12 {
		t.Errorf("energy0 = %v, want %v", e, pp.Energy(synthMotion0()))
	}
}

func synthMotion0() (q, v [2]float64) {
	q, v, _ = synthMotion(0)
	return q, v
}

func TestSyntheticFilteredAndDifferentiated(t *testing.T) {
	// 1 kHz input, zero-phase 6th-order 18 Hz filter, decimation by 10,
	// velocities differentiated from positions: away from the ends of the
	// recording, where filtfilt's start-up transient lives (as in scipy),
	// the momenta stay within 1e-5 of M(q)q̇ (the motion lies far below
	// the cutoff).
	dir := t.TempDir()
	writeSynthCSV(t, dir, "run.csv", 6001, 1000, nil)
	s := synthSpec("run.csv")
	s.Resample.WorkRate = 0 // chosen from the input: 1000 Hz
	s.Filter = FilterSpec{Kind: "butterworth", Order: 6, Cutoff: 18}
	for i := range s.State.Joints {
		s.State.Joints[i].Velocity = statemap.Channel{}
	}
	res, err := Convert(context.Background(), s, Options{DataRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Report.Files[0]; r.WorkRate != 1000 || math.Abs(r.InputRate-1000) > 1e-6 {
		t.Errorf("rates %v → %v", r.InputRate, r.WorkRate)
	}
	pp := synthPendulum(t)
	var e2, s2 float64
	for _, ep := range res.Splits["id"].Episodes {
		for k := 40; k < ep.Len-40; k++ {
			q, v, _ := synthMotion(float64(k) / 100)
			p := pp.Momentum(q, v)
			for i := range 2 {
				d := ep.X[4*k+2+i] - p[i]
				e2 += d * d
				s2 += p[i] * p[i]
			}
		}
	}
	if rel := math.Sqrt(e2 / s2); rel > 1e-5 {
		t.Errorf("relative RMS momentum error %.2g, want < 1e-5", rel)
	}
}

func TestSyntheticRejections(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(i int, r *synthRow)
		validate ValidateSpec
		reason   string
		want     int // rejected windows for the reason; −1: at least one
		report   func(FileReport) bool
	}{
		{
			// Raw sample 301 is work sample 301; windows start at decimated
			// 0, 5, … and cover work samples [2s, 2s+18]: s = 145 and 150.
			name:   "nan",
			edit:   func(i int, r *synthRow) { r.q[1] = nanIf(i == 301, r.q[1]) },
			reason: ReasonNaN, want: 2,
			report: func(f FileReport) bool { return f.NaN["q2"] == 1 },
		},
		{
			name:     "gap",
			edit:     func(i int, r *synthRow) { r.remove = r.t > 1 && r.t < 1.2 },
			validate: ValidateSpec{MaxGap: 0.05},
			reason:   ReasonGap, want: -1,
			report: func(f FileReport) bool { return f.Gaps == 1 && math.Abs(f.GapSeconds-0.2) < 1e-9 },
		},
		{
			name: "position jump",
			edit: func(i int, r *synthRow) {
				if i == 400 {
					r.q[0] += 3
				}
			},
			validate: ValidateSpec{MaxJointSpeed: 50},
			reason:   ReasonJump, want: -1,
			report: func(f FileReport) bool { return f.Jumps == 2 },
		},
		{
			name: "momentum discontinuity",
			edit: func(i int, r *synthRow) {
				if i == 600 {
					r.v[1] += 5
				}
			},
			validate: ValidateSpec{MaxMomentumStep: []float64{0.05}},
			reason:   ReasonMomentumJump, want: -1,
			report: func(f FileReport) bool { return f.MomentumJumps == 2 },
		},
		{
			name: "momentum discontinuity, robust threshold",
			edit: func(i int, r *synthRow) {
				if i == 600 {
					r.v[1] += 5
				}
			},
			validate: ValidateSpec{MomentumJumpMAD: 20},
			reason:   ReasonMomentumJump, want: -1,
			report: func(f FileReport) bool { return f.MomentumJumps == 2 },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSynthCSV(t, dir, "run.csv", 1001, 200, tc.edit)
			s := synthSpec("run.csv")
			s.Validate = tc.validate
			res, err := Convert(context.Background(), s, Options{DataRoot: dir})
			if err != nil {
				t.Fatal(err)
			}
			w := res.Report.Windows
			got := w.Rejected[tc.reason]
			if (tc.want < 0 && got == 0) || (tc.want >= 0 && got != tc.want) {
				t.Errorf("rejected %v, want %d for %q", w.Rejected, tc.want, tc.reason)
			}
			if len(w.Rejected) != 1 {
				t.Errorf("rejected %v, want only %q", w.Rejected, tc.reason)
			}
			if w.Kept+got != w.Total || w.Kept == 0 {
				t.Errorf("windows %+v", w)
			}
			if f := res.Report.Files[0]; !tc.report(f) {
				t.Errorf("file report %+v", f)
			}
			if n := len(res.Splits["id"].Windows()); n != w.Kept {
				t.Errorf("dataset has %d windows, report kept %d", n, w.Kept)
			}
		})
	}
}

func nanIf(b bool, v float64) float64 {
	if b {
		return math.NaN()
	}
	return v
}

func TestSyntheticErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeSynthCSV(t, dir, "good.csv", 401, 200, nil)
	allNaN := writeSynthCSV(t, dir, "nan.csv", 401, 200, func(i int, r *synthRow) { r.tau[1] = math.NaN() })
	halfNaN := writeSynthCSV(t, dir, "halfnan.csv", 401, 200, func(i int, r *synthRow) { r.tau[1] = nanIf(i%2 == 0, r.tau[1]) })
	raw, _ := os.ReadFile(good)
	lines := strings.Split(string(raw), "\n")
	ragged := filepath.Join(dir, "ragged.csv")
	lines2 := append([]string(nil), lines...)
	lines2[50] = "0.245,1,2"
	os.WriteFile(ragged, []byte(strings.Join(lines2, "\n")), 0o644)
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, nil, 0o644)
	mcap := filepath.Join(dir, "log.mcap")
	os.WriteFile(mcap, []byte(logio.MCAPMagic), 0o644)

	tests := []struct {
		name   string
		input  string
		modify func(*Spec)
		is     error
		want   []string
	}{
		{"missing column", good, func(s *Spec) { s.State.Joints[1].Position.Name = "q3" }, ErrMissingChannel,
			[]string{"good.csv", `"q3" (state.joints[1].position)`, "available: time, q1, q2, v1, v2, tau1, tau2"}},
		{"missing time column", good, func(s *Spec) { s.Clock.Column = "stamp" }, ErrMissingChannel,
			[]string{`time column "stamp"`, "available: time, q1"}},
		{"all NaN", allNaN, nil, ErrNaN, []string{"nan.csv", `"tau2"`, "all 401 samples"}},
		{"NaN fraction", halfNaN, func(s *Spec) { s.Validate.MaxNaNFraction = 0.1 }, ErrNaN, []string{`"tau2"`, "201 of 401", "max_nan_fraction"}},
		{"corrupt row", ragged, nil, logio.ErrRaggedRow, []string{"ragged.csv", "line 51"}},
		{"empty file", empty, nil, nil, []string{"empty.csv", "empty"}},
		{"table channels on a message log", mcap, nil, ErrMissingChannel, []string{"log.mcap", `"q1" names no topic`}},
		{"no matching input", filepath.Join(dir, "*.parquet"), nil, ErrSpec, []string{"inputs[0]", "matches no file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := synthSpec(tc.input)
			if tc.modify != nil {
				tc.modify(s)
			}
			_, err := Convert(context.Background(), s, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestSyntheticTruncatedCSV(t *testing.T) {
	dir := t.TempDir()
	p := writeSynthCSV(t, dir, "cut.csv", 401, 200, nil)
	raw, _ := os.ReadFile(p)
	// Cut the file in the middle of its last line: no final newline.
	os.WriteFile(p, raw[:len(raw)-30], 0o644)
	res, err := Convert(context.Background(), synthSpec(p), Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Report.Files[0]
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "truncated") || f.Rows != 400 {
		t.Errorf("rows %d, warnings %q; want 400 rows and a truncation warning", f.Rows, f.Warnings)
	}
	if !strings.Contains(res.Report.String(), "warning") {
		t.Errorf("report summary does not show the warning:\n%s", res.Report)
	}
}

// TestSyntheticUnterminatedCSV: a CSV whose last line lacks its final
// newline, cut inside its last field (every field there, the value short
// of digits) or not, converts with a warning naming the line, as a last
// line cut short does; a file that ends with its newline has none.
func TestSyntheticUnterminatedCSV(t *testing.T) {
	for _, c := range []struct {
		name string
		cut  int  // bytes removed from the end
		warn bool // a warning about the last line
	}{
		{"complete", 0, false},
		{"no final newline", 1, true},
		{"cut inside the last field", 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeSynthCSV(t, dir, "run.csv", 401, 200, nil)
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, raw[:len(raw)-c.cut], 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Convert(context.Background(), synthSpec(p), Options{})
			if err != nil {
				t.Fatal(err)
			}
			f := res.Report.Files[0]
			warned := len(f.Warnings) == 1 && strings.Contains(f.Warnings[0], "line 402, the last, has no final newline")
			if warned != c.warn || len(f.Warnings) > 1 || (!c.warn && len(f.Warnings) > 0) || f.Rows != 401 {
				t.Errorf("rows %d, warnings %q; want 401 rows and a last-line warning %v", f.Rows, f.Warnings, c.warn)
			}
			if c.warn && !strings.Contains(res.Report.String(), "no final newline") {
				t.Errorf("report summary does not show the warning:\n%s", res.Report)
			}
		})
	}
}

func TestSyntheticNoWindows(t *testing.T) {
	dir := t.TempDir()
	writeSynthCSV(t, dir, "run.csv", 401, 200, func(i int, r *synthRow) { r.q[0] = nanIf(i%20 == 0, r.q[0]) })
	_, err := Convert(context.Background(), synthSpec("run.csv"), Options{DataRoot: dir})
	if !errors.Is(err, ErrNoWindows) || !strings.Contains(err.Error(), "nan") {
		t.Errorf("err = %v, want ErrNoWindows naming the reason", err)
	}
}

func TestSplits(t *testing.T) {
	dir := t.TempDir()
	writeSynthCSV(t, dir, "a.csv", 1001, 200, nil)
	writeSynthCSV(t, dir, "b.csv", 1001, 200, func(i int, r *synthRow) {
		r.q[0] *= 1.5 // more energetic
		r.v[0] *= 1.5
	})
	tests := []struct {
		name  string
		split SplitSpec
		check func(t *testing.T, res *Result)
	}{
		{"by file", SplitSpec{By: SplitByFile, Default: "id", Rules: []SplitRule{{Split: "ood", Files: []string{"b.*"}}}},
			func(t *testing.T, res *Result) {
				if got := res.Splits["ood"].Source["inputs"]; got != "b.csv" {
					t.Errorf("ood inputs %q", got)
				}
				if got := res.Splits["id"].Source["inputs"]; got != "a.csv" {
					t.Errorf("id inputs %q", got)
				}
			}},
		{"by time", SplitSpec{By: SplitByTime, Default: "late", Rules: []SplitRule{{Split: "early", Time: []float64{0, 2}}}},
			func(t *testing.T, res *Result) {
				for _, ep := range res.Splits["early"].Episodes {
					if t0 := ep.Tags["t0"]; t0 >= 2 {
						t.Errorf("early episode starts at %v", t0)
					}
				}
				for _, ep := range res.Splits["late"].Episodes {
					if t0 := ep.Tags["t0"]; t0 < 2 {
						t.Errorf("late episode starts at %v", t0)
					}
				}
				// Windows start every 0.05 s: 40 per file before 2 s.
				if n := res.Report.Splits["early"].Windows; n != 80 {
					t.Errorf("%d early windows, want 80", n)
				}
			}},
		{"by energy threshold", SplitSpec{By: SplitByEnergy, Default: "id", Rules: []SplitRule{{Split: "ood", Energy: []float64{0.2}}}},
			func(t *testing.T, res *Result) {
				if r := res.Report.Splits["id"].EnergyRange; r[1] >= 0.2 {
					t.Errorf("id energies %v reach the threshold", r)
				}
				if r := res.Report.Splits["ood"].EnergyRange; r[0] < 0.2 {
					t.Errorf("ood energies %v below the threshold", r)
				}
			}},
		{"by energy quantile", SplitSpec{By: SplitByEnergy, Default: "id", Rules: []SplitRule{{Split: "ood", Quantile: []float64{0.75, 1}}}},
			func(t *testing.T, res *Result) {
				id, ood := res.Report.Splits["id"], res.Report.Splits["ood"]
				// The quantile of a window is (number of windows with less
				// energy)/198: ranks 149…197 reach 0.75.
				if ood.Windows != 49 || id.Windows != 149 {
					t.Errorf("%d id and %d ood windows, want 149 and 49", id.Windows, ood.Windows)
				}
				if id.EnergyRange[1] > ood.EnergyRange[0] {
					t.Errorf("id energies %v overlap ood %v", id.EnergyRange, ood.EnergyRange)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := synthSpec("*.csv")
			s.Split = tc.split
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			res, err := Convert(context.Background(), s, Options{DataRoot: dir})
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for name, d := range res.Splits {
				if d.Split != name {
					t.Errorf("split %q has Meta.Split %q", name, d.Split)
				}
				total += len(d.Windows())
			}
			if total != res.Report.Windows.Kept || total != 198 {
				t.Errorf("%d windows over the splits, %d kept", total, res.Report.Windows.Kept)
			}
			tc.check(t, res)
		})
	}
}

// memSource is a message-log-like Source: every channel has its own
// timestamps and rate.
type memSource struct {
	series map[string]Series
}

func (m *memSource) Name() string { return "mem" }
func (m *memSource) Channels() []string {
	var out []string
	for k := range m.series {
		out = append(out, k)
	}
	return out
}
func (m *memSource) Read(names []string) ([]Series, error) {
	var out []Series
	for _, n := range names {
		s, ok := m.series[n]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrMissingChannel, n)
		}
		out = append(out, s)
	}
	return out, nil
}
func (m *memSource) Close() error { return nil }

func TestPluggableSourceWithTopicsAtDifferentRates(t *testing.T) {
	// Joint states at 230 Hz with jitter, torques at 60 Hz (held), as
	// topics of a message log would arrive.
	src := &memSource{series: map[string]Series{}}
	add := func(name string, hz, jitter float64, f func(float64) float64) {
		var s Series
		s.Name = name
		for i := 0; float64(i)/hz <= 4.02; i++ {
			tk := float64(i)/hz + jitter*math.Sin(float64(7*i))
			s.Time = append(s.Time, tk)
			s.Values = append(s.Values, f(tk))
		}
		src.series[name] = s
	}
	for j := range 2 {
		add(fmt.Sprintf("/joint_states.position[%d]", j), 230, 2e-4, func(t float64) float64 { q, _, _ := synthMotion(t); return q[j] })
		add(fmt.Sprintf("/joint_states.velocity[%d]", j), 230, 2e-4, func(t float64) float64 { _, v, _ := synthMotion(t); return v[j] })
		add(fmt.Sprintf("/effort.data[%d]", j), 60, 0, func(t float64) float64 { _, _, tau := synthMotion(t); return tau[j] })
	}
	s := synthSpec("mem")
	s.Resample.WorkRate = 0
	s.State.Joints[0].Position.Name, s.State.Joints[1].Position.Name = "/joint_states.position[0]", "/joint_states.position[1]"
	s.State.Joints[0].Velocity.Name, s.State.Joints[1].Velocity.Name = "/joint_states.velocity[0]", "/joint_states.velocity[1]"
	s.Control.Channels = []statemap.Channel{{Name: "/effort.data[0]"}, {Name: "/effort.data[1]"}}
	s.Control.Interp = statemap.InterpHold
	c, err := NewConverter(s, Options{Open: func(string, *Spec) (Source, error) { return src, nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ConvertSource(src, "mem")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Splits["id"].Ports; strings.Join(got, ",") != "effort.data[0],effort.data[1]" {
		t.Errorf("port names %v", got)
	}
	f := res.Report.Files[0]
	if f.WorkRate != 200 {
		t.Errorf("work rate %v, want 200 (the multiple of 100 Hz nearest 230 Hz)", f.WorkRate)
	}
	pp := synthPendulum(t)
	ep := res.Splits["id"].Episodes[0]
	t0 := src.series["/effort.data[0]"].Time[0]
	for _, s := range src.series {
		t0 = math.Max(t0, s.Time[0])
	}
	var worst, worstTau float64
	for k := range ep.Len {
		tk := t0 + float64(k)/100
		q, v, _ := synthMotion(tk)
		p := pp.Momentum(q, v)
		worst = math.Max(worst, math.Max(math.Abs(ep.X[4*k+2]-p[0]), math.Abs(ep.X[4*k+3]-p[1])))
		// Held torque: the latest 60 Hz sample at or before tk.
		_, _, tau := synthMotion(math.Floor(tk*60+1e-9) / 60)
		worstTau = math.Max(worstTau, math.Abs(ep.E[2*k]-tau[0]))
	}
	if worst > 2e-4 {
		t.Errorf("momenta off by %.3g after aligning 230 Hz jittered topics", worst)
	}
	if worstTau > 1e-12 {
		t.Errorf("held torques off by %.3g", worstTau)
	}
}
