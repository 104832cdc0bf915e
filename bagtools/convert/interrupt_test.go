package convert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// cancelAfterRead is a source that cancels a context once its channels
// are read: an interrupt that comes after the inputs are read, while
// they are windowed. The conversion asks for its warnings once it has
// windowed it (processed is then set).
type cancelAfterRead struct {
	Source
	cancel    context.CancelFunc
	processed *bool
}

func (s cancelAfterRead) Warnings() []string {
	*s.processed = true
	return nil
}

func (s cancelAfterRead) Read(names []string) ([]Series, error) {
	series, err := s.Source.Read(names)
	s.cancel()
	return series, err
}

// TestConvertInterrupted: an interrupt after the inputs are read stops
// the processing (alignment, mapping, windowing) with context.Canceled,
// and one before the writing stops Save before any split or report is
// written (issue 49, item 6: the windowing and writing took no context).
func TestConvertInterrupted(t *testing.T) {
	dir := t.TempDir()
	p := writeSynthCSV(t, dir, "run.csv", 4001, 200, nil)
	t.Run("windowing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var processed bool
		opts := Options{Workers: 1, Open: func(path string, spec *Spec) (Source, error) {
			src, err := OpenSource(path, spec)
			if err != nil {
				return nil, err
			}
			return cancelAfterRead{src, cancel, &processed}, nil
		}}
		res, err := Convert(ctx, synthSpec(p), opts)
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("interrupted once read: result %v, error %v; want context.Canceled", res != nil, err)
		}
		if processed {
			t.Error("the file was windowed to its end after the interrupt")
		}
	})
	t.Run("writing", func(t *testing.T) {
		res, err := Convert(context.Background(), synthSpec(p), Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := res.Save(ctx, out); !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted Save: error %v, want context.Canceled", err)
		}
		if es, _ := os.ReadDir(out); len(es) != 0 {
			t.Errorf("an interrupted Save wrote %d files or folders", len(es))
		}
	})
}
