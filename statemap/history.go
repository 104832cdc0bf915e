package statemap

import "fmt"

// PortHistory builds the port-history channels of a mapping
// (HistorySpec.PortMean) from the measured ports of the samples before the
// current one, at the dataset rate. Conversion feeds it each stretch of a
// log sample by sample; the live node feeds it one sample per dt from its
// inputs. Both call Ports the same way, so that the channels are the same
// bits.
//
// A PortHistory is not safe for concurrent use. Push and Ports allocate
// nothing.
type PortHistory struct {
	m, nu, ne int
	ring      []float64 // m rows of ne measured ports
	head      int       // the row Push writes next
	held      int       // rows held, ≤ m
}

// NewPortHistory returns the history of the mean over m samples of ports
// laid out as nu control values, then nc contact values.
func NewPortHistory(m, nu, nc int) (*PortHistory, error) {
	if m < 1 || m > MaxPortMean || nu < 0 || nc < 0 || nu+nc == 0 {
		return nil, fmt.Errorf("statemap: port history of %d samples over %d control and %d contact values", m, nu, nc)
	}
	return &PortHistory{m: m, nu: nu, ne: nu + nc, ring: make([]float64, m*(nu+nc))}, nil
}

// NewPortHistory returns the spec's port history, or nil when it has none
// (HistorySpec.PortMean 0).
func (s *Spec) NewPortHistory() (*PortHistory, error) {
	if s.History.PortMean == 0 {
		return nil, nil
	}
	c, k := s.MeasuredPortNames()
	return NewPortHistory(s.History.PortMean, len(c), len(k))
}

// Measured returns the number of measured ports (Push's and Ports' meas).
func (h *PortHistory) Measured() int { return h.ne }

// Width returns the number of model ports Ports writes: the measured
// ones and their means.
func (h *PortHistory) Width() int { return 2 * h.ne }

// Cap returns the number of samples the means are over at most (m).
func (h *PortHistory) Cap() int { return h.m }

// Held returns the number of earlier samples the means are over now.
func (h *PortHistory) Held() int { return h.held }

// Reset forgets every sample: the start of a stretch of log, or a gap.
func (h *PortHistory) Reset() { h.head, h.held = 0, 0 }

// Push records a sample's measured ports, (u, f_c), as the newest of the
// samples before the next one.
func (h *PortHistory) Push(meas []float64) {
	copy(h.ring[h.head*h.ne:(h.head+1)*h.ne], meas[:h.ne])
	h.head = (h.head + 1) % h.m
	h.held = min(h.held+1, h.m)
}

// Ports writes the model's ports of a sample whose measured ports are
// meas into out (Width values): the measured control values, the mean of
// every measured port over the samples held (summed from the newest back,
// then divided by their count; meas itself when none is held), then the
// measured contact values.
func (h *PortHistory) Ports(meas, out []float64) {
	nu, ne := h.nu, h.ne
	copy(out[:nu], meas[:nu])
	mean := out[nu : nu+ne]
	copy(out[nu+ne:2*ne], meas[nu:ne])
	if h.held == 0 {
		copy(mean, meas[:ne])
		return
	}
	clear(mean)
	for back := 1; back <= h.held; back++ {
		r := (h.head - back + h.m) % h.m
		for j, v := range h.ring[r*ne : (r+1)*ne] {
			mean[j] += v
		}
	}
	k := float64(h.held)
	for j := range mean {
		mean[j] /= k
	}
}

// CopyFrom makes h hold the samples o holds (both of one layout).
func (h *PortHistory) CopyFrom(o *PortHistory) {
	copy(h.ring, o.ring)
	h.head, h.held = o.head, o.held
}
