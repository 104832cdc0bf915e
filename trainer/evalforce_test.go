package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/predictor"
)

// forceDataset is one coordinate at rest whose momentum grows by c every
// step (a constant force the state held constant does not know), cut into
// episodes of ten samples named as conversion names them: f.mcap@0 and
// f.mcap@10 are one stretch of the log, f.mcap@25 starts after a gap.
func forceDataset(c float64) *dataset.Dataset {
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 1, Dt: 0.01, Coordinates: []string{"q"}}}
	for _, a := range []int{0, 10, 25} {
		ep := dataset.Episode{Name: fmt.Sprintf("f.mcap@%d", a), Len: 10}
		for j := range 10 {
			ep.X = append(ep.X, 0, c*float64(a+j))
			ep.E = append(ep.E, 1)
		}
		ds.Episodes = append(ds.Episodes, ep)
	}
	return ds
}

// TestEvaluateForce: offset-free rollouts of the held state learn the
// force from the samples before each window, across episodes that continue
// one another but not across a gap, and predict it exactly; windows with no
// earlier sample keep the held state's error.
func TestEvaluateForce(t *testing.T) {
	const c, H = 0.5, 4
	ds := forceDataset(c)
	// windows start at samples 0 and 5 of every episode: 6 windows, of
	// which f.mcap@0's first and f.mcap@25's first have no history
	var perWindow float64 // Σ_k (k·c)² of a window without the estimate
	for k := 1; k <= H; k++ {
		perWindow += float64(k*k) * c * c
	}
	for _, tc := range []struct {
		name  string
		force *predictor.ForceEstimate
		want  float64
	}{
		{"held state", nil, 6 * perWindow / (6 * H * 2)},
		{"offset-free, window 3", &predictor.ForceEstimate{Window: 3, Decay: 1}, 2 * perWindow / (6 * H * 2)},
		{"offset-free, window 1", &predictor.ForceEstimate{Window: 1, Decay: 1}, 2 * perWindow / (6 * H * 2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, workers := range []int{1, 3} {
				res, err := Evaluate(context.Background(), HoldRollers, ds, EvalOptions{Horizon: H, Stride: H + 1, Workers: workers, Force: tc.force})
				if err != nil {
					t.Fatal(err)
				}
				if res.Windows != 6 || math.Abs(res.MSE-tc.want) > 1e-15 {
					t.Errorf("workers %d: %d windows, MSE %.17g, want 6 and %.17g", workers, res.Windows, res.MSE, tc.want)
				}
			}
		})
	}
	// decaying, the estimate adds c·(1 + λ + … + λ^(k−1)) by step k
	lam := 0.5
	res, err := Evaluate(context.Background(), HoldRollers, ds, EvalOptions{Horizon: H, Stride: H + 1, Force: &predictor.ForceEstimate{Window: 2, Decay: lam}})
	if err != nil {
		t.Fatal(err)
	}
	var decayed float64
	for k := 1; k <= H; k++ {
		added := c * (1 - math.Pow(lam, float64(k))) / (1 - lam)
		decayed += (float64(k)*c - added) * (float64(k)*c - added)
	}
	if want := (2*perWindow + 4*decayed) / (6 * H * 2); math.Abs(res.MSE-want) > 1e-14 {
		t.Errorf("decay %g: MSE %.17g, want %.17g", lam, res.MSE, want)
	}
}

// TestLogHistoryFeed: the samples fed before a window, by episode and row.
func TestLogHistoryFeed(t *testing.T) {
	ds := forceDataset(1)
	h := NewLogHistory(ds)
	est, err := predictor.NewForceEstimator(holdRoller{}, 1, 1, predictor.ForceEstimate{Window: 4, Decay: 1})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]float64, 2)
	for _, tc := range []struct {
		ep, row, residuals int
	}{
		{0, 0, 0}, {0, 2, 2}, {0, 9, 4}, {1, 0, 4}, {1, 1, 4}, {2, 0, 0}, {2, 3, 3},
	} {
		if err := h.Feed(est, tc.ep, tc.row, buf); err != nil {
			t.Fatal(err)
		}
		if got := est.Residuals(); got != tc.residuals {
			t.Errorf("%s row %d: %d residuals, want %d", ds.Episodes[tc.ep].Name, tc.row, got, tc.residuals)
		}
	}
	// an episode without a sample index in its name: its own samples only
	ds.Episodes[1].Name = "f.mcap"
	h = NewLogHistory(ds)
	if err := h.Feed(est, 1, 2, buf); err != nil || est.Residuals() != 2 {
		t.Errorf("unindexed episode, row 2: %d residuals (%v), want 2", est.Residuals(), err)
	}
}

// TestEvaluateWrench: offset-free rollouts by the wrench estimate on a
// floating base at rest whose vertical base momentum grows by c every step
// (a constant force along z that the held state does not know): windows
// with a history predict it exactly (a constant residual passes the gate
// whole), windows with none keep the held state's error; a dataset
// without a floating base and both estimates at once are refused.
func TestEvaluateWrench(t *testing.T) {
	const c, H = 0.5, 4
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 6, NU: 1, Dt: 0.01,
		Coordinates: []string{"rho_x", "rho_y", "rho_z", "phi_x", "phi_y", "phi_z"}}}
	for _, a := range []int{0, 10, 25} {
		ep := dataset.Episode{Name: fmt.Sprintf("w.mcap@%d", a), Len: 10}
		for j := range 10 {
			x := make([]float64, 12)
			x[8] = c * float64(a+j)
			ep.X = append(ep.X, x...)
			ep.E = append(ep.E, 1)
		}
		ds.Episodes = append(ds.Episodes, ep)
	}
	var perWindow float64
	for k := 1; k <= H; k++ {
		perWindow += float64(k*k) * c * c
	}
	wrench := &predictor.WrenchEstimate{Window: 4, Gate: 3, Decay: 1, Blocks: 2}
	for _, workers := range []int{1, 3} {
		res, err := Evaluate(context.Background(), HoldRollers, ds, EvalOptions{Horizon: H, Stride: H + 1, Workers: workers, Wrench: wrench})
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 * perWindow / (6 * H * 12); res.Windows != 6 || math.Abs(res.MSE-want) > 1e-15 {
			t.Errorf("workers %d: %d windows, MSE %.17g, want 6 and %.17g", workers, res.Windows, res.MSE, want)
		}
	}
	if _, err := Evaluate(context.Background(), HoldRollers, forceDataset(c), EvalOptions{Horizon: H, Stride: H + 1, Wrench: wrench}); err == nil || !strings.Contains(err.Error(), "needs a floating base") {
		t.Errorf("no floating base: %v", err)
	}
	both := EvalOptions{Horizon: H, Stride: H + 1, Wrench: wrench, Force: &predictor.ForceEstimate{Window: 3, Decay: 1}}
	if _, err := Evaluate(context.Background(), HoldRollers, ds, both); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Errorf("force and wrench: %v", err)
	}
}

// TestMeanRollers: the constant prediction is the training states' mean
// at every step, whatever the initial state, and it refuses a state of
// another size.
func TestMeanRollers(t *testing.T) {
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 1, Dt: 0.01, Coordinates: []string{"q"}}}
	ds.Episodes = []dataset.Episode{
		{Name: "a@0", Len: 2, X: []float64{1, 10, 3, 20}, E: []float64{0, 0}},
		{Name: "b@0", Len: 1, X: []float64{5, 30}, E: []float64{0}},
	}
	mu, err := StateMean(ds)
	if err != nil {
		t.Fatal(err)
	}
	if mu[0] != 3 || mu[1] != 20 {
		t.Fatalf("mean %v, want [3 20]", mu)
	}
	r, err := MeanRollers(mu)()
	if err != nil {
		t.Fatal(err)
	}
	mu[0] = 99 // the rollers keep their own copy
	out := make([]float64, 6)
	if err := r.Rollout([]float64{-7, 8}, []float64{1, 1, 1}, 3, out); err != nil {
		t.Fatal(err)
	}
	if want := []float64{3, 20, 3, 20, 3, 20}; !slices.Equal(out, want) {
		t.Errorf("prediction %v, want %v", out, want)
	}
	if err := r.Rollout([]float64{1, 2, 3}, nil, 1, out); err == nil {
		t.Error("a state of 3 values accepted by a prediction of 2")
	}
	if _, err := StateMean(&dataset.Dataset{Meta: dataset.Meta{N: 1}}); err == nil {
		t.Error("the mean of no samples")
	}
}

// countingEstimator counts the samples an estimator observes.
type countingEstimator struct {
	predictor.OffsetEstimator
	observed int
}

func (c *countingEstimator) Observe(x, e []float64) error {
	c.observed++
	return c.OffsetEstimator.Observe(x, e)
}

// TestFeedFromIsFeed: an estimator fed window after window by FeedFrom,
// which observes only the samples since the last window where it can,
// predicts bit for bit as one that Feed refills for every window — force
// and wrench estimates, windows a few samples apart, further apart than
// the estimate's window, across an episode boundary of one stretch of log,
// after a gap, around a non-finite sample, in an unindexed episode — and
// observes far fewer samples when the windows start close together.
func TestFeedFromIsFeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 6, NU: 1, Dt: 0.01,
		Coordinates: []string{"rho_x", "rho_y", "rho_z", "phi_x", "phi_y", "phi_z"}}}
	for _, ep := range []struct {
		name string
		len  int
	}{{"w.mcap@0", 40}, {"w.mcap@40", 30}, {"w.mcap@90", 40}, {"other.mcap", 20}} {
		e := dataset.Episode{Name: ep.name, Len: ep.len}
		for range ep.len {
			x := make([]float64, 12)
			for j := range x {
				x[j] = 0.3 * rng.NormFloat64()
			}
			e.X = append(e.X, x...)
			e.E = append(e.E, rng.NormFloat64())
		}
		ds.Episodes = append(ds.Episodes, e)
	}
	ds.Episodes[2].X[12*17+8] = math.NaN() // a non-finite sample in the third stretch
	var starts [][2]int                    // episode, row
	for e, ep := range ds.Episodes {
		for _, stride := range []int{1, 3, 12} {
			for r := 0; r+5 < ep.Len; r += stride {
				starts = append(starts, [2]int{e, r})
			}
		}
	}
	h := NewLogHistory(ds)
	for _, est := range []struct {
		name string
		make func() (predictor.OffsetEstimator, error)
	}{
		{"force", func() (predictor.OffsetEstimator, error) {
			return predictor.NewForceEstimator(holdRoller{}, 6, 1, predictor.ForceEstimate{Window: 7, Decay: 0.9})
		}},
		{"wrench", func() (predictor.OffsetEstimator, error) {
			return predictor.NewWrenchEstimator(holdRoller{}, 6, 1, predictor.WrenchBaseSE3, predictor.WrenchEstimate{Window: 8, Gate: 0.5, Decay: 1, Blocks: 2})
		}},
	} {
		t.Run(est.name, func(t *testing.T) {
			a, err := est.make()
			if err != nil {
				t.Fatal(err)
			}
			b, err := est.make()
			if err != nil {
				t.Fatal(err)
			}
			fed, from := &countingEstimator{OffsetEstimator: a}, &countingEstimator{OffsetEstimator: b}
			buf := make([]float64, 12)
			outA, outB := make([]float64, 4*12), make([]float64, 4*12)
			var last FeedPos
			for _, s := range starts {
				if err := h.Feed(fed, s[0], s[1], buf); err != nil {
					t.Fatal(err)
				}
				if err := h.FeedFrom(from, s[0], s[1], buf, &last); err != nil {
					t.Fatal(err)
				}
				ep := &ds.Episodes[s[0]]
				x0, ports := ep.X[s[1]*12:(s[1]+1)*12], ep.E[s[1]:s[1]+4]
				errA, errB := fed.Rollout(x0, ports, 4, outA), from.Rollout(x0, ports, 4, outB)
				if (errA == nil) != (errB == nil) || fed.Residuals() != from.Residuals() {
					t.Fatalf("%s row %d: errors %v, %v; residuals %d, %d", ep.Name, s[1], errA, errB, fed.Residuals(), from.Residuals())
				}
				for i := range outA {
					if math.Float64bits(outA[i]) != math.Float64bits(outB[i]) {
						t.Fatalf("%s row %d: value %d is %v fed whole, %v fed from the last window", ep.Name, s[1], i, outA[i], outB[i])
					}
				}
			}
			t.Logf("%d windows: Feed observed %d samples, FeedFrom %d", len(starts), fed.observed, from.observed)
			if 2*from.observed > fed.observed {
				t.Errorf("FeedFrom observed %d samples, Feed %d: want half or fewer", from.observed, fed.observed)
			}
		})
	}
}
