package forecast

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/calisym/calisym/internal/atomicfile"
)

// FileFormat and FileVersion identify a forecaster file.
const (
	FileFormat  = "calisym-forecaster"
	FileVersion = 1
)

// ErrFile reports a forecaster file that cannot be used: unreadable,
// corrupt, or written for another model, port map or layout.
var ErrFile = errors.New("forecast: forecaster file")

// maxFileBytes bounds the size of a forecaster file read.
const maxFileBytes = 256 << 20

// Binding is what a forecaster was fitted with; a forecaster is used
// only with the same.
type Binding struct {
	// ModelSHA256 is the hex SHA-256 of the model file's bytes
	// (FileDigest) the forecaster was fitted beside.
	ModelSHA256 string `json:"model_sha256"`
	// PortMap is the params' port map (statemap.PortMapKey) of the
	// dataset it was fitted on.
	PortMap string `json:"port_map"`
	// Coordinates are the model's q names; Ports its port names.
	Coordinates []string `json:"coordinates"`
	Ports       []string `json:"ports"`
	// N, NU, NC are the model's layout, Dt its step, PortMean its port
	// history's m (0: none).
	N        int     `json:"n"`
	NU       int     `json:"n_u"`
	NC       int     `json:"n_c"`
	Dt       float64 `json:"dt"`
	PortMean int     `json:"port_mean"`
}

// Diff names the first field in which b differs from want ("" when
// none).
func (b Binding) Diff(want Binding) string {
	switch {
	case b.ModelSHA256 != want.ModelSHA256:
		return fmt.Sprintf("the model file (sha256 %s, fitted with %s)", short(want.ModelSHA256), short(b.ModelSHA256))
	case b.PortMap != want.PortMap:
		return fmt.Sprintf("the port map (%q, fitted with %q)", want.PortMap, b.PortMap)
	case b.N != want.N || b.NU != want.NU || b.NC != want.NC:
		return fmt.Sprintf("the layout (n %d, n_u %d, n_c %d; fitted with %d, %d, %d)", want.N, want.NU, want.NC, b.N, b.NU, b.NC)
	case b.Dt != want.Dt:
		return fmt.Sprintf("the step (%g s, fitted with %g s)", want.Dt, b.Dt)
	case b.PortMean != want.PortMean:
		return fmt.Sprintf("the port history (port_mean %d, fitted with %d)", want.PortMean, b.PortMean)
	case len(want.Coordinates) > 0 && !slices.Equal(b.Coordinates, want.Coordinates):
		return fmt.Sprintf("the coordinates (%q, fitted with %q)", want.Coordinates, b.Coordinates)
	case len(want.Ports) > 0 && !slices.Equal(b.Ports, want.Ports):
		return fmt.Sprintf("the ports (%q, fitted with %q)", want.Ports, b.Ports)
	}
	return ""
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// File is a forecaster file: the learned policy, what it was fitted with
// and on, and a checksum of the rest.
type File struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Kind    string          `json:"kind"`
	Binding Binding         `json:"binding"`
	Fit     json.RawMessage `json:"fit,omitempty"`
	// Fit is the fit's report (trainer.ForecasterReport), kept as written.
	Policy *Learned `json:"policy"`
	// SHA256 is the hex SHA-256 of the file's JSON with this field empty.
	SHA256 string `json:"sha256"`
}

// KindRidgeRF is File.Kind of a Learned policy.
const KindRidgeRF = "ridge-random-features"

// body returns the file's JSON without its checksum.
func (f *File) body() ([]byte, error) {
	c := *f
	c.SHA256 = ""
	return json.Marshal(&c)
}

// Save writes the file atomically (a complete file or none), with its
// checksum.
func (f *File) Save(path string) error {
	f.Format, f.Version, f.Kind = FileFormat, FileVersion, KindRidgeRF
	b, err := f.body()
	if err != nil {
		return fmt.Errorf("forecast: encode %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	f.SHA256 = hex.EncodeToString(sum[:])
	out, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("forecast: encode %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, append(out, '\n')); err != nil {
		return fmt.Errorf("forecast: write %s: %w", path, err)
	}
	return nil
}

// Load reads and checks a forecaster file: its format, its checksum and
// its policy's sizes (ErrFile).
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	defer fh.Close()
	f, err := Decode(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Decode reads a forecaster file from r (at most 256 MiB) and checks it
// as Load does.
func Decode(r io.Reader) (*File, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if len(raw) > maxFileBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFile, maxFileBytes)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: not a forecaster file: %w", ErrFile, err)
	}
	if f.Format != FileFormat || f.Version != FileVersion || f.Kind != KindRidgeRF {
		return nil, fmt.Errorf("%w: format %q version %d kind %q, want %q version %d kind %q", ErrFile, f.Format, f.Version, f.Kind, FileFormat, FileVersion, KindRidgeRF)
	}
	if f.Policy == nil {
		return nil, fmt.Errorf("%w: no policy", ErrFile)
	}
	b, err := f.body()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != f.SHA256 {
		return nil, fmt.Errorf("%w: its contents hash to sha256 %s but it records %s: the file was changed or corrupted after it was written; refit it", ErrFile, short(got), short(f.SHA256))
	}
	if err := f.Policy.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if b := f.Binding; f.Policy.N != b.N || f.Policy.Measured != measuredPorts(b) {
		return nil, fmt.Errorf("%w: a policy of n = %d and %d measured ports for a model of n = %d and %d", ErrFile, f.Policy.N, f.Policy.Measured, b.N, measuredPorts(b))
	}
	f.Policy.init()
	return &f, nil
}

// measuredPorts returns the number of measured ports of a binding's
// layout: n_u + n_c without a port history, (n_u − n_c)/2 + n_c with one.
func measuredPorts(b Binding) int {
	if b.PortMean > 0 {
		return (b.NU-b.NC)/2 + b.NC
	}
	return b.NU + b.NC
}

// Check refuses the file for a use whose binding differs (ErrFile,
// naming what).
func (f *File) Check(want Binding) error { return f.Binding.Check(want) }

// Check refuses a forecaster bound to b for a use bound to want (ErrFile,
// naming what differs).
func (b Binding) Check(want Binding) error {
	if d := b.Diff(want); d != "" {
		return fmt.Errorf("%w: fitted for another setup: %s; refit it with `calisym train --forecaster` for this model and params", ErrFile, d)
	}
	return nil
}

// FileDigest returns the hex SHA-256 of a file's bytes (a model file's,
// for Binding.ModelSHA256).
func FileDigest(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("forecast: %w", err)
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", fmt.Errorf("forecast: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Measure extracts the measured ports of a sample from its model ports e
// into m.
type Measure func(e, m []float64)

// MeasureFunc returns how to read the measured ports from a model's ports
// for a binding's layout (Measure): the ports themselves without a port
// history, else the a measured control values and the n_c contact values
// around the means.
func MeasureFunc(b Binding) Measure {
	if b.PortMean == 0 {
		return func(e, m []float64) { copy(m, e[:b.NU+b.NC]) }
	}
	a := (b.NU - b.NC) / 2
	return func(e, m []float64) {
		copy(m[:a], e[:a])
		copy(m[a:], e[b.NU:b.NU+b.NC])
	}
}

// MeasuredPorts returns the number of measured ports of a binding's
// layout.
func (b Binding) MeasuredPorts() int { return measuredPorts(b) }
