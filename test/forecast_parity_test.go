package test

import (
	"cmp"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/nodes/node"
	"github.com/calisym/calisym/predictor"
	"github.com/calisym/calisym/statemap"
	"github.com/calisym/calisym/trainer"
)

// TestForecastParity: with each port forecast the node publishes the
// prediction the evaluation makes from the same sample of the converted
// log (trainer.ForecastRoller, what eval --forecast scores), bit for bit:
// the ANYmal params' layout with its port history and wrench estimate, a
// push log fed message by message with one sample lost (the node restarts
// its history and warms up again; the evaluation's history stops at the
// gap), every state a trigger. For the learned forecast the node loads a
// forecaster file bound to the model file's checksum and the params; the
// ports it publishes are the ports the evaluation's loop chose. With the
// wrench estimate the predictions are compared up to the lost sample,
// after which the node's estimate differs by design (its port history
// restarts, the dataset's does not: TestForceEstimateParity).
func TestForecastParity(t *testing.T) {
	const n, H = 80, 12
	_, shipped := loadParams(t, "anymal.yaml")
	m := cmp.Or(shipped.History.PortMean, 5)
	for _, tc := range []struct {
		kind   string
		wrench bool
		direct bool
	}{{node.ForecastHold, false, false}, {node.ForecastLearned, false, false}, {node.ForecastLearned, false, true}, {node.ForecastHold, true, false}, {node.ForecastLearned, true, true}} {
		kind := tc.kind
		name := kind
		if tc.direct {
			name += "-direct"
		}
		if tc.wrench {
			name += "+wrench"
		}
		t.Run(name, func(t *testing.T) {
			p, _, root, batches, res := pushParity(t, n, m)
			ds, episode := paritySplit(t, res)
			if p.Node.WrenchEstimate == nil {
				t.Fatal("the ANYmal params have no wrench estimate: the test would show nothing of it")
			}
			cfg := *p.Node.WrenchEstimate
			cfg.Window = 16 // full within the log
			p.Node.WrenchEstimate = &cfg
			p.Node.Horizon, p.Node.PreviewStep = H, H
			p.Node.TF.Ghost = 0
			p.Node.Trigger = node.TriggerConfig{Kind: node.TriggerMessage, Topic: p.Node.Topics[0].Topic, Every: 1}
			p.Node.MaxAge = 60
			now := time.Date(2024, 11, 5, 10, 0, 5, 0, time.UTC).UnixNano()
			model := parityModel(t, p, root)
			const sha = "5ca1ab1e"
			var policy forecast.Policy = forecast.Hold{}
			p.Node.Ports.Forecast = kind
			if kind == node.ForecastLearned {
				smp := newParitySampler(t, p, root)
				nn, nu, nc := smp.Layout()
				f := &forecast.File{Binding: forecast.Binding{ModelSHA256: sha, PortMap: p.Spec.PortMap(), Coordinates: smp.Coordinates(), Ports: smp.Ports(),
					N: nn, NU: nu, NC: nc, Dt: 1 / p.Rate, PortMean: m}, Policy: randomPolicy(nn, smp.Measured(), tc.direct)}
				path := filepath.Join(t.TempDir(), "parity.forecaster.json")
				if err := f.Save(path); err != nil {
					t.Fatal(err)
				}
				loaded, err := forecast.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				policy = loaded.Policy
				p.Node.Ports.Forecaster = path
				// refused for another model file
				if _, err := node.New(node.Options{Params: p, Model: model, ModelSHA256: "0ther", DataRoot: root, Now: func() int64 { return now }, Publisher: discard{}}); err == nil {
					t.Fatal("the node accepted a forecaster fitted for another model file")
				}
			}
			if !tc.wrench {
				p.Node.WrenchEstimate = nil
			}
			pub := &lastPrediction{topic: p.Node.Outputs.Prediction}
			nd, err := node.New(node.Options{Params: p, Model: model, ModelSHA256: sha, DataRoot: root, Now: func() int64 { return now }, Publisher: pub})
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
			var roller trainer.Roller = est
			if !tc.wrench {
				p.Node.WrenchEstimate = nil
				roller = plan.NewRoller()
			}
			fr, err := trainer.NewForecastRoller(&trainer.Forecast{Kind: kind, NewPolicy: func() forecast.Policy { return policy }}, ds, H)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]float64, H*ds.StateDim())
			nx, ne := ds.StateDim(), ds.PortDim()
			compared := 0
			var predictions uint64
			feedParity(t, n, nd, batches, ds, episode, est, func(k int) {
				st := nd.Stats()
				if st.Predictions == predictions {
					return // warming up
				}
				if tc.wrench && k > n/2 {
					// after the lost sample the node's port history restarts
					// by design where the dataset's reaches back past the gap:
					// the residuals, and so the wrench estimate, differ
					return
				}
				predictions = st.Predictions
				if lw, ok := nd.WrenchEstimate(); ok && tc.wrench {
					ws := est.State()
					if lw.Residuals != ws.Residuals || firstDiff(lw.Impulse[:], ws.Impulse[:]) >= 0 {
						t.Fatalf("sample %d: wrench estimate %d residuals %v live, %d %v evaluated", k, lw.Residuals, lw.Impulse, ws.Residuals, ws.Impulse)
					}
				}
				if err := fr.Rollout(roller, trainer.NewLogHistory(ds), ds, episode[k], 0, H, out); err != nil {
					t.Fatal(err)
				}
				live := pub.last
				for s := range H {
					q, p := out[s*nx:s*nx+ds.N], out[s*nx+ds.N:(s+1)*nx]
					if i := firstDiff(live.Q[s*ds.N:(s+1)*ds.N], q); i >= 0 {
						t.Fatalf("sample %d step %d: q[%d] = %v live, %v evaluated", k, s+1, i, live.Q[s*ds.N+i], q[i])
					}
					if i := firstDiff(live.P[s*ds.N:(s+1)*ds.N], p); i >= 0 {
						t.Fatalf("sample %d step %d: p[%d] = %v live, %v evaluated", k, s+1, i, live.P[s*ds.N+i], p[i])
					}
				}
				if i := firstDiff(live.Ports, fr.Ports()[:H*ne]); i >= 0 {
					t.Fatalf("sample %d: port %d (step %d) = %v published, %v evaluated", k, i, i/ne, live.Ports[i], fr.Ports()[i])
				}
				compared++
			})
			if want := map[bool]int{false: n - 2*m - 2, true: n/2 - m - 1}[tc.wrench]; compared < want {
				t.Fatalf("compared %d predictions of %d samples", compared, n)
			}
			t.Logf("%d predictions identical, bit for bit", compared)
		})
	}
}

// randomPolicy is a learned policy of random weights: its forecast
// changes from step to step with the state.
func randomPolicy(n, nm int, direct bool) *forecast.Learned {
	ni := forecast.Inputs(n, nm)
	if direct {
		ni = forecast.DirectInputs(n, nm)
	}
	mean, scale := make([]float64, ni), make([]float64, ni)
	for i := range scale {
		scale[i] = 10
	}
	outMean, outScale := make([]float64, nm), make([]float64, nm)
	for i := range outScale {
		outScale[i] = 1
	}
	l := forecast.NewLearned(n, nm, 16, 3, mean, scale, outMean, outScale)
	if direct {
		l = forecast.NewDirect(n, nm, 7, 16, 3, mean, scale, outMean, outScale)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	w := make([]float64, len(l.W))
	for i := range w {
		w[i] = 0.1 * rng.NormFloat64()
	}
	if err := l.SetWeights(w); err != nil {
		panic(err)
	}
	return l
}

// newParitySampler is the params' sampler (its layout and names).
func newParitySampler(t *testing.T, p *node.Params, root string) *statemap.Sampler {
	t.Helper()
	smp, err := statemap.NewSampler(p.Spec, p.SamplerOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	return smp
}
