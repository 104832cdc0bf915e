package node_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// priorSetup is the real pendulum as params/double_pendulum_hw.yaml
// serves it, with a composed model: a small random CaLiSym-GRB behind the
// physics prior of kind, the identified model 2.0 the params' mapping
// uses (trainer.Composed), saved and opened as the node's commands open
// it (trainer.OpenModel).
type priorSetup struct {
	params *node.Params
	root   string
	model  *predictor.Model
	saved  *trainer.SavedModel
	prior  *mechanics.PendulumPrior
}

func newPriorSetup(t *testing.T, kind mechanics.PriorKind) priorSetup {
	t.Helper()
	ppath := fixtures.Path(t, "double_pendulum_hw", "identified_parameters", "model_2.0", "model_parameters.yml")
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "double_pendulum_hw.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p.Node.DiagnosticsPeriod = 1e6
	root := fixtures.DataDir()
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	pp, err := mechanics.LoadPendulumParamsYAML(ppath)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := mechanics.NewPendulumPrior(kind, pp, 1/p.Rate)
	if err != nil {
		t.Fatal(err)
	}
	n, nu, nc := smp.Layout()
	arch := predictor.Arch{Kind: predictor.KindGRB, Layers: 3, Width: 5, RidgeDim: 2,
		Spline: predictor.Spline{Intervals: 6, Lo: -3, Hi: 3}, StepSize: 1}
	m, err := predictor.New(predictor.Layout{N: n, NU: nu, NC: nc}, arch, rand.New(rand.NewPCG(37, 1)))
	if err != nil {
		t.Fatal(err)
	}
	m.Meta = predictor.Metadata{Name: "composed pendulum", Coordinates: smp.Coordinates(), Ports: smp.Ports(), Dt: 1 / p.Rate}
	tr := predictor.NewTrainable(m)
	tr.Init(rand.New(rand.NewPCG(37, 2)), 0.3) // a correction the rollout sees
	sv := saveComposed(t, &trainer.Symplectic{T: tr}, prior)
	if sv.Prior == nil || *sv.Prior != prior.Spec() {
		t.Fatalf("the model file's prior %+v, want %+v", sv.Prior, prior.Spec())
	}
	return priorSetup{params: p, root: root, model: sv.Model, saved: sv, prior: prior}
}

func (s priorSetup) node(t *testing.T, now *int64, pub node.Publisher) *node.Node {
	t.Helper()
	nd, err := node.New(node.Options{Params: s.params, Model: s.model, DataRoot: s.root, Now: func() int64 { return *now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

// pendulumSample is the k-th joint state of a swinging pendulum, with the
// measured torques as efforts.
func pendulumSample(k int) []byte {
	s := 0.07 * float64(k)
	at := t0 + int64(k)*10*ms
	return msgs.Marshal(&msgs.JointState{Header: msgs.Header{Stamp: msgs.TimeFromNanos(at)}, Name: pendulumJoints,
		Position: []float64{0.8 * math.Sin(s), 0.5 * math.Cos(1.3*s)},
		Velocity: []float64{0.8 * 7 * math.Cos(s), -0.5 * 9.1 * math.Sin(1.3*s)},
		Effort:   []float64{0.3 * math.Sin(2*s), -0.2 + 0.1*math.Cos(s)}})
}

// feedHeld hands the node the k-th pendulum sample at its own time and
// reads back the state and ports it mapped into x and e, and those ports
// held over the horizon into ports.
func feedHeld(t *testing.T, nd *node.Node, now *int64, k int, x, e, ports []float64) {
	t.Helper()
	*now = t0 + int64(k)*10*ms
	if err := nd.Handle(node.Input{Topic: "/joint_states", Data: pendulumSample(k), Received: *now}); err != nil {
		t.Fatal(err)
	}
	if _, err := nd.State(x, e); err != nil {
		t.Fatal(err)
	}
	for j := range len(ports) / len(e) {
		copy(ports[len(e)*j:], e)
	}
}

// TestNodeServesPriorModel: the node serves a composed model (a physics
// prior in its file, trainer.Composed) of the real pendulum: fed joint
// states, each prediction is, bit for bit, the composed rollout
// (trainer.ComposedRollers, as OpenModel makes it) from the state and
// ports the node maps (Node.State) with the ports held, and the prior
// applied by hand before one step of the learned map at every step; the
// learned map alone predicts otherwise. The diagnostics name the prior.
func TestNodeServesPriorModel(t *testing.T) {
	for _, kind := range []mechanics.PriorKind{mechanics.PriorMidpointFriction, mechanics.PriorMidpoint} {
		t.Run(string(kind), func(t *testing.T) {
			s := newPriorSetup(t, kind)
			var now int64
			pub := &memPub{}
			nd := s.node(t, &now, pub)
			h := nd.Horizon()
			r, err := s.saved.Rollers()
			if err != nil {
				t.Fatal(err)
			}
			plan, err := s.model.Compile()
			if err != nil {
				t.Fatal(err)
			}
			alone := plan.NewRoller()
			x, e := make([]float64, 4), make([]float64, 2)
			ports := make([]float64, h*2)
			want, byHand, learned := make([]float64, h*4), make([]float64, h*4), make([]float64, h*4)
			const samples = 12
			for k := range samples {
				feedHeld(t, nd, &now, k, x, e, ports)
				ps := pub.predictions(t)
				if len(ps) != k+1 {
					t.Fatalf("sample %d: %d predictions, want %d", k, len(ps), k+1)
				}
				got := ps[k]
				if err := r.Rollout(x, ports, h, want); err != nil {
					t.Fatal(err)
				}
				xk := [4]float64(x)
				for j := range h {
					y, err := s.prior.Step(xk, [2]float64(e))
					if err != nil {
						t.Fatal(err)
					}
					if err := alone.Rollout(y[:], e, 1, byHand[4*j:4*j+4]); err != nil {
						t.Fatal(err)
					}
					xk = [4]float64(byHand[4*j : 4*j+4])
				}
				if err := alone.Rollout(x, ports, h, learned); err != nil {
					t.Fatal(err)
				}
				var dLearned float64
				for j := range h {
					for i := range 2 {
						q, p := got.Q[2*j+i], got.P[2*j+i]
						if q != want[4*j+i] || p != want[4*j+2+i] {
							t.Fatalf("sample %d, step %d: predicted q %v p %v, the composed rollout %v", k, j+1, got.Q[2*j:2*j+2], got.P[2*j:2*j+2], want[4*j:4*j+4])
						}
						if q != byHand[4*j+i] || p != byHand[4*j+2+i] {
							t.Fatalf("sample %d, step %d: predicted q %v p %v, prior then model by hand %v", k, j+1, got.Q[2*j:2*j+2], got.P[2*j:2*j+2], byHand[4*j:4*j+4])
						}
						dLearned = max(dLearned, math.Abs(q-learned[4*j+i]))
					}
				}
				if dLearned < 1e-3 {
					t.Errorf("sample %d: the learned map alone predicts q within %g of the composed model: the prior does not show", k, dLearned)
				}
			}
			if st := nd.Stats(); st.Predictions != samples || st.Suppressed != 0 {
				t.Errorf("%d predictions, %d suppressed, want %d and 0", st.Predictions, st.Suppressed, samples)
			}
			now += 2e15 // past the periodic diagnostics
			if err := nd.Tick(); err != nil {
				t.Fatal(err)
			}
			if v := value(status(t, pub.lastDiagnostics(t), node.StatusPrediction), "physics_prior"); v != string(kind) {
				t.Errorf("diagnostics physics_prior %q, want %q", v, kind)
			}
		})
	}
}

// TestNodePriorForceEstimate: with the offset-free force estimate the
// node's estimate runs on the composed model (prior, then the learned
// map): each prediction is, bit for bit, a predictor.ForceEstimator over
// the composed rollout (trainer.ComposedRollers) fed the same samples.
func TestNodePriorForceEstimate(t *testing.T) {
	s := newPriorSetup(t, mechanics.PriorMidpointFriction)
	cfg := predictor.ForceEstimate{Window: 5, Decay: 0.9}
	s.params.Node.ForceEstimate = &cfg
	var now int64
	pub := &memPub{}
	nd := s.node(t, &now, pub)
	h := nd.Horizon()
	r, err := s.saved.Rollers()
	if err != nil {
		t.Fatal(err)
	}
	est, err := predictor.NewForceEstimator(r, 2, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, e := make([]float64, 4), make([]float64, 2)
	ports, want := make([]float64, h*2), make([]float64, h*4)
	for k := range 10 {
		feedHeld(t, nd, &now, k, x, e, ports)
		if err := est.Observe(x, e); err != nil {
			t.Fatal(err)
		}
		if err := est.Rollout(x, ports, h, want); err != nil {
			t.Fatal(err)
		}
		got := pub.predictions(t)[k]
		for j := range h {
			for i := range 2 {
				if got.Q[2*j+i] != want[4*j+i] || got.P[2*j+i] != want[4*j+2+i] {
					t.Fatalf("sample %d, step %d: predicted q %v p %v, the offset-free composed rollout %v", k, j+1, got.Q[2*j:2*j+2], got.P[2*j:2*j+2], want[4*j:4*j+4])
				}
			}
		}
	}
	if _, n := nd.ForceEstimate(nil); n != 5 {
		t.Errorf("the force estimate averages %d residuals, want 5", n)
	}
}

// TestNodePriorAllocations: with a composed model, alone and with the
// force estimate, a joint state that predicts (prior and learned map over
// the 100-step horizon) and publishes allocates nothing.
func TestNodePriorAllocations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		force *predictor.ForceEstimate
	}{{"prior", nil}, {"prior+force", &predictor.ForceEstimate{Window: 10, Decay: 0.9}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPriorSetup(t, mechanics.PriorMidpointFriction)
			s.params.Node.ForceEstimate = tc.force
			var now int64
			nd := s.node(t, &now, nopPub{})
			const n = 150
			js := make([][]byte, n)
			for k := range n {
				js[k] = pendulumSample(k)
			}
			k := 0
			step := func() {
				now = t0 + int64(k)*10*ms
				if err := nd.Handle(node.Input{Topic: "/joint_states", Data: js[k], Received: now}); err != nil {
					t.Fatal(err)
				}
				k++
			}
			for range 20 {
				step()
			}
			if a := testing.AllocsPerRun(100, step); a != 0 {
				t.Errorf("%v allocations per prediction", a)
			}
			if st := nd.Stats(); st.Predictions != uint64(k) || st.Suppressed != 0 {
				t.Errorf("%d predictions of %d samples, %d suppressed", st.Predictions, k, st.Suppressed)
			}
		})
	}
}

// TestNodeRefusesBadPrior: a composed model whose prior does not fit is
// refused with node.ErrModel naming the mismatch: a prior stepping 20 ms
// at the params' 100 Hz, a prior record that does not parse, and a prior
// on a robot that is not a double pendulum (the UR10e's six joints).
func TestNodeRefusesBadPrior(t *testing.T) {
	s := newPriorSetup(t, mechanics.PriorMidpointFriction)
	spec := s.prior.Spec()
	spec.Dt = 0.02
	slow, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	ur, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "ur10e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	urRoot := ur.Resolve(".")
	smp, err := statemap.NewSampler(ur.Spec, ur.SamplerOptions(urRoot))
	if err != nil {
		t.Fatal(err)
	}
	fine, err := json.Marshal(s.prior.Spec())
	if err != nil {
		t.Fatal(err)
	}
	spec = s.prior.Spec()
	spec.Kind = "pendulum_euler"
	euler, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		params *node.Params
		root   string
		model  *predictor.Model
		record string
		want   []string
	}{
		{"dt", s.params, s.root, s.model, string(slow), []string{"physics_prior", "dt = 0.02 s", "convert.resample.rate is 100 Hz"}},
		{"record", s.params, s.root, s.model, string(euler), []string{"physics_prior", `prior kind "pendulum_euler"`}},
		{"size", ur, urRoot, randomModel(t, smp, ur.Rate), string(fine), []string{"physics_prior", "double pendulum", "n = 6 (state size 12)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := *tc.model
			m.Meta.Provenance = map[string]string{mechanics.PriorProvenanceKey: tc.record}
			_, err := node.New(node.Options{Params: tc.params, Model: &m, DataRoot: tc.root, Now: func() int64 { return t0 }, Publisher: &memPub{}})
			if !errors.Is(err, node.ErrModel) {
				t.Fatalf("error %v, want node.ErrModel", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			m.Meta.Provenance = nil
			if _, err := node.New(node.Options{Params: tc.params, Model: &m, DataRoot: tc.root, Now: func() int64 { return t0 }, Publisher: &memPub{}}); err != nil {
				t.Errorf("the same model without the prior: %v", err)
			}
		})
	}
}

// quadrotorPriorModel is a small random CaLiSym-GR for the params' layout
// behind the quadrotor's rigid-body prior of qp (trainer.Composed), saved
// and opened as the node's commands open it.
func quadrotorPriorModel(t *testing.T, p *node.Params, qp mechanics.QuadrotorParams) *trainer.SavedModel {
	t.Helper()
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(p.Resolve(".")))
	if err != nil {
		t.Fatal(err)
	}
	prior, err := mechanics.NewQuadrotorPrior(qp, 1/p.Rate)
	if err != nil {
		t.Fatal(err)
	}
	m := randomModel(t, smp, p.Rate)
	tr := predictor.NewTrainable(m)
	tr.Init(rand.New(rand.NewPCG(41, 2)), 0.3)
	sv := saveComposed(t, &trainer.Symplectic{T: tr}, prior)
	if sv.Prior == nil || sv.Prior.Kind != mechanics.PriorQuadrotorRK4 || *sv.Prior.Quadrotor != prior.Params {
		t.Fatalf("the model file's prior %+v, want %+v", sv.Prior, prior.Spec())
	}
	return sv
}

// saveComposed puts the model behind the prior (trainer.Composed), saves
// it and opens it as the node's commands open a model file.
func saveComposed(t *testing.T, s *trainer.Symplectic, prior mechanics.Prior) *trainer.SavedModel {
	t.Helper()
	c, err := trainer.NewComposed(s, prior)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "composed.safetensors")
	if err := c.Model().Save(path); err != nil {
		t.Fatal(err)
	}
	sv, err := trainer.OpenModel(path)
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// TestNodeServesQuadrotorPrior: the node serves a Crazyflie model behind
// the quadrotor's rigid-body prior (params/crazyflie_gravity.yaml): fed
// odometry and motor commands, each prediction is, bit for bit, the
// composed rollout (trainer.ComposedRollers) from the state and ports the
// node maps with the ports held; the diagnostics name the prior; and the
// same model under the SE(3) pose (params/crazyflie.yaml) is refused,
// naming the gravity-aware floating base the prior steps. The prior reads
// the wrench from the commands' ports or, with wrench_port 6, from the
// port history's (the model file records which).
func TestNodeServesQuadrotorPrior(t *testing.T) {
	for _, port := range []int{0, 6} {
		t.Run(fmt.Sprintf("wrench_port %d", port), func(t *testing.T) { serveQuadrotorPrior(t, port) })
	}
}

func serveQuadrotorPrior(t *testing.T, port int) {
	c := newCrazyflieNode(t, port, func(p *node.Params) { p.Node.DiagnosticsPeriod = 1e6 })
	qp, nd, pub, schema, r := c.qp, c.nd, c.pub, c.schema, c.r
	now := &c.now
	h := nd.Horizon()
	x, e := make([]float64, 12), make([]float64, 12)
	ports, want, prevE := make([]float64, h*12), make([]float64, h*12), make([]float64, 12)
	checked := 0
	for k := range 8 {
		*now = t0 + int64(k)*10_000_000
		feedCrazyflie(t, nd, schema, *now, k)
		ps := pub.predictions(t)
		if len(ps) == 0 {
			// the port history warms up
			if _, err := nd.State(x, prevE); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := nd.State(x, e); err != nil {
			t.Fatal(err)
		}
		heldHistoryPorts(ports, e, prevE, h)
		copy(prevE, e)
		if err := r.Rollout(x, ports, h, want); err != nil {
			t.Fatal(err)
		}
		sameQuadPrediction(t, k, ps[len(ps)-1], want, "the composed rollout")
		checked++
	}
	if checked < 5 {
		t.Fatalf("%d predictions checked, want at least 5", checked)
	}
	*now += 2e15 // past the periodic diagnostics
	if err := nd.Tick(); err != nil {
		t.Fatal(err)
	}
	if v := value(status(t, pub.lastDiagnostics(t), node.StatusPrediction), "physics_prior"); v != string(mechanics.PriorQuadrotorRK4) {
		t.Errorf("diagnostics physics_prior %q, want %q", v, mechanics.PriorQuadrotorRK4)
	}
	se3, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "crazyflie.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// the SE(3) pose's model of the same layout behind the prior
	if _, ok := se3.Spec.QuadrotorPrior(1); ok {
		t.Error("crazyflie.yaml (the SE(3) pose) describes a quadrotor prior")
	}
	sv3 := quadrotorPriorModel(t, se3, qp)
	_, err = node.New(node.Options{Params: se3, Model: sv3.Model, Now: func() int64 { return *now }, Publisher: &memPub{}})
	if !errors.Is(err, node.ErrModel) || !strings.Contains(err.Error(), "gravity-aware floating base") {
		t.Errorf("a quadrotor prior under the SE(3) pose: error %v", err)
	}
}

// feedCrazyflie hands the node the Crazyflie's motor commands and odometry
// of sample k, stamped now: the commands and the height change with k.
func feedCrazyflie(t *testing.T, nd *node.Node, schema *rosmsg.Schema, now int64, k int) {
	t.Helper()
	st := msgs.TimeFromNanos(now)
	motors, err := schema.Encode(rosmsg.EncodingCDR, &rosmsg.Struct{Def: schema.Type("crazyflie_interfaces/msg/LogDataGeneric"), Fields: []any{
		&rosmsg.Struct{Def: schema.Type("std_msgs/msg/Header"), Fields: []any{&rosmsg.Struct{Def: schema.Type("builtin_interfaces/msg/Time"), Fields: []any{st.Sec, st.Nanosec}}, "cf231"}},
		uint32(k), []float64{30000 + 300*float64(k), 31000, 30500 - 200*float64(k), 29800, 3.9}}})
	if err != nil {
		t.Fatal(err)
	}
	odom := &msgs.Odometry{Header: msgs.Header{Stamp: st, FrameID: "world"}, ChildFrameID: "cf231"}
	odom.Pose.Pose.Position = msgs.Point{X: 0.3, Y: -0.2, Z: 1.1 + 0.001*float64(k)}
	odom.Pose.Pose.Orientation = msgs.Quaternion{X: 0.05, W: math.Sqrt(1 - 0.05*0.05)}
	odom.Twist.Twist.Linear = msgs.Vector3{X: 0.2, Z: 0.1}
	odom.Twist.Twist.Angular = msgs.Vector3{Y: 0.5, Z: -0.3}
	if err := nd.Handle(node.Input{Topic: "/cf231/motors", Data: motors, Received: now}); err != nil {
		t.Fatal(err)
	}
	if err := nd.Handle(node.Input{Topic: "/cf231/odom", Data: msgs.Marshal(odom), Received: now}); err != nil {
		t.Fatal(err)
	}
}

// heldHistoryPorts writes the Crazyflie's model ports over a horizon of h
// steps with the 6 commands e[:6] held: the commands, then their means
// over the samples before each step (the port history of 2): at step 1
// the current sample's (e[6:]), at step 2 the latest and the one before
// it (prevE, the previous sample's ports), the latest alone from step 3 on.
func heldHistoryPorts(ports, e, prevE []float64, h int) {
	for j := range h {
		copy(ports[12*j:], e[:6])
		for i := range 6 {
			switch j {
			case 0:
				ports[i+6] = e[6+i]
			case 1:
				ports[12+6+i] = (e[i] + prevE[i]) / 2
			default:
				ports[12*j+6+i] = e[i]
			}
		}
	}
}

// TestNodeQuadrotorPriorWrenchEstimate: the external-wrench estimate
// (wrench_estimate) runs on the composed model too. With a Crazyflie model
// behind the quadrotor's rigid-body prior, each prediction is, bit for
// bit, a predictor.WrenchEstimator (gravity-aware base) over the composed
// rollout (trainer.ComposedRollers) fed the same samples and ports; the
// estimate is applied (the predictions differ from the composed rollout
// without it) and holds the samples' residuals.
func TestNodeQuadrotorPriorWrenchEstimate(t *testing.T) {
	cfg := predictor.WrenchEstimate{Window: 6, Gate: 0.5, Decay: 1, Blocks: 2}
	c := newCrazyflieNode(t, 0, func(p *node.Params) { p.Node.WrenchEstimate = &cfg })
	p, nd, pub, schema, r := c.p, c.nd, c.pub, c.schema, c.r
	est, err := predictor.NewWrenchEstimator(r, 6, 12, predictor.WrenchBaseGravity, cfg)
	if err != nil {
		t.Fatal(err)
	}
	origin := statemap.OriginCoordinates(p.Spec.Coordinates())
	h := nd.Horizon()
	x, xo, e, prevE := make([]float64, 12), make([]float64, 12), make([]float64, 12), make([]float64, 12)
	ports, want, plain := make([]float64, h*12), make([]float64, h*12), make([]float64, h*12)
	checked, differs := 0, false
	for k := range 12 {
		c.now = t0 + int64(k)*10_000_000
		feedCrazyflie(t, nd, schema, c.now, k)
		if _, err := nd.State(x, e); err != nil {
			t.Fatal(err)
		}
		copy(xo, x)
		for _, j := range origin {
			xo[j] = 0
		}
		if err := est.Observe(xo, e); err != nil {
			t.Fatal(err)
		}
		ps := pub.predictions(t)
		if len(ps) == 0 { // the port history warms up
			copy(prevE, e)
			continue
		}
		heldHistoryPorts(ports, e, prevE, h)
		copy(prevE, e)
		if err := est.Rollout(x, ports, h, want); err != nil {
			t.Fatal(err)
		}
		if err := r.Rollout(x, ports, h, plain); err != nil {
			t.Fatal(err)
		}
		sameQuadPrediction(t, k, ps[len(ps)-1], want, "the offset-free composed rollout")
		differs = differs || !slices.Equal(want, plain)
		checked++
	}
	if checked < 8 {
		t.Fatalf("%d predictions checked, want at least 8", checked)
	}
	st, ok := nd.WrenchEstimate()
	if !ok || st.Residuals != est.Residuals() || st.Residuals < cfg.Window {
		t.Errorf("the node's wrench estimate %v over %d residuals, the reference's %d (window %d)", ok, st.Residuals, est.Residuals(), cfg.Window)
	}
	if st.Impulse != est.State().Impulse || st.Impulse == [6]float64{} {
		t.Errorf("the node's wrench impulse %v, the reference's %v (want equal and not zero)", st.Impulse, est.State().Impulse)
	}
	if !differs {
		t.Error("the wrench estimate changed no prediction of the composed model")
	}
}

// crazyflieNode is a node serving a Crazyflie model behind the
// quadrotor's rigid-body prior (params/crazyflie_gravity.yaml), its clock
// at now.
type crazyflieNode struct {
	p      *node.Params
	qp     mechanics.QuadrotorParams
	sv     *trainer.SavedModel
	nd     *node.Node
	pub    *memPub
	now    int64
	schema *rosmsg.Schema
	r      predictor.Stepper // the composed rollout, as the model file opens
}

// newCrazyflieNode makes a crazyflieNode whose prior reads the wrench
// from port wrenchPort, with the params changed by change first.
func newCrazyflieNode(t *testing.T, wrenchPort int, change func(*node.Params)) *crazyflieNode {
	t.Helper()
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "crazyflie_gravity.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	change(p)
	qp, ok := p.Spec.QuadrotorPrior(1)
	if !ok {
		t.Fatal("crazyflie_gravity.yaml describes no quadrotor prior")
	}
	qp.WrenchPort = wrenchPort
	c := &crazyflieNode{p: p, qp: qp, sv: quadrotorPriorModel(t, p, qp), pub: &memPub{}, now: t0, schema: motorsSchema(t, p)}
	if c.nd, err = node.New(node.Options{Params: p, Model: c.sv.Model, Now: func() int64 { return c.now }, Publisher: c.pub}); err != nil {
		t.Fatal(err)
	}
	if c.r, err = c.sv.Rollers(); err != nil {
		t.Fatal(err)
	}
	return c
}

// sameQuadPrediction fails unless the node's prediction of sample k is,
// bit for bit, want (the 12 state values of each step of the horizon).
func sameQuadPrediction(t *testing.T, k int, got msgs.PredictedTrajectory, want []float64, what string) {
	t.Helper()
	for j := range len(want) / 12 {
		for i := range 6 {
			if got.Q[6*j+i] != want[12*j+i] || got.P[6*j+i] != want[12*j+6+i] {
				t.Fatalf("sample %d, step %d: predicted q %v p %v, %s %v", k, j+1, got.Q[6*j:6*j+6], got.P[6*j:6*j+6], what, want[12*j:12*j+12])
			}
		}
	}
}
