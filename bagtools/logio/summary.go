package logio

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
)

// TopicInfo summarizes the messages of one topic of a log.
type TopicInfo struct {
	// Topic is the topic name.
	Topic string
	// Type is the message type of the topic's first channel.
	Type string
	// Encoding is the message encoding of the topic's first channel.
	Encoding string
	// Count is the number of messages.
	Count uint64
	// First and Last are the earliest and latest log times, in nanoseconds
	// since the Unix epoch (0 when Count is 0).
	First, Last uint64
	// RateHz is the mean message rate, (Count-1)/(Last-First) in hertz;
	// 0 with fewer than two messages or a zero time span.
	RateHz float64
}

// Duration returns Last-First in seconds.
func (t TopicInfo) Duration() float64 { return float64(t.Last-t.First) / 1e9 }

// Summarize reads the whole message log at path (see Open; opts may be nil
// for the defaults) and summarizes each topic, sorted by topic name. Topics
// whose channels are declared but carry no message are listed with Count 0.
// Where the log is truncated it returns the summary of the messages before
// the damage together with the error (wrapping ErrTruncated).
func Summarize(path string, opts *ReaderOptions) ([]TopicInfo, error) {
	r, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	infos, err := SummarizeReader(r)
	if cerr := r.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("logio: close %s: %w", path, cerr)
	}
	return infos, err
}

// SummarizeReader reads r to its end and summarizes each topic, like
// Summarize. It does not close r.
func SummarizeReader(r MessageReader) ([]TopicInfo, error) {
	byTopic := make(map[string]*TopicInfo)
	info := func(c *Channel) *TopicInfo {
		t := byTopic[c.Topic]
		if t == nil {
			t = &TopicInfo{Topic: c.Topic, Type: c.Type, Encoding: c.Encoding}
			byTopic[c.Topic] = t
		}
		return t
	}
	var readErr error
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		t := info(m.Channel)
		if t.Count == 0 || m.LogTime < t.First {
			t.First = m.LogTime
		}
		if t.Count == 0 || m.LogTime > t.Last {
			t.Last = m.LogTime
		}
		t.Count++
	}
	for _, c := range r.Channels() {
		info(c)
	}
	out := make([]TopicInfo, 0, len(byTopic))
	for _, t := range byTopic {
		if t.Count > 1 && t.Last > t.First {
			t.RateHz = float64(t.Count-1) / t.Duration()
		}
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b TopicInfo) int { return cmp.Compare(a.Topic, b.Topic) })
	return out, readErr
}
