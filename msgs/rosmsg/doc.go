// Package rosmsg reads and writes ROS messages of any type, given their
// .msg definitions: it parses message definitions, decodes and encodes
// serialized messages as generic [Struct] values, reads fields through
// Foxglove-style message paths, and provides the CDR primitives that typed
// codecs are written with. It names the encodings every other package
// uses.
//
// Its sibling, package msgs (github.com/calisym/calisym/msgs), holds the
// Go types of the messages calisym publishes and reads (JointState,
// Odometry, PredictedTrajectory, ...) with their complete definitions and
// typed CDR codecs, built on this package's [CDRWriter] and [CDRReader].
// This package does not know them: it works from definitions alone.
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
// [CompleteDefinition] writes such a definition from the .msg texts of a
// type and its dependencies.
//
// # Decoding and encoding
//
// [Schema.Decode] turns the bytes of one message into a [Struct] tree of Go
// values, and [Schema.Encode] writes one back. Two encodings are read:
// CDR ([EncodingCDR]: XCDR1 with its 4-byte encapsulation header, little or
// big endian, as ROS 2 middlewares write it; plain XCDR2 is read too) and
// ROS 1 serialization ([EncodingROS1]). Input is never trusted: lengths are
// checked against the bytes that remain before anything is allocated, and
// failures are reported as a [*DecodeError] that names the field
// (".position[3]") and the byte offset. [CDRWriter] and [CDRReader] write
// and read CDR one value at a time, for codecs of Go types.
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
// Message paths live here rather than in a package of their own because
// the Extractor is part of the codec: it walks the serialized bytes with
// the wire layout that [ParseSchema] computes for each type (minimum sizes,
// and the sizes of fixed-size types by alignment phase and CDR version),
// the encapsulation header parser and the byte-order readers that decoding
// uses, none of which is part of the API. It also runs the compiled steps
// of a [MessagePath], so paths and the Extractor go together.
package rosmsg
