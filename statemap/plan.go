package statemap

import (
	"fmt"
	"slices"
	"strings"
)

// Scalar is one scalar input of a mapping.
type Scalar struct {
	// Field is the spec field it fills, for errors
	// ("state.joints[0].position").
	Field string
	// Channel is where it comes from.
	Channel Channel
	// Group is its channel group (GroupConfiguration, …, GroupContact).
	Group string
}

// Plan lists the scalar inputs of a spec and their roles: every index
// refers to Scalars, and −1 marks an input the spec leaves unset (a joint
// velocity to be differentiated).
type Plan struct {
	// Scalars are the inputs in a fixed order: per joint its position and
	// velocity, then the base position, orientation, linear and angular
	// velocity, the control channels (or quadrotor motors, then the
	// battery voltage) and the contact channels.
	Scalars []Scalar
	// JointPos and JointVel index each joint's position and velocity.
	JointPos, JointVel []int
	// BasePos indexes the base position (3, or none without a base).
	BasePos []int
	// Orient indexes the orientation: 4 quaternion components in (w, x,
	// y, z) order, 3 roll-pitch-yaw angles, or none.
	Orient []int
	// LinVel and AngVel index the base velocity channels (3 each or none).
	LinVel, AngVel []int
	// Control indexes the direct control channels or the quadrotor's motor
	// commands.
	Control []int
	// Voltage indexes the quadrotor's battery voltage (−1: none).
	Voltage int
	// Contact indexes the contact channels.
	Contact []int
}

// NewPlan plans the scalar inputs of s (after Spec.Defaults).
func NewPlan(s *Spec) *Plan {
	p := &Plan{Voltage: -1}
	add := func(field string, c Channel, group string) int {
		if c.IsZero() {
			return -1
		}
		p.Scalars = append(p.Scalars, Scalar{Field: field, Channel: c, Group: group})
		return len(p.Scalars) - 1
	}
	for i, j := range s.State.Joints {
		p.JointPos = append(p.JointPos, add(fmt.Sprintf("state.joints[%d].position", i), j.Position, GroupConfiguration))
		p.JointVel = append(p.JointVel, add(fmt.Sprintf("state.joints[%d].velocity", i), j.Velocity, GroupVelocity))
	}
	if s.State.Kind != StateJoints {
		b := &s.State.Base
		for i, c := range b.Position {
			p.BasePos = append(p.BasePos, add(fmt.Sprintf("state.base.position[%d]", i), c, GroupConfiguration))
		}
		o := b.Orientation
		chs := o.Channels
		if o.Kind == OrientationQuaternion && o.Order == "xyzw" {
			chs = []Channel{chs[3], chs[0], chs[1], chs[2]}
		}
		for i, c := range chs {
			p.Orient = append(p.Orient, add(fmt.Sprintf("state.base.orientation.channels[%d]", i), c, GroupConfiguration))
		}
		for i, c := range b.LinearVelocity.Channels {
			p.LinVel = append(p.LinVel, add(fmt.Sprintf("state.base.linear_velocity.channels[%d]", i), c, GroupVelocity))
		}
		for i, c := range b.AngularVelocity.Channels {
			p.AngVel = append(p.AngVel, add(fmt.Sprintf("state.base.angular_velocity.channels[%d]", i), c, GroupVelocity))
		}
	}
	switch s.Control.Kind {
	case ControlDirect:
		for i, c := range s.Control.Channels {
			p.Control = append(p.Control, add(fmt.Sprintf("control.channels[%d]", i), c, GroupControl))
		}
	case ControlQuadrotor:
		for i, c := range s.Control.Quadrotor.Motors {
			p.Control = append(p.Control, add(fmt.Sprintf("control.quadrotor.motors[%d]", i), c, GroupControl))
		}
		p.Voltage = add("control.quadrotor.voltage", s.Control.Quadrotor.Voltage, GroupControl)
	}
	for i, c := range s.Contact.Channels {
		p.Contact = append(p.Contact, add(fmt.Sprintf("contact.channels[%d]", i), c, GroupContact))
	}
	return p
}

// Names returns the unique source channel names the plan reads, in
// first-use order.
func (p *Plan) Names() []string {
	var out []string
	seen := map[string]bool{}
	for _, sc := range p.Scalars {
		if sc.Channel.Const == nil && !seen[sc.Channel.Name] {
			seen[sc.Channel.Name] = true
			out = append(out, sc.Channel.Name)
		}
	}
	return out
}

// BaseCoordinates returns the names of the floating-base coordinates that
// start q for a state kind (nil for a kind without a floating base).
func BaseCoordinates(kind string) []string {
	switch kind {
	case StateFloatingBase:
		return []string{"rho_x", "rho_y", "rho_z", "phi_x", "phi_y", "phi_z"}
	case StateFloatingBaseGravity:
		return []string{"x", "y", "z", "roll", "pitch", "yaw"}
	}
	return nil
}

// BaseKind returns the floating-base state kind whose coordinate names
// (BaseCoordinates) start coords, as conversion names q: StateFloatingBase
// or StateFloatingBaseGravity, or "" where coords starts with neither.
func BaseKind(coords []string) string {
	for _, kind := range []string{StateFloatingBase, StateFloatingBaseGravity} {
		names := BaseCoordinates(kind)
		if len(coords) >= len(names) && slices.Equal(coords[:len(names)], names) {
			return kind
		}
	}
	return ""
}

// OriginCoordinates returns the indices of the coordinates of q (named
// coords, as Spec.Coordinates or a dataset's) that are zero at a window's
// first sample, where the base is its own origin: all six floating-base
// coordinates (the SE(3) logarithm of the identity), or the position and
// yaw of the gravity-aware base (roll and pitch are absolute). Nil without
// a floating base. Zeroing them expresses any sample as the first of a
// window, as the live node does.
func OriginCoordinates(coords []string) []int {
	switch BaseKind(coords) {
	case StateFloatingBase:
		return []int{0, 1, 2, 3, 4, 5}
	case StateFloatingBaseGravity:
		return []int{0, 1, 2, 5}
	}
	return nil
}

// Coordinates returns the names of q.
func (s *Spec) Coordinates() []string {
	out := BaseCoordinates(s.State.Kind)
	for _, j := range s.State.Joints {
		out = append(out, j.Name)
	}
	return out
}

// Momenta returns the names of p.
func (s *Spec) Momenta() []string {
	var out []string
	if s.State.Kind != StateJoints {
		out = append(out, "p_x", "p_y", "p_z", "l_x", "l_y", "l_z")
	}
	for _, j := range s.State.Joints {
		out = append(out, "p_"+j.Name)
	}
	return out
}

// PortNames returns the names of the model's control and contact ports:
// the measured ones (MeasuredPortNames) with, after the measured control
// values, the port history's (HistorySpec.PortMean), "mean<m>(<port>)"
// for every measured port.
func (s *Spec) PortNames() (control, contact []string) {
	control, contact = s.MeasuredPortNames()
	if m := s.History.PortMean; m > 0 {
		measured := slices.Concat(control, contact)
		control = slices.Clone(control)
		for _, n := range measured {
			control = append(control, fmt.Sprintf("mean%d(%s)", m, n))
		}
	}
	return control, contact
}

// MeasuredPortNames returns the names of the control and contact port
// values one sample's channels give (Mapper.Map writes them), without the
// port history.
func (s *Spec) MeasuredPortNames() (control, contact []string) {
	switch s.Control.Kind {
	case ControlDirect:
		control = s.Control.names()
	case ControlQuadrotor:
		control = []string{"f_x", "f_y", "f_z", "tau_x", "tau_y", "tau_z"}
	}
	if len(s.Contact.Channels) > 0 {
		contact = s.Contact.names()
	}
	return control, contact
}

// JointNames returns the names of the joint coordinates, which follow the
// six base coordinates of a floating base in q.
func (s *Spec) JointNames() []string {
	out := make([]string, len(s.State.Joints))
	for i, j := range s.State.Joints {
		out[i] = j.Name
	}
	return out
}

// RobotJointNames returns the robot's names of the joint coordinates
// (JointSpec.RobotName), in the order of JointNames.
func (s *Spec) RobotJointNames() []string {
	out := make([]string, len(s.State.Joints))
	for i, j := range s.State.Joints {
		out[i] = j.RobotName()
	}
	return out
}

// RobotName returns the robot's name of the joint: Joint, or Name when
// Joint is unset.
func (j *JointSpec) RobotName() string {
	if j.Joint != "" {
		return j.Joint
	}
	return j.Name
}

func (p *PortSpec) names() []string {
	if len(p.Names) > 0 {
		return p.Names
	}
	out := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		out[i] = strings.TrimPrefix(c.Name, "/")
	}
	return out
}
