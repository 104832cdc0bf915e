package dataset

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/calisym/calisym/internal/atomicfile"
)

// ErrNpy wraps every problem found in a .npy file.
var ErrNpy = errors.New("dataset: bad .npy file")

// maxNpyHeader bounds the header a reader accepts.
const maxNpyHeader = 1 << 16

// WriteNpy writes a rows×cols float64 array (row major) in NumPy's .npy
// format version 1.0, little endian, C order.
func WriteNpy(w io.Writer, data []float64, rows, cols int) error {
	if rows*cols != len(data) {
		return fmt.Errorf("dataset: npy shape %d×%d does not hold %d values", rows, cols, len(data))
	}
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	// Pad so that magic(6)+version(2)+len(2)+header is a multiple of 64, ending in '\n'.
	total := 10 + len(header) + 1
	pad := (64 - total%64) % 64
	header += strings.Repeat(" ", pad) + "\n"
	bw := bufio.NewWriter(w)
	bw.WriteString("\x93NUMPY")
	bw.Write([]byte{1, 0})
	var hl [2]byte
	binary.LittleEndian.PutUint16(hl[:], uint16(len(header)))
	bw.Write(hl[:])
	bw.WriteString(header)
	var b [8]byte
	for _, v := range data {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		bw.Write(b[:])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dataset: writing npy: %w", err)
	}
	return nil
}

// SaveNpy writes an array to path, through a temporary file renamed into
// place: path holds the whole array or what it held before.
func SaveNpy(path string, data []float64, rows, cols int) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Abort()
	if err := WriteNpy(f, data, rows, cols); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

var shapeRe = regexp.MustCompile(`'shape':\s*\(\s*(\d+)\s*,?\s*(\d+)?\s*,?\s*\)`)

// ReadNpy reads a 1-D or 2-D little-endian float64 C-order array. maxValues
// bounds the allocation (the reader refuses larger declared shapes). A 1-D
// array is returned with cols = 1.
func ReadNpy(r io.Reader, maxValues int) (data []float64, rows, cols int, err error) {
	rows, cols, _, err = readNpyHeader(r, maxValues)
	if err != nil {
		return nil, 0, 0, err
	}
	n := rows * cols
	raw := make([]byte, 8*n)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: data truncated (want %d values): %w", ErrNpy, n, err)
	}
	data = make([]float64, n)
	for i := range data {
		data[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return data, rows, cols, nil
}

// readNpyHeader reads the preamble and header of a 1-D or 2-D
// little-endian float64 C-order array, whose shape may declare at most
// maxValues values, and returns its shape and the number of bytes before
// its data.
func readNpyHeader(r io.Reader, maxValues int) (rows, cols, dataOffset int, err error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: reading preamble: %w", ErrNpy, err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return 0, 0, 0, fmt.Errorf("%w: missing magic", ErrNpy)
	}
	var hl int
	dataOffset = 10
	switch pre[6] {
	case 1:
		hl = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var ext [2]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return 0, 0, 0, fmt.Errorf("%w: reading header length: %w", ErrNpy, err)
		}
		hl = int(binary.LittleEndian.Uint32(append(pre[8:10:10], ext[:]...)))
		dataOffset = 12
	default:
		return 0, 0, 0, fmt.Errorf("%w: unsupported version %d.%d", ErrNpy, pre[6], pre[7])
	}
	if hl > maxNpyHeader {
		return 0, 0, 0, fmt.Errorf("%w: header of %d bytes exceeds %d", ErrNpy, hl, maxNpyHeader)
	}
	hb := make([]byte, hl)
	if _, err := io.ReadFull(r, hb); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: reading header: %w", ErrNpy, err)
	}
	dataOffset += hl
	h := string(hb)
	if !strings.Contains(h, "'descr': '<f8'") {
		return 0, 0, 0, fmt.Errorf("%w: dtype is not little-endian float64 ('<f8'): %s", ErrNpy, strings.TrimSpace(h))
	}
	if strings.Contains(h, "'fortran_order': True") {
		return 0, 0, 0, fmt.Errorf("%w: Fortran order is not supported", ErrNpy)
	}
	mm := shapeRe.FindStringSubmatch(h)
	if mm == nil {
		return 0, 0, 0, fmt.Errorf("%w: no 1-D or 2-D shape in header %q", ErrNpy, strings.TrimSpace(h))
	}
	rows, err1 := strconv.Atoi(mm[1])
	cols = 1
	var err2 error
	if mm[2] != "" {
		cols, err2 = strconv.Atoi(mm[2])
	}
	if err1 != nil || err2 != nil || rows < 0 || cols < 0 || (cols > 0 && rows > maxValues/max(cols, 1)) {
		return 0, 0, 0, fmt.Errorf("%w: shape (%s, %s) exceeds the limit of %d values", ErrNpy, mm[1], mm[2], maxValues)
	}
	return rows, cols, dataOffset, nil
}

// LoadNpy reads an array from path, bounded by the file's size.
func LoadNpy(path string) ([]float64, int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("dataset: %w", err)
	}
	d, r, c, err := ReadNpy(bufio.NewReader(f), int(st.Size()/8)+1)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, r, c, nil
}
