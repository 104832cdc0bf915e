package rosmsg

import "errors"

// Sentinel errors wrapped by the errors this package returns.
var (
	// ErrSyntax reports a message definition that does not follow the .msg
	// grammar of its dialect.
	ErrSyntax = errors.New("message definition syntax error")
	// ErrUnknownType reports a field whose type the definition neither
	// includes nor implies, or a recursive definition.
	ErrUnknownType = errors.New("unknown message type")
	// ErrTruncated reports serialized data that ends before the message does.
	ErrTruncated = errors.New("message data ends early")
	// ErrInvalid reports serialized data that contradicts its encoding, such
	// as a bad encapsulation header or a length larger than the data.
	ErrInvalid = errors.New("invalid message data")
	// ErrUnsupported reports a valid feature this package does not handle,
	// such as wstring fields or parameter-list CDR.
	ErrUnsupported = errors.New("unsupported message feature")
	// ErrPath reports a message path that does not parse or does not fit
	// the schema it is compiled against.
	ErrPath = errors.New("invalid message path")
	// ErrNoMatch reports a path filter or name lookup that matched no
	// element of a message, e.g. a joint name absent from /joint_states.
	ErrNoMatch = errors.New("no element matches")
	// ErrIndexRange reports a path index outside the array it indexes.
	ErrIndexRange = errors.New("index out of range")
	// ErrValue reports a value of the wrong Go type or size given to an
	// encoder.
	ErrValue = errors.New("value does not fit the field")
)
