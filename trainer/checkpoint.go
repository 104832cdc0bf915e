package trainer

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
)

// checkpointMagic starts every checkpoint file; the version follows it.
const checkpointMagic = "CALISYM-CKPT-1\n"

// ErrCheckpoint wraps every problem found in a checkpoint file.
var ErrCheckpoint = errors.New("trainer: bad checkpoint")

// Checkpoint is the state of a training run after Epoch epochs.
type Checkpoint struct {
	Epoch   int
	Model   string
	Theta   []float64
	Optim   OptimState
	History History
}

func (ck *Checkpoint) restore(l Learner, opt optimizer) error {
	if ck.Model != l.Name() || len(ck.Theta) != l.NumParams() {
		return fmt.Errorf("%w: checkpoint holds %s with %d parameters, training %s with %d", ErrCheckpoint, ck.Model, len(ck.Theta), l.Name(), l.NumParams())
	}
	if err := opt.setParams(ck.Theta); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := opt.setState(ck.Optim); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return nil
}

func saveCheckpoint(path string, epoch int, l Learner, opt optimizer, h *History) error {
	ck := Checkpoint{Epoch: epoch, Model: l.Name(), Theta: l.Params(), Optim: opt.state(), History: *h}
	var body bytes.Buffer
	if err := gob.NewEncoder(&body).Encode(&ck); err != nil {
		return fmt.Errorf("trainer: encoding checkpoint: %w", err)
	}
	var out bytes.Buffer
	out.WriteString(checkpointMagic)
	fmt.Fprintf(&out, "%08x\n", crc32.ChecksumIEEE(body.Bytes()))
	out.Write(body.Bytes())
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("trainer: writing checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
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
