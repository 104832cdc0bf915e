package convert

import (
	"fmt"
	"strings"

	"github.com/calisym/calisym/bagtools/signal"
)

// scalar is one scalar input of the conversion.
type scalar struct {
	field string  // spec field, for errors
	ch    Channel // where it comes from
	group string  // its channel group (FilterConfiguration, …, FilterContact)
}

// plan lists the scalar inputs of a spec and their roles. Indices refer to
// plan.scalars; −1 marks an absent input.
type plan struct {
	scalars  []scalar
	jointPos []int
	jointVel []int
	basePos  []int // 3 or none
	orient   []int // 4 (quaternion, in w x y z order) or 3 (roll pitch yaw) or none
	linVel   []int // 3 or none
	angVel   []int // 3 or none
	control  []int // direct control channels or quadrotor motors
	contact  []int
	portMode signal.Interp // control
	contMode signal.Interp // contact
}

func newPlan(s *Spec) *plan {
	p := &plan{portMode: interpOf(s.Control.Interp), contMode: interpOf(s.Contact.Interp)}
	add := func(field string, c Channel, group string) int {
		if c.IsZero() {
			return -1
		}
		p.scalars = append(p.scalars, scalar{field: field, ch: c, group: group})
		return len(p.scalars) - 1
	}
	for i, j := range s.State.Joints {
		p.jointPos = append(p.jointPos, add(fmt.Sprintf("state.joints[%d].position", i), j.Position, FilterConfiguration))
		p.jointVel = append(p.jointVel, add(fmt.Sprintf("state.joints[%d].velocity", i), j.Velocity, FilterVelocity))
	}
	if s.State.Kind != StateJoints {
		b := &s.State.Base
		for i, c := range b.Position {
			p.basePos = append(p.basePos, add(fmt.Sprintf("state.base.position[%d]", i), c, FilterConfiguration))
		}
		o := b.Orientation
		chs := o.Channels
		if o.Kind == OrientationQuaternion && o.Order == "xyzw" {
			chs = []Channel{chs[3], chs[0], chs[1], chs[2]}
		}
		for i, c := range chs {
			p.orient = append(p.orient, add(fmt.Sprintf("state.base.orientation.channels[%d]", i), c, FilterConfiguration))
		}
		for i, c := range b.LinearVelocity.Channels {
			p.linVel = append(p.linVel, add(fmt.Sprintf("state.base.linear_velocity.channels[%d]", i), c, FilterVelocity))
		}
		for i, c := range b.AngularVelocity.Channels {
			p.angVel = append(p.angVel, add(fmt.Sprintf("state.base.angular_velocity.channels[%d]", i), c, FilterVelocity))
		}
	}
	switch s.Control.Kind {
	case ControlDirect:
		for i, c := range s.Control.Channels {
			p.control = append(p.control, add(fmt.Sprintf("control.channels[%d]", i), c, FilterControl))
		}
	case ControlQuadrotor:
		for i, c := range s.Control.Quadrotor.Motors {
			p.control = append(p.control, add(fmt.Sprintf("control.quadrotor.motors[%d]", i), c, FilterControl))
		}
	}
	for i, c := range s.Contact.Channels {
		p.contact = append(p.contact, add(fmt.Sprintf("contact.channels[%d]", i), c, FilterContact))
	}
	return p
}

func interpOf(s string) signal.Interp {
	if s == InterpHold {
		return signal.Hold
	}
	return signal.Linear
}

// names returns the unique source channel names the plan reads.
func (p *plan) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, sc := range p.scalars {
		if sc.ch.Const == nil && !seen[sc.ch.Name] {
			seen[sc.ch.Name] = true
			out = append(out, sc.ch.Name)
		}
	}
	return out
}

// coordinateNames returns the names of q for the spec.
func coordinateNames(s *Spec) []string {
	var out []string
	switch s.State.Kind {
	case StateFloatingBase:
		out = append(out, "rho_x", "rho_y", "rho_z", "phi_x", "phi_y", "phi_z")
	case StateFloatingBaseGravity:
		out = append(out, "x", "y", "z", "roll", "pitch", "yaw")
	}
	for _, j := range s.State.Joints {
		out = append(out, j.Name)
	}
	return out
}

// momentumNames returns the names of p for the spec.
func momentumNames(s *Spec) []string {
	var out []string
	if s.State.Kind != StateJoints {
		out = append(out, "p_x", "p_y", "p_z", "l_x", "l_y", "l_z")
	}
	for _, j := range s.State.Joints {
		out = append(out, "p_"+j.Name)
	}
	return out
}

// portNames returns the names of the control and contact port values.
func portNames(s *Spec) (control, contact []string) {
	switch s.Control.Kind {
	case ControlDirect:
		control = portChannelNames(&s.Control.PortSpec)
	case ControlQuadrotor:
		control = []string{"f_x", "f_y", "f_z", "tau_x", "tau_y", "tau_z"}
	}
	if len(s.Contact.Channels) > 0 {
		contact = portChannelNames(&s.Contact)
	}
	return control, contact
}

func portChannelNames(p *PortSpec) []string {
	if len(p.Names) > 0 {
		return p.Names
	}
	out := make([]string, len(p.Channels))
	for i, c := range p.Channels {
		out[i] = strings.TrimPrefix(c.Name, "/")
	}
	return out
}
