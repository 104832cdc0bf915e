package tfview_test

import (
	"os"
	"testing"

	"github.com/calisym/calisym/internal/fixtures"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/tfview"
)

// BenchmarkFramesAnymal measures what the node adds to each ANYmal D
// prediction for Foxglove: the 26 transforms of the measured robot and
// the ghost (forward kinematics of the 12 joints twice) and their CDR
// encoding.
func BenchmarkFramesAnymal(b *testing.B) {
	raw, err := os.ReadFile(fixtures.Path(b, "anymal_sim", "anymal_d_simple_description", "urdf", "anymal.urdf"))
	if err != nil {
		b.Fatal(err)
	}
	joints := []string{"LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE", "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"}
	v, err := tfview.New(tfview.Options{Frame: "odom", URDF: raw, Floating: true, Joints: joints, Dt: 0.01, Horizon: 100})
	if err != nil {
		b.Fatal(err)
	}
	q, gq := make([]float64, 12), make([]float64, 12)
	for i := range q {
		q[i], gq[i] = 0.1*float64(i), -0.05*float64(i)
	}
	pose := mechanics.SE3{R: mechanics.RPY(0.01, -0.02, 0.7), P: mechanics.Vec3{1, 2, 0.55}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		m, err := v.Frames(1e18, pose, q, pose, gq)
		if err != nil {
			b.Fatal(err)
		}
		buf = msgs.AppendMarshal(buf[:0], m)
	}
	b.ReportMetric(float64(len(buf)), "bytes/msg")
}
