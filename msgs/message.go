package msgs

import (
	"errors"
	"fmt"

	"github.com/calisym/calisym/msgs/rosmsg"
)

// Message is a ROS message type with a Go struct: its names, its complete
// definition, and its CDR codec. The typed messages of this package
// implement it with pointer receivers.
type Message interface {
	// ROSType returns the ROS 2 type name, e.g. "sensor_msgs/msg/JointState"
	// (the MCAP schema name rosbag2 writes).
	ROSType() string
	// ROSDefinition returns the complete ros2msg definition as rosbag2
	// stores it (see Definition).
	ROSDefinition() string
	// EncodeCDR appends the message's fields (no encapsulation header).
	EncodeCDR(w *rosmsg.CDRWriter)
	// DecodeCDR reads the message's fields; failures are left in r.
	DecodeCDR(r *rosmsg.CDRReader)
}

// Marshal returns m serialized as little-endian CDR with its encapsulation
// header, as ROS 2 publishes it.
func Marshal(m Message) []byte { return AppendMarshal(nil, m) }

// Encoder serializes messages as AppendMarshal does through a writer it
// keeps, so that a publisher encoding message after message into one
// buffer allocates nothing. The zero value is ready; it is not safe for
// concurrent use.
type Encoder struct{ w rosmsg.CDRWriter }

// Append appends m serialized as by Marshal to dst.
func (e *Encoder) Append(dst []byte, m Message) []byte {
	e.w.Reset(dst)
	m.EncodeCDR(&e.w)
	return e.w.Bytes()
}

// AppendMarshal appends m serialized as by Marshal to dst (through an
// Encoder of its own: a caller that encodes message after message keeps
// one instead).
func AppendMarshal(dst []byte, m Message) []byte {
	var e Encoder
	return e.Append(dst, m)
}

// Unmarshal decodes CDR data (either byte order, with its encapsulation
// header) into m. Errors are *[rosmsg.DecodeError] naming the field that
// failed.
func Unmarshal(data []byte, m Message) error {
	r, err := rosmsg.NewCDRReader(data)
	if err != nil {
		var derr *rosmsg.DecodeError
		if errors.As(err, &derr) {
			derr.Type = rosmsg.NormalizeType(m.ROSType())
		}
		return err
	}
	m.DecodeCDR(r)
	if err = r.Err(); err == nil {
		return nil
	}
	// The typed decoder knows where but not in which field it failed; the
	// dynamic decoder, which fails on the same input, says which.
	if s, perr := rosmsg.ParseSchema(m.ROSType(), rosmsg.ROS2Msg, []byte(m.ROSDefinition())); perr == nil {
		if _, derr := s.Decode(rosmsg.EncodingCDR, data); derr != nil {
			return derr
		}
	}
	var derr *rosmsg.DecodeError
	if errors.As(err, &derr) { // always: a CDRReader's failure is a *DecodeError
		derr.Type = rosmsg.NormalizeType(m.ROSType())
	}
	return err
}

// SchemaOf parses the definition of a typed message, for decoding or path
// compilation of the same type from logs.
func SchemaOf(m Message) (*rosmsg.Schema, error) {
	s, err := rosmsg.ParseSchema(m.ROSType(), rosmsg.ROS2Msg, []byte(m.ROSDefinition()))
	if err != nil {
		return nil, fmt.Errorf("msgs: schema of %s: %w", m.ROSType(), err)
	}
	return s, nil
}
