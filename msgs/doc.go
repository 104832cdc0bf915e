// Package msgs owns the ROS message types calisym reads and writes: parsing
// message definitions, decoding serialized messages of any type, reading
// fields through Foxglove-style message paths, and typed Go structs with CDR
// codecs for the types the package publishes or records.
//
// # Definitions
//
// [ParseSchema] parses a complete message definition as logs store it: the
// top-level definition followed by its dependencies, each introduced by a
// line of '=' and a line "MSG: pkg/Type". Two dialects are read: ROS 2 .msg
// ([ROS2Msg], MCAP schema encoding "ros2msg") and ROS 1 .msg ([ROS1Msg], a
// ROS 1 bag connection's message_definition). Short type names are resolved
// the way ROS resolves them: "Header" is std_msgs/Header and a bare name is
// looked up in the package of the definition that uses it.
//
// # Decoding
//
// [Schema.Decode] turns the bytes of one message into a [Struct] tree of Go
// values. Two encodings are read: CDR ([EncodingCDR]: XCDR1 with its 4-byte
// encapsulation header, little or big endian, as ROS 2 middlewares write it;
// plain XCDR2 is read too) and ROS 1 serialization ([EncodingROS1]). Input is
// never trusted: lengths are checked against the bytes that remain before
// anything is allocated, and failures are reported as a [*DecodeError] that
// names the field (".position[3]") and the byte offset.
//
// # Message paths
//
// [CompilePath] compiles a message path such as "/odom.pose.pose.position.x"
// or "/joint_states.position[name==\"elbow\"]" against a schema once; the
// resulting [MessagePath] reads a float64 (or any value) from decoded
// messages. For bulk conversion, an [Extractor] evaluates many paths straight
// on the serialized bytes, skipping whatever is not asked for and allocating
// nothing per message.
//
// # Typed messages
//
// Types such as [JointState], [Odometry] and [PredictedTrajectory] implement
// [Message]: their ROS type name, their complete definition in the form
// rosbag2 stores it, and a CDR encoder and decoder. [Marshal] and
// [Unmarshal] wrap them with the encapsulation header.
package msgs
