package rosmsg

// The encoding vocabulary of calisym: the names under which logs (MCAP
// channels and schemas, ROS 1 bag connections as logio reports them) and
// Foxglove channels declare how messages and their definitions are written.
// They are the MCAP well-known encodings. Every other package uses these
// constants rather than spelling the names; [Encoding.String],
// [EncodingFor], [Dialect.String] and [DialectFor] convert between them and
// this package's [Encoding] and [Dialect].
const (
	// MessageEncodingCDR is the message encoding of ROS 2 (OMG CDR with its
	// encapsulation header), read and written as [EncodingCDR].
	MessageEncodingCDR = "cdr"
	// MessageEncodingROS1 is the message encoding of ROS 1 serialization,
	// read and written as [EncodingROS1].
	MessageEncodingROS1 = "ros1"
	// SchemaEncodingROS2Msg is the schema encoding of ROS 2 .msg
	// definitions with their dependencies concatenated, parsed as
	// [ROS2Msg].
	SchemaEncodingROS2Msg = "ros2msg"
	// SchemaEncodingROS1Msg is the schema encoding of ROS 1 .msg
	// definitions (a ROS 1 connection's message_definition), parsed as
	// [ROS1Msg].
	SchemaEncodingROS1Msg = "ros1msg"
)
