package logio

import (
	"bytes"
	"errors"
	"testing"
)

// TestMessages ranges over MCAP files written by ROS2Writer with Messages
// and checks what it yields against what was written and against draining
// the reader with Next: every message with a nil error, nothing at io.EOF,
// one error with a nil message at the end of a truncated file, and a reader
// left where a loop that breaks stopped.
func TestMessages(t *testing.T) {
	const n = 40
	full, wrote := testROS2(t, n, &ROS2WriterOptions{Compression: "none", ChunkSize: 1024})
	empty, _ := testROS2(t, 0, &ROS2WriterOptions{Compression: "none"})
	tests := []struct {
		name    string
		data    []byte
		stop    int   // break out of the loop after this many messages (0: never)
		min     int   // at least this many messages
		max     int   // at most this many messages
		wantErr error // the error yielded last (nil: none)
		exact   bool  // the messages must be exactly those written
	}{
		{name: "complete", data: full, min: n, max: n, exact: true},
		{name: "empty", data: empty, min: 0, max: 0},
		{name: "break", data: full, stop: 7, min: 7, max: 7},
		{name: "truncated", data: full[:len(full)/2], min: 1, max: n - 1, wantErr: ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The reference: the same file drained with Next.
			ref, err := NewMCAPReader(bytes.NewReader(tt.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			want, wantEnd := drain(t, ref)
			if tt.stop > 0 {
				want = want[:tt.stop]
			}
			if !errors.Is(wantEnd, tt.wantErr) || (tt.wantErr == nil && wantEnd != nil) {
				t.Fatalf("Next ends with %v, want %v", wantEnd, tt.wantErr)
			}

			r, err := NewMCAPReader(bytes.NewReader(tt.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var msgs []got
			var errs []error
			for m, err := range Messages(r) {
				if len(errs) > 0 {
					t.Fatalf("(%v, %v) yielded after the error %v", m, err, errs[0])
				}
				if err != nil {
					if m != nil {
						t.Errorf("error %v yielded with a message", err)
					}
					errs = append(errs, err)
					continue // the iteration must end here
				}
				msgs = append(msgs, got{m.Channel.ID, m.Channel.Topic, m.LogTime, bytes.Clone(m.Data)})
				if len(msgs) == tt.stop {
					break
				}
			}
			if len(msgs) < tt.min || len(msgs) > tt.max {
				t.Fatalf("%d messages, want %d to %d", len(msgs), tt.min, tt.max)
			}
			sameMessages(t, msgs, want)
			if tt.exact {
				for i, m := range msgs {
					w := wrote[i]
					if m.topic != w.topic || m.time != w.logTime || !bytes.Equal(m.data, w.data) {
						t.Fatalf("message %d = {%s %d %x}, written {%s %d %x}", i, m.topic, m.time, m.data, w.topic, w.logTime, w.data)
					}
				}
			}
			switch {
			case tt.wantErr == nil && len(errs) > 0:
				t.Fatalf("yielded errors %v, want none", errs)
			case tt.wantErr != nil && len(errs) != 1:
				t.Fatalf("yielded %d errors %v, want one wrapping %v", len(errs), errs, tt.wantErr)
			case tt.wantErr != nil && !errors.Is(errs[0], tt.wantErr):
				t.Fatalf("yielded error %v, want one wrapping %v", errs[0], tt.wantErr)
			}
			if tt.stop > 0 {
				// Breaking out leaves the reader at the next message.
				m, err := r.Next()
				if err != nil {
					t.Fatalf("Next after the loop: %v", err)
				}
				if m.LogTime != wrote[tt.stop].logTime {
					t.Errorf("Next after the loop: log time %d, want message %d's %d", m.LogTime, tt.stop, wrote[tt.stop].logTime)
				}
			}
		})
	}
}
