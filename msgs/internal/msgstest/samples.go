package msgstest

import (
	"math"

	"github.com/calisym/calisym/msgs"
)

// SampleHeader is the header of the sample messages.
var SampleHeader = msgs.Header{Stamp: msgs.Time{Sec: 1_700_000_000, Nanosec: 123_456_789}, FrameID: "base_link"}

// SampleMessages returns one or more values of every typed message, with
// nil (not empty) slices so that decoded copies compare equal.
func SampleMessages() []msgs.Message {
	hdr := SampleHeader
	pose := msgs.Pose{Position: msgs.Point{X: 1.5, Y: -2.25, Z: 3e-9}, Orientation: msgs.Quaternion{X: 0.1, Y: 0.2, Z: 0.3, W: 0.9}}
	twist := msgs.Twist{Linear: msgs.Vector3{X: 0.5, Y: 0, Z: -0.5}, Angular: msgs.Vector3{X: 1e300, Y: -1e-300, Z: 7}}
	var cov [36]float64
	for i := range cov {
		cov[i] = float64(i) * 0.125
	}
	return []msgs.Message{
		&msgs.Time{Sec: -3, Nanosec: 999_999_999},
		&msgs.Duration{Sec: 2, Nanosec: 5},
		&hdr,
		&msgs.Header{},
		&msgs.JointState{Header: hdr, Name: []string{"hip", "knee", "ankle_é"}, Position: []float64{0.1, -2.5e-7, math.Pi},
			Velocity: []float64{1, 2, 3}},
		&msgs.JointState{},
		&msgs.JointState{Header: msgs.Header{FrameID: "x"}, Name: []string{"a"}, Effort: []float64{-1}},
		&msgs.MultiArrayDimension{Label: "rows", Size: 2, Stride: 6},
		&msgs.MultiArrayLayout{Dim: []msgs.MultiArrayDimension{{Label: "rows", Size: 2, Stride: 6}}, DataOffset: 1},
		&msgs.Float64MultiArray{Layout: msgs.MultiArrayLayout{Dim: []msgs.MultiArrayDimension{{Label: "rows", Size: 2, Stride: 6}, {Label: "cols", Size: 3, Stride: 3}}},
			Data: []float64{1, 2, 3, 4, 5, 6}},
		&msgs.Float64MultiArray{},
		&msgs.Point{X: 1, Y: 2, Z: 3},
		&msgs.Vector3{X: -1, Y: -2, Z: -3},
		&msgs.Quaternion{X: 0, Y: 0, Z: 0, W: 1},
		&pose,
		&msgs.PoseStamped{Header: hdr, Pose: pose},
		&twist,
		&msgs.Wrench{Force: msgs.Vector3{X: 10, Y: 20, Z: 30}, Torque: msgs.Vector3{X: -1, Y: -2, Z: -3}},
		&msgs.WrenchStamped{Header: msgs.Header{FrameID: "lf_foot"}, Wrench: msgs.Wrench{Force: msgs.Vector3{X: 0, Y: 0, Z: 150}}},
		&msgs.PoseWithCovariance{Pose: pose, Covariance: cov},
		&msgs.TwistWithCovariance{Twist: twist, Covariance: cov},
		&msgs.Odometry{Header: hdr, ChildFrameID: "base", Pose: msgs.PoseWithCovariance{Pose: pose, Covariance: cov},
			Twist: msgs.TwistWithCovariance{Twist: twist}},
		&msgs.Path{Header: hdr, Poses: []msgs.PoseStamped{{Header: hdr, Pose: pose}, {Pose: msgs.Pose{Orientation: msgs.IdentityQuaternion()}}}},
		&msgs.Path{},
		&msgs.String{Data: "<robot name=\"r\"/>"},
		&msgs.String{},
		&msgs.TFMessage{Transforms: []msgs.TransformStamped{{Header: hdr, ChildFrameID: "base",
			Transform: msgs.Transform{Translation: msgs.Vector3{X: 1, Y: -2, Z: 0.5}, Rotation: msgs.Quaternion{X: 0.1, Y: 0.2, Z: 0.3, W: 0.9}}},
			{ChildFrameID: "ghost/base", Transform: msgs.Transform{Rotation: msgs.IdentityQuaternion()}}}},
		&msgs.TFMessage{},
		&msgs.KeyValue{Key: "temperature", Value: "41.5"},
		&msgs.DiagnosticStatus{Level: msgs.DiagnosticWarn, Name: "motor", Message: "hot", HardwareID: "m1",
			Values: []msgs.KeyValue{{Key: "temperature", Value: "81"}, {Key: "", Value: ""}}},
		&msgs.DiagnosticArray{Header: hdr, Status: []msgs.DiagnosticStatus{{Level: msgs.DiagnosticOK, Name: "a"},
			{Level: msgs.DiagnosticStale, Name: "b", Values: []msgs.KeyValue{{Key: "k", Value: "v"}}}}},
		&msgs.PredictedTrajectory{Header: hdr, Dt: 0.01, CoordinateNames: []string{"q1", "q2"}, Horizon: 3,
			Q: []float64{1, 2, 3, 4, 5, 6}, P: []float64{-1, -2, -3, -4, -5, -6}, PortNames: []string{"u1"},
			Ports: []float64{0.5, 0.25, 0.125}, ModelID: "double_pendulum", ModelSHA256: "ab12", InferenceLatencyS: 1.5e-4},
		&msgs.PredictedTrajectory{Dt: 1},
	}
}
