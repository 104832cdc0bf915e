package convert

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestPortHistoryConversion: with history.port_mean the conversion adds
// the mean of every measured port over the samples before each one in its
// stretch of the log: over the m before it inside a stretch, fewer at the
// log's start, none across a gap (where a stretch starts again).
func TestPortHistoryConversion(t *testing.T) {
	const m = 3
	dir := t.TempDir()
	writeSynthCSV(t, dir, "run.csv", 1001, 200, func(i int, r *synthRow) { r.remove = r.t > 1 && r.t < 1.2 })
	spec := synthSpec("*.csv")
	spec.History.PortMean = m
	spec.Control.Interp = "hold"
	res, err := Convert(context.Background(), spec, Options{DataRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Splits["id"]
	if d.NU != 4 || d.NC != 0 || strings.Join(d.Ports, ",") != "tau1,tau2,mean3(tau1),mean3(tau2)" {
		t.Fatalf("n_u %d, n_c %d, ports %v", d.NU, d.NC, d.Ports)
	}
	// the measured ports of every sample, by sample index at 100 Hz
	measured := map[int][2]float64{}
	start2 := math.MaxInt // the first sample after the gap
	for _, ep := range d.Episodes {
		k0 := int(math.Round(ep.Tags["t0"] * 100))
		for j := range ep.Len {
			measured[k0+j] = [2]float64{ep.E[4*j], ep.E[4*j+1]}
			if k0+j > 100 {
				start2 = min(start2, k0+j)
			}
		}
	}
	if start2 > 125 {
		t.Fatalf("the first sample after the gap is %d", start2)
	}
	checked, acrossGap := 0, 0
	for _, ep := range d.Episodes {
		k0 := int(math.Round(ep.Tags["t0"] * 100))
		for j := range ep.Len {
			k := k0 + j
			from := 0
			if k >= start2 {
				from = start2
			}
			var want [2]float64
			n := 0
			for b := 1; b <= m && k-b >= from; b++ {
				p, ok := measured[k-b]
				if !ok {
					t.Fatalf("sample %d: sample %d of its stretch is in no window", k, k-b)
				}
				want[0] += p[0]
				want[1] += p[1]
				n++
			}
			if n == 0 {
				want = measured[k]
			} else {
				want[0] /= float64(n)
				want[1] /= float64(n)
			}
			got := ep.E[4*j+2 : 4*j+4]
			if math.Abs(got[0]-want[0]) > 1e-15 || math.Abs(got[1]-want[1]) > 1e-15 {
				t.Fatalf("sample %d: means %v, want %v over %d samples before", k, got, want, n)
			}
			if k < start2+m && k >= start2 {
				acrossGap++
			}
			checked++
		}
	}
	if checked < 400 || acrossGap != m {
		t.Errorf("checked %d samples, %d after the gap's end with a short history; want ≥ 400 and %d", checked, acrossGap, m)
	}
}
