package node_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/statemap"
)

// TestNodePortMap builds the node of params/crazyflie_gravity.yaml (the
// voltage-scaled quadratic thrust map) for a model of its layout whose
// file records the port map it was trained with: the linear thrust map
// of before (the same port names) is refused with node.ErrModel, in the
// params' words and with the fix; the params' own map is served without
// a warning; a model that records none (a file from before) is served
// with node.PortMapWarning, which the diagnostics carry as model_warning;
// a record that does not decode is refused.
func TestNodePortMap(t *testing.T) {
	p, err := node.LoadParams(filepath.Join(fixtures.Root(), "params", "crazyflie_gravity.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Control.Quadrotor.Voltage.IsZero() {
		t.Fatal("crazyflie_gravity.yaml has no voltage-scaled thrust map: the test needs one")
	}
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(p.Resolve(".")))
	if err != nil {
		t.Fatal(err)
	}
	linear := *p.Spec
	linear.Control.Quadrotor.Voltage, linear.Control.Quadrotor.VoltageRef = statemap.Channel{}, 0
	linear.Control.Quadrotor.ThrustPoly = []float64{0, statemap.CrazyflieThrustPerUnit}
	for _, tc := range []struct {
		name    string
		record  *string
		warning string
		want    []string // in the error; none: served
	}{
		{"linear", ptr(linear.PortMap()), "", []string{
			"provenance port_map",
			"control.quadrotor thrust map: trained with thrust_poly [0 0.173] of the command (no voltage scaling), params give thrust_poly [0 0.13997 0.06193] of the command scaled by voltage Vbat",
			"retrain the model on data converted with these params, or use it with the params it was trained with"}},
		{"matching", ptr(p.Spec.PortMap()), "", nil},
		{"unrecorded", nil, node.PortMapWarning, nil},
		{"garbled", ptr(`{"control":"quadrotor"`), "", []string{"provenance port_map", "unexpected EOF"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := randomModel(t, smp, p.Rate)
			if tc.record != nil {
				m.Meta.Provenance = map[string]string{statemap.PortMapKey: *tc.record}
			}
			pub := &memPub{}
			nd, err := node.New(node.Options{Params: p, Model: m, Now: func() int64 { return t0 }, Publisher: pub})
			if len(tc.want) > 0 {
				if !errors.Is(err, node.ErrModel) {
					t.Fatalf("error %v, want node.ErrModel", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if nd.ModelWarning() != tc.warning {
				t.Errorf("warning %q, want %q", nd.ModelWarning(), tc.warning)
			}
			if err := nd.Tick(); err != nil {
				t.Fatal(err)
			}
			pred := status(t, pub.lastDiagnostics(t), node.StatusPrediction)
			if got := value(pred, "model_warning"); got != tc.warning {
				t.Errorf("diagnostics model_warning %q, want %q", got, tc.warning)
			}
		})
	}
}

func ptr(s string) *string { return &s }
