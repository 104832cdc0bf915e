package foxglove

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

func TestFraming(t *testing.T) {
	got := appendMessageData([]byte{0xaa}, 0x04030201, 0x0c0b0a0908070605, []byte("xyz"))
	want := []byte{0xaa, 0x01, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 'x', 'y', 'z'}
	if !bytes.Equal(got, want) {
		t.Errorf("appendMessageData\n got % x\nwant % x", got, want)
	}
	if n := len(appendMessageData(nil, 0, 0, nil)); n != messageDataHeaderLen {
		t.Errorf("empty message data frame has %d bytes, want %d", n, messageDataHeaderLen)
	}
	got = appendTime(nil, 0x0807060504030201)
	want = []byte{0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}
	if !bytes.Equal(got, want) {
		t.Errorf("appendTime\n got % x\nwant % x", got, want)
	}
}

func TestJSONMessages(t *testing.T) {
	for _, c := range []struct {
		got  []byte
		want string
	}{
		{encodeStatus(StatusWarning, `a "b"`), `{"op":"status","level":1,"message":"a \"b\""}`},
		{encodeAdvertise(nil), `{"op":"advertise","channels":[]}`},
		{encodeAdvertise([]channelJSON{{ID: 3, Topic: "/t", Encoding: "cdr", SchemaName: "p/msg/T", Schema: "int32 x", SchemaEncoding: "ros2msg"}}),
			`{"op":"advertise","channels":[{"id":3,"topic":"/t","encoding":"cdr","schemaName":"p/msg/T","schema":"int32 x","schemaEncoding":"ros2msg"}]}`},
		{encodeUnadvertise([]ChannelID{1, 2}), `{"op":"unadvertise","channelIds":[1,2]}`},
	} {
		if string(c.got) != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

func TestSendQueue(t *testing.T) {
	q := newSendQueue(3, 100)
	data := frame{kind: frameMessage, data: make([]byte, 20)} // 33 bytes
	for i := range 3 {
		if !q.pushData(data) {
			t.Fatalf("push %d dropped", i)
		}
	}
	if q.pushData(data) { // 4th frame: over the byte limit and the count
		t.Error("queue accepted a 4th frame")
	}
	if !q.pushText([]byte(`{}`)) {
		t.Error("text frame refused below the headroom")
	}
	if n, b, d := q.stats(); n != 4 || b != 3*33+2 || d != 1 {
		t.Errorf("stats %d frames %d bytes %d dropped", n, b, d)
	}
	batch := q.take(nil)
	if len(batch) != 4 || batch[3].kind != frameText {
		t.Errorf("take returned %d frames", len(batch))
	}
	if n, b, _ := q.stats(); n != 0 || b != 0 {
		t.Errorf("after take: %d frames %d bytes", n, b)
	}

	// A message larger than the byte limit still goes when nothing waits,
	// but not behind another one.
	big := frame{kind: frameMessage, data: make([]byte, 200)}
	if !q.pushData(big) {
		t.Error("oversized message refused on an empty queue")
	}
	if q.pushData(data) {
		t.Error("message queued past the byte limit")
	}
	q.take(batch)

	// Text frames overflow only past the headroom.
	for i := range 3 + controlHeadroom {
		if !q.pushText([]byte(`{}`)) {
			t.Fatalf("text frame %d refused", i)
		}
	}
	if q.pushText([]byte(`{}`)) {
		t.Error("text frame accepted past the headroom")
	}
}

// TestTextOverflowDisconnects checks that a client whose queue overflows
// even with text frames is cancelled, once.
func TestTextOverflowDisconnects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	c := newClient(1, "test", nil, newSendQueue(1, 1<<20), func() { calls++; cancel() })
	for range 2 + controlHeadroom {
		c.sendStatus(StatusInfo, "x")
	}
	if ctx.Err() == nil || calls != 1 || !c.overflowed.Load() {
		t.Errorf("cancelled %d times, overflowed %v", calls, c.overflowed.Load())
	}
}

// FuzzHandleText feeds arbitrary client messages to the op handlers: they
// must not panic, must keep the subscription maps consistent and must only
// ever answer with valid status messages.
func FuzzHandleText(f *testing.F) {
	for _, seed := range []string{
		`{"op":"subscribe","subscriptions":[{"id":1,"channelId":1},{"id":2,"channelId":2}]}`,
		`{"op":"subscribe","subscriptions":[{"id":1,"channelId":1},{"id":1,"channelId":2}]}`,
		`{"op":"unsubscribe","subscriptionIds":[1,3]}`,
		`{"op":"subscribe","subscriptions":[{"id":4294967295,"channelId":4294967296}]}`,
		`{"op":"subscribe","subscriptions":null}`,
		`{"op":"advertise","channels":[]}`,
		`{"op":7}`,
		`[]`,
		`null`,
		"\x01\x00\x00\x00\x00",
		"",
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, text bool) {
		srv, err := NewServer(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, topic := range []string{"/a", "/b"} {
			if _, err := srv.AddChannel(testChannel(topic)); err != nil {
				t.Fatal(err)
			}
		}
		c := newClient(1, "fuzz", nil, newSendQueue(16, 1<<20), func() {})
		for range 2 { // twice, to hit duplicate ids
			if text {
				srv.handleText(c, data)
			} else {
				srv.handleBinary(c, data)
			}
		}
		if len(c.subs) != len(c.byChan) {
			t.Fatalf("%d subscriptions but %d subscribed channels", len(c.subs), len(c.byChan))
		}
		for sub, ch := range c.subs {
			if c.byChan[ch] != sub || srv.channels[ch] == nil {
				t.Fatalf("subscription %d → channel %d is inconsistent", sub, ch)
			}
		}
		for _, fr := range c.q.take(nil) {
			var st statusMsg
			if fr.kind != frameText || json.Unmarshal(fr.data, &st) != nil || st.Op != "status" || st.Message == "" {
				t.Fatalf("handler queued %q", fr.data)
			}
		}
	})
}
