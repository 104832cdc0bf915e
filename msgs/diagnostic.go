package msgs

import "github.com/calisym/calisym/msgs/rosmsg"

// Levels of a DiagnosticStatus.
const (
	DiagnosticOK    uint8 = 0
	DiagnosticWarn  uint8 = 1
	DiagnosticError uint8 = 2
	DiagnosticStale uint8 = 3
)

// KeyValue is diagnostic_msgs/msg/KeyValue: one named value of a status.
type KeyValue struct {
	// Key names the value.
	Key string
	// Value is the value, as text.
	Value string
}

// ROSType returns "diagnostic_msgs/msg/KeyValue".
func (k *KeyValue) ROSType() string { return "diagnostic_msgs/msg/KeyValue" }

// ROSDefinition returns the complete ros2msg definition.
func (k *KeyValue) ROSDefinition() string { return definitionOf("diagnostic_msgs/KeyValue") }

// EncodeCDR appends the fields.
func (k *KeyValue) EncodeCDR(w *rosmsg.CDRWriter) {
	w.String(k.Key)
	w.String(k.Value)
}

// DecodeCDR reads the fields.
func (k *KeyValue) DecodeCDR(r *rosmsg.CDRReader) {
	k.Key = r.String()
	k.Value = r.String()
}

// DiagnosticStatus is diagnostic_msgs/msg/DiagnosticStatus: the state of
// one component.
type DiagnosticStatus struct {
	// Level is DiagnosticOK, DiagnosticWarn, DiagnosticError or
	// DiagnosticStale.
	Level uint8
	// Name names the component.
	Name string
	// Message describes the state.
	Message string
	// HardwareID identifies the hardware, if any.
	HardwareID string
	// Values are named values of the component.
	Values []KeyValue
}

// ROSType returns "diagnostic_msgs/msg/DiagnosticStatus".
func (s *DiagnosticStatus) ROSType() string { return "diagnostic_msgs/msg/DiagnosticStatus" }

// ROSDefinition returns the complete ros2msg definition.
func (s *DiagnosticStatus) ROSDefinition() string {
	return definitionOf("diagnostic_msgs/DiagnosticStatus")
}

// EncodeCDR appends the fields.
func (s *DiagnosticStatus) EncodeCDR(w *rosmsg.CDRWriter) {
	w.Uint8(s.Level)
	w.String(s.Name)
	w.String(s.Message)
	w.String(s.HardwareID)
	w.SequenceLength(len(s.Values))
	for i := range s.Values {
		s.Values[i].EncodeCDR(w)
	}
}

// DecodeCDR reads the fields.
func (s *DiagnosticStatus) DecodeCDR(r *rosmsg.CDRReader) {
	s.Level = r.Uint8()
	s.Name = r.String()
	s.Message = r.String()
	s.HardwareID = r.String()
	s.Values = nil
	if n := r.SequenceLength(8); n > 0 {
		s.Values = make([]KeyValue, n)
		for i := range s.Values {
			s.Values[i].DecodeCDR(r)
		}
	}
}

// DiagnosticArray is diagnostic_msgs/msg/DiagnosticArray: the states of
// several components.
type DiagnosticArray struct {
	// Header stamps the report.
	Header Header
	// Status holds one entry per component.
	Status []DiagnosticStatus
}

// ROSType returns "diagnostic_msgs/msg/DiagnosticArray".
func (a *DiagnosticArray) ROSType() string { return "diagnostic_msgs/msg/DiagnosticArray" }

// ROSDefinition returns the complete ros2msg definition.
func (a *DiagnosticArray) ROSDefinition() string {
	return definitionOf("diagnostic_msgs/DiagnosticArray")
}

// EncodeCDR appends the fields.
func (a *DiagnosticArray) EncodeCDR(w *rosmsg.CDRWriter) {
	a.Header.EncodeCDR(w)
	w.SequenceLength(len(a.Status))
	for i := range a.Status {
		a.Status[i].EncodeCDR(w)
	}
}

// DecodeCDR reads the fields.
func (a *DiagnosticArray) DecodeCDR(r *rosmsg.CDRReader) {
	a.Header.DecodeCDR(r)
	a.Status = nil
	if n := r.SequenceLength(17); n > 0 {
		a.Status = make([]DiagnosticStatus, n)
		for i := range a.Status {
			a.Status[i].DecodeCDR(r)
		}
	}
}
