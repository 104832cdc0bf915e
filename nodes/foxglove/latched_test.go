package foxglove

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestLatchedChannel checks transient-local delivery: a latched channel's
// last message reaches a subscription made after it was published (from a
// client that connected later too), exactly once, while an ordinary
// channel's earlier messages are gone; a new message replaces the kept
// one.
func TestLatchedChannel(t *testing.T) {
	srv, url := startServer(t, Options{})
	latch := testChannel("/robot_description")
	latch.Latched = true
	l, err := srv.AddChannel(latch)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := srv.AddChannel(testChannel("/tf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Publish(l, 11, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Publish(l, 12, []byte{4, 5}); err != nil { // replaces the first
		t.Fatal(err)
	}
	if err := srv.Publish(plain, 13, []byte{9}); err != nil {
		t.Fatal(err)
	}
	frameOf := func(sub uint32, ts uint64, data ...byte) []byte {
		f := []byte{0x01}
		f = binary.LittleEndian.AppendUint32(f, sub)
		f = binary.LittleEndian.AppendUint64(f, ts)
		return append(f, data...)
	}
	conn := dial(t, url)
	handshake(t, conn)
	send(t, conn, `{"op":"subscribe","subscriptions":[{"id":3,"channelId":`+itoa(plain)+`},{"id":5,"channelId":`+itoa(l)+`}]}`)
	if got, want := readBinary(t, conn), frameOf(5, 12, 4, 5); !bytes.Equal(got, want) {
		t.Fatalf("on subscribing got % x, want the kept message % x", got, want)
	}
	waitSubscribed(t, srv, l, 1)
	// Nothing else is queued: the next frame is a new message.
	if err := srv.Publish(plain, 14, []byte{8}); err != nil {
		t.Fatal(err)
	}
	if got, want := readBinary(t, conn), frameOf(3, 14, 8); !bytes.Equal(got, want) {
		t.Fatalf("got % x, want the new /tf message % x", got, want)
	}
	// A latched message published while subscribed arrives once.
	if err := srv.Publish(l, 15, []byte{6}); err != nil {
		t.Fatal(err)
	}
	if got, want := readBinary(t, conn), frameOf(5, 15, 6); !bytes.Equal(got, want) {
		t.Fatalf("got % x, want % x", got, want)
	}
	if err := srv.RemoveChannel(l); err != nil {
		t.Fatal(err)
	}
	if err := srv.Publish(l, 16, nil); err == nil {
		t.Error("publish on a removed latched channel: no error")
	}
}
