package foxglove

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// client is one connected WebSocket client.
type client struct {
	id     uint64
	remote string
	conn   *websocket.Conn // nil in tests that drive the op handlers directly
	q      *sendQueue
	cancel context.CancelFunc // disconnects the client

	overflowed atomic.Bool
	sent       atomic.Uint64

	mu     sync.Mutex
	subs   map[uint32]ChannelID // subscription id → channel
	byChan map[ChannelID]uint32 // channel → subscription id
}

func newClient(id uint64, remote string, conn *websocket.Conn, q *sendQueue, cancel context.CancelFunc) *client {
	return &client{
		id: id, remote: remote, conn: conn, q: q, cancel: cancel,
		subs:   make(map[uint32]ChannelID),
		byChan: make(map[ChannelID]uint32),
	}
}

// sendText queues a JSON message; a client too far behind to take even that
// is disconnected.
func (c *client) sendText(msg []byte) {
	if !c.q.pushText(msg) && !c.overflowed.Swap(true) {
		c.cancel()
	}
}

func (c *client) sendStatus(level StatusLevel, msg string) {
	c.sendText(encodeStatus(level, msg))
}

func (c *client) subscribed(id ChannelID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.byChan[id]
	return ok
}

// dropChannel removes the client's subscription to a channel, if any, and
// reports whether there was one.
func (c *client) dropChannel(id ChannelID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub, ok := c.byChan[id]
	if ok {
		delete(c.byChan, id)
		delete(c.subs, sub)
	}
	return ok
}

func (c *client) stats() ClientStats {
	c.mu.Lock()
	nsubs := len(c.subs)
	c.mu.Unlock()
	queued, qbytes, dropped := c.q.stats()
	return ClientStats{
		ID: c.id, RemoteAddr: c.remote, Subscriptions: nsubs,
		Queued: queued, QueuedBytes: qbytes, Sent: c.sent.Load(), Dropped: dropped,
	}
}

// enter registers a connection handler, or reports false once the server
// is stopping.
func (s *Server) enter() (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.connCtx == nil {
		return nil, false
	}
	s.conns.Add(1)
	return s.connCtx, true
}

// handle is the HTTP handler: it checks the handshake and serves the
// connection until either side ends it.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	parent, ok := s.enter()
	if !ok {
		http.Error(w, "foxglove: server is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.conns.Done()

	if !websocket.IsWebSocketUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "foxglove: this is a Foxglove WebSocket server; connect with a WebSocket client offering subprotocol "+Subprotocol, http.StatusUpgradeRequired)
		return
	}
	if offered := websocket.Subprotocols(r); !slices.Contains(offered, Subprotocol) {
		s.log.Warn("foxglove: refused client without subprotocol", "remote", r.RemoteAddr, "offered", offered)
		http.Error(w, fmt.Sprintf("foxglove: unsupported WebSocket subprotocol %q: this server speaks only %q",
			strings.Join(offered, ", "), Subprotocol), http.StatusBadRequest)
		return
	}
	up := websocket.Upgrader{
		Subprotocols: []string{Subprotocol},
		CheckOrigin:  s.opts.CheckOrigin,
	}
	conn, err := up.Upgrade(w, r, nil) // answers the request itself on failure
	if err != nil {
		s.log.Warn("foxglove: handshake failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	s.serveConn(parent, conn)
}

// serveConn runs one client: a reader goroutine handling the client's
// requests and a writer goroutine draining its send queue. It returns when
// both have finished.
func (s *Server) serveConn(parent context.Context, conn *websocket.Conn) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	conn.SetReadLimit(maxClientMessage)

	s.mu.Lock()
	s.lastClient++
	c := newClient(s.lastClient, conn.RemoteAddr().String(), conn,
		newSendQueue(s.opts.MaxQueuedMessages, s.opts.MaxQueuedBytes), cancel)
	// Under s.mu, so no channel is added or removed between the
	// advertisement of the current set and the client's registration.
	c.sendText(s.infoJSON)
	c.sendText(s.advertiseAll())
	s.clients[c] = struct{}{}
	s.mu.Unlock()
	s.log.Info("foxglove: client connected", "client", c.id, "remote", c.remote)

	readDone := make(chan error, 1)
	go func() { readDone <- s.readLoop(c) }()
	writeDone := make(chan error, 1)
	go func() { writeDone <- s.writeLoop(ctx, parent, c) }()

	var readErr, writeErr error
	readOK, writeOK := false, false
	select {
	case <-ctx.Done():
	case readErr = <-readDone:
		readOK = true
	case writeErr = <-writeDone:
		writeOK = true
	}
	cancel()
	if !writeOK {
		// Give the writer time to send its close frame; a writer stuck
		// on a client that does not read is cut off below.
		t := time.NewTimer(closeGrace)
		select {
		case writeErr = <-writeDone:
			writeOK = true
		case <-t.C:
		}
		t.Stop()
	}
	conn.Close()
	if !writeOK {
		writeErr = <-writeDone
	}
	if !readOK {
		readErr = <-readDone
	}

	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	s.notifySubscriptions()
	st := c.stats()
	s.log.Info("foxglove: client disconnected", "client", c.id, "remote", c.remote,
		"sent", st.Sent, "dropped", st.Dropped, "overflowed", c.overflowed.Load(),
		"readErr", readErr, "writeErr", writeErr)
}

// readLoop handles the client's messages until the connection fails or
// closes.
func (s *Server) readLoop(c *client) error {
	for {
		mt, data, err := c.conn.ReadMessage()
		if err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
				return nil
			}
			return fmt.Errorf("foxglove: read from client %d: %w", c.id, err)
		}
		switch mt {
		case websocket.TextMessage:
			s.handleText(c, data)
		case websocket.BinaryMessage:
			s.handleBinary(c, data)
		}
	}
}

// writeLoop sends the client's queued frames until ctx is done or a write
// fails. On ctx done it sends a close frame saying why: server is the
// server's context for connections, done when the server stops.
func (s *Server) writeLoop(ctx, server context.Context, c *client) error {
	var batch []frame
	var buf []byte
	for {
		select {
		case <-ctx.Done():
			code, reason := websocket.CloseNormalClosure, ""
			switch {
			case c.overflowed.Load():
				code, reason = websocket.CloseTryAgainLater, "send queue overflow"
			case server.Err() != nil:
				code, reason = websocket.CloseGoingAway, "server shutting down"
			}
			// Fails harmlessly when the client has already closed.
			_ = c.conn.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(code, reason), time.Now().Add(closeGrace))
			return nil
		case <-c.q.notify:
		}
		batch = c.q.take(batch)
		for i := range batch {
			if ctx.Err() != nil {
				break
			}
			f := &batch[i]
			mt := websocket.BinaryMessage
			var msg []byte
			switch f.kind {
			case frameText:
				mt, msg = websocket.TextMessage, f.data
			case frameMessage:
				buf = appendMessageData(buf[:0], f.subID, f.timestampNs, f.data)
				msg = buf
			case frameTime:
				buf = appendTime(buf[:0], f.timestampNs)
				msg = buf
			}
			if err := c.conn.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout)); err != nil {
				return fmt.Errorf("foxglove: write to client %d: %w", c.id, err)
			}
			if err := c.conn.WriteMessage(mt, msg); err != nil {
				return fmt.Errorf("foxglove: write to client %d: %w", c.id, err)
			}
			c.sent.Add(1)
		}
		clear(batch) // release payloads
		if cap(buf) > 1<<20 {
			buf = nil // don't pin one huge message's buffer
		}
	}
}

// handleText handles one JSON message from a client. Errors are reported
// to the client as status messages.
func (s *Server) handleText(c *client, data []byte) {
	var head struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		c.sendStatus(StatusError, fmt.Sprintf("invalid JSON message: %v", err))
		return
	}
	switch head.Op {
	case "subscribe":
		var m subscribeMsg
		if err := json.Unmarshal(data, &m); err != nil {
			c.sendStatus(StatusError, fmt.Sprintf("invalid subscribe message: %v", err))
			return
		}
		s.subscribe(c, &m)
	case "unsubscribe":
		var m unsubscribeMsg
		if err := json.Unmarshal(data, &m); err != nil {
			c.sendStatus(StatusError, fmt.Sprintf("invalid unsubscribe message: %v", err))
			return
		}
		s.unsubscribe(c, m.SubscriptionIDs)
	case "":
		c.sendStatus(StatusError, `invalid message: missing "op"`)
	default:
		if capability, ok := unsupportedOp(head.Op); ok {
			c.sendStatus(StatusError, fmt.Sprintf("operation %q is not supported: the server does not declare capability %q", head.Op, capability))
			return
		}
		c.sendStatus(StatusError, fmt.Sprintf("unknown operation %q", head.Op))
	}
}

// handleBinary handles one binary message from a client. The server
// declares neither clientPublish nor services, so none is accepted.
func (s *Server) handleBinary(c *client, data []byte) {
	switch {
	case len(data) == 0:
		c.sendStatus(StatusError, "empty binary message")
	case data[0] == opClientMessageData:
		c.sendStatus(StatusError, `client message data is not supported: the server does not declare capability "clientPublish"`)
	case data[0] == opServiceCallRequest:
		c.sendStatus(StatusError, `service call requests are not supported: the server does not declare capability "services"`)
	default:
		c.sendStatus(StatusError, fmt.Sprintf("unknown binary opcode 0x%02x", data[0]))
	}
}

func (s *Server) subscribe(c *client, m *subscribeMsg) {
	var errs []string
	added := false
	s.mu.RLock()
	c.mu.Lock()
	for i, sub := range m.Subscriptions {
		switch {
		case sub.ID == nil || sub.ChannelID == nil:
			errs = append(errs, fmt.Sprintf(`subscription %d: missing "id" or "channelId"`, i))
		case s.channels[*sub.ChannelID] == nil:
			errs = append(errs, fmt.Sprintf("subscription %d: unknown channel %d", *sub.ID, *sub.ChannelID))
		default:
			if ch, dup := c.subs[*sub.ID]; dup {
				errs = append(errs, fmt.Sprintf("subscription %d: id already in use for channel %d", *sub.ID, ch))
				continue
			}
			if old, dup := c.byChan[*sub.ChannelID]; dup {
				errs = append(errs, fmt.Sprintf("subscription %d: channel %d is already subscribed with subscription %d", *sub.ID, *sub.ChannelID, old))
				continue
			}
			c.subs[*sub.ID] = *sub.ChannelID
			c.byChan[*sub.ChannelID] = *sub.ID
			added = true
			if r := s.latched[*sub.ChannelID]; r != nil && r.data != nil {
				// Under s.mu (read) and c.mu: publishLatched, which holds
				// s.mu for writing, cannot queue the same message again.
				if !c.q.pushData(frame{kind: frameMessage, subID: *sub.ID, timestampNs: r.timestampNs, data: r.data}) {
					s.dropped.Add(1)
				}
			}
		}
	}
	c.mu.Unlock()
	s.mu.RUnlock()
	for _, e := range errs {
		c.sendStatus(StatusError, e)
	}
	if added {
		s.notifySubscriptions()
	}
}

func (s *Server) unsubscribe(c *client, ids []uint32) {
	var unknown []uint32
	removed := false
	c.mu.Lock()
	for _, id := range ids {
		ch, ok := c.subs[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		delete(c.subs, id)
		delete(c.byChan, ch)
		removed = true
	}
	c.mu.Unlock()
	for _, id := range unknown {
		c.sendStatus(StatusWarning, fmt.Sprintf("unsubscribe: unknown subscription %d", id))
	}
	if removed {
		s.notifySubscriptions()
	}
}
