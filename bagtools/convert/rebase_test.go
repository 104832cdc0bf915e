package convert

import (
	"math"
	"testing"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/mechanics"
)

func TestRebase(t *testing.T) {
	// Poses relative to an origin, re-expressed relative to another pose,
	// equal the poses computed relative to that pose directly.
	origin := mechanics.SE3{R: mechanics.RPY(0.1, -0.2, 2.5), P: mechanics.Vec3{3, -1, 2}}
	a := mechanics.SE3{R: mechanics.RPY(0.3, 0.1, -2.9), P: mechanics.Vec3{3.5, -0.2, 2.2}}
	b := mechanics.SE3{R: mechanics.RPY(-0.2, 0.4, 2.8), P: mechanics.Vec3{4, 0.5, 1.7}}
	qa := mechanics.LogSE3(origin.Inverse().Mul(a))
	qb := mechanics.LogSE3(origin.Inverse().Mul(b))
	got := RebaseSE3(qa, qb)
	want := mechanics.LogSE3(a.Inverse().Mul(b))
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("RebaseSE3 = %v, want %v", got, want)
		}
	}
	ga, gb := statemap.GravityCoordinates(origin, a), statemap.GravityCoordinates(origin, b)
	gotG := RebaseGravity(ga, gb)
	wantG := statemap.GravityCoordinates(a, b)
	for i := range gotG {
		if math.Abs(gotG[i]-wantG[i]) > 1e-12 {
			t.Fatalf("RebaseGravity = %v, want %v", gotG, wantG)
		}
	}
	// Gravity coordinates: roll and pitch stay absolute, yaw wraps.
	roll, pitch, _ := statemap.EulerZYX(b.R)
	if math.Abs(wantG[3]-roll) > 1e-12 || math.Abs(wantG[4]-pitch) > 1e-12 {
		t.Errorf("roll, pitch = %v %v, want %v %v", wantG[3], wantG[4], roll, pitch)
	}
	if yaw := wantG[5]; math.Abs(yaw-(2.8+2.9-2*math.Pi)) > 1e-12 {
		t.Errorf("relative yaw %v, want %v (wrapped)", yaw, 2.8+2.9-2*math.Pi)
	}
}
