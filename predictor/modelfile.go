package predictor

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/calisym/calisym/internal/atomicfile"
)

// The model file is a safetensors file (https://huggingface.co/docs/safetensors):
// an 8-byte little-endian header length, a JSON header and the raw
// little-endian float64 tensors. Every parameter block (ParamBlock) is stored
// under its name, the normalisation under "norm.mu" and "norm.scale", and the
// header's __metadata__ holds "format" = "calisym", "format_version" and
// "model", a JSON document with the layout, architecture and metadata. Python
// reads it with safetensors.numpy.load_file, or numpy alone.
//
// Two more __metadata__ entries guard the file against corruption:
// "tensors_sha256", the hex SHA-256 of the whole data section (every byte
// after the header, as `tail -c +$((9+N)) FILE | sha256sum` computes it for
// a header of N bytes), and "model_sha256", that of the "model" string's
// UTF-8 bytes. Decode verifies both and rejects a file whose bytes no longer
// match (ErrChecksum). The checksums live in the header only: the tensor
// bytes are the same as without them, and a reader that does not know them
// ignores them. Files written before checksums were added have neither
// entry; they still load, unverified (see Model.ChecksumVerified).

// Metadata keys of the checksums.
const (
	metaTensorsSHA256 = "tensors_sha256"
	metaModelSHA256   = "model_sha256"
)

// FormatVersion is the model file version this package writes and reads.
const FormatVersion = 1

// ErrModelFile wraps every problem found in a model file.
var ErrModelFile = errors.New("predictor: bad model file")

// ErrChecksum reports a model file whose tensor data or model description
// do not match the SHA-256 its header records: the file was changed or
// corrupted after it was written. It wraps ErrModelFile.
var ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrModelFile)

// Limits on what a model file may declare, so that a corrupt header cannot
// make the reader allocate without bound.
const (
	maxHeaderBytes = 16 << 20
	maxModelParams = 64 << 20
	maxLiftedDim   = 8192
	maxLayers      = 4096
)

type fileModel struct {
	Layout Layout   `json:"layout"`
	Arch   Arch     `json:"arch"`
	Meta   Metadata `json:"meta"`
}

type stEntry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

type namedBlock struct {
	name string
	rows int
	cols int
	data []float64
}

// fileBlocks lists the tensors of the model file: the parameter blocks as
// views into θ, then the normalisation.
func (m *Model) fileBlocks() []namedBlock {
	var bs []namedBlock
	for _, t := range m.paramBlocks() {
		bs = append(bs, namedBlock{t.Name, t.Rows, t.Cols, m.theta[t.Offset : t.Offset+t.Size()]})
	}
	d := m.Layout.D()
	bs = append(bs, namedBlock{"norm.mu", d, 1, m.Norm.Mu}, namedBlock{"norm.scale", d, 1, m.Norm.Scale})
	return bs
}

// Encode writes the model as a safetensors file, with the checksums of its
// tensor data and description in the header.
func (m *Model) Encode(w io.Writer) error {
	desc, err := json.Marshal(fileModel{Layout: m.Layout, Arch: m.Arch, Meta: m.Meta})
	if err != nil {
		return fmt.Errorf("predictor: encoding model description: %w", err)
	}
	bs := m.fileBlocks()
	n := 0
	for _, b := range bs {
		n += len(b.data)
	}
	data := make([]byte, 0, 8*n)
	header := make(map[string]any, len(bs)+1)
	for _, b := range bs {
		shape := []int{b.rows, b.cols}
		if b.cols == 1 {
			shape = []int{b.rows}
		}
		off := len(data)
		header[b.name] = stEntry{DType: "F64", Shape: shape, Offsets: [2]int{off, off + 8*len(b.data)}}
		for _, v := range b.data {
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
		}
	}
	header["__metadata__"] = map[string]string{
		"format":          "calisym",
		"format_version":  fmt.Sprint(FormatVersion),
		"model":           string(desc),
		metaModelSHA256:   sha256Hex(desc),
		metaTensorsSHA256: sha256Hex(data),
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("predictor: encoding header: %w", err)
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var buf bytes.Buffer
	buf.Grow(8 + len(hj) + len(data))
	var lb [8]byte
	binary.LittleEndian.PutUint64(lb[:], uint64(len(hj)))
	buf.Write(lb[:])
	buf.Write(hj)
	buf.Write(data)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("predictor: writing model: %w", err)
	}
	return nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// verifyChecksum checks data against the hex SHA-256 the header's metadata
// records under key, if any; what names the data in the error. It reports
// whether the file carried the checksum.
func verifyChecksum(meta map[string]string, key string, data []byte, what string) (bool, error) {
	want, ok := meta[key]
	if !ok {
		return false, nil
	}
	if got := sha256Hex(data); got != want {
		return false, fmt.Errorf("%w: %s hash to sha256 %s but the header records %s (%s): the file was changed or corrupted after it was written; use an intact copy or retrain",
			ErrChecksum, what, short(got), short(want), key)
	}
	return true, nil
}

// short abbreviates a hex digest for messages.
func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// Save writes the model to path atomically: through a temporary file in
// the same directory, renamed onto path only when complete.
func (m *Model) Save(path string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("predictor: saving model: %w", err)
	}
	if err := m.Encode(f); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("predictor: saving model: %w", err)
	}
	return nil
}

// Load reads a model file from path (see Decode).
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("predictor: loading model: %w", err)
	}
	m, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Decode parses a model file held in memory. It never allocates more than the
// file's own size plus what its validated header declares. A file whose
// checksums do not match its bytes is an error wrapping ErrChecksum; one
// without checksums (written before they were added) decodes, and the
// model's ChecksumVerified reports false.
func Decode(data []byte) (*Model, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%w: %d bytes is too short for a safetensors header (truncated?)", ErrModelFile, len(data))
	}
	hl := binary.LittleEndian.Uint64(data[:8])
	if hl > maxHeaderBytes || hl > uint64(len(data)-8) {
		return nil, fmt.Errorf("%w: header length %d exceeds the file (%d bytes) or the %d-byte limit (truncated?)", ErrModelFile, hl, len(data), maxHeaderBytes)
	}
	body := data[8+hl:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+hl], &raw); err != nil {
		return nil, fmt.Errorf("%w: header JSON: %w", ErrModelFile, err)
	}
	var meta map[string]string
	if err := json.Unmarshal(raw["__metadata__"], &meta); err != nil || meta == nil {
		return nil, fmt.Errorf("%w: missing __metadata__ (not a calisym model file?)", ErrModelFile)
	}
	if meta["format"] != "calisym" {
		return nil, fmt.Errorf("%w: format %q, want \"calisym\"", ErrModelFile, meta["format"])
	}
	if v := meta["format_version"]; v != fmt.Sprint(FormatVersion) {
		return nil, fmt.Errorf("%w: format version %q, this build reads version %d", ErrModelFile, v, FormatVersion)
	}
	descSum, err := verifyChecksum(meta, metaModelSHA256, []byte(meta["model"]), "the model description (layout, architecture, metadata)")
	if err != nil {
		return nil, err
	}
	var fm fileModel
	if err := json.Unmarshal([]byte(meta["model"]), &fm); err != nil {
		return nil, fmt.Errorf("%w: model description: %w", ErrModelFile, err)
	}
	if err := fm.Layout.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	if err := fm.Arch.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	if fm.Layout.Dim() > maxLiftedDim || fm.Arch.Layers > maxLayers || fm.Arch.Width > maxLiftedDim ||
		fm.Arch.Spline.Intervals > 1024 {
		return nil, fmt.Errorf("%w: declared sizes exceed limits (lifted %d, layers %d, width %d)", ErrModelFile, fm.Layout.Dim(), fm.Arch.Layers, fm.Arch.Width)
	}
	m := &Model{Layout: fm.Layout, Arch: fm.Arch, Meta: fm.Meta}
	np := m.NumParams()
	if np > maxModelParams || np <= 0 {
		return nil, fmt.Errorf("%w: %d parameters exceed the limit %d", ErrModelFile, np, maxModelParams)
	}
	if want := 8 * (np + 2*fm.Layout.D()); len(body) != want {
		return nil, fmt.Errorf("%w: tensor data is %d bytes, the declared model needs %d (truncated or dimension mismatch)", ErrModelFile, len(body), want)
	}
	dataSum, err := verifyChecksum(meta, metaTensorsSHA256, body, fmt.Sprintf("the tensor data (%d bytes)", len(body)))
	if err != nil {
		return nil, err
	}
	m.verified = descSum && dataSum
	m.buildDefs()
	m.theta = make([]float64, np)
	d := fm.Layout.D()
	m.Norm = Normalization{Mu: make([]float64, d), Scale: make([]float64, d)}
	bs := m.fileBlocks()
	seen := make(map[string]bool, len(bs))
	for _, b := range bs {
		rawE, ok := raw[b.name]
		if !ok {
			return nil, fmt.Errorf("%w: tensor %q missing", ErrModelFile, b.name)
		}
		var e stEntry
		if err := json.Unmarshal(rawE, &e); err != nil {
			return nil, fmt.Errorf("%w: tensor %q: %w", ErrModelFile, b.name, err)
		}
		if e.DType != "F64" {
			return nil, fmt.Errorf("%w: tensor %q has dtype %s, want F64", ErrModelFile, b.name, e.DType)
		}
		size := 1
		for _, s := range e.Shape {
			if s < 0 || s > maxModelParams {
				return nil, fmt.Errorf("%w: tensor %q has shape %v", ErrModelFile, b.name, e.Shape)
			}
			size *= s
		}
		if size != len(b.data) || size > maxModelParams {
			return nil, fmt.Errorf("%w: tensor %q has shape %v (%d values), the architecture needs %d×%d (dimension mismatch)", ErrModelFile, b.name, e.Shape, size, b.rows, b.cols)
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi < lo || hi > len(body) || hi-lo != 8*size {
			return nil, fmt.Errorf("%w: tensor %q has data offsets [%d, %d] outside the %d-byte data section", ErrModelFile, b.name, lo, hi, len(body))
		}
		for i := range b.data {
			b.data[i] = math.Float64frombits(binary.LittleEndian.Uint64(body[lo+8*i:]))
		}
		seen[b.name] = true
	}
	var extra []string
	for k := range raw {
		if k != "__metadata__" && !seen[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("%w: unexpected tensors %v for this architecture", ErrModelFile, extra)
	}
	if err := m.Norm.Validate(m.Layout); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	ph, err := m.PortHistory()
	if err != nil {
		return nil, err
	}
	m.Meta.PortMean = ph.PortMean
	m.syncDerived()
	return m, nil
}

// ChecksumVerified reports whether the model was decoded from a file whose
// tensor and description checksums were present and matched. It is false
// for a file written before checksums were added (it loads unverified) and
// for a model that was not read from a file.
func (m *Model) ChecksumVerified() bool { return m.verified }
