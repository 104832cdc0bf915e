package test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// TestWrenchEstimateParity: the live node builds the wrench estimate from
// its input history exactly as the evaluation builds it from the converted
// dataset (trainer.LogHistory): the push log fed message by message to a
// node with wrench_estimate, and converted with the parity settings, give
// the same estimate after every sample, bit for bit (the impulse, the mean,
// its standard error, the gates, the latest base's orientation), with the
// same number of residuals (so the same translation of the momenta in the
// rollouts); a gap in the samples restarts the node's.
func TestWrenchEstimateParity(t *testing.T) {
	const n = 120
	p, _, root, batches, res := pushParity(t, n, 0)
	var ds = res.Splits[""]
	for _, d := range res.Splits {
		ds = d
	}
	episode := map[int]int{} // sample → episode starting there
	for i, ep := range ds.Episodes {
		k, err := strconv.Atoi(ep.Name[strings.LastIndex(ep.Name, "@")+1:])
		if err != nil {
			t.Fatal(err)
		}
		episode[k] = i
	}
	cfg := predictor.WrenchEstimate{Window: 24, Gate: 0.5, Decay: 0.98, Blocks: 4}
	p.Node.WrenchEstimate = &cfg
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerMessage, Topic: p.Node.Topics[0].Topic, Every: 1}
	p.Node.MaxAge = 60
	now := time.Date(2024, 11, 5, 10, 0, 5, 0, time.UTC).UnixNano()
	model := parityModel(t, p, root)
	nd, err := node.New(node.Options{Params: p, Model: model, DataRoot: root, Now: func() int64 { return now }, Publisher: discard{}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := model.Compile()
	if err != nil {
		t.Fatal(err)
	}
	base, err := trainer.WrenchBase(ds.Coordinates)
	if err != nil {
		t.Fatal(err)
	}
	est, err := predictor.NewWrenchEstimator(plan.NewRoller(), ds.N, ds.PortDim(), base, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hist := trainer.NewLogHistory(ds)
	buf := make([]float64, ds.StateDim())
	compared, full, gated := 0, 0, 0
	var live predictor.WrenchState
	for k, batch := range batches {
		if k == n/2 {
			continue // a lost sample: the node restarts its estimate
		}
		for _, m := range batch {
			if err := nd.Handle(m); err != nil {
				t.Fatal(err)
			}
		}
		ep, ok := episode[k]
		if !ok {
			continue
		}
		if k == n/2+1 {
			ds.Episodes[episode[n/2-1]].Name = "lost"
			ds.Episodes[episode[n/2]].Name = "lost"
			hist = trainer.NewLogHistory(ds)
		}
		if err := hist.Feed(est, ep, 0, buf); err != nil {
			t.Fatal(err)
		}
		live, ok = nd.WrenchEstimate()
		if !ok {
			t.Fatal("the node has no wrench estimate")
		}
		want := est.State()
		if live.Residuals != want.Residuals {
			t.Fatalf("sample %d: the node holds %d residuals, the evaluation %d", k, live.Residuals, want.Residuals)
		}
		for _, c := range []struct {
			name       string
			live, eval []float64
		}{
			{"impulse", live.Impulse[:], want.Impulse[:]}, {"mean", live.Mean[:], want.Mean[:]}, {"se", live.SE[:], want.SE[:]},
			{"gate", live.Gate[:], want.Gate[:]}, {"rotation", live.Rotation[:], want.Rotation[:]},
		} {
			if i := firstDiff(c.live, c.eval); i >= 0 {
				t.Fatalf("sample %d: %s[%d] = %v live, %v from the dataset", k, c.name, i, c.live[i], c.eval[i])
			}
		}
		if live.Residuals == cfg.Window {
			full++
		}
		for _, g := range live.Gate {
			if g > 0 && g < 1 {
				gated++
				break
			}
		}
		compared++
	}
	if compared < n-10 || full < n/2 {
		t.Fatalf("compared %d samples (%d with a full window) of %d", compared, full, n)
	}
	if gated == 0 {
		t.Error("no estimate partly gated: the comparison shows nothing of the gate")
	}
	if st := nd.Stats(); st.ForceRestarts != 1 {
		t.Errorf("%d restarts of the node's estimate, want 1 (the lost sample)", st.ForceRestarts)
	}
	var norm float64
	for _, v := range live.Impulse[:3] {
		norm += v * v
	}
	if norm == 0 {
		t.Error("a zero estimate: the comparison shows nothing")
	}
	t.Logf("%d samples identical, bit for bit (%d partly gated); last force estimate %.3g N (a random model)", compared, gated, math.Sqrt(norm)/ds.Dt)
}
