package predictor

import (
	"fmt"
	"regexp"
	"strconv"
)

// meanName matches a port-history port name, "mean<m>(<port>)".
var meanName = regexp.MustCompile(`^mean([0-9]+)\((.*)\)$`)

// PortMeanFromNames returns the m of the port history (convert.history
// .port_mean) that a model's port names record, or 0 when they record none.
// The names are laid out as conversion writes them (statemap's
// Spec.PortNames): the a measured control values, then "mean<m>(<port>)"
// for each of the a + n_c measured ports in order, which complete the
// n_u = 2a + n_c control values, then the n_c contact values. Names that
// hold a mean but not in this layout are an error (ErrModelFile).
func PortMeanFromNames(ports []string, nu, nc int) (int, error) {
	if len(ports) != nu+nc {
		if len(ports) == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("%w: %d port names for n_u = %d and n_c = %d", ErrModelFile, len(ports), nu, nc)
	}
	first := -1
	for i, p := range ports[:nu] {
		if meanName.MatchString(p) {
			first = i
			break
		}
	}
	if first < 0 {
		return 0, nil
	}
	a := first
	if nu != 2*a+nc {
		return 0, fmt.Errorf("%w: port names %v: the first mean is control value %d, so a port history needs n_u = %d (n_c = %d), not %d",
			ErrModelFile, ports, first, 2*a+nc, nc, nu)
	}
	measured := append(append([]string{}, ports[:a]...), ports[nu:]...)
	sub := meanName.FindStringSubmatch(ports[a])
	m, err := strconv.Atoi(sub[1])
	if err != nil || m < 1 {
		return 0, fmt.Errorf("%w: port name %q: the mean is over %q samples", ErrModelFile, ports[a], sub[1])
	}
	for i, name := range measured {
		if want := fmt.Sprintf("mean%d(%s)", m, name); ports[a+i] != want {
			return 0, fmt.Errorf("%w: port names %v: control value %d is %q, want %q (the port history's mean of measured port %d)",
				ErrModelFile, ports, a+i, ports[a+i], want, i)
		}
	}
	return m, nil
}

// maxPortMean bounds a recorded port_mean (statemap.MaxPortMean).
const maxPortMean = 1000

// PortHistory describes a model's port history: its m (0: none), the
// number of measured control values a and of contact values n_c. The
// model's ports are then (u: a values, the means: a + n_c values, f_c:
// n_c values); a planner supplies the a + n_c measured ports and builds
// the means (statemap.PortHistory, python/calisym_ref.py's port_means).
type PortHistory struct {
	PortMean        int
	MeasuredControl int
	Contact         int
}

// PortHistory returns the model's port history (PortMean 0: none), from
// its metadata: Meta.PortMean, or for a file that records only its port
// names, the names.
func (m *Model) PortHistory() (PortHistory, error) {
	l := m.Layout
	pm := m.Meta.PortMean
	if fromNames, err := PortMeanFromNames(m.Meta.Ports, l.NU, l.NC); err != nil {
		return PortHistory{}, err
	} else if pm == 0 {
		pm = fromNames
	} else if len(m.Meta.Ports) > 0 && fromNames != pm {
		return PortHistory{}, fmt.Errorf("%w: port_mean %d but the port names %v record %d", ErrModelFile, pm, m.Meta.Ports, fromNames)
	}
	if pm == 0 {
		return PortHistory{Contact: l.NC, MeasuredControl: l.NU}, nil
	}
	if a := l.NU - l.NC; pm < 0 || pm > maxPortMean || a < 0 || a%2 != 0 || a/2+l.NC == 0 {
		return PortHistory{}, fmt.Errorf("%w: port_mean %d with n_u = %d and n_c = %d", ErrModelFile, pm, l.NU, l.NC)
	}
	return PortHistory{PortMean: pm, MeasuredControl: (l.NU - l.NC) / 2, Contact: l.NC}, nil
}
