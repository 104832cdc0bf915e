package node_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
)

// jointSelector is a message path's selection of a JointState-like
// array element by joint name: …position[name=="shoulder"].
var jointSelector = regexp.MustCompile(`\[name=="([^"]+)"\]`)

// robotJointNames returns, for every joint of the params' state, the name
// the robot's own messages give it: the name its live position channel
// selects.
func robotJointNames(t *testing.T, smp *statemap.Sampler, joints int) []string {
	t.Helper()
	out := make([]string, joints)
	for j := range joints {
		field := fmt.Sprintf("state.joints[%d].position", j)
		for i, ch := range smp.Channels() {
			if !slices.Contains(smp.Fields(i), field) {
				continue
			}
			m := jointSelector.FindStringSubmatch(ch)
			if m == nil {
				t.Fatalf("%s reads %s, which selects no joint by name", field, ch)
			}
			out[j] = m[1]
		}
		if out[j] == "" {
			t.Fatalf("no live channel feeds %s", field)
		}
	}
	return out
}

// randomModel returns a small random model with the sampler's layout and
// names and the params' time step.
func randomModel(t *testing.T, smp *statemap.Sampler, rate float64) *predictor.Model {
	t.Helper()
	n, nu, nc := smp.Layout()
	m, err := predictor.New(predictor.Layout{N: n, NU: nu, NC: nc}, predictor.Arch{Kind: predictor.KindGR, Layers: 1, Width: 4, StepSize: 0.1},
		rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	m.Meta = predictor.Metadata{Name: "random", Coordinates: smp.Coordinates(), Ports: smp.Ports(), Dt: 1 / rate}
	return m
}

// TestPredictedJointStateNames builds the node of every params file of the
// repository: a robot with joints advertises the predicted joint states,
// named as the robot's own messages name its joints (the pendulum's
// shoulder and elbow, not its coordinates q1, q2: Foxglove's 3D panel
// matches the names), and a robot without joints (the quadrotors)
// advertises none.
func TestPredictedJointStateNames(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures.Root(), "params", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"pendulum_sim.yaml": 2, "double_pendulum_hw.yaml": 2, "ur10e.yaml": 6, "anymal.yaml": 12, "crazyflie.yaml": 0, "px4_quadrotor.yaml": 0}
	seen := 0
	for _, f := range files {
		name := filepath.Base(f)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "\nnode:") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var p *node.Params
			if name == "anymal.yaml" {
				p = anymalParams(t) // its URDF is not in the repository
			} else if p, err = node.LoadParams(f); err != nil {
				t.Fatal(err)
			}
			root := p.Resolve(".")
			if name == "double_pendulum_hw.yaml" {
				// Its parameter file is in the shared data.
				fixtures.Path(t, "double_pendulum_hw")
				root = fixtures.DataDir()
			}
			smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
			if err != nil {
				t.Fatal(err)
			}
			joints := smp.Joints()
			if w, ok := want[name]; ok {
				seen++
				if len(joints) != w {
					t.Errorf("%d joints, want %d", len(joints), w)
				}
			}
			pub := &memPub{}
			if _, err := node.New(node.Options{Params: p, Model: randomModel(t, smp, p.Rate), DataRoot: root, Now: func() int64 { return t0 }, Publisher: pub}); err != nil {
				t.Fatal(err)
			}
			_, advertised := pub.types[p.Node.Outputs.Joints]
			if len(joints) == 0 {
				if advertised {
					t.Errorf("a robot without joints advertises %s", p.Node.Outputs.Joints)
				}
				return
			}
			if !advertised {
				t.Errorf("%s not advertised", p.Node.Outputs.Joints)
			}
			if robot := robotJointNames(t, smp, len(joints)); !slices.Equal(joints, robot) {
				t.Errorf("the predicted joint states name the joints %v; the robot's messages name them %v", joints, robot)
			}
		})
	}
	if seen != len(want) {
		t.Errorf("%d of the %d params files checked", seen, len(want))
	}
}

// TestPredictionStamps runs params/pendulum_sim.yaml as written (a
// prediction on each torque command, which has no header and is stamped
// on receipt): the prediction's header.stamp is the stamp of the joint
// state it starts from, not the command's receipt, and the predicted
// joint states are stamped PreviewStep steps after it and carry the
// robot's joint names.
func TestPredictionStamps(t *testing.T) {
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "pendulum_sim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Node.Trigger.Topic != "/torque_command" {
		t.Fatalf("trigger %s: the test needs the file's trigger on the commands", p.Node.Trigger.Topic)
	}
	var clock int64
	pub := &memPub{}
	nd, err := node.New(node.Options{Params: p, Model: pendulumModel(t), Now: func() int64 { return clock }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	state := t0 + 3*ms // the joint state's header stamp
	for _, m := range []struct {
		at    int64
		topic string
		data  []byte
	}{
		{t0, "/torque_command", torque(0.1, 0.2)},
		{state + 2*ms, "/joint_states", jointState(state, pendulumJoints, [2]float64{0.1, 0.2}, [2]float64{0.3, 0.4})},
		{state + 7*ms, "/torque_command", torque(0.3, 0.4)},
	} {
		clock = m.at
		if err := nd.Handle(node.Input{Topic: m.topic, Data: m.data, Received: m.at}); err != nil {
			t.Fatal(err)
		}
	}
	ps := pub.predictions(t)
	if len(ps) != 1 {
		t.Fatalf("%d predictions, want 1 (on the second command)", len(ps))
	}
	if got := ps[0].Header.Stamp.Nanos(); got != state {
		t.Errorf("prediction stamped %d ns after the state, want the state's stamp (the command arrived %d ns after it)", got-state, 7*ms)
	}
	js := pub.on(p.Node.Outputs.Joints)
	if len(js) != 1 {
		t.Fatalf("%d joint states", len(js))
	}
	var j msgs.JointState
	if err := msgs.Unmarshal(js[0].data, &j); err != nil {
		t.Fatal(err)
	}
	wantStamp := state + int64(p.Node.PreviewStep)*10*ms
	if got := j.Header.Stamp.Nanos(); got != wantStamp {
		t.Errorf("predicted joint state stamped %d, want %d (state + %d steps of 10 ms)", got, wantStamp, p.Node.PreviewStep)
	}
	if !slices.Equal(j.Name, pendulumJoints) {
		t.Errorf("predicted joint state names %v, want /joint_states' %v", j.Name, pendulumJoints)
	}
}
