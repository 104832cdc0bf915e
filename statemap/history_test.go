package statemap

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestPortHistory: the means are over the samples pushed before, from the
// newest back, over fewer than m at first, the sample's own ports over
// none; Reset starts again; the layout is (u, means of (u, f_c), f_c).
func TestPortHistory(t *testing.T) {
	h, err := NewPortHistory(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if h.Measured() != 2 || h.Width() != 4 {
		t.Fatalf("measured %d, width %d; want 2 and 4", h.Measured(), h.Width())
	}
	out := make([]float64, 4)
	sample := func(g float64) []float64 { return []float64{g, 10 * g} }
	for _, c := range []struct {
		g     float64
		reset bool
		want  []float64
		held  int
	}{
		{g: 0, want: []float64{0, 0, 0, 0}, held: 0},                // none before: its own ports
		{g: 1, want: []float64{1, 0, 0, 10}, held: 1},               // one sample before
		{g: 2, want: []float64{2, 0.5, 5, 20}, held: 2},             // the mean of 0 and 1
		{g: 3, want: []float64{3, 1.5, 15, 30}, held: 2},            // 1 and 2: the ring turned
		{g: 4, want: []float64{4, 2.5, 25, 40}, held: 2},            // 2 and 3
		{g: 7, reset: true, want: []float64{7, 7, 70, 70}, held: 0}, // after a gap
		{g: 8, want: []float64{8, 7, 70, 80}, held: 1},
	} {
		if c.reset {
			h.Reset()
		}
		if h.Held() != c.held {
			t.Errorf("g=%v: %d samples held, want %d", c.g, h.Held(), c.held)
		}
		h.Ports(sample(c.g), out)
		for i := range out {
			if out[i] != c.want[i] {
				t.Errorf("g=%v: ports %v, want %v", c.g, out, c.want)
				break
			}
		}
		h.Push(sample(c.g))
	}
	c, err := NewPortHistory(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.CopyFrom(h)
	got := make([]float64, 4)
	c.Ports(sample(9), got)
	h.Ports(sample(9), out)
	if c.Held() != h.Held() || !slices.Equal(got, out) {
		t.Errorf("a copy gives %v, the original %v", got, out)
	}
	meas := sample(5)
	if a := testing.AllocsPerRun(100, func() { h.Ports(meas, out); h.Push(meas) }); a != 0 {
		t.Errorf("%v allocations per sample, want 0", a)
	}
	if _, err := NewPortHistory(0, 1, 1); err == nil {
		t.Error("a history of 0 samples: no error")
	}
}

// TestPortHistorySpec: history.port_mean adds "mean<m>(port)" for every
// measured port after the measured control values, the mapper writes the
// measured ports and lays out the model's, and bad values name the field.
func TestPortHistorySpec(t *testing.T) {
	spec := func(m int, contact bool) *Spec {
		s := &Spec{
			State:   StateSpec{Kind: StateJoints, Joints: []JointSpec{{Name: "a", Position: Channel{Name: "q"}, Velocity: Channel{Name: "v"}}}},
			Model:   ModelSpec{Kind: ModelIdentity},
			Control: ControlSpec{Kind: ControlDirect, PortSpec: PortSpec{Channels: []Channel{{Name: "tau"}}}},
			History: HistorySpec{PortMean: m},
		}
		if contact {
			s.Contact = PortSpec{Names: []string{"f"}, Channels: []Channel{{Name: "force"}}}
		}
		s.Defaults()
		return s
	}
	s := spec(3, true)
	c, k := s.PortNames()
	if strings.Join(c, ",") != "tau,mean3(tau),mean3(f)" || strings.Join(k, ",") != "f" {
		t.Errorf("ports %v %v", c, k)
	}
	if c, k := s.MeasuredPortNames(); strings.Join(c, ",") != "tau" || strings.Join(k, ",") != "f" {
		t.Errorf("measured ports %v %v", c, k)
	}
	m, err := NewMapper(s, "")
	if err != nil {
		t.Fatal(err)
	}
	if n, nu, nc := m.Layout(); n != 1 || nu != 3 || nc != 1 || m.Measured() != 2 {
		t.Errorf("layout n %d, n_u %d, n_c %d, measured %d; want 1, 3, 1, 2", n, nu, nc, m.Measured())
	}
	h, err := s.NewPortHistory()
	if err != nil || h == nil || h.Measured() != 2 || h.Width() != 4 {
		t.Fatalf("history %+v, %v", h, err)
	}
	if h, err := spec(0, true).NewPortHistory(); h != nil || err != nil {
		t.Errorf("no history: %v, %v", h, err)
	}
	for _, c := range []struct {
		m    int
		want string
	}{
		{-1, "history.port_mean"},
		{MaxPortMean + 1, "history.port_mean"},
	} {
		if err := spec(c.m, false).Check(); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("port_mean %d: %v, want an ErrSpec naming %s", c.m, err, c.want)
		}
	}
	none := spec(2, false)
	none.Control = ControlSpec{Kind: ControlNone, PortSpec: PortSpec{Interp: InterpLinear}}
	if err := none.Check(); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "needs ports") {
		t.Errorf("history without ports: %v", err)
	}
}
