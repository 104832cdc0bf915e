package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestOptionsNormalize(t *testing.T) {
	var nilOpts *Options
	o, err := nilOpts.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != DefaultAddr || o.Name != DefaultName || o.MaxQueuedMessages != DefaultMaxQueuedMessages ||
		o.MaxQueuedBytes != DefaultMaxQueuedBytes || o.WriteTimeout != DefaultWriteTimeout || o.SessionID == "" {
		t.Errorf("defaults: %+v", o)
	}
	for addr, want := range map[string]string{
		":9000":          "127.0.0.1:9000",
		"0.0.0.0:9000":   "0.0.0.0:9000",
		"localhost:0":    "localhost:0",
		"[::1]:8765":     "[::1]:8765",
		"127.0.0.1:8766": "127.0.0.1:8766",
	} {
		o, err := (&Options{Addr: addr}).normalize()
		if err != nil || o.Addr != want {
			t.Errorf("Addr %q: got %q, %v; want %q", addr, o.Addr, err, want)
		}
	}
	for name, bad := range map[string]Options{
		"address":    {Addr: "8765"},
		"capability": {Capabilities: []string{"clientPublish"}},
		"messages":   {MaxQueuedMessages: -1},
		"bytes":      {MaxQueuedBytes: -1},
		"timeout":    {WriteTimeout: -time.Second},
	} {
		if _, err := NewServer(&bad); err == nil {
			t.Errorf("%s: NewServer(%+v) succeeded, want error", name, bad)
		}
	}
}

// TestDefaultBindIsLoopback checks that a server told nothing about its
// address listens on 127.0.0.1:8765, and that an address without a host
// also means the loopback interface.
func TestDefaultBindIsLoopback(t *testing.T) {
	checkGoroutines(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	srv, err := NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Start(ctx)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		t.Logf("port 8765 is in use; checking the default address without binding it")
		if got := srv.opts.Addr; got != "127.0.0.1:8765" {
			t.Errorf("default address %q, want 127.0.0.1:8765", got)
		}
	case err != nil:
		t.Fatal(err)
	default:
		ta := addr.(*net.TCPAddr)
		if !ta.IP.Equal(net.IPv4(127, 0, 0, 1)) || ta.Port != 8765 {
			t.Errorf("default server listens on %v, want 127.0.0.1:8765", addr)
		}
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
	}

	srv, err = NewServer(&Options{Addr: ":0"})
	if err != nil {
		t.Fatal(err)
	}
	addr, err = srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ip := addr.(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Errorf(`Addr ":0" listens on %v, want 127.0.0.1`, addr)
	}
	if got := srv.Addr(); got.String() != addr.String() {
		t.Errorf("Addr() = %v, want %v", got, addr)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHandshakeRequiresSubprotocol(t *testing.T) {
	checkGoroutines(t)
	_, url := startServer(t, Options{})
	for _, protos := range [][]string{nil, {"foxglove.websocket.v2"}, {"ros2", "json"}} {
		d := websocket.Dialer{Subprotocols: protos, HandshakeTimeout: 5 * time.Second}
		conn, resp, err := d.Dial(url, nil)
		if err == nil {
			conn.Close()
			t.Errorf("subprotocols %q: handshake succeeded, want refusal", protos)
			continue
		}
		if resp == nil {
			t.Errorf("subprotocols %q: %v, want an HTTP 400", protos, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(Subprotocol)) {
			t.Errorf("subprotocols %q: HTTP %d %q, want 400 naming %s", protos, resp.StatusCode, body, Subprotocol)
		}
	}

	// A plain HTTP request is told to upgrade.
	resp, err := http.Get("http" + strings.TrimPrefix(url, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("plain GET: HTTP %d, want %d", resp.StatusCode, http.StatusUpgradeRequired)
	}
	http.DefaultClient.CloseIdleConnections()

	// Among several offers the server picks its own.
	d := websocket.Dialer{Subprotocols: []string{"other", Subprotocol}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	defer conn.Close()
	if conn.Subprotocol() != Subprotocol {
		t.Errorf("negotiated %q, want %q", conn.Subprotocol(), Subprotocol)
	}
}

func TestServerInfoAndAdvertise(t *testing.T) {
	checkGoroutines(t)
	srv, url := startServer(t, Options{
		Name:         "unit",
		Capabilities: []string{CapabilityTime},
		Metadata:     map[string]string{"robot": "pendulum"},
		SessionID:    "s1",
	})
	a, err := srv.AddChannel(testChannel("/a"))
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, url)

	var info struct {
		serverInfoMsg
		SupportedEncodings []string `json:"supportedEncodings"`
	}
	readJSON(t, conn, "serverInfo", &info)
	if info.Name != "unit" || len(info.Capabilities) != 1 || info.Capabilities[0] != CapabilityTime ||
		info.Metadata["robot"] != "pendulum" || info.SessionID != "s1" || info.SupportedEncodings != nil {
		t.Errorf("serverInfo %+v", info)
	}
	var adv advertiseMsg
	readJSON(t, conn, "advertise", &adv)
	want := channelJSON{ID: a, Topic: "/a", Encoding: "cdr", SchemaName: "std_msgs/msg/Float64MultiArray",
		Schema: float64MultiArraySchema, SchemaEncoding: "ros2msg"}
	if len(adv.Channels) != 1 || adv.Channels[0] != want {
		t.Errorf("advertise %+v, want [%+v]", adv.Channels, want)
	}

	// Channels added later are advertised to connected clients.
	b, err := srv.AddChannel(Channel{Topic: "/b", Encoding: "json", SchemaName: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if b == a {
		t.Fatalf("channel ids repeat: %d", b)
	}
	raw := readJSON(t, conn, "advertise", &adv)
	if len(adv.Channels) != 1 || adv.Channels[0].ID != b || adv.Channels[0].Topic != "/b" {
		t.Errorf("advertise %s", raw)
	}
	if bytes.Contains(raw, []byte("schemaEncoding")) {
		t.Errorf("empty schemaEncoding is sent: %s", raw)
	}

	// Removed channels are unadvertised.
	if err := srv.RemoveChannel(a); err != nil {
		t.Fatal(err)
	}
	var unadv unadvertiseMsg
	readJSON(t, conn, "unadvertise", &unadv)
	if len(unadv.ChannelIDs) != 1 || unadv.ChannelIDs[0] != a {
		t.Errorf("unadvertise %+v, want [%d]", unadv, a)
	}
	if err := srv.RemoveChannel(a); !errors.Is(err, ErrUnknownChannel) {
		t.Errorf("removing a removed channel: %v, want ErrUnknownChannel", err)
	}
	if err := srv.Publish(a, 1, nil); !errors.Is(err, ErrUnknownChannel) {
		t.Errorf("publishing on a removed channel: %v, want ErrUnknownChannel", err)
	}

	// A new client sees the current set only.
	conn2 := dial(t, url)
	chs := handshake(t, conn2)
	if len(chs) != 1 || chs[0].ID != b {
		t.Errorf("new client's advertise %+v, want channel %d only", chs, b)
	}

	// With no channel at all, the advertise is still sent, and empty.
	if err := srv.RemoveChannel(b); err != nil {
		t.Fatal(err)
	}
	conn3 := dial(t, url)
	if chs := handshake(t, conn3); len(chs) != 0 {
		t.Errorf("advertise %+v, want none", chs)
	}

	if _, err := srv.AddChannel(Channel{Encoding: "cdr"}); err == nil {
		t.Error("AddChannel without a topic succeeded")
	}
	if _, err := srv.AddChannel(Channel{Topic: "/x"}); err == nil {
		t.Error("AddChannel without an encoding succeeded")
	}
}

func TestSubscribePublishFraming(t *testing.T) {
	checkGoroutines(t)
	srv, url := startServer(t, Options{Capabilities: []string{CapabilityTime}})
	a, _ := srv.AddChannel(testChannel("/a"))
	b, _ := srv.AddChannel(testChannel("/b"))
	conn := dial(t, url)
	handshake(t, conn)

	// Nothing is sent for channels nobody subscribed.
	if err := srv.Publish(a, 1, []byte("unsent")); err != nil {
		t.Fatal(err)
	}
	send(t, conn, `{"op":"subscribe","subscriptions":[{"id":7,"channelId":`+itoa(a)+`},{"id":0,"channelId":`+itoa(b)+`}]}`)
	waitSubscribed(t, srv, a, 1)
	waitSubscribed(t, srv, b, 1)

	payload := []byte{0x00, 0x01, 0x00, 0x00, 1, 2, 3}
	const ts = uint64(0x0102030405060708)
	if err := srv.Publish(a, ts, payload); err != nil {
		t.Fatal(err)
	}
	payload[4] = 99 // Publish copied it
	got := readBinary(t, conn)
	want := []byte{0x01, 7, 0, 0, 0, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00, 0x01, 0x00, 0x00, 1, 2, 3}
	if !bytes.Equal(got, want) {
		t.Errorf("message data frame\n got % x\nwant % x", got, want)
	}

	if err := srv.Publish(b, 42, nil); err != nil {
		t.Fatal(err)
	}
	got = readBinary(t, conn)
	if len(got) != 13 || got[0] != 0x01 || binary.LittleEndian.Uint32(got[1:]) != 0 || binary.LittleEndian.Uint64(got[5:]) != 42 {
		t.Errorf("empty message data frame % x", got)
	}

	// Time frames.
	if err := srv.BroadcastTime(0xfedcba9876543210); err != nil {
		t.Fatal(err)
	}
	got = readBinary(t, conn)
	if want := []byte{0x02, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe}; !bytes.Equal(got, want) {
		t.Errorf("time frame\n got % x\nwant % x", got, want)
	}

	// After unsubscribing, the channel's messages stop; the time frame
	// sent after them is the next thing the client reads.
	send(t, conn, `{"op":"unsubscribe","subscriptionIds":[7]}`)
	waitSubscribed(t, srv, a, 0)
	if err := srv.Publish(a, 2, payload); err != nil {
		t.Fatal(err)
	}
	if err := srv.BroadcastTime(3); err != nil {
		t.Fatal(err)
	}
	if got := readBinary(t, conn); got[0] != 0x02 {
		t.Errorf("after unsubscribe got % x, want the time frame", got)
	}

	// The id may be reused after unsubscribing.
	send(t, conn, `{"op":"subscribe","subscriptions":[{"id":7,"channelId":`+itoa(a)+`}]}`)
	waitSubscribed(t, srv, a, 1)

	// Removing a channel drops its subscriptions.
	if err := srv.RemoveChannel(a); err != nil {
		t.Fatal(err)
	}
	readJSON(t, conn, "unadvertise", nil)
	if n := srv.Subscribers(a); n != 0 {
		t.Errorf("%d subscribers of a removed channel", n)
	}
	st := srv.Stats()
	if len(st.Clients) != 1 || st.Clients[0].Subscriptions != 1 || st.Clients[0].Dropped != 0 || st.Clients[0].Sent < 6 {
		t.Errorf("stats %+v", st)
	}
}

func TestTimeNeedsCapability(t *testing.T) {
	srv, err := NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.BroadcastTime(1); !errors.Is(err, ErrCapability) {
		t.Errorf("BroadcastTime without the time capability: %v, want ErrCapability", err)
	}
}

func TestStatusForBadRequests(t *testing.T) {
	checkGoroutines(t)
	srv, url := startServer(t, Options{})
	a, _ := srv.AddChannel(testChannel("/a"))
	b, _ := srv.AddChannel(testChannel("/b"))
	conn := dial(t, url)
	handshake(t, conn)

	steps := []struct {
		msg   string
		level StatusLevel
		want  string
	}{
		{`{"op":"subscribe","subscriptions":[{"id":1,"channelId":999}]}`, StatusError, "unknown channel 999"},
		{`{"op":"subscribe","subscriptions":[{"id":1,"channelId":` + itoa(a) + `},{"id":1,"channelId":` + itoa(b) + `}]}`, StatusError, "id already in use"},
		{`{"op":"subscribe","subscriptions":[{"id":2,"channelId":` + itoa(a) + `}]}`, StatusError, "already subscribed"},
		{`{"op":"subscribe","subscriptions":[{"channelId":` + itoa(b) + `}]}`, StatusError, "missing"},
		{`{"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]}`, StatusError, "invalid subscribe"},
		{`{"op":"unsubscribe","subscriptionIds":[5]}`, StatusWarning, "unknown subscription 5"},
		{`{"op":"advertise","channels":[{"id":1,"topic":"/x","encoding":"json","schemaName":"X"}]}`, StatusError, "clientPublish"},
		{`{"op":"getParameters","parameterNames":[]}`, StatusError, "parameters"},
		{`{"op":"subscribeConnectionGraph"}`, StatusError, "connectionGraph"},
		{`{"op":"fetchAsset","uri":"package://x","requestId":1}`, StatusError, "assets"},
		{`{"op":"dance"}`, StatusError, `unknown operation "dance"`},
		{`{"subscriptions":[]}`, StatusError, `missing "op"`},
		{`not json`, StatusError, "invalid JSON"},
	}
	for _, s := range steps {
		send(t, conn, s.msg)
		readStatus(t, conn, s.level, s.want)
	}
	for data, want := range map[string]string{
		"\x01\x01\x00\x00\x00hi":               "clientPublish",
		"\x02\x01\x00\x00\x00\x01\x00\x00\x00": "services",
		"\x07":                                 "unknown binary opcode 0x07",
	} {
		if err := conn.WriteMessage(websocket.BinaryMessage, []byte(data)); err != nil {
			t.Fatal(err)
		}
		readStatus(t, conn, StatusError, want)
	}
	// The valid subscription among the failures took effect, and the
	// connection is still usable.
	if n := srv.Subscribers(a); n != 1 {
		t.Errorf("%d subscribers of channel %d, want 1", n, a)
	}
	if n := srv.Subscribers(b); n != 0 {
		t.Errorf("%d subscribers of channel %d, want 0", n, b)
	}
	if err := srv.Publish(a, 5, []byte{1}); err != nil {
		t.Fatal(err)
	}
	if got := readBinary(t, conn); binary.LittleEndian.Uint32(got[1:]) != 1 {
		t.Errorf("frame % x, want subscription 1", got)
	}
}

// TestCloseDisconnectsClients checks that cancelling the context stops the
// server, sends connected clients a going-away close frame and leaves no
// goroutine behind.
func TestCloseDisconnectsClients(t *testing.T) {
	checkGoroutines(t)
	srv, err := NewServer(&Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := srv.AddChannel(testChannel("/a"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + addr.String()
	var conns []*websocket.Conn
	for range 3 {
		c := dial(t, url)
		handshake(t, c)
		send(t, c, `{"op":"subscribe","subscriptions":[{"id":1,"channelId":`+itoa(ch)+`}]}`)
		conns = append(conns, c)
	}
	waitSubscribed(t, srv, ch, 3)

	cancel()
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _, err := c.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("client %d: %v, want a going-away close", i, err)
		}
	}
	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := srv.Start(context.Background()); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Start after Close: %v, want ErrServerClosed", err)
	}
	if err := srv.Publish(ch, 1, nil); err != nil {
		t.Errorf("Publish after Close: %v", err)
	}
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: time.Second}
	if c, _, err := d.Dial(url, nil); err == nil {
		c.Close()
		t.Error("dial after Close succeeded")
	}
}

func TestServeAndListenAndServe(t *testing.T) {
	checkGoroutines(t)
	srv, err := NewServer(&Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	conn := dial(t, "ws://"+ln.Addr().String())
	handshake(t, conn)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after Close, want nil", err)
	}

	srv, err = NewServer(&Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- srv.ListenAndServe(ctx) }()
	for srv.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
	conn = dial(t, "ws://"+srv.Addr().String())
	handshake(t, conn)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ListenAndServe returned %v after cancel, want nil", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.ListenAndServe(context.Background()); !errors.Is(err, ErrServerClosed) {
		t.Errorf("ListenAndServe after stop: %v, want ErrServerClosed", err)
	}
}

// TestConcurrentUse exercises every entry point at once; run it with -race.
func TestConcurrentUse(t *testing.T) {
	checkGoroutines(t)
	srv, url := startServer(t, Options{Capabilities: []string{CapabilityTime}, MaxQueuedMessages: 64})
	base, _ := srv.AddChannel(testChannel("/base"))

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for p := range 3 {
		wg.Go(func() {
			payload := make([]byte, 64)
			for i := uint64(0); ctx.Err() == nil; i++ {
				payload[0] = byte(i)
				_ = srv.Publish(base, i, payload)
				_ = srv.Publish(ChannelID(2+p), i, payload) // may come and go
				_ = srv.BroadcastTime(i)
				if i%64 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			id, err := srv.AddChannel(testChannel("/churn"))
			if err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
			if err := srv.RemoveChannel(id); err != nil {
				t.Error(err)
				return
			}
			_ = srv.Stats()
		}
	})
	for range 3 {
		wg.Go(func() {
			d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: 5 * time.Second}
			for ctx.Err() == nil {
				conn, resp, err := d.Dial(url, nil)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				for id := range 4 {
					msg := `{"op":"subscribe","subscriptions":[{"id":` + itoa(ChannelID(id)) + `,"channelId":` + itoa(ChannelID(id+1)) + `}]}`
					_ = conn.WriteMessage(websocket.TextMessage, []byte(msg))
				}
				dl, _ := ctx.Deadline()
				conn.SetReadDeadline(dl.Add(100 * time.Millisecond))
				for range 50 {
					if _, _, err := conn.ReadMessage(); err != nil {
						break
					}
				}
				_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"op":"unsubscribe","subscriptionIds":[0,1,2,3]}`))
				conn.Close()
			}
		})
	}
	wg.Wait()
}

func itoa(id ChannelID) string {
	return strings.TrimSpace(string(mustJSON(id)))
}
