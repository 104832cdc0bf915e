package rosmsg_test

import (
	"fmt"
	"testing"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/internal/msgstest"
	. "github.com/calisym/calisym/msgs/rosmsg"
)

// benchJointState is a JointState the size of a PR2's: 45 joints.
func benchJointState(b *testing.B) (*Schema, []byte) {
	m := &msgs.JointState{Header: msgstest.SampleHeader}
	for i := range 45 {
		m.Name = append(m.Name, fmt.Sprintf("joint_%02d_link", i))
		m.Position = append(m.Position, float64(i))
		m.Velocity = append(m.Velocity, -float64(i))
		m.Effort = append(m.Effort, 0.5*float64(i))
	}
	s, err := msgs.SchemaOf(m)
	if err != nil {
		b.Fatal(err)
	}
	return s, msgs.Marshal(m)
}

// BenchmarkDecodeJointState decodes the whole message and reads 12 values
// through paths.
func BenchmarkDecodeJointState(b *testing.B) {
	s, data := benchJointState(b)
	var paths []*MessagePath
	for i := 30; i < 36; i++ {
		for _, arr := range []string{"position", "velocity"} {
			p, err := CompilePath(s, fmt.Sprintf(`.%s[name=="joint_%02d_link"]`, arr, i))
			if err != nil {
				b.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		v, err := s.Decode(EncodingCDR, data)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range paths {
			if _, err := p.Float64(v); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkExtractJointState reads the same 12 values straight from the
// bytes.
func BenchmarkExtractJointState(b *testing.B) {
	s, data := benchJointState(b)
	var paths []*MessagePath
	for i := 30; i < 36; i++ {
		for _, arr := range []string{"position", "velocity"} {
			p, err := CompilePath(s, fmt.Sprintf(`.%s[name=="joint_%02d_link"]`, arr, i))
			if err != nil {
				b.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	x, err := NewExtractor(s, EncodingCDR, paths...)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float64, len(paths))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := x.Extract(data, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtractOdometry reads position, orientation and twist (13
// values) from nav_msgs/Odometry, skipping the covariances.
func BenchmarkExtractOdometry(b *testing.B) {
	m := &msgs.Odometry{Header: msgstest.SampleHeader, ChildFrameID: "base"}
	s, err := msgs.SchemaOf(m)
	if err != nil {
		b.Fatal(err)
	}
	data := msgs.Marshal(m)
	var paths []*MessagePath
	for _, e := range []string{".pose.pose.position.x", ".pose.pose.position.y", ".pose.pose.position.z",
		".pose.pose.orientation.x", ".pose.pose.orientation.y", ".pose.pose.orientation.z", ".pose.pose.orientation.w",
		".twist.twist.linear.x", ".twist.twist.linear.y", ".twist.twist.linear.z",
		".twist.twist.angular.x", ".twist.twist.angular.y", ".twist.twist.angular.z"} {
		p, err := CompilePath(s, e)
		if err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	x, err := NewExtractor(s, EncodingCDR, paths...)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]float64, len(paths))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := x.Extract(data, out); err != nil {
			b.Fatal(err)
		}
	}
}
