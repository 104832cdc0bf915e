package statemap

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PortMapKey is the key under which a dataset (dataset.Meta.Source) and a
// model file (a CaLiSym file's provenance, an MLP file's meta) record the
// port map of the spec its ports were computed with (Spec.PortMap).
const PortMapKey = "port_map"

// ErrPortMap reports ports computed another way than a model was trained
// with (CheckPortMap).
var ErrPortMap = errors.New("ports computed another way than the model was trained with")

// PortMap is the canonical description of how a spec computes the port
// values e = (u, f_c) from the logged channels: everything that changes a
// port value given the same channels, and nothing else (the port names,
// the state and the mechanics model are recorded and checked elsewhere).
// Defaults are filled in and equivalent spellings made one (a unit of
// factor 1 is SI, a scale of 0 is 1, a constant channel is its value
// alone), so that two specs that map the ports identically have the same
// PortMap. Its String is what datasets and model files record under
// PortMapKey.
type PortMap struct {
	// Control is the control port's kind (ControlNone, ControlDirect,
	// ControlQuadrotor).
	Control string `json:"control"`
	// ControlInterp is the control channels' interpolation (none without
	// control channels).
	ControlInterp string `json:"control_interp,omitempty"`
	// Channels are a direct control port's channels.
	Channels []PortChannel `json:"channels,omitempty"`
	// Motors are a quadrotor's motor command channels.
	Motors []PortChannel `json:"motors,omitempty"`
	// ThrustPoly is a quadrotor's thrust map.
	ThrustPoly []float64 `json:"thrust_poly,omitempty"`
	// Voltage is a quadrotor's battery voltage channel (nil: none).
	Voltage *PortChannel `json:"voltage,omitempty"`
	// VoltageRef is the voltage at which ThrustPoly maps the command
	// unscaled (0 without Voltage).
	VoltageRef float64 `json:"voltage_ref,omitempty"`
	// Layout is a quadrotor's rotor layout ("crazyflie", "custom").
	Layout string `json:"layout,omitempty"`
	// ArmLength is the "crazyflie" layout's arm length (0 for "custom",
	// which does not read it).
	ArmLength float64 `json:"arm_length,omitempty"`
	// TorqueCoeff is a quadrotor's drag torque per unit thrust.
	TorqueCoeff float64 `json:"torque_coeff,omitempty"`
	// Rotors are a "custom" layout's rotors.
	Rotors []RotorSpec `json:"rotors,omitempty"`
	// Contact are the contact port's channels.
	Contact []PortChannel `json:"contact,omitempty"`
	// ContactInterp is their interpolation (none without contact).
	ContactInterp string `json:"contact_interp,omitempty"`
	// BodyAxes says the contact forces are rotated into body axes.
	BodyAxes bool `json:"body_axes,omitempty"`
	// PortMean is the port history's m (0: none).
	PortMean int `json:"port_mean,omitempty"`
}

// PortChannel is a channel as it computes a value: a source channel's
// value times its unit's factor times Scale, plus Offset, or a constant.
type PortChannel struct {
	// Name is the source channel (empty for a constant).
	Name string `json:"name,omitempty"`
	// Unit is the unit the log records, lower case; empty for SI and
	// every unit of factor 1.
	Unit string `json:"unit,omitempty"`
	// Scale multiplies the value after unit conversion (1 for a channel
	// that gives none; 0 for a constant).
	Scale float64 `json:"scale,omitempty"`
	// Offset is added last.
	Offset float64 `json:"offset,omitempty"`
	// Const, when set, is the constant the channel gives.
	Const *float64 `json:"const,omitempty"`
}

// portChannel returns the canonical form of c.
func portChannel(c Channel) PortChannel {
	if c.Const != nil {
		v := *c.Const
		return PortChannel{Const: &v}
	}
	p := PortChannel{Name: c.Name, Unit: strings.ToLower(c.Unit), Scale: c.Scale, Offset: c.Offset}
	if f, ok := unitFactor(p.Unit); ok && f == 1 {
		p.Unit = ""
	}
	if p.Scale == 0 {
		p.Scale = 1
	}
	return p
}

func portChannels(cs []Channel) []PortChannel {
	if len(cs) == 0 {
		return nil
	}
	out := make([]PortChannel, len(cs))
	for i, c := range cs {
		out[i] = portChannel(c)
	}
	return out
}

// NewPortMap returns the port map of s. It does not change s: the
// defaults Spec.Defaults would fill in are filled in the result.
func NewPortMap(s *Spec) PortMap {
	c := s.Control
	kind := c.Kind
	if kind == "" {
		kind = ControlNone
		if len(c.Channels) > 0 {
			kind = ControlDirect
		}
	}
	interp := func(i string) string {
		if i == "" {
			return InterpLinear
		}
		return i
	}
	pm := PortMap{Control: kind, PortMean: s.History.PortMean}
	switch kind {
	case ControlDirect:
		pm.Channels = portChannels(c.Channels)
		pm.ControlInterp = interp(c.Interp)
	case ControlQuadrotor:
		q := c.Quadrotor
		pm.ControlInterp = interp(c.Interp)
		pm.Motors = portChannels(q.Motors)
		pm.ThrustPoly = slices.Clone(q.ThrustPoly)
		if !q.Voltage.IsZero() {
			v := portChannel(q.Voltage)
			pm.Voltage, pm.VoltageRef = &v, q.VoltageRef
		}
		pm.Layout, pm.TorqueCoeff = q.Layout, q.TorqueCoeff
		if pm.Layout == "" {
			pm.Layout = "crazyflie"
		}
		if pm.Layout == "custom" {
			pm.Rotors = slices.Clone(q.Rotors)
		} else {
			pm.ArmLength = q.ArmLength
		}
	}
	if len(s.Contact.Channels) > 0 {
		pm.Contact = portChannels(s.Contact.Channels)
		pm.ContactInterp = interp(s.Contact.Interp)
		pm.BodyAxes = s.Contact.BodyAxes
	}
	return pm
}

// String returns the port map's canonical encoding: compact JSON of the
// struct, fields in declaration order, unset fields left out, floats in
// encoding/json's shortest form that reads back exactly. Two equal port
// maps encode to the same string, and two different ones to different
// strings.
func (pm PortMap) String() string {
	b, err := json.Marshal(pm)
	if err != nil { // a NaN or infinity, which Spec.Check refuses
		type plain PortMap
		return fmt.Sprintf("%+v", plain(pm))
	}
	return string(b)
}

// PortMap returns the canonical description of how s computes the port
// values (NewPortMap(s).String()), which conversion records in a
// dataset's source (PortMapKey) and training in the model file.
func (s *Spec) PortMap() string { return NewPortMap(s).String() }

// ParsePortMap decodes a recorded port map (PortMap.String). Unknown keys
// are an error: a port map written by a newer calisym may compute the
// ports in a way this one cannot compare.
func ParsePortMap(s string) (PortMap, error) {
	var pm PortMap
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pm); err != nil {
		return PortMap{}, fmt.Errorf("statemap: port map %s: %w", clip(s), err)
	}
	if dec.More() {
		return PortMap{}, fmt.Errorf("statemap: port map %s: data after the JSON object", clip(s))
	}
	if pm.Control == "" {
		return PortMap{}, fmt.Errorf("statemap: port map %s: no control kind", clip(s))
	}
	return pm, nil
}

// clip shortens a recorded string for an error message.
func clip(s string) string {
	if r := []rune(s); len(r) > 120 {
		return strconv.Quote(string(r[:120])) + "…"
	}
	return strconv.Quote(s)
}

// CheckPortMap compares the port map a model was trained with (trained, a
// recorded PortMap.String) with the one of the params it is used with
// (current, Spec.PortMap). It returns nil when they compute the ports
// identically, else an error wrapping ErrPortMap that names every
// difference in the params' terms ("control.quadrotor thrust map: trained
// with thrust_poly [0 0.173] of the command, params give thrust_poly
// [0 0.13997 0.06193] of the command scaled by voltage Vbat / 3.7 V") and
// says how to fix it. A trained map that does not decode is an error too.
func CheckPortMap(trained, current string) error {
	t, err := ParsePortMap(trained)
	if err != nil {
		return err
	}
	c, err := ParsePortMap(current)
	if err != nil {
		return err
	}
	if t.String() == c.String() {
		return nil
	}
	return fmt.Errorf("%w: %s; retrain the model on data converted with these params, or use it with the params it was trained with (the ones its dataset was converted with)",
		ErrPortMap, strings.Join(DiffPortMaps(t, c), "; "))
}

// DiffPortMaps names the differences between the port map a model was
// trained with and the params' port map, each as "<field>: trained with
// …, params give …" (none when they are equal). After a different
// control kind it compares no further control fields.
func DiffPortMaps(trained, params PortMap) []string {
	var d []string
	add := func(field, t, p string) {
		if t != p {
			d = append(d, fmt.Sprintf("%s: trained with %s, params give %s", field, t, p))
		}
	}
	add("control.kind", strconv.Quote(trained.Control), strconv.Quote(params.Control))
	if trained.Control == params.Control {
		add("control.interp", trained.ControlInterp, params.ControlInterp)
		d = append(d, diffChannels("control.channels", trained.Channels, params.Channels)...)
		d = append(d, diffChannels("control.quadrotor.motors", trained.Motors, params.Motors)...)
		add("control.quadrotor thrust map", thrustMap(trained), thrustMap(params))
		add("control.quadrotor.layout", trained.Layout, params.Layout)
		add("control.quadrotor.arm_length", num(trained.ArmLength)+" m", num(params.ArmLength)+" m")
		add("control.quadrotor.torque_coeff", num(trained.TorqueCoeff)+" m", num(params.TorqueCoeff)+" m")
		add("control.quadrotor.rotors", fmt.Sprint(trained.Rotors), fmt.Sprint(params.Rotors))
	}
	d = append(d, diffChannels("contact.channels", trained.Contact, params.Contact)...)
	add("contact.interp", trained.ContactInterp, params.ContactInterp)
	add("contact.body_axes", strconv.FormatBool(trained.BodyAxes), strconv.FormatBool(params.BodyAxes))
	add("history.port_mean", strconv.Itoa(trained.PortMean), strconv.Itoa(params.PortMean))
	if len(d) == 0 && trained.String() != params.String() { // a field added to PortMap without its words here
		d = append(d, fmt.Sprintf("trained with %s, params give %s", trained, params))
	}
	return d
}

// thrustMap describes a quadrotor's thrust map in the params' terms
// ("" for a port map without one).
func thrustMap(pm PortMap) string {
	if pm.Control != ControlQuadrotor {
		return ""
	}
	s := "thrust_poly " + nums(pm.ThrustPoly) + " of the command"
	if pm.Voltage == nil {
		return s + " (no voltage scaling)"
	}
	return fmt.Sprintf("%s scaled by voltage %s / voltage_ref %s V", s, pm.Voltage, num(pm.VoltageRef))
}

// diffChannels names the differences of two channel lists.
func diffChannels(field string, trained, params []PortChannel) []string {
	if len(trained) != len(params) {
		return []string{fmt.Sprintf("%s: trained with %d channels (%s), params give %d (%s)", field, len(trained), channelList(trained), len(params), channelList(params))}
	}
	var d []string
	for i := range trained {
		if t, p := trained[i].String(), params[i].String(); t != p {
			d = append(d, fmt.Sprintf("%s[%d]: trained with %s, params give %s", field, i, t, p))
		}
	}
	return d
}

func channelList(cs []PortChannel) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}

// String describes the channel in the params' terms: "m1_thrust",
// "tau (unit deg, scale 2, offset 0.1)", "the constant 0".
func (c PortChannel) String() string {
	if c.Const != nil {
		return "the constant " + num(*c.Const)
	}
	var extra []string
	if c.Unit != "" {
		extra = append(extra, "unit "+unitName(c.Unit))
	}
	if c.Scale != 1 {
		extra = append(extra, "scale "+num(c.Scale))
	}
	if c.Offset != 0 {
		extra = append(extra, "offset "+num(c.Offset))
	}
	if len(extra) == 0 {
		return c.Name
	}
	return c.Name + " (" + strings.Join(extra, ", ") + ")"
}

// unitName spells a port map's unit (lower case) as UnitNames does:
// "mn*m" is "mN*m".
func unitName(u string) string {
	for _, n := range UnitNames() {
		if strings.EqualFold(n, u) {
			return n
		}
	}
	return u
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func nums(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = num(v)
	}
	return "[" + strings.Join(s, " ") + "]"
}
