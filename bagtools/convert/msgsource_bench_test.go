package convert

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/calisym/calisym/statemap"

	"github.com/calisym/calisym/bagtools/logio"
	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/msgs/rosmsg"
)

// benchJoints is the number of joints in the benchmark's JointState
// messages (about 8 KB each, a large robot's joint state).
const benchJoints = 200

// writeBenchLog writes /joint_states at 1 kHz with benchJoints joints until
// the file holds at least size bytes, and returns the file size and the
// number of messages.
func writeBenchLog(b *testing.B, path string, size int64, compression string) (int64, int) {
	b.Helper()
	w, err := logio.CreateROS2(path, &logio.ROS2WriterOptions{Compression: compression})
	if err != nil {
		b.Fatal(err)
	}
	js := &msgs.JointState{Name: make([]string, benchJoints), Position: make([]float64, benchJoints),
		Velocity: make([]float64, benchJoints), Effort: make([]float64, benchJoints)}
	for j := range js.Name {
		js.Name[j] = fmt.Sprintf("joint_%03d", j)
	}
	if err := w.AddTypedTopic("/joint_states", js, nil); err != nil {
		b.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		if n%4096 == 0 {
			if st, err := os.Stat(path); err == nil && st.Size() >= size {
				break
			}
		}
		tk := float64(n) / 1000
		for j := range benchJoints {
			s, c := math.Sincos(tk*(1+0.01*float64(j)) + float64(j))
			js.Position[j], js.Velocity[j], js.Effort[j] = s, c, s*c
		}
		ns := logStart + uint64(n)*1_000_000
		js.Header.Stamp = msgs.TimeFromNanos(int64(ns))
		if err := w.WriteMessage("/joint_states", ns, ns, js); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size(), n
}

// heapPeak samples HeapInuse every few milliseconds until stopped.
type heapPeak struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func startHeapPeak() *heapPeak {
	h := &heapPeak{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			h.peak = max(h.peak, ms.HeapInuse)
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

// Stop ends the sampling and returns the peak in bytes.
func (h *heapPeak) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak
}

// benchSpec converts the benchmark logs: two joints' positions and
// velocities and their efforts (six message paths by joint name), the
// pendulum model, windows of 100 every 10 samples at 1 kHz.
func benchSpec(path string) *Spec {
	js := func(f, j string) statemap.Channel {
		return statemap.Channel{Name: rosmsg.JointPath("/joint_states", f, j)}
	}
	s := &Spec{
		Robot:  "bench",
		Inputs: []string{path},
		Spec: statemap.Spec{
			State: statemap.StateSpec{Kind: statemap.StateJoints, Joints: []statemap.JointSpec{
				{Name: "a", Position: js("position", "joint_007"), Velocity: js("velocity", "joint_007")},
				{Name: "b", Position: js("position", "joint_150"), Velocity: js("velocity", "joint_150")},
			}},
			Model:   statemap.ModelSpec{Kind: statemap.ModelDoublePendulum, Pendulum: statemap.PendulumSpec{Params: synthParams}},
			Control: statemap.ControlSpec{Kind: statemap.ControlDirect, PortSpec: statemap.PortSpec{Channels: []statemap.Channel{js("effort", "joint_007"), js("effort", "joint_150")}}},
		},
		Resample: ResampleSpec{Rate: 1000},
		Window:   WindowSpec{Length: 100, Stride: 10},
		Validate: ValidateSpec{MaxGap: 0.05},
	}
	s.Defaults()
	return s
}

// BenchmarkConvertMCAP reads generated MCAP logs of JointState messages
// (benchJoints joints at 1 kHz, about 8 KB a message) at two lengths, and
// with zstd chunks, in two stages:
//
//   - read: MessageSource.Read of the six message paths of benchSpec, the
//     streaming stage. Besides the extracted series (8 bytes per message
//     per path and per time; series-MB counts their capacity), its heap
//     holds a chunk and the decoder's state, whatever the log's length:
//     overhead-MB = peak-heap-MB − series-MB.
//   - convert: Convert with benchSpec, log to training windows through the
//     default opener. Alignment, momenta, window bookkeeping and the
//     dataset take a fixed amount per sample at the dataset rate, so its
//     peak grows with the number of samples, not with the log's bytes.
//
// It reports the throughput over the file size (MB/s; the file was just
// written, so it is read from the page cache) and the peak heap in use
// above the heap before the stage (HeapInuse sampled every 5 ms).
//
//	go test -run '^$' -bench ConvertMCAP -benchtime 1x ./bagtools/convert
func BenchmarkConvertMCAP(b *testing.B) {
	for _, tc := range []struct {
		mb          int64
		compression string
	}{{100, "none"}, {500, "none"}, {100, "zstd"}, {500, "zstd"}} {
		b.Run(fmt.Sprintf("%s/%dMB", tc.compression, tc.mb), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.mcap")
			size, n := writeBenchLog(b, path, tc.mb<<20, tc.compression)
			spec := benchSpec(path)
			measure := func(b *testing.B, run func() float64) {
				runtime.GC()
				var base runtime.MemStats
				runtime.ReadMemStats(&base)
				var peak uint64
				var series float64
				for b.Loop() {
					h := startHeapPeak()
					series = run()
					peak = max(peak, h.Stop())
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				peakMB := float64(peak-min(peak, base.HeapInuse)) / 1e6
				b.ReportMetric(float64(size)/1e6/sec, "MB/s")
				b.ReportMetric(float64(size)/1e6, "file-MB")
				b.ReportMetric(float64(n), "msgs")
				b.ReportMetric(peakMB, "peak-heap-MB")
				if series > 0 {
					b.ReportMetric(series, "series-MB")
					b.ReportMetric(peakMB-series, "overhead-MB")
				}
			}
			b.Run("read", func(b *testing.B) {
				measure(b, func() float64 {
					src, err := OpenMessageLog(path, MessageLogOptions{Paths: spec.ChannelNames()})
					if err != nil {
						b.Fatal(err)
					}
					ss, err := src.Read(spec.ChannelNames())
					if err != nil {
						b.Fatal(err)
					}
					bytes := 8 * cap(ss[0].Time)
					for _, s := range ss {
						bytes += 8 * cap(s.Values)
					}
					if len(ss[0].Time) != n {
						b.Fatalf("%d samples of %d messages", len(ss[0].Time), n)
					}
					return float64(bytes) / 1e6
				})
			})
			b.Run("convert", func(b *testing.B) {
				measure(b, func() float64 {
					res, err := Convert(context.Background(), spec, Options{})
					if err != nil {
						b.Fatal(err)
					}
					if w := res.Report.Windows.Kept; w != (n-100)/10+1 {
						b.Fatalf("%d windows from %d messages", w, n)
					}
					return 0
				})
			})
		})
	}
}
