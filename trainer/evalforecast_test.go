package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calisym/calisym/dataset"
	"github.com/calisym/calisym/forecast"
	"github.com/calisym/calisym/statemap"
)

// portLog is a log of T samples of one coordinate (q = the sample's index,
// p = 0) with one measured control value and one contact value, random,
// and the model ports conversion writes with a port history of m samples
// (u, mean(u), mean(f), f), cut into windows of length L every stride
// samples, named file@start.
func portLog(t *testing.T, T, L, stride, m int, seed uint64) (*dataset.Dataset, [][]float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	meas := make([][]float64, T)
	hist, err := statemap.NewPortHistory(m, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([][]float64, T)
	for i := range T {
		meas[i] = []float64{rng.NormFloat64(), 10 + rng.NormFloat64()}
		rows[i] = make([]float64, 4)
		hist.Ports(meas[i], rows[i])
		hist.Push(meas[i])
	}
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 3, NC: 1, Dt: 0.01, WindowLen: L, Stride: stride,
		Coordinates: []string{"q"}, Ports: []string{"u", fmt.Sprintf("mean%d(u)", m), fmt.Sprintf("mean%d(f)", m), "f"}}}
	for a := 0; a+L <= T; a += stride {
		ep := dataset.Episode{Name: fmt.Sprintf("log.mcap@%d", a), Len: L}
		for j := range L {
			ep.X = append(ep.X, float64(a+j), 0)
			ep.E = append(ep.E, rows[a+j]...)
		}
		ds.Episodes = append(ds.Episodes, ep)
	}
	return ds, meas
}

// portSum is a model whose momentum integrates every port value it is
// given: p' = p + Σ e, q' = q + p'. Rollouts of it tell every port of
// every step apart.
type portSum struct{}

func (portSum) Rollout(x0, ports []float64, horizon int, out []float64) error {
	q, p := x0[0], x0[1]
	for k := range horizon {
		for j, v := range ports[k*4 : (k+1)*4] {
			p += v * float64(j+1)
		}
		q += p
		out[2*k], out[2*k+1] = q, p
	}
	return nil
}

// oracle forecasts the logged measured ports: it finds the window by its
// first state (q is the sample's index in the log).
type oracle struct {
	meas  [][]float64
	start int
}

func (o *oracle) Begin(x0, _ []float64) { o.start = int(x0[0]) }
func (o *oracle) Next(k int, _, _, out []float64) {
	copy(out, o.meas[o.start+k])
}

// TestEvaluateForecast: an evaluation with the ports forecast in the loop
// rebuilds each window's port history from the samples before it in its
// log, so that a forecast of the logged measured ports predicts exactly
// what the logged model ports predict (the history's means, the first row
// included, are conversion's bits), at every horizon and with any number
// of workers; the hold forecast predicts what holding the first measured
// ports, with the means the history and the held steps make, predicts.
func TestEvaluateForecast(t *testing.T) {
	const m, H = 3, 7
	ds, meas := portLog(t, 60, H+1, 4, m, 3)
	rollers := func() (Roller, error) { return portSum{}, nil }
	logged, err := Evaluate(context.Background(), rollers, ds, EvalOptions{Horizon: H, Stride: H + 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 3} {
		fc := &Forecast{Kind: "oracle", NewPolicy: func() forecast.Policy { return &oracle{meas: meas} }}
		got, err := Evaluate(context.Background(), rollers, ds, EvalOptions{Horizon: H, Stride: H + 1, Workers: workers, Forecast: fc})
		if err != nil {
			t.Fatal(err)
		}
		if got.MSE != logged.MSE || got.Windows != logged.Windows || got.MSE == 0 {
			t.Fatalf("%d workers: the logged ports forecast in the loop give %v over %d windows, the logged ports %v over %d", workers, got.MSE, got.Windows, logged.MSE, logged.Windows)
		}
	}
	// hold, against a rollout of the held ports built by hand for every window
	hold := &Forecast{Kind: forecast.KindHold, NewPolicy: func() forecast.Policy { return forecast.Hold{} }}
	got, err := Evaluate(context.Background(), rollers, ds, EvalOptions{Horizon: H, Stride: H + 1, Forecast: hold})
	if err != nil {
		t.Fatal(err)
	}
	var sq float64
	out := make([]float64, 2*H)
	for _, ep := range ds.Episodes {
		a := int(ep.X[0])
		h, _ := statemap.NewPortHistory(m, 1, 1)
		for i := max(0, a-m); i < a; i++ {
			h.Push(meas[i])
		}
		ports := make([]float64, 4*H)
		for k := range H {
			h.Ports(meas[a], ports[4*k:4*(k+1)])
			h.Push(meas[a])
		}
		if err := (portSum{}).Rollout(ep.X[:2], ports, H, out); err != nil {
			t.Fatal(err)
		}
		for k := range 2 * H {
			d := out[k] - ep.X[2+k]
			sq += d * d
		}
	}
	want := sq / float64(len(ds.Episodes)*2*H)
	if math.Abs(got.MSE-want) > 1e-12*want || got.MSE == logged.MSE {
		t.Fatalf("hold: %v, want %v (logged %v)", got.MSE, want, logged.MSE)
	}
}

// TestFitForecaster: ports that are a fixed linear function of the state
// and the first ports are fitted to validation error near zero (far below
// holding the first ports), the penalty is chosen among those given and
// reported, and the validation files are whole files. A dataset without
// validation pairs, an unknown validation file and a cancelled context
// are errors.
func TestFitForecaster(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const L = 6
	ds := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 2, NC: 0, Dt: 0.01, WindowLen: L, Stride: L}}
	for f := range 4 {
		for w := range 30 {
			ep := dataset.Episode{Name: fmt.Sprintf("f%d.mcap@%d", f, w*L), Len: L}
			m0 := []float64{rng.NormFloat64(), rng.NormFloat64()}
			for k := range L {
				q, p := rng.NormFloat64(), rng.NormFloat64()
				ep.X = append(ep.X, q, p)
				e := []float64{2*q - p + 0.5*m0[0], -q + 3 + m0[1]}
				if k == 0 {
					e = m0
				}
				ep.E = append(ep.E, e...)
			}
			ds.Episodes = append(ds.Episodes, ep)
		}
	}
	measure := func(e, m []float64) { copy(m, e) }
	l, rep, err := FitForecaster(context.Background(), ds, 2, measure, ForecasterOptions{Features: 8, Feedback: true, Lambdas: []float64{1e-8, 1e-2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ValFiles) != 1 || rep.ValFiles[0] != "f3.mcap" || rep.Rows != 3*30*(L-1) || rep.ValRows != 30*(L-1) {
		t.Fatalf("split: %+v", rep)
	}
	if rep.Lambda != 1e-8 || !(rep.ValMSE[0] < 1e-6) || !(rep.HoldMSE > 0.5) {
		t.Fatalf("validation MSE %v (hold %v), chose λ %v", rep.ValMSE, rep.HoldMSE, rep.Lambda)
	}
	// the policy reproduces the law on a new state
	l.Begin([]float64{0.3, -0.2}, []float64{1, 2})
	out := make([]float64, 2)
	l.Next(1, []float64{0.7, 0.1}, nil, out)
	if math.Abs(out[0]-(1.4-0.1+0.5)) > 1e-3 || math.Abs(out[1]-(-0.7+3+2)) > 1e-3 {
		t.Errorf("policy %v, want [1.8 4.3]", out)
	}
	if _, _, err := FitForecaster(context.Background(), ds, 2, measure, ForecasterOptions{Validation: []string{"g.mcap"}}); err == nil {
		t.Error("an unknown validation file was accepted")
	}
	one := &dataset.Dataset{Meta: ds.Meta}
	one.Episodes = ds.Episodes[:1]
	if _, _, err := FitForecaster(context.Background(), one, 2, measure, ForecasterOptions{Validation: []string{"f0.mcap"}}); err == nil {
		t.Error("a fit without training pairs was accepted")
	}
	// one long episode of a single log: starts every stride samples, the
	// last quarter's validate
	long := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 2, Dt: 0.01, WindowLen: 10, Stride: 5}}
	ep := dataset.Episode{Name: "g.mcap@0", Len: 200}
	for range ep.Len {
		q, p := rng.NormFloat64(), rng.NormFloat64()
		ep.X = append(ep.X, q, p)
		ep.E = append(ep.E, q+p, q-p)
	}
	long.Episodes = []dataset.Episode{ep}
	_, rep, err = FitForecaster(context.Background(), long, 2, measure, ForecasterOptions{Steps: 10, Feedback: true})
	if err != nil {
		t.Fatal(err)
	}
	// starts 0, 5, … 195: 40 starts, those at 150 and after validate
	// (the last two reach the episode's end after 9 and 4 steps)
	if rep.ValRows != 8*10+9+4 || rep.Rows != 30*10 || rep.ValFiles[0] != "g.mcap" || rep.Files[0] != "g.mcap" {
		t.Errorf("one episode: %d training and %d validation pairs, files %v / %v", rep.Rows, rep.ValRows, rep.Files, rep.ValFiles)
	}
	// the direct policy: ports that are a fixed function of the start and
	// the step, m_k = m_0 + k·q_0, fitted exactly, and the last step's
	// map held beyond its steps
	dd := &dataset.Dataset{Meta: dataset.Meta{N: 1, NU: 1, Dt: 0.01, WindowLen: 5, Stride: 5}}
	for f := range 4 {
		for w := range 40 {
			ep := dataset.Episode{Name: fmt.Sprintf("d%d.mcap@%d", f, 5*w), Len: 5}
			q0, m0 := rng.NormFloat64(), rng.NormFloat64()
			for k := range 5 {
				q := q0 // the start's q; later states anything
				if k > 0 {
					q = rng.NormFloat64()
				}
				ep.X = append(ep.X, q, rng.NormFloat64())
				ep.E = append(ep.E, m0+float64(k)*q0)
			}
			dd.Episodes = append(dd.Episodes, ep)
		}
	}
	dl, drep, err := FitForecaster(context.Background(), dd, 1, func(e, m []float64) { m[0] = e[0] }, ForecasterOptions{Lambdas: []float64{1e-9}})
	if err != nil {
		t.Fatal(err)
	}
	if !drep.Direct || dl.Steps != 4 || !(drep.ValMSE[0] < 1e-9) {
		t.Fatalf("direct: %d steps, report %+v", dl.Steps, drep)
	}
	dl.Begin([]float64{0.5, 9}, []float64{2})
	for k, want := range map[int]float64{1: 2.5, 4: 4, 7: 4} {
		out := []float64{0}
		dl.Next(k, []float64{100, 100}, []float64{-1}, out)
		if math.Abs(out[0]-want) > 1e-6 {
			t.Errorf("direct step %d: %v, want %v", k, out[0], want)
		}
	}
	// closed-loop selection: the penalty of least AR MSE on the
	// validation windows, with the model in the loop
	pl, _ := portLog(t, 80, 8, 4, 3, 9)
	pm := func(e, m []float64) { m[0], m[1] = e[0], e[3] }
	for _, direct := range []bool{false, true} {
		_, crep, err := FitForecaster(context.Background(), pl, 2, pm, ForecasterOptions{Features: 4, Feedback: !direct, Lambdas: []float64{1e-3, 1, 100},
			Rollers: func() (Roller, error) { return portSum{}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if len(crep.ValARMSE) != 3 || crep.ValHorizon != 7 || !(crep.HoldARMSE > 0) || crep.Direct != direct {
			t.Fatalf("direct %v: closed-loop report %+v", direct, crep)
		}
		i := slices.Index(crep.Lambdas, crep.Lambda)
		if slices.Min(crep.ValARMSE) != crep.ValARMSE[i] {
			t.Errorf("direct %v: chose λ %v of AR MSE %v, the least is %v", direct, crep.Lambda, crep.ValARMSE[i], slices.Min(crep.ValARMSE))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := FitForecaster(ctx, ds, 2, measure, ForecasterOptions{}); err == nil {
		t.Error("a cancelled fit returned no error")
	}
}
