package foxglove

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// Subprotocol is the WebSocket subprotocol this server speaks. A client must
// offer it in its handshake; connections that do not are refused.
const Subprotocol = "foxglove.websocket.v1"

// Capabilities a server may declare in its serverInfo message. Only the ones
// this package implements are defined here.
const (
	// CapabilityTime declares that the server sends binary time messages
	// (see Server.BroadcastTime).
	CapabilityTime = "time"
)

// StatusLevel is the severity of a status message sent to a client.
type StatusLevel uint8

// Status levels defined by the protocol.
const (
	// StatusInfo is an informational status message.
	StatusInfo StatusLevel = 0
	// StatusWarning is a warning status message.
	StatusWarning StatusLevel = 1
	// StatusError is an error status message.
	StatusError StatusLevel = 2
)

// Binary opcodes sent by the server.
const (
	opMessageData byte = 0x01
	opTime        byte = 0x02
)

// Binary opcodes sent by the client (none is supported by this server).
const (
	opClientMessageData  byte = 0x01
	opServiceCallRequest byte = 0x02
)

// messageDataHeaderLen is the length of the header of a message data frame:
// opcode, subscription id (uint32) and receive timestamp (uint64).
const messageDataHeaderLen = 1 + 4 + 8

// appendMessageData appends a binary message data frame to dst.
func appendMessageData(dst []byte, subID uint32, timestampNs uint64, payload []byte) []byte {
	dst = append(dst, opMessageData)
	dst = binary.LittleEndian.AppendUint32(dst, subID)
	dst = binary.LittleEndian.AppendUint64(dst, timestampNs)
	return append(dst, payload...)
}

// appendTime appends a binary time frame to dst.
func appendTime(dst []byte, timestampNs uint64) []byte {
	dst = append(dst, opTime)
	return binary.LittleEndian.AppendUint64(dst, timestampNs)
}

// serverInfoMsg is the JSON serverInfo message.
type serverInfoMsg struct {
	Op           string            `json:"op"`
	Name         string            `json:"name"`
	Capabilities []string          `json:"capabilities"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	SessionID    string            `json:"sessionId,omitempty"`
}

// statusMsg is the JSON status message.
type statusMsg struct {
	Op      string      `json:"op"`
	Level   StatusLevel `json:"level"`
	Message string      `json:"message"`
}

// channelJSON is one channel of an advertise message.
type channelJSON struct {
	ID             ChannelID `json:"id"`
	Topic          string    `json:"topic"`
	Encoding       string    `json:"encoding"`
	SchemaName     string    `json:"schemaName"`
	Schema         string    `json:"schema"`
	SchemaEncoding string    `json:"schemaEncoding,omitempty"`
}

// advertiseMsg is the JSON advertise message.
type advertiseMsg struct {
	Op       string        `json:"op"`
	Channels []channelJSON `json:"channels"`
}

// unadvertiseMsg is the JSON unadvertise message.
type unadvertiseMsg struct {
	Op         string      `json:"op"`
	ChannelIDs []ChannelID `json:"channelIds"`
}

// subscribeMsg is the client's JSON subscribe message.
type subscribeMsg struct {
	Subscriptions []struct {
		ID        *uint32    `json:"id"`
		ChannelID *ChannelID `json:"channelId"`
	} `json:"subscriptions"`
}

// unsubscribeMsg is the client's JSON unsubscribe message.
type unsubscribeMsg struct {
	SubscriptionIDs []uint32 `json:"subscriptionIds"`
}

// unsupportedOp reports, for a client operation of the protocol that this
// server does not implement, the capability a server would have to declare
// for it.
func unsupportedOp(op string) (capability string, ok bool) {
	switch op {
	case "advertise", "unadvertise":
		return "clientPublish", true
	case "getParameters", "setParameters":
		return "parameters", true
	case "subscribeParameterUpdates", "unsubscribeParameterUpdates":
		return "parametersSubscribe", true
	case "subscribeConnectionGraph", "unsubscribeConnectionGraph":
		return "connectionGraph", true
	case "fetchAsset":
		return "assets", true
	}
	return "", false
}

// mustJSON marshals a message built from the types above; they cannot fail
// to encode, so a failure is a programming error.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("foxglove: encoding %T: %v", v, err))
	}
	return b
}

func encodeStatus(level StatusLevel, msg string) []byte {
	return mustJSON(statusMsg{Op: "status", Level: level, Message: msg})
}

func encodeAdvertise(chs []channelJSON) []byte {
	if chs == nil {
		chs = []channelJSON{}
	}
	return mustJSON(advertiseMsg{Op: "advertise", Channels: chs})
}

func encodeUnadvertise(ids []ChannelID) []byte {
	return mustJSON(unadvertiseMsg{Op: "unadvertise", ChannelIDs: ids})
}
