// Package msgs holds the Go types of the ROS messages calisym publishes and
// reads, such as [JointState], [Odometry], [Float64MultiArray],
// [DiagnosticArray] and calisym's own [PredictedTrajectory], and their
// complete definitions.
//
// Each type implements [Message]: its ROS type name, its complete
// definition in the form rosbag2 stores it in an MCAP schema, and a CDR
// encoder and decoder. [Marshal], [AppendMarshal] and [Unmarshal] wrap them
// with the CDR encapsulation header; [SchemaOf] parses a type's definition
// for reading the same type from logs. [Definition] and [OwnDefinition]
// return the definitions of the types this package has; msg/ holds the
// interface files of calisym's own types, installed with the ROS 2 package.
//
// Messages of any other type, described by their definitions alone, are
// package rosmsg's (github.com/calisym/calisym/msgs/rosmsg): parsing .msg
// definitions, decoding and encoding CDR and ROS 1 serialization, message
// paths and the Extractor that reads them from serialized bytes, the CDR
// primitives the types here are written with, and the names of the
// encodings.
package msgs
