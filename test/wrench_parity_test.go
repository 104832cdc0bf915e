package test

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/calisym/calisym/internal/fixtures"
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
	ds, episode := paritySplit(t, res)
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
	compared, full, gated := 0, 0, 0
	var live predictor.WrenchState
	feedParity(t, n, nd, batches, ds, episode, est, func(k int) {
		var ok bool
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
	})
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

// oracleStepper predicts the next sample of a converted parity log (two
// samples per episode, the second relative to the first) from the sample
// k the test sets, with the change of the base momenta scaled by gain: a
// model that gets the base's accelerations wrong by 1 − gain, whose
// one-step residuals are (1 − gain)·Δp, the log's own gait-periodic
// momentum changes.
type oracleStepper struct {
	ds   *datasetEpisodes
	k    int
	gain float64
}

type datasetEpisodes struct {
	x  [][]float64 // episode k: its two samples
	n  int
	nx int
}

func (s *oracleStepper) Rollout(x0, _ []float64, horizon int, out []float64) error {
	ep := s.ds.x[s.k]
	copy(out[:s.ds.nx], ep[s.ds.nx:])
	for j := range 6 {
		i := s.ds.n + j
		out[i] = ep[i] + s.gain*(ep[s.ds.nx+i]-ep[i])
	}
	return nil
}

// TestWrenchEstimateQuietLog: on a log without an external disturbance
// (id/trot_301, 7 s of trot), a model whose base-momentum residuals are a
// fifth of the log's own momentum changes (gait-periodic, tens of newtons)
// gets a wrench estimate of at most 2 N force and 1 N·m torque once its
// window of 400 samples (the defaults) is full.
func TestWrenchEstimateQuietLog(t *testing.T) {
	p, spec := loadParams(t, "anymal.yaml")
	p.Spec.History.PortMean, spec.History.PortMean = 0, 0
	root := filepath.Join(fixtures.DataDir(), "anymal_sim")
	src := fixtures.Path(t, "anymal_sim", "id", "trot_301.mcap")
	const n = 700
	dst := filepath.Join(t.TempDir(), "trot.mcap")
	regrid(t, p, src, dst, n)
	res := parityConversion(t, spec, dst, root, n)
	ds, episode := paritySplit(t, res)
	eps := &datasetEpisodes{n: ds.N, nx: ds.StateDim()}
	for k := range n - 1 {
		i, ok := episode[k]
		if !ok {
			t.Fatalf("no episode at sample %d", k)
		}
		eps.x = append(eps.x, ds.Episodes[i].X)
	}
	s := &oracleStepper{ds: eps, gain: 0.8}
	var cfg predictor.WrenchEstimate
	cfg.Defaults()
	est, err := predictor.NewWrenchEstimator(s, ds.N, ds.PortDim(), predictor.WrenchBaseSE3, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var maxF, maxT, maxMean, maxRes float64
	for k := range n - 1 {
		if k > 0 {
			s.k = k - 1 // the prediction from the sample before
		}
		x := eps.x[k][:eps.nx]
		if err := est.Observe(x, ds.Episodes[0].E[:ds.PortDim()]); err != nil {
			t.Fatal(err)
		}
		if k > 0 {
			for j := range 3 {
				maxRes = max(maxRes, math.Abs(0.2*(eps.x[k-1][eps.nx+ds.N+j]-eps.x[k-1][ds.N+j]))/ds.Dt)
			}
		}
		st := est.State()
		if st.Residuals < cfg.Window {
			continue
		}
		f := math.Hypot(math.Hypot(st.Impulse[0], st.Impulse[1]), st.Impulse[2]) / ds.Dt
		tq := math.Hypot(math.Hypot(st.Impulse[3], st.Impulse[4]), st.Impulse[5]) / ds.Dt
		maxF, maxT = max(maxF, f), max(maxT, tq)
		maxMean = max(maxMean, math.Hypot(math.Hypot(st.Mean[0], st.Mean[1]), st.Mean[2])/ds.Dt)
	}
	if maxF > 2 || maxT > 1 {
		t.Errorf("estimate up to %.3g N and %.3g N·m on a log without a disturbance, want ≤ 2 N and 1 N·m", maxF, maxT)
	}
	if maxRes < 20 {
		t.Errorf("residuals up to %.3g N: the test shows nothing", maxRes)
	}
	t.Logf("residuals up to %.3g N per component; the window's mean up to %.3g N, the estimate up to %.3g N and %.3g N·m", maxRes, maxMean, maxF, maxT)
}
