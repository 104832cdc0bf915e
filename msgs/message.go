package msgs

import (
	"errors"
	"fmt"
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
	EncodeCDR(w *CDRWriter)
	// DecodeCDR reads the message's fields; failures are left in r.
	DecodeCDR(r *CDRReader)
}

// Marshal returns m serialized as little-endian CDR with its encapsulation
// header, as ROS 2 publishes it.
func Marshal(m Message) []byte { return AppendMarshal(nil, m) }

// AppendMarshal appends m serialized as by Marshal to dst.
func AppendMarshal(dst []byte, m Message) []byte {
	w := NewCDRWriter(dst)
	m.EncodeCDR(w)
	return w.Bytes()
}

// Unmarshal decodes CDR data (either byte order, with its encapsulation
// header) into m. Errors are *DecodeError naming the field that failed.
func Unmarshal(data []byte, m Message) error {
	r, err := NewCDRReader(data)
	if err != nil {
		var derr *DecodeError
		if errors.As(err, &derr) {
			derr.Type = NormalizeType(m.ROSType())
		}
		return err
	}
	m.DecodeCDR(r)
	if r.err == nil {
		return nil
	}
	// The typed decoder knows where but not in which field it failed; the
	// dynamic decoder, which fails on the same input, says which.
	if s, err := ParseSchema(m.ROSType(), ROS2Msg, []byte(m.ROSDefinition())); err == nil {
		if _, err := s.Decode(EncodingCDR, data); err != nil {
			return err
		}
	}
	r.err.Type = NormalizeType(m.ROSType())
	return r.err
}

// SchemaOf parses the definition of a typed message, for decoding or path
// compilation of the same type from logs.
func SchemaOf(m Message) (*Schema, error) {
	s, err := ParseSchema(m.ROSType(), ROS2Msg, []byte(m.ROSDefinition()))
	if err != nil {
		return nil, fmt.Errorf("msgs: schema of %s: %w", m.ROSType(), err)
	}
	return s, nil
}
