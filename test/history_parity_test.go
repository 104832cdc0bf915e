package test

import (
	"cmp"
	"math"
	"testing"
	"time"

	"github.com/calisym/calisym/msgs"
	"github.com/calisym/calisym/nodes/node"
)

// TestPortHistoryParity: the live node builds the port history
// (convert.history.port_mean) from its input history exactly as the
// conversion builds it from the log. A push log is fed message by message
// to a node and converted with the parity settings; after every sample
// the node's ports (means included) are the conversion's, bit for bit,
// and so is the first row of the published port forecast (the node
// predicts once its history holds m samples). A lost sample
// restarts the node's history: until m samples have come after it, its
// means are over those alone (the conversion's, which has the sample,
// reach back past it), and from then on the two agree again. Over a
// horizon the held ports' means become the held ports.
func TestPortHistoryParity(t *testing.T) {
	const n = 120
	// the params' port history (10 samples), or 5 where they have none
	_, shipped := loadParams(t, "anymal.yaml")
	m := cmp.Or(shipped.History.PortMean, 5)
	p, spec, root, batches, res := pushParity(t, n, m)
	var ne, nm int
	rows := map[int][]float64{} // sample → the converted model ports
	for _, d := range res.Splits {
		ne = d.PortDim()
		for _, ep := range d.Episodes {
			k0 := int(math.Round(ep.Tags["t0"] * spec.Resample.Rate))
			rows[k0] = ep.E[:ne]
			rows[k0+1] = ep.E[ne : 2*ne]
		}
	}
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerMessage, Topic: p.Node.Topics[0].Topic, Every: 1}
	p.Node.MaxAge = 60
	now := time.Date(2024, 11, 5, 10, 0, 5, 0, time.UTC).UnixNano()
	pub := &lastPrediction{topic: p.Node.Outputs.Prediction}
	nd, err := node.New(node.Options{Params: p, Model: parityModel(t, p, root), DataRoot: root, Now: func() int64 { return now }, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	_, nu, nc := nd.Sampler().Layout()
	nm = nd.Sampler().Measured()
	if nu+nc != ne || ne != 2*nm {
		t.Fatalf("the node's %d ports (%d measured), the conversion's %d", nu+nc, nm, ne)
	}
	nx, _, _ := nd.Sampler().Layout()
	x, e := make([]float64, 2*nx), make([]float64, ne)
	lost := n / 2
	measured := func(k int) []float64 { // u, then f_c, of the converted sample k
		r := rows[k]
		return append(append([]float64(nil), r[:nu-nm]...), r[nu:]...)
	}
	same, short, predicted := 0, 0, 0
	for k, batch := range batches {
		if k == lost {
			continue // a lost sample: the node restarts its history
		}
		before := nd.Stats().Predictions
		for _, msg := range batch {
			if err := nd.Handle(msg); err != nil {
				t.Fatal(err)
			}
		}
		want, ok := rows[k]
		if !ok {
			t.Fatalf("sample %d is in no converted window", k)
		}
		if _, err := nd.State(x, e); err != nil {
			t.Fatalf("sample %d: %v", k, err)
		}
		if k > lost && k <= lost+m {
			// the means over the samples from the lost one's successor on
			want = append([]float64(nil), want...)
			mean := want[nu-nm : nu]
			if k == lost+1 {
				copy(mean, measured(k))
			} else {
				clear(mean)
				for b := 1; k-b > lost; b++ {
					for j, v := range measured(k - b) {
						mean[j] += v
					}
				}
				for j := range mean {
					mean[j] /= float64(k - lost - 1)
				}
			}
			short++
		} else {
			same++
		}
		if i := firstDiff(e, want); i >= 0 {
			t.Fatalf("sample %d: e[%d] = %v live, %v converted (%s)", k, i, e[i], want[i], nd.Sampler().Ports()[i])
		}
		// The node predicts once its history holds m samples (a warm-up
		// after the start and after the restart).
		warm := k >= m && (k < lost || k > lost+m)
		if got := nd.Stats().Predictions - before; got != map[bool]uint64{false: 0, true: 1}[warm] {
			t.Fatalf("sample %d: %d predictions (warmed up: %v)", k, got, warm)
		}
		if !warm {
			continue
		}
		predicted++
		if i := firstDiff(pub.last.Ports[:ne], e); i >= 0 {
			t.Fatalf("sample %d: the forecast's first ports differ from the sample's at %d", k, i)
		}
	}
	if predicted != n-1-2*m {
		t.Fatalf("%d predictions, want %d", predicted, n-1-2*m)
	}
	if same < n-m-5 || short != m {
		t.Fatalf("compared %d samples equal to the conversion's and %d after the restart; want ≥ %d and %d", same, short, n-m-5, m)
	}
	if st := nd.Stats(); st.HistoryRestarts != 1 {
		t.Errorf("%d restarts of the port history, want 1 (the lost sample)", st.HistoryRestarts)
	}
	// the hold forecast: from step m+1 on the means are over the held ports
	last := pub.last.Ports[(2*m-1)*ne : 2*m*ne]
	held := last[nu:] // f_c
	for j, v := range held {
		if mean := last[nu-nm+(nu-nm)+j]; math.Abs(mean-v) > 1e-12*math.Max(1, math.Abs(v)) {
			t.Fatalf("forecast step %d: mean of %s = %v, the held value %v", 2*m, nd.Sampler().Ports()[nu+j], mean, v)
		}
	}
	t.Logf("%d samples identical to the conversion's, bit for bit, %d after a restart as expected (n_u %d, n_c %d, %d measured ports)", same, short, nu, nc, nm)
}

// lastPrediction keeps the last published PredictedTrajectory.
type lastPrediction struct {
	topic string
	last  msgs.PredictedTrajectory
}

func (*lastPrediction) Advertise(string, node.TopicType) error { return nil }
func (l *lastPrediction) Publish(topic string, _ int64, b []byte) error {
	if topic != l.topic {
		return nil
	}
	return msgs.Unmarshal(b, &l.last)
}
