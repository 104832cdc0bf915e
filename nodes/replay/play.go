package replay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// PlayOptions configures Play.
type PlayOptions struct {
	// Topics restricts Play to these topics (all when empty).
	Topics []string
	// Speed is the playback rate (0 means 1, real time).
	Speed float64
	// Now is the wall clock in nanoseconds (default time.Now).
	Now func() int64
}

func (o *PlayOptions) defaults() {
	if o.Speed <= 0 {
		o.Speed = 1
	}
	if o.Now == nil {
		o.Now = func() int64 { return time.Now().UnixNano() }
	}
}

// Play hands the messages of a log to deliver in real time, as a live
// robot would publish them, on a playback clock that starts now and runs
// at Speed times the log's: each message is delivered when its log time,
// mapped to that clock, comes round, and the header stamp of every message
// whose type starts with a std_msgs/Header (CDR or ROS 1) is mapped to the
// same clock, so that a live node sees fresh stamps that never run ahead
// of the clock it receives them on, whatever the speed. Playing the log
// again (a loop) starts a new playback clock at the end of the last, so
// the stamps keep increasing. It returns at the end of the log (nil) or
// when ctx is done (ctx's error). A log that ends early or is damaged is
// played up to the damage; Play then returns an error that says how many
// messages it delivered and wraps the reader's (one wrapping
// logio.ErrTruncated for a recording cut off).
func Play(ctx context.Context, r logio.MessageReader, deliver func(topic string, data []byte), o PlayOptions) error {
	o.defaults()
	want := map[string]bool{}
	for _, t := range o.Topics {
		want[t] = true
	}
	stamped := map[*logio.Channel]headerKind{}
	known := map[*logio.Channel]bool{}
	var first, last, start int64
	started := false
	n := 0
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("replay: play: %w", damaged(err, "played", n, first, last))
		}
		if len(want) > 0 && !want[m.Channel.Topic] {
			continue
		}
		if !known[m.Channel] {
			known[m.Channel] = true
			stamped[m.Channel] = headerOf(m.Channel)
		}
		t := int64(m.LogTime)
		if !started {
			started, first, start = true, t, o.Now()
		}
		clock := func(logTime int64) int64 { return start + int64(float64(logTime-first)/o.Speed) }
		if err := sleepCtx(ctx, time.Duration(clock(t)-o.Now())); err != nil {
			return err
		}
		buf = append(buf[:0], m.Data...)
		restamp(buf, stamped[m.Channel], clock)
		deliver(m.Channel.Topic, buf)
		n++
		last = t
	}
}

// headerKind says where a channel's messages carry a std_msgs/Header
// stamp.
type headerKind uint8

const (
	noHeader   headerKind = iota
	cdrHeader             // CDR: sec, nanosec after the 4-byte encapsulation
	ros1Header            // ROS 1: seq, then sec, nsec (little-endian)
)

// headerOf reports whether the channel's messages start with a
// std_msgs/Header, and in which encoding.
func headerOf(ch *logio.Channel) headerKind {
	var kind headerKind
	switch ch.Encoding {
	case rosmsg.MessageEncodingCDR:
		kind = cdrHeader
	case rosmsg.MessageEncodingROS1:
		kind = ros1Header
	default:
		return noHeader
	}
	d, err := rosmsg.DialectFor(ch.SchemaEncoding)
	if err != nil {
		return noHeader
	}
	s, err := rosmsg.ParseSchema(ch.Type, d, ch.Schema)
	if err != nil || len(s.Root.Fields) == 0 {
		return noHeader
	}
	f := s.Root.Fields[0]
	if f.Msg != nil && f.Array == rosmsg.NotArray && rosmsg.NormalizeType(f.Msg.Name) == "std_msgs/Header" {
		return kind
	}
	return noHeader
}

// restamp maps the header stamp at the start of a message through clock;
// a message too short to hold one is left as it is (the node rejects it).
func restamp(data []byte, kind headerKind, clock func(int64) int64) {
	var bo binary.ByteOrder = binary.LittleEndian
	off := 0
	switch kind {
	case cdrHeader:
		if len(data) < 12 {
			return
		}
		if data[1]&1 == 0 {
			bo = binary.BigEndian
		}
		off = 4
	case ros1Header:
		if len(data) < 12 {
			return
		}
		off = 4
	default:
		return
	}
	ts := msgs.Time{Sec: int32(bo.Uint32(data[off:])), Nanosec: bo.Uint32(data[off+4:])}
	ts = msgs.TimeFromNanos(clock(ts.Nanos()))
	bo.PutUint32(data[off:], uint32(ts.Sec))
	bo.PutUint32(data[off+4:], ts.Nanosec)
}
