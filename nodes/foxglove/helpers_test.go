package foxglove

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/calisym/calisym/msgs/rosmsg"
)

// checkGoroutines fails the test if, once every later cleanup has run, more
// goroutines are alive than when it was called. Register it first, so it
// runs last; tests that use it must not run in parallel.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("goroutine leak: %d before, %d after\n%s", before, n, buf)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// startServer starts a server on a free loopback port and returns it with
// its ws:// URL. The server is closed when the test ends.
func startServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	srv, err := NewServer(&opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := srv.Start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv, "ws://" + addr.String()
}

// dial connects a Foxglove client; it is closed when the test ends.
func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{Subprotocol}, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	resp.Body.Close()
	if got := conn.Subprotocol(); got != Subprotocol {
		t.Fatalf("negotiated subprotocol %q, want %q", got, Subprotocol)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// read reads the next message, failing the test after 5 s.
func read(t *testing.T, conn *websocket.Conn) (int, []byte) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	mt, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return mt, data
}

// readJSON reads the next message, checks that it is a JSON text message
// with the given op and decodes it into v (when v is not nil).
func readJSON(t *testing.T, conn *websocket.Conn, op string, v any) []byte {
	t.Helper()
	mt, data := read(t, conn)
	if mt != websocket.TextMessage {
		t.Fatalf("got binary message % x, want JSON op %q", data, op)
	}
	var head struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Fatalf("invalid JSON %s: %v", data, err)
	}
	if head.Op != op {
		t.Fatalf("got op %q (%s), want %q", head.Op, data, op)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("decoding %s: %v", data, err)
		}
	}
	return data
}

// readStatus reads a status message and checks its level and that its text
// contains want.
func readStatus(t *testing.T, conn *websocket.Conn, level StatusLevel, want string) {
	t.Helper()
	var st statusMsg
	readJSON(t, conn, "status", &st)
	if st.Level != level || !strings.Contains(st.Message, want) {
		t.Fatalf("status {level %d, %q}, want level %d containing %q", st.Level, st.Message, level, want)
	}
}

// readBinary reads the next message and checks that it is binary.
func readBinary(t *testing.T, conn *websocket.Conn) []byte {
	t.Helper()
	mt, data := read(t, conn)
	if mt != websocket.BinaryMessage {
		t.Fatalf("got text message %s, want binary", data)
	}
	return data
}

// handshake reads serverInfo and the initial advertise of a new client and
// returns the advertised channels.
func handshake(t *testing.T, conn *websocket.Conn) []channelJSON {
	t.Helper()
	readJSON(t, conn, "serverInfo", nil)
	var adv advertiseMsg
	readJSON(t, conn, "advertise", &adv)
	return adv.Channels
}

func send(t *testing.T, conn *websocket.Conn, msg string) {
	t.Helper()
	if err := conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func waitSubscribed(t *testing.T, srv *Server, ch ChannelID, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Subscribers(ch) != n {
		if time.Now().After(deadline) {
			t.Fatalf("channel %d: %d subscribers, want %d", ch, srv.Subscribers(ch), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// testChannel is a ROS 2 channel of std_msgs/msg/Float64MultiArray.
func testChannel(topic string) Channel {
	return Channel{
		Topic:          topic,
		Encoding:       rosmsg.MessageEncodingCDR,
		SchemaName:     "std_msgs/msg/Float64MultiArray",
		Schema:         float64MultiArraySchema,
		SchemaEncoding: rosmsg.SchemaEncodingROS2Msg,
	}
}
