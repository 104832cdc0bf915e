package node_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
)

// TestWrenchEstimateParams: an empty wrench_estimate turns the estimate on
// with its defaults; settings out of range, and both estimates at once,
// are refused naming the key; a robot without a floating base is refused
// when the node starts.
func TestWrenchEstimateParams(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(add string) (*node.Params, error) {
		path := filepath.Join(t.TempDir(), "p.yaml")
		text := strings.Replace(string(raw), "\n  horizon: 100", "\n"+add+"  horizon: 100", 1)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return node.LoadParams(path)
	}
	for _, c := range []struct {
		add  string
		want *predictor.WrenchEstimate
	}{
		{"", nil},
		{"  wrench_estimate: {}\n", &predictor.WrenchEstimate{Window: 400, Gate: 6, Decay: 1, Blocks: 8}},
		{"  wrench_estimate: {window: 100, gate: 2, decay: 0.99, blocks: 4}\n", &predictor.WrenchEstimate{Window: 100, Gate: 2, Decay: 0.99, Blocks: 4}},
	} {
		p, err := load(c.add)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Node.WrenchEstimate; (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%q: wrench estimate %+v, want %+v", c.add, got, c.want)
		}
	}
	for _, c := range []struct{ add, want string }{
		{"  wrench_estimate: {window: 4}\n", "node.wrench_estimate: predictor: wrench estimate window 4: want 8 (the blocks) … 100000 residuals"},
		{"  wrench_estimate: {gate: -2}\n", "node.wrench_estimate: predictor: wrench estimate gate -2"},
		{"  wrench_estimate: {decay: 2}\n", "node.wrench_estimate: predictor: wrench estimate decay 2: want a factor in [0, 1]"},
		{"  wrench_estimate: {}\n  force_estimate: {}\n", "node.wrench_estimate: and force_estimate are both set: choose one"},
	} {
		if _, err := load(c.add); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.add, err, c.want)
		}
	}
	p, err := load("  wrench_estimate: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	p.Node.Trigger.Topic = "/joint_states"
	_, err = node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return 0 }, Publisher: &memPub{}})
	if err == nil || !strings.Contains(err.Error(), "wrench_estimate: needs a floating base") {
		t.Errorf("pendulum with a wrench estimate: %v", err)
	}
}

// TestWrenchDiagnostics: the node's /diagnostics carry the wrench
// estimate: the residuals it is over, the applied force [N] and torque
// [N·m] in the frame of the base pose (the estimate's world frame rotated
// by the measured orientation at its start) and the gates, its confidence.
func TestWrenchDiagnostics(t *testing.T) {
	p := anymalParams(t)
	p.Spec.History.PortMean = 0
	p.Node.WrenchEstimate = &predictor.WrenchEstimate{Window: 16, Gate: 1e-6, Decay: 1, Blocks: 4}
	schema := anymalSchema(t, p)
	var now int64
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: quadrupedModel(t, p), Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pose := mechanics.SE3{R: mechanics.RPY(0.05, -0.1, 2.5), P: mechanics.Vec3{3, -1, 0.55}}
	for k := range 30 {
		now = t0 + int64(k)*10*ms
		data := anymalState(t, schema, now, pose, [6]float64{0.5, 0.1, 0, 0.1, 0.05, 0.3}, rng)
		if err := nd.Handle(node.Input{Topic: "/state_estimator/anymal_state", Data: data, Received: now}); err != nil {
			t.Fatal(err)
		}
	}
	now += 2 * int64(1e9)
	if err := nd.Tick(); err != nil {
		t.Fatal(err)
	}
	st, ok := nd.WrenchEstimate()
	if !ok || st.Residuals != 16 {
		t.Fatalf("wrench estimate %+v (%v)", st, ok)
	}
	d := status(t, pub.lastDiagnostics(t), node.StatusPrediction)
	// the diagnostics' force: R_pose·R_estᵀ·impulse/dt
	var re mechanics.Mat3
	for i := range 3 {
		for j := range 3 {
			re[i][j] = st.Rotation[3*i+j]
		}
	}
	R := pose.R.Mul(re.T())
	want := R.MulVec(mechanics.Vec3{st.Impulse[0] / 0.01, st.Impulse[1] / 0.01, st.Impulse[2] / 0.01})
	got := strings.Fields(value(d, "wrench_force_N"))
	if len(got) != 3 {
		t.Fatalf("wrench_force_N %q", value(d, "wrench_force_N"))
	}
	var norm float64
	for i, s := range got {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Abs(v-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Errorf("force[%d] %q, want %.6g (%v)", i, s, want[i], err)
		}
		norm += want[i] * want[i]
	}
	if norm == 0 {
		t.Error("a zero force estimate: the test shows nothing")
	}
	if g := strings.Fields(value(d, "wrench_confidence")); len(g) != 6 || len(strings.Fields(value(d, "wrench_torque_Nm"))) != 3 ||
		value(d, "wrench_estimate_residuals") != "16" || value(d, "wrench_frame") != "odom" || value(d, "wrench_estimate_restarts") != "0" {
		t.Errorf("diagnostics %+v", d.Values)
	}
}

// TestAnymalParamsWrenchEstimate: the ANYmal's params turn the wrench
// estimate on with the settings the payload study chose (window 400, gate
// 6; docs/benchmarks.md), and the floating-base params that were not
// measured leave it off.
func TestAnymalParamsWrenchEstimate(t *testing.T) {
	for _, tc := range []struct {
		file string
		want *predictor.WrenchEstimate
	}{
		{"anymal.yaml", &predictor.WrenchEstimate{Window: 400, Gate: 6, Decay: 1, Blocks: 8}},
		{"crazyflie.yaml", nil},
		{"px4_quadrotor.yaml", nil},
	} {
		p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Node.WrenchEstimate; (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: wrench_estimate %+v, want %+v", tc.file, got, tc.want)
		}
	}
}
