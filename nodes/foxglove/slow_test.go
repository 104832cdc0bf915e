package foxglove

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestSlowClientDoesNotStallOthers connects a client that stops reading and
// one that keeps up. The publisher must never wait, the stalled client must
// lose messages (counted), the other must get every one in order, and
// Close must not hang on the stalled client.
func TestSlowClientDoesNotStallOthers(t *testing.T) {
	checkGoroutines(t)
	const (
		limit   = 16
		total   = 2000
		batch   = 8 // < limit: the fast client never overflows
		payload = 32 << 10
	)
	srv, url := startServer(t, Options{MaxQueuedMessages: limit, WriteTimeout: time.Minute})
	ch, err := srv.AddChannel(testChannel("/a"))
	if err != nil {
		t.Fatal(err)
	}

	// The slow client has a tiny receive buffer so that the server's
	// writes to it block soon.
	slowDialer := websocket.Dialer{
		Subprotocols:     []string{Subprotocol},
		HandshakeTimeout: 5 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				err = c.(*net.TCPConn).SetReadBuffer(4096)
			}
			return c, err
		},
	}
	slow, resp, err := slowDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { slow.Close() })
	handshake(t, slow)
	fast := dial(t, url)
	handshake(t, fast)
	send(t, slow, `{"op":"subscribe","subscriptions":[{"id":1,"channelId":`+itoa(ch)+`}]}`)
	send(t, fast, `{"op":"subscribe","subscriptions":[{"id":2,"channelId":`+itoa(ch)+`}]}`)
	waitSubscribed(t, srv, ch, 2)

	// The fast client reads until the server closes the connection.
	got := make(chan uint64, total)
	readerDone := make(chan error, 1)
	go func() {
		for next := uint64(0); ; next++ {
			fast.SetReadDeadline(time.Now().Add(30 * time.Second))
			mt, data, err := fast.ReadMessage()
			if err != nil {
				if next == total {
					err = nil
				}
				readerDone <- err
				return
			}
			if mt != websocket.BinaryMessage || len(data) != messageDataHeaderLen+payload ||
				data[0] != opMessageData || binary.LittleEndian.Uint32(data[1:]) != 2 {
				readerDone <- fmt.Errorf("unexpected message %d: type %d, %d bytes", next, mt, len(data))
				return
			}
			if seq := binary.LittleEndian.Uint64(data[messageDataHeaderLen:]); seq != next {
				readerDone <- fmt.Errorf("got message %d, want %d", seq, next)
				return
			}
			got <- next
		}
	}()

	buf := make([]byte, payload)
	var slowest time.Duration
	for i := uint64(0); i < total; i += batch {
		for seq := i; seq < i+batch; seq++ {
			binary.LittleEndian.PutUint64(buf, seq)
			start := time.Now()
			if err := srv.Publish(ch, seq, buf); err != nil {
				t.Fatal(err)
			}
			slowest = max(slowest, time.Since(start))
		}
		for want := i; want < i+batch; want++ {
			select {
			case seq := <-got:
				if seq != want {
					t.Fatalf("fast client got %d, want %d", seq, want)
				}
			case err := <-readerDone:
				t.Fatalf("fast client stopped after %d messages: %v", want, err)
			case <-time.After(20 * time.Second):
				t.Fatalf("fast client stalled at message %d", want)
			}
		}
	}
	if slowest > 250*time.Millisecond {
		t.Errorf("slowest Publish took %v", slowest)
	}

	st := srv.Stats()
	if len(st.Clients) != 2 {
		t.Fatalf("stats of %d clients, want 2", len(st.Clients))
	}
	slowSt, fastSt := st.Clients[0], st.Clients[1]
	if fastSt.Dropped != 0 {
		t.Errorf("fast client dropped %d messages", fastSt.Dropped)
	}
	if slowSt.Dropped == 0 || slowSt.Queued > limit || slowSt.Dropped+uint64(slowSt.Queued) >= total {
		t.Errorf("slow client: %+v, want drops and at most %d queued", slowSt, limit)
	}
	if st.Dropped != slowSt.Dropped {
		t.Errorf("server dropped %d, slow client %d", st.Dropped, slowSt.Dropped)
	}
	t.Logf("slow client: sent %d, queued %d, dropped %d of %d", slowSt.Sent, slowSt.Queued, slowSt.Dropped, total)

	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > closeGrace+2*time.Second {
		t.Errorf("Close took %v with a stalled client", d)
	}
	if err := <-readerDone; err != nil {
		t.Errorf("fast client: %v", err)
	}
}
