package test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/internal/livetest"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// A parity case feeds the same messages, sample k after sample k, to the
// dataset conversion and to the live node, and expects the x_t and e_t of
// every converted sample from both, bit for bit.
//
// The conversion is configured so that its processing is the identity on
// these messages: every topic is stamped on one uniform clock at the
// dataset rate from the log's start (so alignment copies samples), no
// filter, windows of two samples at stride one. What remains is the
// mapping the params file writes once (statemap): units, the base pose,
// body twist, p = M(q)v, ports, contact axes, window-relative base
// coordinates. Params recorded as tables (Crazyflie, the real pendulum)
// log the quantity the node's channel map turns the live message value
// into; the test writes that table from the messages.
type parityCase struct {
	params string // file under params/
	data   string // data root under ../shared/data ("" for the params' own)
	// build writes the conversion's input under dir and returns its path
	// and the node's messages, one batch per sample.
	build func(t *testing.T, p *node.Params, dir string, n int) (string, [][]node.Input)
}

// paramsWithoutData lists the params files no data in ../shared/data
// exercises (the parity test fails on a params file in neither list).
var paramsWithoutData = map[string]string{
	"px4_quadrotor.yaml": "no PX4 log in ../shared/data",
	// its conversion is crazyflie.yaml's with another motor port (bagtools/convert TestCrazyflieERPMGlitches)
	"crazyflie_erpm.yaml": "no node section: the measured rotor speeds are no live port",
}

func TestMappingParity(t *testing.T) {
	cases := []parityCase{
		{params: "pendulum_sim.yaml", build: pendulumSimLog},
		{params: "anymal.yaml", data: "anymal_sim", build: anymalLog},
		{params: "crazyflie.yaml", build: crazyflieTable},
		{params: "crazyflie_gravity.yaml", build: crazyflieTable},
		{params: "double_pendulum_hw.yaml", build: pendulumHWTable},
		{params: "ur10e.yaml", build: ur10eTable},
	}
	files, err := filepath.Glob(filepath.Join(fixtures.Root(), "params", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if _, ok := paramsWithoutData[name]; !ok && !slices.ContainsFunc(cases, func(c parityCase) bool { return c.params == name }) {
			t.Errorf("params/%s has no parity case: add one, or list it in paramsWithoutData with the reason", name)
		}
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.params, ".yaml"), func(t *testing.T) {
			if c.params != "pendulum_sim.yaml" {
				fixtures.Path(t) // skips (or fails under CI) without the data
			}
			runParity(t, c)
		})
	}
}

func runParity(t *testing.T, c parityCase) {
	const n = 240 // samples
	p, spec := loadParams(t, c.params)
	// The port history (convert.history) needs the node to observe every
	// sample, which this node's trigger does not; TestPortHistoryParity
	// checks it. Here: the per-sample mapping.
	p.Spec.History.PortMean, spec.History.PortMean = 0, 0
	root := filepath.Join(fixtures.DataDir(), c.data)
	dir := t.TempDir()
	input, batches := c.build(t, p, dir, n)

	res := parityConversion(t, spec, input, root, n)
	type row struct{ x, e []float64 }
	rows := map[int]row{}
	for _, d := range res.Splits {
		for _, ep := range d.Episodes {
			k0 := int(math.Round(ep.Tags["t0"] * spec.Resample.Rate))
			last := ep.Len
			if spec.State.Kind != statemap.StateJoints {
				last = 1 // later samples are relative to the window's first
			}
			for j := range last {
				rows[k0+j] = row{ep.X[j*2*d.N : (j+1)*2*d.N], ep.E[j*(d.NU+d.NC) : (j+1)*(d.NU+d.NC)]}
			}
		}
	}

	// The live node, with a random model of the mapping's layout.
	nd := newParityNode(t, p, root)
	nx, nu, nc := nd.Sampler().Layout()
	x, e := make([]float64, 2*nx), make([]float64, nu+nc)
	compared := 0
	for k, batch := range batches {
		for _, m := range batch {
			if err := nd.Handle(m); err != nil {
				t.Fatal(err)
			}
		}
		want, ok := rows[k]
		if !ok {
			continue
		}
		if _, err := nd.State(x, e); err != nil {
			t.Fatalf("sample %d: %v", k, err)
		}
		if i := firstDiff(x, want.x); i >= 0 {
			t.Fatalf("sample %d: x[%d] = %v live, %v converted (%s)", k, i, x[i], want.x[i], label(nd.Sampler().Coordinates(), i))
		}
		if i := firstDiff(e, want.e); i >= 0 {
			t.Fatalf("sample %d: e[%d] = %v live, %v converted (%s)", k, i, e[i], want.e[i], nd.Sampler().Ports()[i])
		}
		compared++
	}
	t.Logf("%s: %d samples identical, bit for bit (n = %d, n_u = %d, n_c = %d; %d windows kept)", c.params, compared, nx, nu, nc, res.Report.Windows.Kept)
	if compared < n/2 {
		t.Errorf("compared %d samples of %d: the conversion rejected too many", compared, n)
	}
}

// loadParams reads params/<name> as the node and the conversion read it.
func loadParams(t *testing.T, name string) (*node.Params, *convert.Spec) {
	t.Helper()
	path := filepath.Join(fixtures.Root(), "params", name)
	p, err := node.LoadParams(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := convert.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	return p, spec
}

// pushParity prepares a parity case on the first n samples of a push log
// of the simulated ANYmal (ood/push_401): params/anymal.yaml with the port
// history over m samples (0: none) for the node and the conversion, the
// node's message batches and the conversion of the same messages.
func pushParity(t *testing.T, n, m int) (p *node.Params, spec *convert.Spec, root string, batches [][]node.Input, res *convert.Result) {
	t.Helper()
	fixtures.Path(t, "anymal_sim")
	p, spec = loadParams(t, "anymal.yaml")
	p.Spec.History.PortMean, spec.History.PortMean = m, m
	root = filepath.Join(fixtures.DataDir(), "anymal_sim")
	input, batches := anymalLog(t, p, t.TempDir(), n)
	return p, spec, root, batches, parityConversion(t, spec, input, root, n)
}

// parityConversion converts input (n samples on the dataset clock) so that
// the conversion's processing is the identity on its messages: log-time
// stamps, no filter, no work rate, windows of two samples at stride one,
// no exclusions, one split.
func parityConversion(t *testing.T, spec *convert.Spec, input, root string, n int) *convert.Result {
	t.Helper()
	spec.Inputs = []string{input}
	spec.Source.Format = ""
	spec.Clock.Stamp = convert.StampLogTime
	if strings.HasSuffix(input, ".csv") {
		spec.Clock.Column, spec.Clock.Unit = "t", "s"
	}
	spec.Filter = convert.FilterSpec{Kind: "none"}
	spec.Resample.WorkRate = 0
	spec.Window = convert.WindowSpec{Length: 2, Stride: 1, Storage: convert.StorageWindow}
	spec.Validate.Exclude = nil
	spec.Split = convert.SplitSpec{}
	res, err := convert.Convert(context.Background(), spec, convert.Options{DataRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Report.Files[0]; f.Samples != n || f.WorkRate != spec.Resample.Rate {
		t.Fatalf("conversion: %d samples at %g Hz, want %d at the dataset rate %g Hz (the clock must copy the messages)", f.Samples, f.WorkRate, n, spec.Resample.Rate)
	}
	return res
}

func firstDiff(a, b []float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

// label names x[i]: a coordinate or "p" of one.
func label(coords []string, i int) string {
	if i < len(coords) {
		return coords[i]
	}
	return "p of " + coords[i-len(coords)]
}

type discard struct{}

func (discard) Advertise(string, node.TopicType) error { return nil }
func (discard) Publish(string, int64, []byte) error    { return nil }

// newParityNode builds the live node of p with a random model of its
// mapping's layout (the model plays no part in x_t and e_t).
func newParityNode(t *testing.T, p *node.Params, root string) *node.Node {
	t.Helper()
	nd, err := node.New(node.Options{Params: p, Model: parityModel(t, p, root), DataRoot: root, Now: func() int64 { return 0 }, Publisher: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

func parityModel(t *testing.T, p *node.Params, root string) *predictor.Model {
	t.Helper()
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	n, nu, nc := smp.Layout()
	m, err := predictor.New(predictor.Layout{N: n, NU: nu, NC: nc}, predictor.Arch{Kind: predictor.KindGR, Layers: 1, Width: 4, StepSize: 0.1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	m.Meta = predictor.Metadata{Name: "parity", Coordinates: smp.Coordinates(), Ports: smp.Ports(), Dt: 1 / p.Rate}
	return m
}

// gridNanos is sample k's time on the dataset clock, from a log start.
func gridNanos(p *node.Params, start int64, k int) int64 {
	return start + int64(k)*int64(math.Round(1e9/p.Rate))
}

// regrid copies the first n messages of each topic of the message log src
// into a new MCAP log at dst, the k-th of every topic logged at sample k's
// time on the dataset clock, and returns them as the node's batches.
func regrid(t *testing.T, p *node.Params, src, dst string, n int) [][]node.Input {
	t.Helper()
	r, err := logio.Open(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var topics []string
	for _, tc := range p.Node.Topics {
		topics = append(topics, tc.Topic)
	}
	w, err := logio.CreateROS2(dst, &logio.ROS2WriterOptions{Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	added := map[string]bool{}
	count := map[string]int{}
	batches := make([][]node.Input, n)
	const start = int64(1_700_000_000_000_000_000)
	for m, err := range logio.Messages(r) {
		if err != nil {
			t.Fatal(err)
		}
		tp := m.Channel.Topic
		k := count[tp]
		if !slices.Contains(topics, tp) || k >= n {
			continue
		}
		if !added[tp] {
			if err := w.AddTopic(tp, m.Channel.Type, string(m.Channel.Schema), nil); err != nil {
				t.Fatal(err)
			}
			added[tp] = true
		}
		ts := gridNanos(p, start, k)
		if err := w.Write(tp, uint64(ts), uint64(ts), m.Data); err != nil {
			t.Fatal(err)
		}
		batches[k] = append(batches[k], node.Input{Topic: tp, Data: slices.Clone(m.Data), Received: ts})
		count[tp]++
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		if count[tp] < n {
			t.Fatalf("%s: %d messages on %s, want %d", src, count[tp], tp, n)
		}
	}
	return batches
}

// pendulumSimLog regrids the simulated pendulum's MCAP log (/joint_states
// and /torque_command, as `calisym sim --mcap` writes them).
func pendulumSimLog(t *testing.T, p *node.Params, dir string, n int) (string, [][]node.Input) {
	src := filepath.Join(dir, "sim.mcap")
	livetest.PendulumLog(t, src, livetest.PendulumTrajectories(t, 1, n+10))
	dst := filepath.Join(dir, "parity.mcap")
	return dst, regrid(t, p, src, dst, n)
}

// anymalLog regrids a simulated ANYmal D run (AnymalState messages).
func anymalLog(t *testing.T, p *node.Params, dir string, n int) (string, [][]node.Input) {
	src := fixtures.Path(t, "anymal_sim", "ood", "push_401.mcap")
	dst := filepath.Join(dir, "parity.mcap")
	return dst, regrid(t, p, src, dst, n)
}

// table is a conversion input written as CSV: a time column t on the
// dataset clock and one column per logged channel.
type table struct {
	cols []string
	rows [][]float64
}

func (tb *table) write(t *testing.T, path string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("t," + strings.Join(tb.cols, ",") + "\n")
	for _, r := range tb.rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// logged returns what a table logs for the spec channel from, given the
// live message value raw: the node's channel map turns a live value into
// the logged quantity (its unit, scale and offset), as a recorder of the
// table did.
func logged(p *node.Params, from string, raw float64) float64 {
	for _, m := range p.Node.Channels {
		if m.From == from {
			return raw*m.Factor() + m.Offset
		}
	}
	return raw
}

// readTable reads the named columns of the first n rows of a CSV or
// parquet file.
func readTable(t *testing.T, path string, cols []string, n int) [][]float64 {
	t.Helper()
	type reader interface {
		Columns() []string
		Next([]float64) error
		Close() error
	}
	var r reader
	var err error
	if strings.HasSuffix(path, ".parquet") {
		r, err = logio.OpenParquet(path, nil)
	} else {
		r, err = logio.OpenCSV(path, &logio.CSVOptions{Header: true})
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	idx := make([]int, len(cols))
	for i, c := range cols {
		if idx[i] = slices.Index(r.Columns(), c); idx[i] < 0 {
			t.Fatalf("%s has no column %s", path, c)
		}
	}
	buf := make([]float64, len(r.Columns()))
	var out [][]float64
	for range n {
		if err := r.Next(buf); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		row := make([]float64, len(cols))
		for i, j := range idx {
			row[i] = buf[j]
		}
		out = append(out, row)
	}
	return out
}

// crazyflieTable builds nav_msgs/Odometry and Crazyswarm2 LogDataGeneric
// motor messages from a Crazyflie flight (motor commands as 16-bit PWM),
// and the table the convert section reads.
func crazyflieTable(t *testing.T, p *node.Params, dir string, n int) (string, [][]node.Input) {
	files, err := filepath.Glob(filepath.Join(fixtures.Path(t, "crazyflie", "test"), "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Crazyflie flight: %v", err)
	}
	// the battery's voltage rides in the motors' log block (fifth value),
	// which only the params with a voltage-scaled thrust map read
	cols := []string{"x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz", "m1_thrust", "m2_thrust", "m3_thrust", "m4_thrust", "Vbat"}
	rows := readTable(t, files[0], cols, n)
	defs := node.Definitions{Dir: p.DefinitionsDir()}
	motors := dynamicType(t, defs, "crazyflie_interfaces/msg/LogDataGeneric")
	tb := &table{cols: cols}
	batches := make([][]node.Input, n)
	for k, r := range rows {
		ts := gridNanos(p, 1_700_000_000_000_000_000, k)
		odom := &msgs.Odometry{Header: msgs.Header{Stamp: msgs.TimeFromNanos(ts), FrameID: "world"}, ChildFrameID: "cf231"}
		odom.Pose.Pose.Position = msgs.Point{X: r[0], Y: r[1], Z: r[2]}
		odom.Pose.Pose.Orientation = msgs.Quaternion{X: r[3], Y: r[4], Z: r[5], W: r[6]}
		odom.Twist.Twist.Linear = msgs.Vector3{X: r[7], Y: r[8], Z: r[9]}
		odom.Twist.Twist.Angular = msgs.Vector3{X: r[10], Y: r[11], Z: r[12]}
		pwm := make([]float64, 5)
		tr := append([]float64{float64(k) / p.Rate}, r...)
		for i := range 4 {
			pwm[i] = math.Round(r[13+i] * 65535)
			tr[1+13+i] = logged(p, cols[13+i], pwm[i])
		}
		pwm[4] = float64(float32(r[17])) // pm.vbat is a float32
		tr[1+17] = logged(p, "Vbat", pwm[4])
		tb.rows = append(tb.rows, tr)
		batches[k] = []node.Input{
			{Topic: "/cf231/odom", Data: msgs.AppendMarshal(nil, odom), Received: ts},
			{Topic: "/cf231/motors", Data: motors.encode(t, ts, uint32(k*10), pwm), Received: ts},
		}
	}
	path := filepath.Join(dir, "flight.csv")
	tb.write(t, path)
	return path, batches
}

// pendulumHWTable builds sensor_msgs/JointState messages from a run of the
// real double pendulum (measured positions, velocities and torques), and
// the table the convert section reads.
func pendulumHWTable(t *testing.T, p *node.Params, dir string, n int) (string, [][]node.Input) {
	files, err := filepath.Glob(filepath.Join(fixtures.Path(t, "double_pendulum_hw", "trajectories"), "*.csv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pendulum run: %v", err)
	}
	cols := []string{"pos_meas1", "pos_meas2", "vel_meas1", "vel_meas2", "tau_meas1", "tau_meas2"}
	rows := readTable(t, files[0], cols, n)
	tb := &table{cols: cols}
	batches := make([][]node.Input, n)
	for k, r := range rows {
		ts := gridNanos(p, 1_700_000_000_000_000_000, k)
		js := &msgs.JointState{Header: msgs.Header{Stamp: msgs.TimeFromNanos(ts)}, Name: []string{"shoulder", "elbow"},
			Position: []float64{r[0], r[1]}, Velocity: []float64{r[2], r[3]}, Effort: []float64{r[4], r[5]}}
		tr := []float64{float64(k) / p.Rate}
		for i, c := range cols {
			tr = append(tr, logged(p, c, r[i]))
		}
		tb.rows = append(tb.rows, tr)
		batches[k] = []node.Input{{Topic: "/joint_states", Data: msgs.AppendMarshal(nil, js), Received: ts}}
	}
	path := filepath.Join(dir, "run.csv")
	tb.write(t, path)
	return path, batches
}

// ur10eTable builds sensor_msgs/JointState messages, as the UR ROS 2
// driver publishes them (position, velocity, and the motor currents as
// effort), from a UR10e identification run, and the header-less table of
// 31 columns the convert section reads.
func ur10eTable(t *testing.T, p *node.Params, dir string, n int) (string, [][]node.Input) {
	spec, err := convert.LoadSpec(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	cols := spec.Source.Columns
	src := fixtures.Path(t, "ur10e", "identification", "ur-20_02_05-20sec_8harm.csv")
	r, err := logio.OpenCSV(src, &logio.CSVOptions{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	joints := spec.JointNames()
	var b strings.Builder
	batches := make([][]node.Input, n)
	row := make([]float64, len(cols))
	for k := range n {
		if err := r.Next(row); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		ts := gridNanos(p, 1_700_000_000_000_000_000, k)
		js := &msgs.JointState{Header: msgs.Header{Stamp: msgs.TimeFromNanos(ts)}, Name: joints,
			Position: slices.Clone(row[1:7]), Velocity: slices.Clone(row[7:13]), Effort: slices.Clone(row[13:19])}
		batches[k] = []node.Input{{Topic: "/joint_states", Data: msgs.AppendMarshal(nil, js), Received: ts}}
		row[0] = float64(k) / p.Rate
		for i, c := range cols {
			if i > 0 {
				b.WriteByte(',')
				row[i] = logged(p, c, row[i])
			}
			b.WriteString(strconv.FormatFloat(row[i], 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "run.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, batches
}

// dynType encodes messages of a type msgs has no Go type for (header,
// uint32 timestamp, float64[] values: LogDataGeneric) from its .msg
// definition.
type dynType struct {
	schema *rosmsg.Schema
	root   string
}

func dynamicType(t *testing.T, defs node.Definitions, rosType string) *dynType {
	t.Helper()
	def, err := defs.Lookup(rosType)
	if err != nil {
		t.Fatal(err)
	}
	s, err := rosmsg.ParseSchema(rosType, rosmsg.ROS2Msg, []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return &dynType{schema: s, root: rosType}
}

func (d *dynType) encode(t *testing.T, stamp int64, ms uint32, values []float64) []byte {
	t.Helper()
	st := msgs.TimeFromNanos(stamp)
	time := &rosmsg.Struct{Def: d.schema.Type("builtin_interfaces/msg/Time"), Fields: []any{st.Sec, st.Nanosec}}
	header := &rosmsg.Struct{Def: d.schema.Type("std_msgs/msg/Header"), Fields: []any{time, "cf231"}}
	m := &rosmsg.Struct{Def: d.schema.Type(d.root), Fields: []any{header, ms, slices.Clone(values)}}
	b, err := d.schema.Encode(rosmsg.EncodingCDR, m)
	if err != nil {
		t.Fatal(fmt.Errorf("encode %s: %w", d.root, err))
	}
	return b
}
