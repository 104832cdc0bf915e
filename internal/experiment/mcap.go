package experiment

import (
	"errors"
	"fmt"
	"math"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/mechanics"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/statemap"
)

// Topics and joint names of the simulated pendulum's MCAP logs.
const (
	// PendulumJointTopic carries sensor_msgs/msg/JointState: position q,
	// velocity q̇ and effort the applied torque u, for the joints
	// PendulumJointNames.
	PendulumJointTopic = "/joint_states"
	// PendulumTorqueTopic carries std_msgs/msg/Float64MultiArray with the
	// commanded torques (u1, u2).
	PendulumTorqueTopic = "/torque_command"
)

// PendulumPortMap returns the port map (statemap.Spec.PortMap) of the
// simulated pendulum's datasets: the torques u1, u2 as PendulumTorqueTopic
// carries them in the simulator's logs, held between samples, which is
// what params/pendulum_sim.yaml computes from those logs. The datasets
// record it (source statemap.PortMapKey), so a model trained on them
// (calisym sim, demo, bench) is checked as one trained on converted logs.
func PendulumPortMap() string {
	spec := statemap.Spec{Control: statemap.ControlSpec{Kind: statemap.ControlDirect, PortSpec: statemap.PortSpec{
		Interp:   statemap.InterpHold,
		Channels: []statemap.Channel{{Name: PendulumTorqueTopic + ".data[0]"}, {Name: PendulumTorqueTopic + ".data[1]"}},
	}}}
	return spec.PortMap()
}

// PendulumJointNames are the default joint names of the pendulum's
// JointState messages, those params/pendulum_sim.yaml maps: the first (q1,
// absolute from the downward vertical) and the second joint (q2, relative
// to link 1).
var PendulumJointNames = [2]string{"shoulder", "elbow"}

// PendulumMCAPEpoch is the default log time of the first sample of a
// simulated log, 2024-01-01T00:00:00Z in nanoseconds since the Unix epoch:
// fixed, so that the same trajectories give the same file.
const PendulumMCAPEpoch uint64 = 1704067200e9

// PendulumMCAPOptions configures WritePendulumMCAP. The zero value (or
// nil) uses PendulumMCAPEpoch, a pause of one second and the ROS2Writer's
// defaults.
type PendulumMCAPOptions struct {
	// Epoch is the log time of the first trajectory's first sample [ns
	// since the Unix epoch]; 0 means PendulumMCAPEpoch.
	Epoch uint64
	// Pause is the least time between the last sample of one trajectory
	// and the first of the next [s]; 0 means 1 s. A converter given a
	// validate.max_gap shorter than Pause sees every trajectory as a
	// stretch of its own.
	Pause float64
	// Joints names the two joints in the JointState messages; empty means
	// PendulumJointNames.
	Joints [2]string
	// Writer configures the MCAP file (compression, chunk size, …).
	Writer *logio.ROS2WriterOptions
}

// WritePendulumMCAP records simulated pendulum trajectories as a ROS 2 MCAP
// file (rosbag2's conventions, see logio.ROS2Writer), one after the other:
// at every sample k of a trajectory, PendulumJointTopic gets a JointState
// (names opts.Joints, position Q[k], velocity V[k], effort U[k]) and
// PendulumTorqueTopic a Float64MultiArray holding U[k], the torque held
// over [T[k], T[k+1]). Log time, publish time and header stamp are all the
// sample time: the epoch plus the trajectory's start plus T[k], rounded to
// the nanosecond.
//
// Every trajectory starts on a whole second after the epoch, at least
// opts.Pause after the previous one ends. With a sample interval that
// divides a second (the simulator's 0.01 s), sample times are then exact
// multiples of it from the log's start, and a conversion at that rate
// whose window stride divides the samples per second puts its windows at
// the same samples of every trajectory as PendulumDataset does.
func WritePendulumMCAP(path string, trs []mechanics.Trajectory, opts *PendulumMCAPOptions) (err error) {
	var o PendulumMCAPOptions
	if opts != nil {
		o = *opts
	}
	if o.Epoch == 0 {
		o.Epoch = PendulumMCAPEpoch
	}
	if o.Pause == 0 {
		o.Pause = 1
	}
	if o.Joints == [2]string{} {
		o.Joints = PendulumJointNames
	}
	if !(o.Pause > 0) || math.IsInf(o.Pause, 0) {
		return fmt.Errorf("experiment: pendulum MCAP: pause %g s must be positive", o.Pause)
	}
	if len(trs) == 0 {
		return errors.New("experiment: pendulum MCAP: no trajectories")
	}
	for i := range trs {
		tr := &trs[i]
		n := tr.Len()
		if n == 0 || len(tr.Q) != 2*n || len(tr.V) != 2*n || len(tr.U) != 2*n {
			return fmt.Errorf("experiment: pendulum MCAP: trajectory %d has %d times, %d positions, %d velocities and %d torques; want N, 2N, 2N, 2N", tr.Index, n, len(tr.Q), len(tr.V), len(tr.U))
		}
		for k := 1; k < n; k++ {
			if !(tr.T[k] > tr.T[k-1]) {
				return fmt.Errorf("experiment: pendulum MCAP: trajectory %d: sample times %g, %g do not increase", tr.Index, tr.T[k-1], tr.T[k])
			}
		}
		if tr.T[0] < 0 {
			return fmt.Errorf("experiment: pendulum MCAP: trajectory %d starts at negative time %g", tr.Index, tr.T[0])
		}
	}
	w, err := logio.CreateROS2(path, o.Writer)
	if err != nil {
		return fmt.Errorf("experiment: pendulum MCAP: %w", err)
	}
	defer func() {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("experiment: pendulum MCAP: %w", cerr)
		}
	}()
	js := &msgs.JointState{Name: o.Joints[:], Position: make([]float64, 2), Velocity: make([]float64, 2), Effort: make([]float64, 2)}
	cmd := &msgs.Float64MultiArray{
		Layout: msgs.MultiArrayLayout{Dim: []msgs.MultiArrayDimension{{Label: "joint", Size: 2, Stride: 2}}},
		Data:   make([]float64, 2),
	}
	if err := w.AddTypedTopic(PendulumJointTopic, js, nil); err != nil {
		return fmt.Errorf("experiment: pendulum MCAP: %w", err)
	}
	if err := w.AddTypedTopic(PendulumTorqueTopic, cmd, nil); err != nil {
		return fmt.Errorf("experiment: pendulum MCAP: %w", err)
	}
	const second = uint64(1e9)
	pause := uint64(math.Round(o.Pause * 1e9))
	var start uint64 // of the current trajectory, since the epoch
	for i := range trs {
		tr := &trs[i]
		for k := range tr.Len() {
			ns := o.Epoch + start + uint64(math.Round(tr.T[k]*1e9))
			js.Header.Stamp = msgs.TimeFromNanos(int64(ns))
			copy(js.Position, tr.Q[2*k:2*k+2])
			copy(js.Velocity, tr.V[2*k:2*k+2])
			copy(js.Effort, tr.U[2*k:2*k+2])
			copy(cmd.Data, tr.U[2*k:2*k+2])
			if err := w.WriteMessage(PendulumJointTopic, ns, ns, js); err != nil {
				return fmt.Errorf("experiment: pendulum MCAP: %w", err)
			}
			if err := w.WriteMessage(PendulumTorqueTopic, ns, ns, cmd); err != nil {
				return fmt.Errorf("experiment: pendulum MCAP: %w", err)
			}
		}
		end := start + uint64(math.Round(tr.T[tr.Len()-1]*1e9)) + pause
		start = (end + second - 1) / second * second
	}
	return nil
}
