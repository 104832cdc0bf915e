package test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calisym/calisym/bagtools/convert"
	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/trainer"
)

// TestForceEstimateParity: the live node builds the offset-free force
// estimate from its input history exactly as the evaluation builds it from
// the converted dataset (trainer.LogHistory): a push log fed message by
// message to a node with force_estimate, and converted with the parity
// settings, give the same estimate after every sample, bit for bit, with
// the same number of residuals; a gap in the samples restarts the node's.
func TestForceEstimateParity(t *testing.T) {
	const n = 120
	// Without the port history: after the lost sample the node's history
	// restarts by design where the dataset's does not
	// (TestPortHistoryParity), which would change the model's ports.
	p, _, root, batches, res := pushParity(t, n, 0)
	ds, episode := paritySplit(t, res)

	cfg := predictor.ForceEstimate{Window: 10, Decay: 0.9}
	p.Node.ForceEstimate = &cfg
	p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerMessage, Topic: p.Node.Topics[0].Topic, Every: 1}
	p.Node.MaxAge = 60
	// the log's header stamps start at 2024-11-05T10:00:00Z; the node's
	// clock stays a little after its n samples
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
	est, err := predictor.NewForceEstimator(plan.NewRoller(), ds.N, ds.PortDim(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	compared, full := 0, 0
	var live []float64
	feedParity(t, n, nd, batches, ds, episode, est, func(k int) {
		var count int
		live, count = nd.ForceEstimate(live)
		want := est.Offset(nil)
		if count != est.Residuals() {
			t.Fatalf("sample %d: the node averages %d residuals, the evaluation %d", k, count, est.Residuals())
		}
		if i := firstDiff(live, want); i >= 0 {
			t.Fatalf("sample %d: estimate[%d] = %v live, %v from the dataset", k, i, live[i], want[i])
		}
		if count == cfg.Window {
			full++
		}
		compared++
	})
	if compared < n-10 || full < n/2 {
		t.Fatalf("compared %d samples (%d with a full window) of %d", compared, full, n)
	}
	if st := nd.Stats(); st.ForceRestarts != 1 {
		t.Errorf("%d restarts of the node's estimate, want 1 (the lost sample)", st.ForceRestarts)
	}
	var norm float64
	for _, v := range live[:3] {
		norm += v * v
	}
	t.Logf("%d samples identical, bit for bit; last base force estimate %.3g N (a random model)", compared, math.Sqrt(norm)/ds.Dt)
}

// paritySplit returns the one split of a parity conversion
// (parityConversion) and the episode that starts at each sample (the
// number after the "@" of its name).
func paritySplit(t *testing.T, res *convert.Result) (*dataset.Dataset, map[int]int) {
	t.Helper()
	if len(res.Splits) != 1 {
		t.Fatalf("%d splits, want one", len(res.Splits))
	}
	var ds *dataset.Dataset
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
	return ds, episode
}

// feedParity feeds the n samples of a push log (pushParity's batches) to
// the node message by message, all but sample n/2 (a lost sample: the
// node restarts its estimate), and after each sample that starts an
// episode of ds feeds that episode to est as the evaluation does
// (trainer.LogHistory; from sample n/2+1 on, the dataset without the lost
// sample: the two episodes that hold it, from n/2−1 and n/2, leave the
// log), then calls check with the sample.
func feedParity(t *testing.T, n int, nd *node.Node, batches [][]node.Input, ds *dataset.Dataset, episode map[int]int, est predictor.OffsetEstimator, check func(k int)) {
	t.Helper()
	hist := trainer.NewLogHistory(ds)
	buf := make([]float64, ds.StateDim())
	for k, batch := range batches {
		if k == n/2 {
			continue
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
		check(k)
	}
}
