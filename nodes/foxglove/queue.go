package foxglove

import "sync"

// frameKind says how the writer turns a queued frame into a WebSocket message.
type frameKind uint8

const (
	// frameText is a pre-encoded JSON message (serverInfo, advertise,
	// unadvertise, status). Text frames are never dropped.
	frameText frameKind = iota
	// frameMessage is a message data frame for one subscription.
	frameMessage
	// frameTime is a time frame.
	frameTime
)

// frame is one message waiting in a client's send queue. data is shared
// between clients and never modified after it is queued.
type frame struct {
	kind        frameKind
	subID       uint32
	timestampNs uint64
	data        []byte
}

// size is the number of bytes the frame occupies on the wire, roughly.
func (f *frame) size() int {
	switch f.kind {
	case frameMessage:
		return messageDataHeaderLen + len(f.data)
	case frameTime:
		return 9
	}
	return len(f.data)
}

// controlHeadroom is how many text frames a queue accepts beyond its limit on
// data frames before the client is considered hopeless and disconnected.
const controlHeadroom = 1024

// sendQueue is a client's bounded queue of outgoing frames. Producers never
// block: data frames that do not fit are dropped and counted; text frames are
// always queued unless the client has fallen so far behind that even they
// overflow, in which case push reports it and the client is disconnected.
type sendQueue struct {
	maxFrames int
	maxBytes  int
	notify    chan struct{} // capacity 1: "frames are waiting"

	mu      sync.Mutex
	frames  []frame
	bytes   int
	dropped uint64
}

func newSendQueue(maxFrames, maxBytes int) *sendQueue {
	return &sendQueue{maxFrames: maxFrames, maxBytes: maxBytes, notify: make(chan struct{}, 1)}
}

// pushData queues a droppable frame (message data or time). It reports
// whether the frame was queued; when it was not, the drop has been counted.
func (q *sendQueue) pushData(f frame) bool {
	n := f.size()
	q.mu.Lock()
	if len(q.frames) >= q.maxFrames || (len(q.frames) > 0 && q.bytes+n > q.maxBytes) {
		q.dropped++
		q.mu.Unlock()
		return false
	}
	q.frames = append(q.frames, f)
	q.bytes += n
	q.mu.Unlock()
	q.wake()
	return true
}

// pushText queues a text frame. It reports false when the queue is hopelessly
// full; the caller must then disconnect the client.
func (q *sendQueue) pushText(data []byte) bool {
	f := frame{kind: frameText, data: data}
	q.mu.Lock()
	if len(q.frames) >= q.maxFrames+controlHeadroom {
		q.mu.Unlock()
		return false
	}
	q.frames = append(q.frames, f)
	q.bytes += f.size()
	q.mu.Unlock()
	q.wake()
	return true
}

func (q *sendQueue) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// take moves every queued frame into dst (which it truncates first) and
// returns it, leaving the queue empty.
func (q *sendQueue) take(dst []frame) []frame {
	q.mu.Lock()
	dst, q.frames = q.frames, dst[:0]
	q.bytes = 0
	q.mu.Unlock()
	return dst
}

// stats returns the number of frames and bytes waiting and the number of
// frames dropped so far.
func (q *sendQueue) stats() (frames, bytes int, dropped uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames), q.bytes, q.dropped
}
