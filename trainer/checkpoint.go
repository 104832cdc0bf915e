package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/internal/atomicfile"
)

// checkpointMagic starts every checkpoint file; the version follows it.
const checkpointMagic = "CALISYM-CKPT-1\n"

// ErrCheckpoint wraps every problem found in a checkpoint file.
var ErrCheckpoint = errors.New("trainer: bad checkpoint")

// Checkpoint is the state of a training run after Epoch epochs and, for a
// run interrupted within an epoch, Part.Batches batches of the next.
type Checkpoint struct {
	Epoch int
	// Part is what the epoch after Epoch had done when the run was
	// interrupted within it (zero: the run stopped between epochs).
	Part    EpochPart
	Model   string
	Theta   []float64
	Optim   OptimState
	History History
	// Data identifies the training data of the run (zero in checkpoints
	// written before it was recorded, which resume unchecked).
	Data DataFingerprint
	// Settings are the run's training settings (Config.settings, joined
	// by "; "; "" in checkpoints written before they were recorded, which
	// resume unchecked). A resume with other settings is an error; the
	// workers, the processes, the checkpointing and, under the constant
	// schedule, the number of epochs may change.
	Settings string
}

// EpochPart is the record of the batches an interrupted epoch did, from
// which a resumed run completes the epoch as an uninterrupted one: the
// number of batches (passed over on resuming, in the epoch's order) and
// the sums of their losses, weights, gradient norms and transitions, and
// their time [s].
type EpochPart struct {
	Batches                 int
	SumLoss, SumW, GradNorm float64
	Transitions             int
	Seconds                 float64
}

// DataFingerprint identifies a training dataset: its layout, names,
// sampling, windows, and a SHA-256 of its episodes' states and ports. A
// checkpoint records it, and resuming on other data is an error.
type DataFingerprint struct {
	N, NU, NC          int
	Coordinates, Ports []string
	Dt                 float64
	WindowLen, Stride  int
	Episodes, Samples  int
	// SHA256 hashes every episode's length, states and ports, in order
	// (hex).
	SHA256 string
}

// Fingerprint returns the fingerprint of a training dataset. A dataset
// whose arrays are on disk (dataset.Open) is read episode by episode; the
// error reports a failed read.
func Fingerprint(ds *dataset.Dataset) (DataFingerprint, error) {
	f := DataFingerprint{N: ds.N, NU: ds.NU, NC: ds.NC, Coordinates: slices.Clone(ds.Coordinates), Ports: slices.Clone(ds.Ports),
		Dt: ds.Dt, WindowLen: ds.WindowLen, Stride: ds.Stride, Episodes: len(ds.Episodes)}
	h := sha256.New()
	var buf []byte
	sc := &scanner{ds: ds}
	for i, ep := range ds.Episodes {
		f.Samples += ep.Len
		h.Write(binary.LittleEndian.AppendUint64(buf[:0], uint64(ep.Len)))
		// the states, then the ports (two reads of an episode on disk)
		for k := range 2 {
			err := sc.episode(i, func(x, e []float64) {
				for _, v := range [][]float64{x, e}[k] {
					buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
				}
				h.Write(buf)
				buf = buf[:0]
			})
			if err != nil {
				return f, err
			}
		}
	}
	f.SHA256 = hex.EncodeToString(h.Sum(nil))
	return f, nil
}

// String describes the data for a user.
func (f DataFingerprint) String() string {
	return fmt.Sprintf("n=%d, n_u=%d, n_c=%d, coordinates %v, ports %v, dt %g s, %d episodes of %d samples in all, windows of %d samples at stride %d, sha256 %s…",
		f.N, f.NU, f.NC, f.Coordinates, f.Ports, f.Dt, f.Episodes, f.Samples, f.WindowLen, f.Stride, f.SHA256[:min(16, len(f.SHA256))])
}

// differences lists what differs between two fingerprints ("" when
// nothing does).
func (f DataFingerprint) differences(g DataFingerprint) string {
	var d []string
	if f.N != g.N || f.NU != g.NU || f.NC != g.NC {
		d = append(d, fmt.Sprintf("layout n=%d, n_u=%d, n_c=%d against n=%d, n_u=%d, n_c=%d", f.N, f.NU, f.NC, g.N, g.NU, g.NC))
	}
	if !slices.Equal(f.Coordinates, g.Coordinates) {
		d = append(d, fmt.Sprintf("coordinates %v against %v", f.Coordinates, g.Coordinates))
	}
	if !slices.Equal(f.Ports, g.Ports) {
		d = append(d, fmt.Sprintf("ports %v against %v", f.Ports, g.Ports))
	}
	if f.Dt != g.Dt {
		d = append(d, fmt.Sprintf("dt %g s against %g s", f.Dt, g.Dt))
	}
	if f.WindowLen != g.WindowLen || f.Stride != g.Stride {
		d = append(d, fmt.Sprintf("windows of %d samples at stride %d against %d at stride %d", f.WindowLen, f.Stride, g.WindowLen, g.Stride))
	}
	if f.Episodes != g.Episodes || f.Samples != g.Samples {
		d = append(d, fmt.Sprintf("%d episodes of %d samples in all against %d of %d", f.Episodes, f.Samples, g.Episodes, g.Samples))
	}
	if len(d) == 0 && f.SHA256 != g.SHA256 {
		d = append(d, fmt.Sprintf("the same shape but other values (sha256 %s… against %s…)", f.SHA256[:min(16, len(f.SHA256))], g.SHA256[:min(16, len(g.SHA256))]))
	}
	return strings.Join(d, "; ")
}

// restore loads the checkpoint read from path into the learner and the
// optimiser, after checking that it was written training the same model
// on the same data (fp).
func (ck *Checkpoint) restore(path string, epochs int, l Learner, opt optimizer, fp DataFingerprint, settings []string) error {
	if ck.Model != l.Name() || len(ck.Theta) != l.NumParams() {
		return fmt.Errorf("%w: checkpoint %s holds %s with %d parameters, training %s with %d", ErrCheckpoint, path, ck.Model, len(ck.Theta), l.Name(), l.NumParams())
	}
	if ck.Settings != "" && ck.Settings != joinSettings(settings) {
		return fmt.Errorf("%w: checkpoint %s was written with other training settings than this run's (%s): resume with the settings of the run that wrote it, or remove the checkpoint to start afresh",
			ErrCheckpoint, path, settingsDiff(ck.Settings, settings))
	}
	if ck.Epoch > epochs {
		return fmt.Errorf("%w: checkpoint %s holds %d epochs, more than this run's %d: resume with at least --epochs %d, or remove the checkpoint to start afresh",
			ErrCheckpoint, path, ck.Epoch, epochs, ck.Epoch)
	}
	if ck.Data.SHA256 != "" {
		if d := ck.Data.differences(fp); d != "" {
			return fmt.Errorf("%w: checkpoint %s was written training on other data than this run's (%s): resume with the training data of the run that wrote it, or remove the checkpoint to start afresh",
				ErrCheckpoint, path, d)
		}
	}
	if err := opt.setParams(ck.Theta); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := opt.setState(ck.Optim); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return nil
}

func saveCheckpoint(path string, epoch int, part EpochPart, l Learner, opt optimizer, h *History, fp DataFingerprint, settings string) error {
	ck := Checkpoint{Epoch: epoch, Part: part, Model: l.Name(), Theta: l.Params(), Optim: opt.state(), History: *h, Data: fp, Settings: settings}
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(&ck); err != nil {
		return fmt.Errorf("trainer: encoding checkpoint: %w", err)
	}
	var out bytes.Buffer
	out.WriteString(checkpointMagic)
	fmt.Fprintf(&out, "%08x\n", crc32.ChecksumIEEE(body.Bytes()))
	out.Write(body.Bytes())
	if err := atomicfile.WriteFile(path, out.Bytes()); err != nil {
		return fmt.Errorf("trainer: writing checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint reads a checkpoint, verifying its magic and checksum. A
// missing file returns an error wrapping fs.ErrNotExist.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("trainer: %w", err)
	}
	hdr := len(checkpointMagic) + 9
	if len(raw) < hdr || string(raw[:len(checkpointMagic)]) != checkpointMagic {
		return nil, fmt.Errorf("%w: %s is not a calisym checkpoint (or is truncated)", ErrCheckpoint, path)
	}
	var sum uint32
	if _, err := fmt.Sscanf(string(raw[len(checkpointMagic):hdr]), "%08x\n", &sum); err != nil {
		return nil, fmt.Errorf("%w: %s: unreadable checksum", ErrCheckpoint, path)
	}
	body := raw[hdr:]
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("%w: %s: checksum mismatch (file corrupt or truncated)", ErrCheckpoint, path)
	}
	var ck Checkpoint
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&ck); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCheckpoint, path, err)
	}
	return &ck, nil
}
