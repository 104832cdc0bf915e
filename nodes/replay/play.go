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
// robot would publish them: each message is delivered when its log time,
// shifted to start now, comes round, and the header stamp of every CDR
// message whose type starts with a std_msgs/Header is shifted by the same
// amount, so that a live node sees fresh stamps. It returns at the end of
// the log (nil) or when ctx is done (ctx's error). A log that ends early or
// is damaged is played up to the damage; Play then returns an error that
// says how many messages it delivered and wraps the reader's (one wrapping
// logio.ErrTruncated for a recording cut off).
func Play(ctx context.Context, r logio.MessageReader, deliver func(topic string, data []byte), o PlayOptions) error {
	o.defaults()
	want := map[string]bool{}
	for _, t := range o.Topics {
		want[t] = true
	}
	stamped := map[*logio.Channel]bool{}
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
			stamped[m.Channel] = startsWithHeader(m.Channel)
		}
		t := int64(m.LogTime)
		if !started {
			started, first, start = true, t, o.Now()
		}
		due := start + int64(float64(t-first)/o.Speed)
		if err := sleepCtx(ctx, time.Duration(due-o.Now())); err != nil {
			return err
		}
		buf = append(buf[:0], m.Data...)
		if stamped[m.Channel] {
			shiftStamp(buf, start-first)
		}
		deliver(m.Channel.Topic, buf)
		n++
		last = t
	}
}

// startsWithHeader reports whether the channel's CDR messages start with a
// std_msgs/Header.
func startsWithHeader(ch *logio.Channel) bool {
	if ch.Encoding != rosmsg.MessageEncodingCDR {
		return false
	}
	d, err := rosmsg.DialectFor(ch.SchemaEncoding)
	if err != nil {
		return false
	}
	s, err := rosmsg.ParseSchema(ch.Type, d, ch.Schema)
	if err != nil || len(s.Root.Fields) == 0 {
		return false
	}
	f := s.Root.Fields[0]
	return f.Msg != nil && f.Array == rosmsg.NotArray && rosmsg.NormalizeType(f.Msg.Name) == "std_msgs/Header"
}

// shiftStamp adds d nanoseconds to the header stamp at the start of a CDR
// message (sec and nanosec right after the 4-byte encapsulation).
func shiftStamp(data []byte, d int64) {
	if len(data) < 12 {
		return
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if data[1]&1 == 0 {
		bo = binary.BigEndian
	}
	ts := msgs.Time{Sec: int32(bo.Uint32(data[4:])), Nanosec: bo.Uint32(data[8:])}
	ts = msgs.TimeFromNanos(ts.Nanos() + d)
	bo.PutUint32(data[4:], uint32(ts.Sec))
	bo.PutUint32(data[8:], ts.Nanosec)
}
