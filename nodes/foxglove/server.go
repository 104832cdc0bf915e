// Package foxglove serves live data to Foxglove over the Foxglove WebSocket
// protocol (subprotocol foxglove.websocket.v1), as a server.
//
// A Server advertises channels (a topic with its message encoding and
// schema), accepts subscriptions from any number of clients and forwards
// every message published on a channel to the clients subscribed to it:
//
//	srv, err := foxglove.NewServer(&foxglove.Options{Name: "calisym"})
//	addr, err := srv.Start(ctx) // 127.0.0.1:8765 unless Options.Addr says otherwise
//	ch, err := srv.AddChannel(foxglove.Channel{
//		Topic: "/prediction", Encoding: rosmsg.MessageEncodingCDR,
//		SchemaName: "std_msgs/msg/Float64MultiArray", Schema: def,
//		SchemaEncoding: rosmsg.SchemaEncodingROS2Msg,
//	})
//	err = srv.Publish(ch, stampNs, cdrBytes)
//	...
//	err = srv.Close()
//
// Publish never blocks on the network: each client has a bounded send queue
// and messages that do not fit are dropped for that client alone and counted
// (see Server.Stats), so a slow client neither stalls the publisher nor the
// other clients.
//
// The server implements the subscribe and unsubscribe operations and, when
// CapabilityTime is declared, time messages. Every other client operation
// (client publishing, parameters, services, connection graph, assets) is
// answered with an error status message.
package foxglove

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults applied by NewServer to zero fields of Options.
const (
	// DefaultAddr is the address the server listens on unless told otherwise:
	// the loopback interface only, on Foxglove's usual port.
	DefaultAddr = "127.0.0.1:8765"
	// DefaultName is the server name sent to clients in serverInfo.
	DefaultName = "calisym"
	// DefaultMaxQueuedMessages is the default limit on messages waiting to
	// be sent to one client.
	DefaultMaxQueuedMessages = 1024
	// DefaultMaxQueuedBytes is the default limit on bytes waiting to be sent
	// to one client.
	DefaultMaxQueuedBytes = 32 << 20
	// DefaultWriteTimeout is the default time one write to a client may
	// take before the client is disconnected.
	DefaultWriteTimeout = 10 * time.Second
)

// closeGrace is how long a connection that is being closed gets to send its
// close frame before its socket is closed under it.
const closeGrace = time.Second

// maxClientMessage bounds the size of a message a client may send.
const maxClientMessage = 1 << 20

// Errors returned by Server methods. They are wrapped; test with errors.Is.
var (
	// ErrUnknownChannel is returned for a channel id that is not (or no
	// longer) advertised.
	ErrUnknownChannel = errors.New("foxglove: unknown channel")
	// ErrServerClosed is returned by Serve, ListenAndServe and Start on a
	// server that has been closed or has already stopped.
	ErrServerClosed = errors.New("foxglove: server closed")
	// ErrCapability is returned when an operation needs a capability the
	// server was not configured to declare.
	ErrCapability = errors.New("foxglove: capability not declared")
)

// Options configures a Server. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// Addr is the TCP address to listen on, "host:port". Empty means
	// DefaultAddr. An empty host (":8765") means 127.0.0.1, not every
	// interface: to listen on all interfaces say "0.0.0.0:8765" explicitly.
	Addr string
	// Name is sent to clients in serverInfo. Empty means DefaultName.
	Name string
	// Capabilities the server declares. Only CapabilityTime is supported;
	// NewServer rejects any other.
	Capabilities []string
	// Metadata is sent to clients in serverInfo; optional.
	Metadata map[string]string
	// SessionID is sent to clients in serverInfo so they can tell a
	// reconnection from a new server. Empty means the start time in
	// nanoseconds.
	SessionID string
	// MaxQueuedMessages bounds the messages waiting to be sent to one
	// client; messages beyond it are dropped for that client. Zero means
	// DefaultMaxQueuedMessages.
	MaxQueuedMessages int
	// MaxQueuedBytes bounds the bytes waiting to be sent to one client; a
	// message that would exceed it is dropped for that client (a single
	// message larger than the limit is still sent when nothing else waits).
	// Zero means DefaultMaxQueuedBytes.
	MaxQueuedBytes int
	// WriteTimeout bounds one write to a client; a client that does not
	// read for that long is disconnected. Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// CheckOrigin decides whether to accept a WebSocket handshake given its
	// request. Nil accepts every origin, as Foxglove's web app connects
	// from its own origin; the default loopback address keeps the server
	// private to this machine.
	CheckOrigin func(r *http.Request) bool
	// Logger receives connection events. Nil discards them.
	Logger *slog.Logger
}

// normalize returns a copy of o with defaults applied, or an error naming
// the invalid field.
func (o *Options) normalize() (Options, error) {
	var n Options
	if o != nil {
		n = *o
	}
	if n.Addr == "" {
		n.Addr = DefaultAddr
	}
	host, port, err := net.SplitHostPort(n.Addr)
	if err != nil {
		return n, fmt.Errorf("foxglove: invalid Options.Addr %q: %w", n.Addr, err)
	}
	if host == "" {
		n.Addr = net.JoinHostPort("127.0.0.1", port)
	}
	if n.Name == "" {
		n.Name = DefaultName
	}
	n.Capabilities = slices.Clone(n.Capabilities)
	for _, c := range n.Capabilities {
		if c != CapabilityTime {
			return n, fmt.Errorf("foxglove: capability %q is not supported (supported: %q)", c, CapabilityTime)
		}
	}
	n.Capabilities = slices.Compact(n.Capabilities)
	if n.SessionID == "" {
		n.SessionID = strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	switch {
	case n.MaxQueuedMessages < 0:
		return n, fmt.Errorf("foxglove: Options.MaxQueuedMessages is negative (%d)", n.MaxQueuedMessages)
	case n.MaxQueuedBytes < 0:
		return n, fmt.Errorf("foxglove: Options.MaxQueuedBytes is negative (%d)", n.MaxQueuedBytes)
	case n.WriteTimeout < 0:
		return n, fmt.Errorf("foxglove: Options.WriteTimeout is negative (%v)", n.WriteTimeout)
	}
	if n.MaxQueuedMessages == 0 {
		n.MaxQueuedMessages = DefaultMaxQueuedMessages
	}
	if n.MaxQueuedBytes == 0 {
		n.MaxQueuedBytes = DefaultMaxQueuedBytes
	}
	if n.WriteTimeout == 0 {
		n.WriteTimeout = DefaultWriteTimeout
	}
	if n.CheckOrigin == nil {
		n.CheckOrigin = func(*http.Request) bool { return true }
	}
	if n.Logger == nil {
		n.Logger = slog.New(slog.DiscardHandler)
	}
	return n, nil
}

// Server is a Foxglove WebSocket server for live data. Its methods are safe
// for concurrent use. A Server serves once: after it stops (Close, or the
// context given to Serve is cancelled) it cannot be started again.
type Server struct {
	opts     Options
	log      *slog.Logger
	hasTime  bool
	infoJSON []byte

	// closing is closed by Close; stopped is closed when Serve returns.
	closeOnce sync.Once
	closing   chan struct{}
	stopped   chan struct{}
	serveErr  error // set before stopped is closed

	mu         sync.RWMutex
	serving    bool
	closed     bool
	addr       net.Addr
	connCtx    context.Context // parent of every connection's context
	conns      sync.WaitGroup  // connection handlers; Add only under mu while !closed
	channels   map[ChannelID]*channelJSON
	latched    map[ChannelID]*retained // the last message of each latched channel
	lastID     ChannelID
	clients    map[*client]struct{}
	lastClient uint64

	dropped atomic.Uint64 // messages dropped over the server's life

	subMu      sync.Mutex
	subChanged chan struct{} // closed and replaced when subscriptions change
}

// NewServer returns a server configured by opts (nil means all defaults).
// It does not listen yet: call Start, ListenAndServe or Serve.
func NewServer(opts *Options) (*Server, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	caps := o.Capabilities
	if caps == nil {
		caps = []string{}
	}
	s := &Server{
		opts:    o,
		log:     o.Logger,
		hasTime: slices.Contains(o.Capabilities, CapabilityTime),
		infoJSON: mustJSON(serverInfoMsg{
			Op: "serverInfo", Name: o.Name, Capabilities: caps,
			Metadata: o.Metadata, SessionID: o.SessionID,
		}),
		closing:    make(chan struct{}),
		stopped:    make(chan struct{}),
		channels:   make(map[ChannelID]*channelJSON),
		latched:    make(map[ChannelID]*retained),
		clients:    make(map[*client]struct{}),
		subChanged: make(chan struct{}),
	}
	return s, nil
}

// Addr returns the address the server listens on, or nil before it has
// started.
func (s *Server) Addr() net.Addr {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.addr
}

// Start listens on Options.Addr and serves in the background until ctx is
// cancelled or Close is called. It returns the address listened on (useful
// with port 0). Close waits for the server to stop and returns the error it
// stopped with.
func (s *Server) Start(ctx context.Context) (net.Addr, error) {
	ln, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	started := make(chan error, 1)
	go func() {
		_ = s.serve(ctx, ln, started)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return ln.Addr(), nil
}

// ListenAndServe listens on Options.Addr and serves until ctx is cancelled
// or Close is called. It returns nil after a clean stop.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := s.listen(ctx)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

func (s *Server) listen(ctx context.Context) (net.Listener, error) {
	s.mu.RLock()
	closed := s.closed || s.serving
	s.mu.RUnlock()
	if closed {
		return nil, ErrServerClosed
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("foxglove: listen: %w", err)
	}
	return ln, nil
}

// Serve accepts connections on ln until ctx is cancelled or Close is called,
// then closes ln, disconnects every client and waits for all of its
// goroutines before returning nil. It returns ErrServerClosed if the server
// has already served or been closed, and the listener's error if accepting
// fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.serve(ctx, ln, nil)
}

func (s *Server) serve(ctx context.Context, ln net.Listener, started chan<- error) error {
	s.mu.Lock()
	if s.closed || s.serving {
		s.mu.Unlock()
		ln.Close()
		if started != nil {
			started <- ErrServerClosed
		}
		return ErrServerClosed
	}
	s.serving = true
	s.addr = ln.Addr()
	connCtx, cancelConns := context.WithCancel(ctx)
	defer cancelConns()
	s.connCtx = connCtx
	s.mu.Unlock()
	if started != nil {
		started <- nil
	}
	s.log.Info("foxglove: serving", "addr", ln.Addr().String(), "name", s.opts.Name)

	hs := &http.Server{
		Handler:           http.HandlerFunc(s.handle),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	var err error
	select {
	case <-ctx.Done():
		hs.Close()
		err = <-errc
	case <-s.closing:
		hs.Close()
		err = <-errc
	case err = <-errc:
		hs.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	} else if err != nil {
		err = fmt.Errorf("foxglove: serve: %w", err)
	}

	// No handler may start after this; those running are told to stop.
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	cancelConns()
	s.conns.Wait()
	s.log.Info("foxglove: stopped", "addr", ln.Addr().String())

	s.serveErr = err
	close(s.stopped)
	return err
}

// Close stops the server: it stops accepting connections, disconnects every
// client (sending each a close frame when it can) and waits for every
// goroutine of the server to finish. It returns the error serving stopped
// with, if any. Close may be called more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { close(s.closing) })
	s.mu.Lock()
	serving := s.serving
	s.closed = true
	s.mu.Unlock()
	if !serving {
		return nil
	}
	<-s.stopped
	return s.serveErr
}

// Stats is a snapshot of a server's traffic.
type Stats struct {
	// Clients lists the connected clients in the order they connected.
	Clients []ClientStats
	// Dropped counts the messages dropped over the server's life, for all
	// clients, including those that have since disconnected.
	Dropped uint64
}

// ClientStats describes one connected client.
type ClientStats struct {
	// ID numbers clients in the order they connected, from 1.
	ID uint64
	// RemoteAddr is the client's network address.
	RemoteAddr string
	// Subscriptions is the number of the client's active subscriptions.
	Subscriptions int
	// Queued and QueuedBytes measure what waits in the client's send queue.
	Queued, QueuedBytes int
	// Sent counts the WebSocket messages written to the client.
	Sent uint64
	// Dropped counts the messages dropped for the client because its queue
	// was full.
	Dropped uint64
}

// Stats returns a snapshot of the server's clients and drop counts.
func (s *Server) Stats() Stats {
	s.mu.RLock()
	st := Stats{Dropped: s.dropped.Load(), Clients: make([]ClientStats, 0, len(s.clients))}
	for c := range s.clients {
		st.Clients = append(st.Clients, c.stats())
	}
	s.mu.RUnlock()
	slices.SortFunc(st.Clients, func(a, b ClientStats) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return st
}

// subSignal returns a channel that is closed at the next change of any
// client's subscriptions.
func (s *Server) subSignal() <-chan struct{} {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return s.subChanged
}

func (s *Server) notifySubscriptions() {
	s.subMu.Lock()
	close(s.subChanged)
	s.subChanged = make(chan struct{})
	s.subMu.Unlock()
}

// Subscribers returns the number of clients subscribed to channel id.
// A publisher may use it to skip encoding messages nobody receives.
func (s *Server) Subscribers(id ChannelID) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for c := range s.clients {
		if c.subscribed(id) {
			n++
		}
	}
	return n
}

// WaitSubscribed blocks until at least one client is subscribed to channel
// id, or ctx is done, in which case it returns an error wrapping ctx.Err().
func (s *Server) WaitSubscribed(ctx context.Context, id ChannelID) error {
	for {
		changed := s.subSignal()
		if s.Subscribers(id) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("foxglove: waiting for a subscriber to channel %d: %w", id, ctx.Err())
		case <-changed:
		}
	}
}
